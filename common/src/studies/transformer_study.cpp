// Post-Norm vs Pre-Norm and the training step's time (see attn/studies/transformer_study.hpp).
#include "attn/studies/transformer_study.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <sstream>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "attn/data/batching.hpp"
#include "attn/data/json_fields.hpp"
#include "attn/models/transformer_train.hpp"
#include "attn/nn/optim.hpp"
#include "attn/tensor/memory.hpp"

namespace attn {

namespace {

TransformerModelConfig with_vocab(TransformerModelConfig cfg, const ToyCorpus& corpus) {
  cfg.src_vocab = corpus.source_vocab.size();
  cfg.tgt_vocab = corpus.target_vocab.size();
  return cfg;
}

// The first training batch (input order) of exactly `batch` sentences of source length src_len.
Batch batch_of_length(const ToyCorpus& corpus, std::size_t batch, std::size_t src_len) {
  for (const Batch& b : make_batches(corpus.train, corpus.source_vocab, corpus.target_vocab, batch))
    if (b.src_len == src_len && b.size == batch) return b;
  throw std::invalid_argument("no training batch of " + std::to_string(batch) + " sentences of length " +
                              std::to_string(src_len));
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

}  // namespace

namespace {
// ∂L/∂θ of fresh weights (seed) on the first training batch of `batch` sentences of 20 words.
Transformer gradient_at_init(const TransformerModelConfig& c, const ToyCorpus& corpus, std::size_t batch,
                             std::uint64_t seed) {
  const TransformerModelConfig cfg = with_vocab(c, corpus);
  Rng rng(seed);
  const Transformer m = transformer_init(cfg, rng);
  Transformer g = zeros_like(m);
  const Batch b = batch_of_length(corpus, batch, 20);
  TransformerTape tape;
  transformer_forward(tape, m, b);
  transformer_backward(g, tape, m, b);
  return g;
}
}  // namespace

InitialPredictions initial_predictions(const TransformerModelConfig& c, const ToyCorpus& corpus, std::size_t batch,
                                       std::uint64_t seed) {
  const TransformerModelConfig cfg = with_vocab(c, corpus);
  Rng rng(seed);
  const Transformer m = transformer_init(cfg, rng);
  const Batch b = batch_of_length(corpus, batch, 20);
  TransformerTape tape;
  transformer_forward(tape, m, b);
  // tape.probs: (B·T, V), one row per target position
  InitialPredictions r;
  const std::size_t V = tape.probs.shape(1);
  for (std::size_t i = 0; i < tape.probs.shape(0) && i < b.tgt_out.size(); ++i) {
    if (b.tgt_out[i] == Vocab::pad) continue;
    double h = 0.0, logs = 0.0;
    for (std::size_t j = 0; j < V; ++j) {
      const double p = std::max(double(tape.probs(i, j)), 1e-30);
      h -= p * std::log(p);
      logs += std::log(p);
    }
    r.entropy += h;
    r.unrelated_loss -= logs / double(V);
    ++r.rows;
  }
  if (r.rows) {
    r.entropy /= double(r.rows);
    r.unrelated_loss /= double(r.rows);
  }
  return r;
}

LayerGradNorms grad_norms_at_init(const TransformerModelConfig& c, const ToyCorpus& corpus, std::size_t batch,
                                  std::uint64_t seed) {
  LayerGradNorms out;
  for (const auto& [name, norm] : layer_grad_norms(gradient_at_init(c, corpus, batch, seed))) {
    out.layers.push_back(name);
    out.norms.push_back(norm);
  }
  return out;
}

FfnGradNorms ffn_w2_grad_norms(const TransformerModelConfig& c, const ToyCorpus& corpus, std::size_t batch,
                               std::uint64_t seed) {
  const Transformer g = gradient_at_init(c, corpus, batch, seed);
  auto frobenius = [](const auto& w) {
    double sq = 0.0;
    for (float v : w) sq += double(v) * double(v);
    return std::sqrt(sq);
  };
  FfnGradNorms out;
  for (const auto& l : g.enc) out.encoder.push_back(frobenius(l.ff2.w));
  for (const auto& l : g.dec) out.decoder.push_back(frobenius(l.ff2.w));
  return out;
}

std::vector<WarmupRun> warmup_study(const TransformerModelConfig& c, const ToyCorpus& corpus,
                                    const WarmupStudyConfig& sc) {
  std::vector<WarmupRun> runs;
  for (NormPlacement norm : {NormPlacement::Post, NormPlacement::Pre})
    for (bool warm : {true, false})
      for (std::uint64_t seed : sc.seeds) {
        TransformerModelConfig cfg = with_vocab(c, corpus);
        cfg.norm = norm;
        TransformerTrainConfig tc;
        tc.steps = sc.steps;
        tc.batch = sc.batch;
        tc.warmup = sc.warmup;
        tc.lr_factor = sc.lr_factor;
        tc.use_warmup = warm;
        tc.clip = 0.0;  // no clipping: it would hide what the learning rate does
        tc.validate = false;
        tc.seed = seed;
        TransformerTrainResult r;
        try {
          r = train_transformer(cfg, corpus, tc);
        } catch (const TrainingDivergedError&) {  // the optimiser met a NaN: this run diverged
          runs.push_back({norm, warm, seed, std::numeric_limits<double>::quiet_NaN()});
          continue;
        }
        const std::size_t n = std::min<std::size_t>(10, r.train_losses.size());
        double sum = 0;
        for (std::size_t i = r.train_losses.size() - n; i < r.train_losses.size(); ++i) sum += r.train_losses[i];
        const double mean = sum / double(n);
        runs.push_back({norm, warm, seed, std::isfinite(mean) ? mean : std::numeric_limits<double>::quiet_NaN()});
      }
  return runs;
}

StepTiming time_transformer_step(const TransformerModelConfig& c, const ToyCorpus& corpus, std::size_t batch,
                                 std::size_t src_len, std::size_t reps, std::uint64_t seed) {
  const TransformerModelConfig cfg = with_vocab(c, corpus);
  Rng rng(seed);
  Transformer m = transformer_init(cfg, rng), g = zeros_like(m);
  const RetainFreedMemory keep_pages;  // each step reuses the last one's memory (attn/tensor/memory.hpp)
  ParamRegistry reg;
  register_params(reg, m, g);
  AdamConfig ac;
  ac.lr = 1e-4f;
  Adam adam(reg, ac);
  const Batch b = batch_of_length(corpus, batch, src_len);
  TransformerTape tape;
  std::vector<double> ms, cpu;
  for (std::size_t i = 0; i < reps + 2; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::clock_t c0 = std::clock();
    reg.zero_grad();
    transformer_forward(tape, m, b);
    transformer_backward(g, tape, m, b);
    clip_grad_norm(reg, 1.0);
    adam.step();
    const double dt = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const double dc = 1000.0 * double(std::clock() - c0) / CLOCKS_PER_SEC;
    if (i >= 2) ms.push_back(dt), cpu.push_back(dc);
  }
  StepTiming t;
  t.median_ms = median(ms);
  t.median_cpu_ms = median(cpu);
  if (!cpu.empty()) {
    t.min_cpu_ms = *std::min_element(cpu.begin(), cpu.end());
    t.max_cpu_ms = *std::max_element(cpu.begin(), cpu.end());
  }
  t.batch = batch;
  t.src_len = src_len;
  t.tgt_len = b.tgt_len;
  t.reps = reps;
  return t;
}

PeerStepTime read_peer_step_time(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open the peer timing file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_peer_step_time(text.str(), path);
}

PeerStepTime parse_peer_step_time(const std::string& text, const std::string& path) {
  PeerStepTime p;
  try {
    const auto j = nlohmann::json::parse(text);
    p.framework = "PyTorch " + json_text(j, "torch");
    p.wall_ms = json_number(j, "pytorch_ms_per_step", 1e-6, 1e9);
    p.cpu_ms = json_number(j, "pytorch_cpu_ms_per_step", 1e-6, 1e9);
    p.batch = json_whole(j, "batch", 1, 1 << 20);
    p.src_len = json_whole(j, "src_len", 1, 1 << 20);
    p.tgt_len = json_whole(j, "tgt_len", 1, 1 << 20);
    p.threads = json_whole(j, "threads", 1, 4096);
    p.parameters = json_whole(j, "parameters", 1, std::size_t(1) << 40);
    p.load_average = json_number(j, "load_average_1min", 0.0, 1e6);
    p.measured_on = j.value("measured_on", std::string());
    p.machine = j.value("machine", std::string());
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": not a peer timing file (" + e.what() + ")");
  }
  if (!(std::isfinite(p.wall_ms) && std::isfinite(p.cpu_ms) && p.wall_ms > 0 && p.cpu_ms > 0))
    throw std::runtime_error(path + ": the step times must be finite and positive");
  return p;
}

}  // namespace attn
