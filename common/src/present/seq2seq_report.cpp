// Tables, charts, results.json and model loading for chapters 00–02 (see attn/present/seq2seq_report.hpp).
#include "attn/present/seq2seq_report.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "attn/data/data_files.hpp"
#include "attn/present/load_or_train.hpp"
#include "attn/present/terminal.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

namespace attn {

std::string format_score(double x) {
  const std::string one = fmt::format("{:.1f}", x);
  // A score just under 100 (99.96) would round to "100.0", which reads as perfect: it gets two
  // decimals instead, cut rather than rounded, so it stays below 100 ("99.96"; 99.999 -> "99.99").
  if (x < 100.0 && one == "100.0") return fmt::format("{:.2f}", std::floor(x * 100.0) / 100.0);
  return one;
}

Table length_table(const std::vector<NamedResult>& models) {
  std::vector<std::string> header = {_("source length"), _("sentences")};
  for (const auto& [name, r] : models) {
    header.push_back(name + " BLEU");
    header.push_back(_("exact %"));
    header.push_back(_("tok %"));
  }
  Table t(header);
  if (models.empty()) return t;
  const std::size_t nb = models.front().second.buckets.size();
  for (std::size_t b = 0; b <= nb; ++b) {
    const BucketMetrics& first = b < nb ? models.front().second.buckets[b] : models.front().second.overall;
    std::vector<std::string> row = {b < nb ? first.bucket.label() : _("all"), std::to_string(first.sentences)};
    for (const auto& [name, r] : models) {
      const BucketMetrics& m = b < nb ? r.buckets[b] : r.overall;
      row.push_back(format_score(m.bleu));
      row.push_back(format_score(m.exact));
      row.push_back(format_score(m.token_acc));
    }
    t.add(row);
  }
  return t;
}

std::string two_decimals_note(const Table& t) {
  for (const auto& row : t.data())
    for (const auto& cell : row) {
      const std::size_t dot = cell.find('.');
      if (dot != std::string::npos && cell.size() - dot == 3)  // "99.96": two decimals, from format_score
        return _("a score with two decimals (e.g. 99.96) is one that one decimal would round up to 100.0; it is "
                 "not perfect.");
    }
  return "";
}

std::string bleu_chart(const std::vector<NamedResult>& models, std::size_t width) {
  static const char* kEighths[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
  std::size_t name_w = 0;
  for (const auto& [name, r] : models) name_w = std::max(name_w, display_width(name));
  std::string out;
  if (models.empty()) return out;
  const std::size_t nb = models.front().second.buckets.size();
  for (std::size_t b = 0; b < nb; ++b) {
    for (std::size_t k = 0; k < models.size(); ++k) {
      const BucketMetrics& m = models[k].second.buckets[b];
      const double frac = std::clamp(m.bleu / 100.0, 0.0, 1.0) * double(width);
      const std::size_t full = std::size_t(frac), part = std::size_t((frac - double(full)) * 8.0);
      std::string bar;
      for (std::size_t i = 0; i < full; ++i) bar += "█";
      if (full < width) bar += kEighths[part];
      out += fmt::format("  {}  {}  {} {:>5}\n", fit(k == 0 ? m.bucket.label() : "", 6), fit(models[k].first, name_w),
                         fit(bar, width), format_score(m.bleu));
    }
  }
  // The axis spans the bars' full width, so "100" ends where a bar of BLEU 100 ends.
  const std::string head = "0 ", mid = " BLEU (0–100) ", tail = "► 100";
  const std::size_t fixed = display_width(head) + display_width(mid) + display_width(tail);
  const std::size_t dashes = width > fixed + 2 ? width - fixed : 2;
  std::string left, right;
  for (std::size_t i = 0; i < dashes / 2; ++i) left += "─";
  for (std::size_t i = dashes / 2; i < dashes; ++i) right += "─";
  out += fmt::format("  {}  {}  {}\n", fit("", 6), fit("", name_w), fit(head + left + mid + right + tail, width));
  return out;
}

std::string results_json(const std::vector<NamedResult>& models, const std::string& extra_json_object) {
  nlohmann::ordered_json j;
  for (const char* key : {"bleu_by_length", "exact_match_by_length", "token_accuracy_by_length"})
    j[key] = nlohmann::ordered_json::object();
  for (const auto& [name, r] : models)
    for (const auto& b : r.buckets) {
      // The figures exactly as printed (format_score), so the file and the table agree.
      j["bleu_by_length"][name][b.bucket.label()] = std::stod(format_score(b.bleu));
      j["exact_match_by_length"][name][b.bucket.label()] = std::stod(format_score(b.exact));
      j["token_accuracy_by_length"][name][b.bucket.label()] = std::stod(format_score(b.token_acc));
    }
  if (!extra_json_object.empty()) {
    const auto extra = nlohmann::ordered_json::parse(extra_json_object);
    if (!extra.is_object()) throw std::invalid_argument("results_json: extra fields must be a JSON object");
    for (const auto& [key, value] : extra.items()) j[key] = value;
  }
  return j.dump(2) + "\n";
}

std::string translations_json(const std::vector<NamedResult>& models, const std::vector<SentencePair>& pairs) {
  nlohmann::ordered_json j;
  j["pairs"] = "the test split of make_toy_corpus(chapter_corpus_config()) (attn/data/corpus.hpp, "
               "attn/models/seq2seq_train.hpp), in order; greedy outputs, at most source length + 10 words";
  j["buckets"] = nlohmann::ordered_json::array();
  for (const auto& b : default_length_buckets()) j["buckets"].push_back(b.label());
  auto joined = [](const Tokens& t) { return fmt::format("{}", fmt::join(t, " ")); };
  for (const auto& p : pairs) {
    j["sources"].push_back(joined(p.src));
    j["references"].push_back(joined(p.tgt));
    j["alignments"].push_back(p.alignment);
  }
  for (const auto& [name, r] : models) {
    if (r.hyps.size() != pairs.size())
      throw std::invalid_argument("translations_json: model '" + name + "' has outputs for other pairs");
    nlohmann::ordered_json hyps = nlohmann::ordered_json::array();
    for (const auto& h : r.hyps) hyps.push_back(joined(h));
    j["hypotheses"][name] = std::move(hyps);
  }
  return j.dump() + "\n";
}

void export_results(Narrator& nar, const std::vector<NamedResult>& models, const std::vector<SentencePair>& pairs,
                    const std::string& extra_json_object) {
  if (!nar.options().export_dir) return;  // translations_json is large: only with --export
  nar.export_file("results.json", results_json(models, extra_json_object));
  nar.export_file("translations.json", translations_json(models, pairs));
}

const EvalResult& result_named(const std::vector<NamedResult>& results, const std::string& name) {
  for (const auto& [n, r] : results)
    if (n == name) return r;
  throw std::invalid_argument("result_named: no results for model '" + name + "'");
}

ChapterModel chapter_model(const std::string& chapter, const std::string& name, const ToyCorpus& corpus, bool train,
                           const std::string& checkpoint, const TrainConfig& tc, bool progress) {
  ChapterModel cm;
  // A shipped checkpoint that cannot be found is an installation problem: say where we looked.
  cm.path = !checkpoint.empty() ? checkpoint
            : train             ? trained_checkpoint(chapter, name)
                                : require_data_file("ch" + chapter + "/" + name + ".safetensors");
  const std::size_t vs = corpus.source_vocab.size(), vt = corpus.target_vocab.size();
  cm.trained = load_or_train(
      {cm.path, train, tc.steps, progress},
      [&](const std::string& path) { cm.model = load_seq2seq(path, name, vs, vt, &cm.metadata); },
      [&](const StepCallback& on_step) {
        TrainConfig with_bar = tc;
        with_bar.on_step = on_step;
        cm.training = train_seq2seq(config_for(name, vs, vt), corpus, with_bar);
        cm.model = cm.training.best;
        cm.metadata = {{"steps", std::to_string(tc.steps)},
                       {"batch", std::to_string(tc.batch)},
                       {"lr", fmt::format("{}", tc.lr)},
                       {"seed", std::to_string(tc.seed)},
                       {"best_step", std::to_string(cm.training.best_step)},
                       {"valid_bleu", fmt::format("{:.2f}", cm.training.best_bleu)},
                       {"train_seconds", fmt::format("{:.1f}", cm.training.seconds)}};
      },
      [&](const std::string& path) {
        save_seq2seq(path, cm.model, cm.metadata);
        cm.metadata["model"] = name;
      });
  return cm;
}

std::pair<std::size_t, std::size_t> checkpoint_steps(const ChapterModel& cm) {
  auto number = [&](const char* key) -> std::size_t {
    const auto it = cm.metadata.find(key);
    if (it == cm.metadata.end()) return 0;
    try {
      return std::size_t(std::stoull(it->second));
    } catch (const std::exception&) {
      return 0;  // a record that is not a number: not known
    }
  };
  return {number("best_step"), number("steps")};
}

std::string describe_model(const ChapterModel& cm, bool times_explained) {
  auto get = [&](const char* k) { return cm.metadata.count(k) ? cm.metadata.at(k) : std::string("?"); };
  // A loaded checkpoint's train_seconds were measured when it was made, on a machine its metadata
  // does not record: say so, so that it does not read as this run's figure.
  const std::string seconds =
      cm.trained        ? _f("{} s of training", get("train_seconds"))
      : times_explained ? _f("trained earlier in {} s", get("train_seconds"))
                        : _f("trained earlier in {} s, machine and load not recorded, so not comparable with another "
                             "model's time",
                             get("train_seconds"));
  const std::string where = cm.trained ? _f("trained now, saved to {}", cm.path) : _f("loaded from {}", cm.path);
  return _f("{}: {} ({} parameters; {} steps of batch {}, {}, best at step {}, validation BLEU {})",
            model_title(cm.model.cfg), where, parameter_count(cm.model), get("steps"), get("batch"), seconds, get("best_step"), get("valid_bleu"));
}

}  // namespace attn
