// MQAR training, evaluation, checkpoints and the verdicts on the table (see attn/studies/recall.hpp).
#include "attn/studies/recall.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "attn/data/data_files.hpp"
#include "attn/data/output_file.hpp"
#include "attn/data/safetensors.hpp"
#include "attn/nn/optim.hpp"
#include "attn/nn/schedule.hpp"

namespace attn {

const char* recall_arch_id(RecallArch a) {
  switch (a) {
    case RecallArch::attention: return "attention";
    case RecallArch::sliding_window: return "window";
    case RecallArch::linear_attention: return "linear";
    case RecallArch::ssm: return "ssm";
    case RecallArch::hybrid: return "hybrid";
  }
  return "?";
}

std::vector<RecallArch> recall_archs() {
  return {RecallArch::attention, RecallArch::sliding_window, RecallArch::linear_attention, RecallArch::ssm,
          RecallArch::hybrid};
}

RecallModelConfig recall_model_config(RecallArch arch, std::size_t d_model) {
  RecallModelConfig c;
  c.d_model = d_model;
  switch (arch) {
    case RecallArch::attention: c.layers = {MixerKind::attention, MixerKind::attention}; break;
    case RecallArch::sliding_window: c.layers = {MixerKind::sliding_window, MixerKind::sliding_window}; break;
    case RecallArch::linear_attention: c.layers = {MixerKind::linear_attention, MixerKind::linear_attention}; break;
    case RecallArch::ssm: c.layers = {MixerKind::ssm, MixerKind::ssm}; break;
    case RecallArch::hybrid: c.layers = {MixerKind::ssm, MixerKind::attention}; break;
  }
  return c;
}

double recall_accuracy(const RecallModel& m, std::size_t pairs, std::size_t seqs, std::uint64_t seed) {
  Rng rng(seed, /*stream=*/pairs);
  std::size_t correct = 0, total = 0;
  for (std::size_t done = 0; done < seqs; done += 32) {
    const MqarBatch b = mqar_batch(std::min<std::size_t>(32, seqs - done), pairs, m.cfg.vocab, rng);
    const RecallStep s = recall_model_step(m, b);
    correct += s.correct;
    total += s.queries;
  }
  return total ? double(correct) / double(total) : 0.0;
}

RecallTrainConfig recall_shipped_recipe() {
  RecallTrainConfig c;
  c.lr = 1e-2;
  return c;
}

double recall_window_ceiling(std::size_t pairs, std::size_t seqs, std::uint64_t seed, std::size_t window,
                             std::size_t vocab) {
  Rng rng(seed, /*stream=*/pairs);  // the draws of recall_accuracy, batch for batch
  std::size_t seen = 0, total = 0;
  for (std::size_t done = 0; done < seqs; done += 32) {
    const MqarBatch b = mqar_batch(std::min<std::size_t>(32, seqs - done), pairs, vocab, rng);
    for (std::size_t s = 0; s < b.batch; ++s) {
      const int* tok = b.tokens.data() + s * b.seq_len;
      for (std::size_t i = 0; i < b.seq_len; ++i) {
        if (b.targets[s * b.seq_len + i] < 0) continue;
        ++total;
        for (std::size_t k = 0; k + 1 < 2 * b.pairs; k += 2)  // the key asked at i, then its value at k + 1
          if (tok[k] == tok[i] && i - (k + 1) < window) ++seen;
      }
    }
  }
  return total ? double(seen) / double(total) : 0.0;
}

RecallTrainReport train_recall_model(RecallModel& m, const RecallTrainConfig& cfg) {
  if (cfg.pairs.empty() || cfg.batch == 0 || cfg.max_steps == 0)
    throw std::invalid_argument("train_recall_model: need pair counts, a batch and steps");
  const auto t0 = std::chrono::steady_clock::now();
  RecallModel grad = zeros_like(m);
  ParamRegistry reg;
  register_params(reg, m, grad);
  AdamConfig ac;
  ac.lr = float(cfg.lr);
  ac.weight_decay = 0.0f;
  Adam opt(reg, ac);
  const Schedule sched = Schedule::warmup_cosine(cfg.lr, std::int64_t(cfg.warmup), std::int64_t(cfg.max_steps),
                                                 cfg.lr * 0.1);
  Rng rng(cfg.seed, /*stream=*/7);
  RecallTrainReport rep;
  rep.curve_pairs = cfg.pairs.front(), rep.curve_every = cfg.eval_every;
  for (std::size_t step = 1; step <= cfg.max_steps; ++step) {
    const std::size_t pairs = cfg.pairs[rng.below(std::uint32_t(cfg.pairs.size()))];
    const MqarBatch b = mqar_batch(cfg.batch, pairs, m.cfg.vocab, rng);
    reg.zero_grad();
    const RecallStep s = recall_model_step(m, b, &grad);
    clip_grad_norm(reg, 1.0);
    opt.step(float(learning_rate(sched, std::int64_t(step))));
    rep.steps = step;
    rep.last_loss = s.loss;
    if (cfg.on_step) cfg.on_step(step, s.loss);
    if (cfg.eval_every && step % cfg.eval_every == 0) {
      // The fewest pairs first: its accuracy is the training curve; the others only until one falls short.
      rep.curve.push_back(recall_accuracy(m, cfg.pairs.front(), cfg.eval_seqs, cfg.seed + 1000));
      bool all = rep.curve.back() >= cfg.stop_accuracy;
      for (std::size_t i = 1; i < cfg.pairs.size(); ++i)
        all = all && recall_accuracy(m, cfg.pairs[i], cfg.eval_seqs, cfg.seed + 1000) >= cfg.stop_accuracy;
      if (all) {
        rep.stopped_early = step < cfg.max_steps;
        break;
      }
    }
  }
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

std::string recall_checkpoint_name(RecallArch arch, std::size_t d_model) {
  return std::string("ch12/recall_") + recall_arch_id(arch) + "_d" + std::to_string(d_model) + ".safetensors";
}

void save_recall_model(const std::string& path, const RecallModel& m, RecallArch arch, const RecallTrainReport& r) {
  TensorMap tensors;
  visit_recall_params(m, [&](const std::string& name, const auto& t) {
    tensors[name] = TensorF32{shape_of(t), std::vector<float>(t.begin(), t.end())};
  });
  std::string curve;
  for (double a : r.curve) {
    char item[16];
    std::snprintf(item, sizeof item, "%.4f", a);  // the accuracy of 64·pairs queries: 4 digits hold it
    curve += (curve.empty() ? "" : ",") + std::string(item);
  }
  write_safetensors(path, tensors,
                    {{"model", recall_arch_id(arch)}, {"d_model", std::to_string(m.cfg.d_model)},
                     {"steps", std::to_string(r.steps)}, {"seconds", std::to_string(r.seconds)},
                     {"curve", curve}, {"curve_pairs", std::to_string(r.curve_pairs)},
                     {"curve_every", std::to_string(r.curve_every)}});
}

RecallCurve parse_recall_curve(const std::string& curve, const std::string& pairs, const std::string& every) {
  RecallCurve c;
  if (curve.empty()) return c;
  const auto whole = [](const std::string& text, const char* what) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || v == 0 || v > 1000000)
      throw std::invalid_argument(std::string("recall curve: ") + what + " '" + text + "' is not a count in 1 … 1000000");
    return std::size_t(v);
  };
  c.pairs = whole(pairs, "curve_pairs"), c.every = whole(every, "curve_every");
  for (std::size_t a = 0; a <= curve.size();) {
    const std::size_t b = std::min(curve.find(',', a), curve.size());
    const std::string item = curve.substr(a, b - a);
    char* end = nullptr;
    const double x = std::strtod(item.c_str(), &end);
    if (item.empty() || *end != '\0' || !(x >= 0.0 && x <= 1.0))
      throw std::invalid_argument("recall curve: '" + item + "' is not an accuracy in [0, 1]");
    c.accuracy.push_back(x);
    a = b + 1;
  }
  return c;
}

RecallCurve read_recall_curve(const std::string& path) {
  Metadata meta;
  read_safetensors(path, &meta);
  const auto get = [&](const char* key) {
    const auto it = meta.find(key);
    return it == meta.end() ? std::string() : it->second;
  };
  try {
    return parse_recall_curve(get("curve"), get("curve_pairs"), get("curve_every"));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(path + ": " + e.what());
  }
}

RecallCurve recall_curve_of(RecallArch arch, std::size_t d_model, const std::string& dir) {
  const std::string name = recall_checkpoint_name(arch, d_model);
  return read_recall_curve(dir.empty() ? require_data_file(name) : dir + "/" + name.substr(name.find('/') + 1));
}

RecallPlateau judge_recall_plateau(const RecallCurve& c) {
  RecallPlateau p;
  p.chance = c.pairs ? 1.0 / double(c.pairs) : NAN;
  std::size_t best = 0, best_start = 0;
  for (std::size_t i = 0; i < c.accuracy.size();) {  // the longest run of evals within the band
    std::size_t j = i;
    while (j < c.accuracy.size() && std::abs(c.accuracy[j] - p.chance) <= kPlateauBand) ++j;
    if (j - i > best) best = j - i, best_start = i;
    i = j > i ? j : i + 1;
  }
  double sum = 0.0;
  p.plateau_min = p.plateau_max = p.plateau_first = p.plateau_last = NAN;
  for (std::size_t i = best_start; i < best_start + best; ++i) {
    sum += c.accuracy[i];
    p.plateau_min = i == best_start ? c.accuracy[i] : std::min(p.plateau_min, double(c.accuracy[i]));
    p.plateau_max = i == best_start ? c.accuracy[i] : std::max(p.plateau_max, double(c.accuracy[i]));
  }
  if (best) p.plateau_first = c.accuracy[best_start], p.plateau_last = c.accuracy[best_start + best - 1];
  p.plateau_steps = best * c.every;
  p.plateau_from = best ? (best_start + 1) * c.every : 0, p.plateau_to = best ? (best_start + best) * c.every : 0;
  p.plateau_mean = best ? sum / double(best) : NAN;
  p.final_accuracy = c.accuracy.empty() ? NAN : c.accuracy.back();
  p.final_step = c.accuracy.size() * c.every;
  p.long_plateau = judge_at_least(c.accuracy.empty() ? NAN : double(p.plateau_steps), double(kPlateauSteps));
  return p;
}

double recall_curve_at(const RecallCurve& c, std::size_t step) {
  if (c.every == 0 || step == 0 || step % c.every != 0 || step / c.every > c.accuracy.size()) return NAN;
  return c.accuracy[step / c.every - 1];
}

RecallModel load_recall_model(const std::string& path, RecallArch arch, std::size_t d_model, std::size_t* steps) {
  Rng rng(0);
  RecallModel m = recall_model_init(recall_model_config(arch, d_model), rng);
  std::vector<TensorSlot> slots;
  visit_recall_params(m, [&](const std::string& name, auto& t) { slots.push_back({name, shape_of(t), t.data()}); });
  Metadata meta;
  load_tensors(path, slots, false, &meta, {{"model", recall_arch_id(arch)}, {"d_model", std::to_string(d_model)}});
  if (steps) {
    const auto it = meta.find("steps");
    *steps = it == meta.end() ? 0 : std::size_t(std::stoul(it->second));
  }
  return m;
}

const RecallCell& RecallTable::at(RecallArch a, std::size_t d, std::size_t n) const {
  for (const auto& c : cells)
    if (c.arch == a && c.d_model == d && c.pairs == n) return c;
  throw std::out_of_range(std::string("RecallTable: no cell for ") + recall_arch_id(a) + " d = " + std::to_string(d) +
                          ", pairs = " + std::to_string(n));
}

std::size_t RecallTable::steps_of(RecallArch a, std::size_t d) const {
  for (const auto& s : steps)
    if (s.arch == a && s.d_model == d) return s.steps;
  return 0;
}

RecallVerdicts judge_recall(const RecallTable& t, std::size_t window) {
  if (t.widths.empty() || t.pairs.empty()) throw std::invalid_argument("judge_recall: an empty table");
  RecallVerdicts v;
  const std::size_t wide = t.widths.back(), narrow = t.widths.front(), most = t.pairs.back();
  double att_min = 1.0;
  for (std::size_t d : t.widths)
    for (std::size_t n : t.pairs) att_min = std::min(att_min, t.at(RecallArch::attention, d, n).accuracy);
  v.attention_high = judge_at_least(att_min, 0.9, 0.7);
  v.gap_attention = t.at(RecallArch::attention, wide, most).accuracy;
  v.gap_ssm = t.at(RecallArch::ssm, wide, most).accuracy;
  v.gap_hybrid = t.at(RecallArch::hybrid, wide, most).accuracy;
  v.ssm_wall = judge_at_most(v.gap_ssm - v.gap_attention, -0.1);
  v.ssm_rises_with_state = judge_greater(t.at(RecallArch::ssm, wide, most).accuracy,
                                         t.at(RecallArch::ssm, narrow, most).accuracy, 0.05);
  v.linear_rises_with_state = judge_greater(t.at(RecallArch::linear_attention, wide, most).accuracy,
                                            t.at(RecallArch::linear_attention, narrow, most).accuracy, 0.05);
  const double gap = v.gap_attention - v.gap_ssm;
  v.hybrid_closes_gap = judge_at_least(gap > 0.05 ? (v.gap_hybrid - v.gap_ssm) / gap : NAN, 0.8, 0.4);
  v.ssm_fewest = judge_at_least(t.at(RecallArch::ssm, wide, t.pairs.front()).accuracy, 0.9, 0.7);
  v.window_falls = judge_at_most(t.at(RecallArch::sliding_window, wide, most).accuracy - v.gap_attention, -0.1);
  for (std::size_t n : t.pairs)
    if (3 * n <= window) v.window_full_pairs = std::max(v.window_full_pairs, n);
  double worst_gap = NAN;
  if (v.window_full_pairs > 0)
    for (std::size_t d : t.widths) {
      const double gap = t.at(RecallArch::attention, d, v.window_full_pairs).accuracy -
                         t.at(RecallArch::sliding_window, d, v.window_full_pairs).accuracy;
      if (!(gap <= worst_gap)) {
        worst_gap = gap;
        v.window_gap_width = d;
      }
    }
  v.window_matches_attention = v.window_full_pairs == 0 ? Verdict{NAN, 0.05, 0.05, Outcome::inconclusive}
                                                        : judge_at_most(worst_gap, 0.05);
  if (t.window_ceiling.size() == t.pairs.size()) {
    double worst = NAN, blind = 0;
    for (std::size_t k = 0; k < t.pairs.size(); ++k) {
      const double ceiling = t.window_ceiling[k];
      blind += (1.0 - ceiling) / double(t.pairs.size());
      if (ceiling >= 1.0) continue;  // every value in reach: the window equals attention there
      double best = 0;
      for (std::size_t d : t.widths) best = std::max(best, t.at(RecallArch::sliding_window, d, t.pairs[k]).accuracy);
      if (!(std::abs(best - ceiling) <= worst)) {
        worst = std::abs(best - ceiling);
        v.window_ceiling_pairs = t.pairs[k];
      }
    }
    v.blind_share = blind;
    v.window_at_ceiling = judge_at_most(worst, 0.05, 0.1);
  } else {
    v.window_at_ceiling = Verdict{NAN, 0.05, 0.1, Outcome::inconclusive};
  }
  v.bytes_ssm = double(t.at(RecallArch::ssm, wide, most).state_bytes);
  v.bytes_linear = double(t.at(RecallArch::linear_attention, wide, most).state_bytes);
  v.acc_linear = t.at(RecallArch::linear_attention, wide, most).accuracy;
  const double byte_ratio = std::max(v.bytes_ssm, v.bytes_linear) / std::max(1.0, std::min(v.bytes_ssm, v.bytes_linear));
  v.same_bytes_differ = byte_ratio <= 1.5 ? judge_greater(v.acc_linear, v.gap_ssm, 0.1)
                                          : Verdict{NAN, 0.1, 0.1, Outcome::inconclusive};
  return v;
}

std::vector<RecallTrained> train_recall_suite(const RecallSuite& suite, const RecallTrainConfig& cfg,
                                              const std::string& dir,
                                              const std::function<void(const RecallTrained&)>& done,
                                              const std::vector<RecallArch>& only) {
  std::vector<RecallTrained> out;
  RecallTrainConfig tc = cfg;
  tc.pairs = suite.pairs;
  const auto chosen = [&](RecallArch a) { return only.empty() || std::find(only.begin(), only.end(), a) != only.end(); };
  const auto path_of = [&](RecallArch a, std::size_t d) {
    const std::string name = recall_checkpoint_name(a, d);
    return dir + "/" + name.substr(name.find('/') + 1);
  };
  // Every target checked before the first model trains (minutes each), not when it is saved.
  for (RecallArch a : recall_archs())
    if (chosen(a))
      for (std::size_t d : suite.widths) check_output_file(path_of(a, d), "--train", /*new_folder=*/true);
  for (RecallArch a : recall_archs()) {
    if (!chosen(a)) continue;
    tc.max_steps = a == RecallArch::ssm ? cfg.ssm_max_steps : cfg.max_steps;
    for (std::size_t d : suite.widths) {
      tc.lr = a == RecallArch::ssm && d >= 64 ? cfg.ssm_lr_from_64 : cfg.lr;
      Rng rng(cfg.seed, /*stream=*/d);
      RecallModel m = recall_model_init(recall_model_config(a, d), rng);
      RecallTrained r{a, d, train_recall_model(m, tc)};
      prepare_output_folder(path_of(a, d));
      save_recall_model(path_of(a, d), m, a, r.report);
      if (done) done(r);
      out.push_back(r);
    }
  }
  return out;
}

RecallArch parse_recall_arch(const std::string& id) {
  for (RecallArch a : recall_archs())
    if (id == recall_arch_id(a)) return a;
  throw std::invalid_argument("unknown MQAR model '" + id + "': choose attention, window, linear, ssm or hybrid");
}

RecallTable evaluate_recall_suite(const RecallSuite& suite, const std::string& dir) {
  RecallTable t;
  t.widths = suite.widths;
  t.pairs = suite.pairs;
  t.eval_seqs = suite.eval_seqs;
  for (std::size_t n : suite.pairs)
    t.window_ceiling.push_back(
        recall_window_ceiling(n, suite.eval_seqs, suite.eval_seed, RecallModelConfig{}.window));
  for (RecallArch a : recall_archs())
    for (std::size_t d : suite.widths) {
      const std::string name = recall_checkpoint_name(a, d);
      const std::string path = dir.empty() ? require_data_file(name) : dir + "/" + name.substr(name.find('/') + 1);
      std::size_t steps = 0;
      const RecallModel m = load_recall_model(path, a, d, &steps);
      t.steps.push_back({a, d, steps});
      for (std::size_t n : suite.pairs)
        t.cells.push_back({a, d, n, recall_accuracy(m, n, suite.eval_seqs, suite.eval_seed),
                           recall_state_bytes(m.cfg, 3 * n)});
    }
  return t;
}

}  // namespace attn
