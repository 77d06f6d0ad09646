// Chapter 08's model loading and curve drawing (see attn/present/transformer_report.hpp).
#include "attn/present/transformer_report.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "attn/models/seq2seq_train.hpp"
#include "attn/present/i18n.hpp"
#include "attn/present/progress.hpp"
#include "attn/present/terminal.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

namespace attn {

namespace {
const char* norm_title(NormPlacement n) { return n == NormPlacement::Post ? "Post" : "Pre"; }
}  // namespace

ChapterTransformer chapter_transformer(const ToyCorpus& corpus, bool train, const std::string& checkpoint,
                                       const TransformerModelConfig& cfg, const TransformerTrainConfig& tc,
                                       int threads, bool progress) {
  ChapterTransformer ct;
  ct.path = checkpoint.empty() ? shipped_checkpoint("08", "transformer") : checkpoint;
  if (!train) {
    ct.model = load_transformer(ct.path, &ct.curves, &ct.metadata);
    // The chapter narrates the model the file holds; --norm must name that one, or the narration
    // would call a Post-Norm model Pre-Norm.
    if (ct.model.cfg.norm != cfg.norm)
      throw std::runtime_error(_f("{} holds a {}-Norm model (its metadata says norm = {}), but --norm {} asks for "
                                  "{}-Norm: pass --norm {}, or a checkpoint of the {}-Norm model",
                                  escape_control(ct.path), norm_title(ct.model.cfg.norm), norm_name(ct.model.cfg.norm),
                                  norm_name(cfg.norm), norm_title(cfg.norm), norm_name(ct.model.cfg.norm),
                                  norm_title(cfg.norm)));
    return ct;
  }
  ct.trained = true;
  ProgressBar bar(std::int64_t(tc.steps), progress && stderr_is_terminal());
  TransformerTrainConfig with_bar = tc;
  with_bar.on_step = bar.callback();
  TransformerModelConfig c = cfg;
  c.src_vocab = corpus.source_vocab.size();
  c.tgt_vocab = corpus.target_vocab.size();
  const TransformerTrainResult r = train_transformer(c, corpus, with_bar);
  bar.finish();
  ct.model = r.best;
  ct.curves = curves_of(r);
  ct.metadata = {{"steps", std::to_string(tc.steps)},
                 {"batch", std::to_string(tc.batch)},
                 {"warmup", std::to_string(tc.warmup)},
                 {"lr_factor", fmt::format("{}", tc.lr_factor)},
                 {"seed", std::to_string(tc.seed)},
                 {"threads", std::to_string(threads)},
                 {"best_step", std::to_string(r.best_step)},
                 {"valid_bleu", fmt::format("{:.2f}", r.best_bleu)},
                 {"train_seconds", fmt::format("{:.1f}", r.seconds)}};
  if (std::filesystem::path(ct.path).has_parent_path())
    std::filesystem::create_directories(std::filesystem::path(ct.path).parent_path());
  save_transformer(ct.path, ct.model, ct.curves, ct.metadata);
  ct.metadata = {};
  load_transformer(ct.path, nullptr, &ct.metadata);  // the metadata exactly as stored
  return ct;
}

Table metric_table(const std::vector<NamedResult>& models, const std::vector<std::string>& titles,
                   LengthMetric metric) {
  if (titles.size() != models.size()) throw std::invalid_argument("metric_table: one title per model");
  std::vector<std::string> header = {metric == LengthMetric::Bleu    ? "BLEU"
                                     : metric == LengthMetric::Exact ? _("exact %")
                                                                     : _("token %")};
  header.insert(header.end(), titles.begin(), titles.end());
  Table t(header);
  auto cell = [&](const BucketMetrics& b) {
    return format_score(metric == LengthMetric::Bleu ? b.bleu : metric == LengthMetric::Exact ? b.exact : b.token_acc);
  };
  const std::size_t n = models.empty() ? 0 : models.front().second.buckets.size();
  for (std::size_t k = 0; k <= n; ++k) {
    std::vector<std::string> row = {k < n ? models.front().second.buckets[k].bucket.label() : _("all")};
    for (const auto& [name, r] : models) row.push_back(cell(k < n ? r.buckets[k] : r.overall));
    t.add(row);
  }
  return t;
}

namespace {
constexpr double kParityBand = 0.10;  // |PyTorch / ours − 1| below this reads as parity
}  // namespace

std::vector<std::string> peer_step_lines(const StepTiming& ours, std::size_t threads, std::size_t parameters,
                                         const std::optional<PeerStepTime>& peer) {
  if (!peer)
    return {_("PyTorch's time for this step was not measured: data/ch08/pytorch_step_time.json is missing "
              "(/usr/bin/python3 chapters/08_transformer/pytorch_step_time.py writes it).")};
  const PeerStepTime& p = *peer;
  if (p.batch != ours.batch || p.src_len != ours.src_len || p.tgt_len != ours.tgt_len || p.threads != threads ||
      p.parameters != parameters)
    return {_f("{} was timed on batch {} × {} → {}, {} thread(s), {} parameters; this step differs: no ratio.",
               p.framework, p.batch, p.src_len, p.tgt_len, p.threads, p.parameters)};
  const double ratio = p.cpu_ms / std::max(ours.median_cpu_ms, 1e-9);
  std::vector<std::string> lines = {
      _f("{}, the same model ({} parameters), batch and thread count: {:.1f} ms CPU per step ({:.1f} ms wall "
         "at load average {:.1f} when measured).", p.framework, p.parameters, p.cpu_ms, p.wall_ms, p.load_average),
      // The two figures come from different runs (PyTorch's from the file), so a gap under 10% is not
      // called a win either way: repeated runs on a quiet machine move each by about that much.
      std::abs(ratio - 1.0) < kParityBand
          ? _f("ours {:.1f} ms CPU per step: within 10% of PyTorch's (ratio {:.2f}), timed in different runs: parity.",
               ours.median_cpu_ms, ratio)
      : ratio >= 1.0 ? _f("ours {:.1f} ms CPU per step: {:.2f}× as fast as PyTorch.", ours.median_cpu_ms, ratio)
                     : _f("ours {:.1f} ms CPU per step: PyTorch is {:.2f}× as fast.", ours.median_cpu_ms, 1.0 / ratio)};
  return lines;
}

}  // namespace attn
