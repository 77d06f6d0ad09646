// The articles' claims about attention weights, as measurements (chapter 10):
//   by layer      per head entropy, uniformity and mean attention distance, averaged by layer
//                 (Clark et al. 2019 §3; the ViT paper's distance, Dosovitskiy et al. 2021)
//   alignment     teacher-forced argmax of a seq2seq model's α against the corpus's alignment
//   perturbation  a head's weights permuted / made uniform / zeroed: total variation distance of
//                 the output distribution and the loss change, beside the same figures between
//                 two models trained from different seeds (Jain & Wallace 2019; Wiegreffe &
//                 Pinter 2019 ask for exactly this baseline)
//   importance    per input token: attention, gradient × input, leave-one-out; Kendall τ
// All of it on the attention-only model of attn/models/attn_only.hpp or on plain weight tensors,
// so that any model that can hand over its per-layer weights is measured the same way.
#pragma once

#include <cstdint>
#include <vector>

#include "attn/attention/attention_stats.hpp"
#include "attn/data/corpus.hpp"
#include "attn/models/attn_only.hpp"
#include "attn/models/decoder_lm.hpp"
#include "attn/models/transformer.hpp"
#include "attn/models/seq2seq.hpp"

namespace attn {

// ---- by layer --------------------------------------------------------------------------------
struct HeadStat {
  std::size_t layer = 0, head = 0;
  double entropy = 0.0;          // nats, mean over rows
  double uniformity = 0.0;       // H / log n, 1 = uniform
  double distance = 0.0;         // tokens
  double previous_token = 0.0;   // mean P_i,i−1
  double prefix_matching = 0.0;  // 0 when the inputs repeat no token
};
// examples[e]: per layer (H, T_q, T_k) weights of input e; tokens[e]: its T_k key tokens (may be
// empty: prefix matching 0). Every figure is the mean over the examples.
std::vector<HeadStat> head_stats(const std::vector<std::vector<Tensor3>>& examples,
                                 const std::vector<std::vector<int>>& tokens, bool causal);
struct LayerStat {
  std::size_t layer = 0;
  double entropy = 0.0, uniformity = 0.0, distance = 0.0;  // means over the layer's heads
};
std::vector<LayerStat> layer_means(const std::vector<HeadStat>& heads);
// Baselines: what a head with uniform weights over the keys each row may see (causal: 0 … i)
// scores, on inputs of these lengths / tokens, by the same definitions as head_stats. The mean
// over the inputs of mean_attention_distance; of prefix_matching_score (0 when none is given); of
// previous_token_score, causal (0 when none is given).
double uniform_distance(const std::vector<std::size_t>& lengths, bool causal);
double uniform_prefix_matching(const std::vector<std::vector<int>>& tokens);
double uniform_previous_token(const std::vector<std::size_t>& lengths);

// ---- alignment -------------------------------------------------------------------------------
// Teacher-forced α of a seq2seq model with attention for one pair: (len(tgt), S), row i = the
// weights while predicting target word i.
Mat seq2seq_teacher_alignment(const Seq2Seq& m, const SentencePair& pair, const Vocab& src_vocab,
                              const Vocab& tgt_vocab);
// Share of target words (over all pairs) whose argmax source word is the aligned one.
double seq2seq_alignment_accuracy(const Seq2Seq& m, const std::vector<SentencePair>& pairs,
                                  const Vocab& src_vocab, const Vocab& tgt_vocab);

// ---- perturbation ----------------------------------------------------------------------------
struct OutputChange {
  double tvd = 0.0;          // mean over scored positions of ½Σ|p − p'|
  double loss = 0.0;         // the changed model's mean loss over scored positions
  double loss_change = 0.0;  // loss − the unchanged model's
};
// The model with `edits` applied against the same model without (tokens (B·T), targets −1 = unscored).
OutputChange edit_effect(const AttnOnly& m, const std::vector<int>& tokens, const std::vector<int>& targets,
                         std::size_t batch, const std::vector<HeadEditSpec>& edits);
// Model b against model a on the same inputs (loss_change = loss_b − loss_a).
OutputChange model_difference(const AttnOnly& a, const AttnOnly& b, const std::vector<int>& tokens,
                              const std::vector<int>& targets, std::size_t batch);

// ---- importance: attention vs gradients vs leave-one-out -------------------------------------
struct TokenImportance {
  std::vector<std::vector<double>> attention;  // per layer: mean over heads of P[query, j], j ≤ query
  std::vector<double> grad_input;              // |Σ_c ∂loss/∂x_0[j, c] · x_0[j, c]|
  std::vector<double> leave_one_out;           // loss with key j hidden from every other query − loss
};
// The loss of predicting `target` at position `query` of one sequence.
TokenImportance token_importance(const AttnOnly& m, const std::vector<int>& tokens, std::size_t query, int target);
struct ImportanceAgreement {
  std::vector<double> attn_vs_loo, attn_vs_grad;  // per layer: mean Kendall τ over the sequences
  std::vector<double> attn_top1;                  // per layer: share whose largest weight is LOO's top token
  double grad_top1 = 0.0;                         // the same for gradient × input
  double grad_vs_loo = 0.0;
  double uniform_vs_loo = 0.0;  // uniform attention: τ_b = 0 (it ranks nothing)
  double random_vs_loo = 0.0;   // random scores: mean τ (chance)
  double random_spread = 0.0;   // standard error of that mean (standard_error of random_taus)
  double random_top1 = 0.0;     // random scores: share whose largest is LOO's top token
  double chance_top1 = 0.0;     // the mean over the sequences of 1 / (tokens ranked): a blind guess
  std::size_t sequences = 0;
  // Each sequence's τ against leave-one-out, for standard errors of the means and of differences.
  std::vector<std::vector<double>> attn_taus;  // per layer, per sequence
  std::vector<double> grad_taus, random_taus;  // per sequence
};
// Standard error of the mean of xs (sample sd / √n; 0 for fewer than two values).
double standard_error(const std::vector<double>& xs);
// For each sequence s: the loss of predicting sequences[s][queries[s] + 1] at position queries[s].
ImportanceAgreement importance_agreement(const AttnOnly& m, const std::vector<std::vector<int>>& sequences,
                                         const std::vector<std::size_t>& queries, std::uint64_t seed);

// ---- the chapter 08 Transformer --------------------------------------------------------------
struct PairAttention {
  std::vector<Tensor3> enc_self;  // per encoder layer (H, S, S)
  std::vector<Tensor3> dec_self;  // per decoder layer (H, T, T), T = len(tgt) + 1 (<eos> step last)
  std::vector<Tensor3> cross;     // per decoder layer (H, T, S)
};
// Teacher-forced weights of one sentence pair.
PairAttention transformer_attention(const Transformer& m, const SentencePair& pair, const Vocab& src_vocab,
                                           const Vocab& tgt_vocab);
struct CrossAlignment {
  Mat accuracy;                 // (dec_layers, heads): share of target words whose argmax is aligned
  std::size_t words = 0;        // target words scored
  // Per head (layer · heads + head), per sentence: the hits, and each sentence's words scored (a
  // paired standard error of the gap between two heads comes from these).
  std::vector<std::vector<std::size_t>> hits_by_sentence;
  std::vector<std::size_t> words_by_sentence;
  std::vector<HeadStat> enc;    // encoder self-attention head stats over the same sentences
  std::vector<std::size_t> enc_lengths;  // each sentence's encoder positions (for uniform_distance)
};
CrossAlignment transformer_alignment(const Transformer& m, const std::vector<SentencePair>& pairs,
                                     const Vocab& src_vocab, const Vocab& tgt_vocab);

// ---- the chapter 09 language model -----------------------------------------------------------
struct LmInduction {
  std::vector<HeadStat> heads;       // prefix matching etc. per head, over the repeated sequences
  double first = 0.0, second = 0.0;  // mean next-token loss on each copy's tokens 1 … period − 1
  double difference_se = 0.0;        // standard error of the mean of (first − second) per sequence
  double uniform_prefix = 0.0;       // uniform_prefix_matching of the same sequences
  std::size_t sequences = 0, period = 0;
};
// Each passage (all of one length, 2·length ≤ the model's context) followed by itself: the losses
// on the first and on the second copy, and the heads' stats over the doubled sequences.
LmInduction decoder_lm_repeats(const DecoderLM& m, const std::vector<std::vector<int>>& passages);
// n sequences of `period` random token ids (uniform over the vocabulary, drawn from seed), each
// repeated twice: Olsson et al.'s test on a trained LM.
LmInduction decoder_lm_induction(const DecoderLM& m, std::size_t period, std::size_t n, std::uint64_t seed);
// n passages of `period` token ids drawn uniformly from 0 … vocab − 1 (PCG32 seed): the ids above.
std::vector<std::vector<int>> random_passages(std::size_t vocab, std::size_t period, std::size_t n,
                                              std::uint64_t seed);
// n passages of `period` consecutive tokens, spread evenly over `tokens` (throws when they do not fit).
std::vector<std::vector<int>> text_passages(const std::vector<int>& tokens, std::size_t period, std::size_t n);
// Head stats of the LM on `windows` consecutive windows of `time` tokens of real text (fewer when
// the text is short; throws std::invalid_argument when not even one fits).
std::vector<HeadStat> decoder_lm_text_stats(const DecoderLM& m, const std::vector<int>& tokens, std::size_t windows,
                                            std::size_t time);

}  // namespace attn
