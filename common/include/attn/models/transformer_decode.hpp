// Decoding with the Transformer of attn/models/transformer.hpp, and its attention weights:
//   greedy   y_i = argmax p(y | y_<i, x), one token at a time, until <eos> or max_len
//   beam     keeps the `beam` best partial translations by Σ log p; a finished one (ending in
//            <eos>) is ranked by Σ log p / lp(|Y|), lp = ((5 + |Y|) / 6)^α, |Y| counting <eos>
//            (GNMT length penalty, Wu et al. 2016, eq. 14; α = 0.6)
// Both decode incrementally: each layer keeps the keys and values of the tokens so far (a KV
// cache), and the cross-attention keys and values of the source are projected once per sentence;
// an identity test checks the cached steps against the teacher-forced forward.
#pragma once

#include <cstddef>
#include <vector>

#include "attn/data/bleu.hpp"
#include "attn/data/corpus.hpp"
#include "attn/models/transformer.hpp"
#include "attn/tensor/tensor.hpp"

namespace attn {

constexpr std::size_t kBeamSize = 4;
constexpr double kLengthPenaltyAlpha = 0.6;

// GNMT's lp(Y) = ((5 + len) / 6)^α.
double gnmt_length_penalty(std::size_t len, double alpha);

// src ids (B·S) of B sentences of length S -> one output each (without <eos>).
std::vector<std::vector<int>> transformer_greedy(const Transformer& m, const std::vector<int>& src, std::size_t batch,
                                                 std::size_t src_len, std::size_t max_len);
std::vector<std::vector<int>> transformer_beam(const Transformer& m, const std::vector<int>& src, std::size_t batch,
                                               std::size_t src_len, std::size_t max_len,
                                               std::size_t beam = kBeamSize, double alpha = kLengthPenaltyAlpha);

// The next-token log-probabilities after each prefix, computed with the KV cache: row i is
// log p(· | tgt[0 … i], src) for one sentence; tgt starts with <bos>. -> (len(tgt), Vt)
Mat transformer_step_log_probs(const Transformer& m, const std::vector<int>& src, const std::vector<int>& tgt);

// One beam-search step for one sentence (chapter 08's exercise checks against it): from the
// live hypotheses' cumulative log-probabilities cum (K,) and next-token log-probabilities
// logp (K, V), the `width` best (parent, token, score) by cum[k] + logp(k, v), best first; ties
// go to the lower (parent, token).
struct BeamCandidate {
  std::size_t parent = 0;
  int token = 0;
  double score = 0.0;
};
std::vector<BeamCandidate> beam_candidates(const std::vector<double>& cum, const Mat& logp, std::size_t width);

// Every attention weight of one sentence pair, from the teacher-forced pass on tgt_in = <bos> y…:
// rows of the decoder maps are its inputs <bos>, y_1 … y_n, i.e. the steps that write y_1 … y_n, <eos>.
// The teacher-forced pass of one sentence pair (B = 1; tgt_in = <bos> output…, tgt_out = output… <eos>),
// every intermediate kept: memory, each layer's input and output, attention weights.
TransformerTape transformer_teacher_forced(const Transformer& m, const std::vector<int>& src,
                                           const std::vector<int>& output);
struct TransformerAttention {
  Tensor4 enc_self;  // (enc_layers, H, S, S)
  Tensor4 dec_self;  // (dec_layers, H, T, T), T = len(output) + 1
  Tensor4 cross;     // (dec_layers, H, T, S)
};
TransformerAttention transformer_attention(const Transformer& m, const std::vector<int>& src,
                                           const std::vector<int>& output);

// Greedy (beam = 1) or beam translations of every pair, in pair order; max length = source + 10;
// batches of one source length.
std::vector<Tokens> transformer_translate_pairs(const Transformer& m, const std::vector<SentencePair>& pairs,
                                                const Vocab& src_vocab, const Vocab& tgt_vocab,
                                                std::size_t beam = 1, std::size_t batch = 64);

}  // namespace attn
