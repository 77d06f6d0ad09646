// Measuring the translation models of attn/models/seq2seq.hpp on a split of the toy corpus, by source
// length (the experiment of chapters 00–02), and timing their attention score functions:
//   BLEU         corpus BLEU-4 within the bucket (attn/data/bleu.hpp), 0–100
//   exact match  % of sentences whose greedy output equals the reference token for token
//   token acc.   % of reference positions i where output[i] == reference[i] (a missing word counts
//                as wrong; extra words are not counted) — fluent but wrong output scores low here
// Greedy decoding runs in batches of one exact source length; results are deterministic.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "attn/data/bleu.hpp"
#include "attn/data/corpus.hpp"
#include "attn/models/seq2seq.hpp"
#include "attn/tensor/openblas.hpp"

namespace attn {

// OpenBLAS with one thread for the lifetime of the guard, restored after. These models' matrices
// are tiny (64 × 160 · 160 × 384): with 2 threads, 50 training steps took 4.4 s instead of 2.3 s
// (measured on the 2-core build machine), the time going to thread hand-offs.
class SingleThreadBlas : public ScopedBlasThreads {
 public:
  SingleThreadBlas() : ScopedBlasThreads(1) {}
};

// Greedy translations of every pair (same order as pairs); max length = source length + 10.
std::vector<Translation> translate_pairs(const Seq2Seq& m, const std::vector<SentencePair>& pairs,
                                         const Vocab& src_vocab, const Vocab& tgt_vocab, std::size_t batch = 64);

// Positional token accuracy of one sentence: matches / reference length (1 when both are empty).
double token_accuracy(const Tokens& hyp, const Tokens& ref);

struct BucketMetrics {
  LengthBucket bucket{0, 0};
  std::size_t sentences = 0;
  double bleu = 0.0;       // 0–100
  double exact = 0.0;      // %
  double token_acc = 0.0;  // % (over all reference tokens in the bucket)
};

struct EvalResult {
  std::vector<BucketMetrics> buckets;  // default_length_buckets() unless given
  BucketMetrics overall;               // every sentence in any bucket
  std::vector<Tokens> hyps, refs;      // decoded outputs and references, in pair order
};

EvalResult evaluate_translations(const std::vector<Tokens>& hyps, const std::vector<SentencePair>& pairs,
                                 const std::vector<LengthBucket>& buckets = default_length_buckets());
// Any translation function (a Seq2Seq, a Transformer greedy or beam, …): its outputs for pairs, in
// pair order, scored as evaluate_translations does.
using TranslateFn = std::function<std::vector<Tokens>(const std::vector<SentencePair>&)>;
EvalResult evaluate_translator(const TranslateFn& translate, const std::vector<SentencePair>& pairs,
                               const std::vector<LengthBucket>& buckets = default_length_buckets());
EvalResult evaluate_model(const Seq2Seq& m, const std::vector<SentencePair>& pairs, const Vocab& src_vocab,
                          const Vocab& tgt_vocab, const std::vector<LengthBucket>& buckets = default_length_buckets());

// Token accuracy by target position: for sentences whose length is in bucket b, the % of references'
// position-range r tokens that the output got right. ranges: inclusive 1-based, e.g. {1,5}, {6,10}.
// Returns (buckets, ranges); a cell with no tokens is NaN.
Mat position_accuracy(const std::vector<Tokens>& hyps, const std::vector<SentencePair>& pairs,
                      const std::vector<LengthBucket>& buckets, const std::vector<LengthBucket>& ranges);

// ---- measured cost -------------------------------------------------------------------------------
// Median seconds per call of one attention step (scores, softmax, context) for B = 1 query over S
// source states of size `hidden` (decoder state the same size; A = attn for additive/concat), over
// `reps` calls after a warm-up. kind: "bahdanau", "dot", "general", "concat". Bahdanau's U_a·h_j
// and concat's h̄_s·W_c[Hd:] are precomputed once per sentence (as the models do) and not timed.
// spread, when given, receives the second slowest round's time / the second fastest's (one outlier
// each side left out; 1 = the rounds agree).
double time_score_function(const std::string& kind, std::size_t src_len, std::size_t hidden, std::size_t attn,
                           std::size_t reps, std::uint64_t seed = 1, double* spread = nullptr);
// The same calls for several kinds at once, interleaved: each of `rounds` rounds times `reps` calls
// of every kind in turn, so that a change in the machine's load hits every kind of that round
// alike and the kinds' ratio can be read round by round. Returns (rounds) × (kinds) seconds per call.
std::vector<std::vector<double>> time_score_rounds(const std::vector<std::string>& kinds, std::size_t src_len,
                                                   std::size_t hidden, std::size_t attn, std::size_t reps,
                                                   std::size_t rounds, std::uint64_t seed = 1);
// Median seconds of one training step (forward + backward + Adam) of a model on a batch of `batch`
// sentences of source length src_len, over `reps` steps after one warm-up step.
double time_training_step(const Seq2SeqConfig& cfg, std::size_t batch, std::size_t src_len, std::size_t reps,
                          std::uint64_t seed = 1);
// The same for several models, interleaved (one step of each in turn, `reps` rounds), so that a
// change in the machine's load during the measurement hits every model alike; medians in order;
// *spreads (when asked for): per model, its second-slowest step / its second-fastest.
std::vector<double> time_training_steps(const std::vector<Seq2SeqConfig>& cfgs, std::size_t batch,
                                        std::size_t src_len, std::size_t reps, std::uint64_t seed = 1,
                                        std::vector<double>* spreads = nullptr);

}  // namespace attn
