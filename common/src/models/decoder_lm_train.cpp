// Training loop of the decoder-only language model (see attn/models/decoder_lm_train.hpp).
#include "attn/models/decoder_lm_train.hpp"

#include <chrono>
#include <stdexcept>

#include "attn/data/text_corpus.hpp"
#include "attn/nn/optim.hpp"
#include "attn/nn/schedule.hpp"
#include "attn/nn/train_loop.hpp"
#include "attn/tensor/memory.hpp"

namespace attn {

LmTrainResult train_decoder_lm(const DecoderLMConfig& cfg, const std::vector<int>& train_tokens,
                               const std::vector<int>& valid_tokens, const LmTrainConfig& tc) {
  if (tc.steps == 0 || tc.batch == 0 || tc.time == 0 || tc.time > cfg.context)
    throw std::invalid_argument("train_decoder_lm: need steps, batch > 0 and 0 < time <= context " +
                                std::to_string(cfg.context));
  const auto t0 = std::chrono::steady_clock::now();
  const RetainFreedMemory keep_pages;  // each step reuses the last one's memory (attn/tensor/memory.hpp)
  LmTrainResult r;
  r.model = decoder_lm_init(cfg, tc.seed);
  DecoderLM grad = zeros_like(r.model);
  ParamRegistry matrices, gains, all;
  register_params(matrices, r.model, grad, ParamGroup::Matrices);
  register_params(gains, r.model, grad, ParamGroup::Gains);
  register_params(all, r.model, grad, ParamGroup::All);
  AdamConfig ac;
  ac.beta2 = tc.beta2;
  ac.weight_decay = tc.weight_decay;
  Adam opt_w(matrices, ac);
  ac.weight_decay = 0.0f;
  Adam opt_g(gains, ac);
  const Schedule sched = Schedule::warmup_cosine(tc.lr, std::int64_t(tc.warmup), std::int64_t(tc.steps), tc.min_lr);
  Rng rng(tc.seed ^ 0x9e3779b97f4a7c15ull);  // batch order: its own stream, independent of the init
  DecoderLMCacheT<float> cache;
  double since = 0.0;
  std::size_t since_n = 0;
  TrainLoop loop(tc.steps, tc.clip, tc.eval_every);
  loop.lr = [&](std::size_t step) { return learning_rate(sched, std::int64_t(step)); };
  loop.forward_backward = [&](std::size_t) {
    const LmBatch b = sample_lm_batch(train_tokens, tc.batch, tc.time, rng);
    const double loss = decoder_lm_forward(cache, r.model, b.inputs, b.targets, tc.batch);
    decoder_lm_backward(grad, cache, r.model);
    return loss;
  };
  loop.after_step = [&](const TrainStep& s) {
    since += s.loss;
    ++since_n;
    r.tokens += double(tc.batch * tc.time);
    if (tc.on_step) tc.on_step(s.step, s.loss, s.lr);
  };
  loop.validate = [&](std::size_t step) {
    const double vl = decoder_lm_eval_loss(r.model, valid_tokens, tc.eval_windows, tc.time);
    r.curve.push_back({step, since / double(since_n), vl});
    since = 0.0;
    since_n = 0;
    if (tc.on_eval) tc.on_eval(step, vl);
  };
  run_train_loop(loop, all, {&opt_w, &opt_g});
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace attn
