// Evaluation by source length and measured cost of the seq2seq models (see attn/models/seq2seq_eval.hpp).
#include "attn/models/seq2seq_eval.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>

#include "attn/data/batching.hpp"
#include "attn/tensor/memory.hpp"
#include "attn/tensor/openblas.hpp"
#include "attn/nn/optim.hpp"
#include "attn/tensor/params.hpp"

namespace attn {

std::vector<Translation> translate_pairs(const Seq2Seq& m, const std::vector<SentencePair>& pairs,
                                         const Vocab& src_vocab, const Vocab& tgt_vocab, std::size_t batch) {
  SingleThreadBlas one_thread;
  std::vector<Translation> out(pairs.size());
  for (const Batch& b : make_batches(pairs, src_vocab, tgt_vocab, batch)) {
    std::vector<Translation> t = greedy_translate(m, b.src, b.size, b.src_len, b.src_len + 10);
    for (std::size_t k = 0; k < b.size; ++k) out[b.index[k]] = std::move(t[k]);
  }
  return out;
}

double token_accuracy(const Tokens& hyp, const Tokens& ref) {
  if (ref.empty()) return hyp.empty() ? 1.0 : 0.0;
  std::size_t hits = 0;
  for (std::size_t i = 0; i < ref.size() && i < hyp.size(); ++i) hits += hyp[i] == ref[i];
  return double(hits) / double(ref.size());
}

EvalResult evaluate_translations(const std::vector<Tokens>& hyps, const std::vector<SentencePair>& pairs,
                                 const std::vector<LengthBucket>& buckets) {
  if (hyps.size() != pairs.size())
    throw std::invalid_argument("evaluate_translations: " + std::to_string(hyps.size()) + " outputs for " +
                                std::to_string(pairs.size()) + " pairs");
  EvalResult r;
  r.hyps = hyps;
  std::vector<std::size_t> lengths;
  for (const auto& p : pairs) {
    r.refs.push_back(p.tgt);
    lengths.push_back(p.src.size());
  }
  const auto bleu = bleu_by_length(r.hyps, r.refs, lengths, buckets);
  std::size_t all_n = 0, all_exact = 0, all_hits = 0, all_tokens = 0;
  BleuStats all_stats;
  for (std::size_t k = 0; k < buckets.size(); ++k) {
    BucketMetrics bm;
    bm.bucket = buckets[k];
    bm.bleu = 100.0 * bleu[k].score.bleu;
    std::size_t exact = 0, hits = 0, tokens = 0;
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      if (lengths[i] < buckets[k].lo || lengths[i] > buckets[k].hi) continue;
      ++bm.sentences;
      exact += r.hyps[i] == r.refs[i];
      for (std::size_t j = 0; j < r.refs[i].size() && j < r.hyps[i].size(); ++j) hits += r.hyps[i][j] == r.refs[i][j];
      tokens += r.refs[i].size();
      all_stats.add(bleu_stats(r.hyps[i], r.refs[i]));
    }
    bm.exact = bm.sentences ? 100.0 * double(exact) / double(bm.sentences) : 0.0;
    bm.token_acc = tokens ? 100.0 * double(hits) / double(tokens) : 0.0;
    all_n += bm.sentences;
    all_exact += exact;
    all_hits += hits;
    all_tokens += tokens;
    r.buckets.push_back(bm);
  }
  r.overall.bucket = {buckets.empty() ? 0 : buckets.front().lo, buckets.empty() ? 0 : buckets.back().hi};
  r.overall.sentences = all_n;
  r.overall.bleu = 100.0 * bleu_from_stats(all_stats).bleu;
  r.overall.exact = all_n ? 100.0 * double(all_exact) / double(all_n) : 0.0;
  r.overall.token_acc = all_tokens ? 100.0 * double(all_hits) / double(all_tokens) : 0.0;
  return r;
}

EvalResult evaluate_translator(const TranslateFn& translate, const std::vector<SentencePair>& pairs,
                               const std::vector<LengthBucket>& buckets) {
  return evaluate_translations(translate(pairs), pairs, buckets);
}

EvalResult evaluate_model(const Seq2Seq& m, const std::vector<SentencePair>& pairs, const Vocab& src_vocab,
                          const Vocab& tgt_vocab, const std::vector<LengthBucket>& buckets) {
  const auto trans = translate_pairs(m, pairs, src_vocab, tgt_vocab);
  std::vector<Tokens> hyps;
  for (const auto& t : trans) hyps.push_back(tgt_vocab.decode(t.ids));
  return evaluate_translations(hyps, pairs, buckets);
}

Mat position_accuracy(const std::vector<Tokens>& hyps, const std::vector<SentencePair>& pairs,
                      const std::vector<LengthBucket>& buckets, const std::vector<LengthBucket>& ranges) {
  if (hyps.size() != pairs.size()) throw std::invalid_argument("position_accuracy: outputs and pairs differ in count");
  Mat hits = xt::zeros<float>({buckets.size(), ranges.size()}), total = hits;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const std::size_t len = pairs[i].src.size();
    for (std::size_t b = 0; b < buckets.size(); ++b) {
      if (len < buckets[b].lo || len > buckets[b].hi) continue;
      const Tokens& ref = pairs[i].tgt;
      for (std::size_t j = 0; j < ref.size(); ++j)
        for (std::size_t r = 0; r < ranges.size(); ++r)
          if (j + 1 >= ranges[r].lo && j + 1 <= ranges[r].hi) {
            total(b, r) += 1.0f;
            hits(b, r) += (j < hyps[i].size() && hyps[i][j] == ref[j]) ? 1.0f : 0.0f;
          }
    }
  }
  Mat acc = Mat::from_shape(hits.shape());
  for (std::size_t k = 0; k < acc.size(); ++k)
    acc.data()[k] = total.data()[k] > 0 ? 100.0f * hits.data()[k] / total.data()[k] : std::numeric_limits<float>::quiet_NaN();
  return acc;
}

// ---- measured cost -------------------------------------------------------------------------------
namespace {
using Clock = std::chrono::steady_clock;
// The median of the rounds; *spread (when asked for) the second slowest / the second fastest, so
// that one round interrupted by another program does not set it alone.
double median_and_spread(std::vector<double> rounds, double* spread) {
  std::sort(rounds.begin(), rounds.end());
  const std::size_t n = rounds.size(), cut = n > 2 ? 1 : 0;
  if (spread) *spread = rounds[n - 1 - cut] / rounds[cut];
  return rounds[n / 2];
}
}  // namespace

double time_score_function(const std::string& kind, std::size_t src_len, std::size_t hidden, std::size_t attn,
                           std::size_t reps, std::uint64_t seed, double* spread) {
  SingleThreadBlas one_thread;
  Rng rng(seed);
  const Tensor3 enc = rng.normal_tensor3(1, src_len, hidden);
  const Mat s = rng.normal_mat(1, hidden);
  Mat context;
  std::vector<double> rounds;
  constexpr int kRounds = 7;  // median of 7 rounds of `reps` calls each
  if (kind == "bahdanau") {
    const Bahdanau p = bahdanau_init(hidden, hidden, attn, rng);
    Tensor3 keys;
    bahdanau_keys_forward(keys, enc, p);  // once per sentence, not timed
    BahdanauStepT<float> step;
    bahdanau_step_forward(context, step, s, enc, keys, p);  // warm-up
    for (int r = 0; r < kRounds; ++r) {
      const auto t0 = Clock::now();
      for (std::size_t k = 0; k < reps; ++k) bahdanau_step_forward(context, step, s, enc, keys, p);
      rounds.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / double(reps));
    }
    return median_and_spread(rounds, spread);
  }
  LuongConfig cfg;
  if (kind == "dot") cfg.score = LuongScore::Dot;
  else if (kind == "general") cfg.score = LuongScore::General;
  else if (kind == "concat") cfg.score = LuongScore::Concat;
  else throw std::invalid_argument("time_score_function: unknown kind '" + kind + "'");
  const Luong p = luong_init(cfg, hidden, hidden, attn, rng);
  Tensor3 keys;
  luong_keys_forward(keys, enc, p, cfg.score);  // concat's h̄_s·W_c[Hd:]: once per sentence, not timed
  LuongStepT<float> step;
  luong_forward(context, step, s, enc, keys, p, cfg);  // warm-up
  for (int r = 0; r < kRounds; ++r) {
    const auto t0 = Clock::now();
    for (std::size_t k = 0; k < reps; ++k) luong_forward(context, step, s, enc, keys, p, cfg);
    rounds.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / double(reps));
  }
  return median_and_spread(rounds, spread);
}

std::vector<std::vector<double>> time_score_rounds(const std::vector<std::string>& kinds, std::size_t src_len,
                                                   std::size_t hidden, std::size_t attn, std::size_t reps,
                                                   std::size_t rounds, std::uint64_t seed) {
  SingleThreadBlas one_thread;
  Rng rng(seed);
  const Tensor3 enc = rng.normal_tensor3(1, src_len, hidden);
  const Mat s = rng.normal_mat(1, hidden);
  // One closure per kind, each with its own weights, keys and buffers (set up once, not timed).
  std::vector<std::function<void()>> calls;
  for (const std::string& kind : kinds) {
    if (kind == "bahdanau") {
      auto p = std::make_shared<Bahdanau>(bahdanau_init(hidden, hidden, attn, rng));
      auto keys = std::make_shared<Tensor3>();
      bahdanau_keys_forward(*keys, enc, *p);  // U_a·h̄_s: once per sentence
      auto step = std::make_shared<BahdanauStepT<float>>();
      auto context = std::make_shared<Mat>();
      calls.push_back([=, &enc, &s] { bahdanau_step_forward(*context, *step, s, enc, *keys, *p); });
      continue;
    }
    LuongConfig cfg;
    if (kind == "dot") cfg.score = LuongScore::Dot;
    else if (kind == "general") cfg.score = LuongScore::General;
    else if (kind == "concat") cfg.score = LuongScore::Concat;
    else throw std::invalid_argument("time_score_rounds: unknown kind '" + kind + "'");
    auto p = std::make_shared<Luong>(luong_init(cfg, hidden, hidden, attn, rng));
    auto keys = std::make_shared<Tensor3>();
    luong_keys_forward(*keys, enc, *p, cfg.score);  // concat's h̄_s·W_c[Hd:]: once per sentence
    auto step = std::make_shared<LuongStepT<float>>();
    auto context = std::make_shared<Mat>();
    calls.push_back([=, &enc, &s] { luong_forward(*context, *step, s, enc, *keys, *p, cfg); });
  }
  for (auto& call : calls) call();  // warm-up
  std::vector<std::vector<double>> out(rounds, std::vector<double>(kinds.size()));
  for (std::size_t r = 0; r < rounds; ++r)
    for (std::size_t k = 0; k < kinds.size(); ++k) {
      const auto t0 = Clock::now();
      for (std::size_t i = 0; i < reps; ++i) calls[k]();
      out[r][k] = std::chrono::duration<double>(Clock::now() - t0).count() / double(reps);
    }
  return out;
}

namespace {
// One model ready to take training steps on a fixed batch.
struct StepBench {
  Seq2Seq m, g;
  ParamRegistry reg;
  std::unique_ptr<Adam> adam;
  Seq2SeqTape tape;
  double step(const Batch& b) {
    const auto t0 = Clock::now();
    reg.zero_grad();
    seq2seq_forward(tape, m, b);
    seq2seq_backward(g, tape, m, b);
    clip_grad_norm(reg, 1.0);
    adam->step();
    return std::chrono::duration<double>(Clock::now() - t0).count();
  }
};
}  // namespace

std::vector<double> time_training_steps(const std::vector<Seq2SeqConfig>& cfgs, std::size_t batch,
                                        std::size_t src_len, std::size_t reps, std::uint64_t seed,
                                        std::vector<double>* spreads) {
  SingleThreadBlas one_thread;
  const RetainFreedMemory keep_pages;  // each step reuses the last one's memory
  std::vector<SentencePair> pairs;
  for (std::size_t i = 0; i < batch; ++i) pairs.push_back(toy_sentence(seed * 1000003 + i, src_len));
  const Vocab sv = toy_source_vocab(), tv = toy_target_vocab();
  const Batch b = make_batches(pairs, sv, tv, batch).at(0);
  std::vector<std::unique_ptr<StepBench>> benches;
  for (const auto& cfg : cfgs) {
    Rng rng(seed);
    auto sb = std::make_unique<StepBench>();
    sb->m = seq2seq_init(cfg, rng);
    sb->g = zeros_like(sb->m);
    register_params(sb->reg, sb->m, sb->g);
    sb->adam = std::make_unique<Adam>(sb->reg, AdamConfig{2e-3f});
    sb->step(b);  // warm-up: allocations, caches
    benches.push_back(std::move(sb));
  }
  std::vector<std::vector<double>> times(cfgs.size());
  for (std::size_t r = 0; r < reps; ++r)
    for (std::size_t k = 0; k < benches.size(); ++k) times[k].push_back(benches[k]->step(b));
  std::vector<double> out;
  if (spreads) spreads->clear();
  for (auto& t : times) {
    double spread = 1.0;
    out.push_back(median_and_spread(t, &spread));
    if (spreads) spreads->push_back(spread);
  }
  return out;
}

double time_training_step(const Seq2SeqConfig& cfg, std::size_t batch, std::size_t src_len, std::size_t reps,
                          std::uint64_t seed) {
  return time_training_steps({cfg}, batch, src_len, reps, seed).at(0);
}

}  // namespace attn
