// Induction heads: the task, training and scores (see attn/studies/induction.hpp).
#include "attn/studies/induction.hpp"

#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "attn/models/seq2seq_eval.hpp"
#include "attn/nn/train_loop.hpp"
#include "attn/tensor/blas.hpp"
#include "attn/tensor/memory.hpp"

namespace attn {

std::vector<int> InductionBatch::sequence(std::size_t b) const {
  return std::vector<int>(tokens.begin() + std::ptrdiff_t(b * len), tokens.begin() + std::ptrdiff_t((b + 1) * len));
}

InductionBatch induction_batch(Rng& rng, const InductionTask& task, std::size_t batch) {
  if (task.min_period < 2 || task.min_period > task.max_period || task.max_period > task.vocab ||
      2 * task.min_period > task.length)
    throw std::invalid_argument("induction_batch: periods " + std::to_string(task.min_period) + ".." +
                                std::to_string(task.max_period) + " need 2 ≤ min ≤ max ≤ vocab (" +
                                std::to_string(task.vocab) + ") and 2·min ≤ length (" + std::to_string(task.length) + ")");
  InductionBatch b;
  b.batch = batch;
  b.len = task.length;
  b.tokens.resize(batch * task.length);
  b.targets.resize(batch * task.length);
  std::vector<int> pool(task.vocab);
  for (std::size_t s = 0; s < batch; ++s) {
    const std::size_t period = task.min_period + rng.below(std::uint32_t(task.max_period - task.min_period + 1));
    b.periods.push_back(period);
    for (std::size_t v = 0; v < task.vocab; ++v) pool[v] = int(v);
    for (std::size_t k = 0; k < period; ++k) {  // the first `period` of a partial Fisher–Yates: distinct tokens
      const std::size_t r = k + rng.below(std::uint32_t(task.vocab - k));
      std::swap(pool[k], pool[r]);
    }
    for (std::size_t i = 0; i < task.length; ++i) b.tokens[s * task.length + i] = pool[i % period];
    for (std::size_t i = 0; i < task.length; ++i)
      b.targets[s * task.length + i] = i + 1 < task.length ? b.tokens[s * task.length + i + 1] : -1;
  }
  return b;
}

std::vector<int> repeat_targets(const InductionBatch& b, std::size_t repeat) {
  std::vector<int> t = b.targets;
  for (std::size_t s = 0; s < b.batch; ++s)
    for (std::size_t i = 0; i < b.len; ++i) {
      const std::size_t r = (i + 1) / b.periods[s] + 1;  // the repeat holding the predicted token i + 1
      const bool keep = repeat == 0 ? r >= 2 : r == repeat;
      if (!keep) t[s * b.len + i] = -1;
    }
  return t;
}

InductionTrainResult train_induction(const InductionTrainConfig& cfg) {
  if (cfg.model.vocab != cfg.task.vocab || cfg.task.length > cfg.model.context)
    throw std::invalid_argument("train_induction: the model's vocabulary and context must fit the task");
  const SingleThreadBlas one_thread;  // (B·T, 64)·(64, 64) products: thread hand-offs cost more than they save
  const RetainFreedMemory keep_pages;  // each step reuses the last one's memory (attn/tensor/memory.hpp)
  const auto start = std::chrono::steady_clock::now();
  Rng init(cfg.seed), data(cfg.seed + 1000);
  InductionTrainResult r;
  r.model = attn_only_init(cfg.model, init);
  AttnOnly grad = zeros_like(r.model);
  ParamRegistry reg;
  register_params(reg, r.model, grad);
  Adam adam(reg, cfg.adam);
  AttnOnlyCache cache;
  double block = 0.0;
  std::int64_t tokens = 0;
  TrainLoop loop(cfg.steps, /*clip=*/1.0, /*valid_every=*/0);
  loop.lr = [&](std::size_t step) {  // linear warm-up, then constant
    const float warm = step < cfg.warmup ? float(step) / float(cfg.warmup) : 1.0f;
    return double(cfg.adam.lr * warm);
  };
  loop.forward_backward = [&](std::size_t) {
    const InductionBatch b = induction_batch(data, cfg.task, cfg.batch);
    const double loss = attn_only_forward(cache, r.model, b.tokens, b.targets, b.batch);
    attn_only_backward(grad, cache, r.model, b.targets);
    tokens = std::int64_t(b.tokens.size());
    return loss;
  };
  loop.after_step = [&](const TrainStep& s) {
    block += s.loss;
    if (s.step % cfg.curve_every == 0) {  // the training loss, averaged over each block of steps
      r.loss_curve.push_back(float(block / double(cfg.curve_every)));
      block = 0.0;
    }
    if (cfg.on_step) cfg.on_step(s.step, s.loss, tokens);
  };
  run_train_loop(loop, reg, {&adam});
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

std::vector<double> position_losses(const AttnOnlyCache& cache, const std::vector<int>& targets) {
  std::vector<double> out(targets.size(), std::numeric_limits<double>::quiet_NaN());
  for (std::size_t n = 0; n < targets.size(); ++n)
    if (targets[n] >= 0) out[n] = -std::log(std::max(double(cache.probs(n, std::size_t(targets[n]))), 1e-30));
  return out;
}

RepeatLosses repeat_losses(const AttnOnly& m, const InductionBatch& b, const std::vector<HeadEditSpec>& edits) {
  AttnOnlyCache cache;
  RepeatLosses r;
  r.first = attn_only_forward(cache, m, b.tokens, repeat_targets(b, 1), b.batch, edits);
  r.second = attn_only_forward(cache, m, b.tokens, repeat_targets(b, 2), b.batch, edits);
  return r;
}

Mat ov_circuit(const AttnOnly& m, std::size_t layer, std::size_t head) {
  if (layer >= m.attn.size() || head >= m.cfg.heads)
    throw std::out_of_range("ov_circuit: no head " + std::to_string(head) + " in layer " + std::to_string(layer));
  const MultiHead& a = m.attn[layer];
  const std::size_t dh = a.d_head();
  const Mat wv = xt::view(a.w_v, xt::all(), xt::range(head * dh, (head + 1) * dh));  // (C, dh)
  const Mat wo = xt::view(a.w_o, xt::range(head * dh, (head + 1) * dh), xt::all());  // (dh, C)
  const Mat ev = matmul(m.w_e, wv);                                                   // (V, dh)
  return matmul(matmul(ev, wo), m.w_u);                                               // (V, V)
}

std::vector<Tensor3> attn_only_weights(const AttnOnly& m, const std::vector<int>& tokens,
                                       const std::vector<HeadEditSpec>& edits) {
  AttnOnlyCache cache;
  attn_only_forward(cache, m, tokens, std::vector<int>(tokens.size(), -1), 1, edits);
  std::vector<Tensor3> out;
  for (const auto& a : cache.attn) out.push_back(xt::view(a.weights, 0, xt::all(), xt::all(), xt::all()));
  return out;
}

}  // namespace attn
