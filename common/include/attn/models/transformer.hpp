// The Transformer of Vaswani et al. 2017 at toy scale, with a hand-written backward pass:
//   x = E_src[src]·√d + PE        encoder layer:  self-attention, residual, LayerNorm, ReLU FFN
//   y = E_tgt[tgt_in]·√d + PE     decoder layer:  causal self-attention, cross-attention to the
//                                                 encoder output ("memory"), FFN
//   logits = h·W_out + b_out      (W_out = E_tgtᵀ when tie_output)
// Each sub-layer F is wrapped with a residual and a LayerNorm (ε = 1e-5), placed either way:
//   Post-Norm (the paper, §3.1):       z = LN(x + F(x))
//   Pre-Norm (Xiong et al. 2020):      z = x + F(LN(x)),  and a final LN after the last layer
// Dropout is left out (this toy corpus is generated from rules and has 20000 pairs: nothing to
// regularise against). Sizes: B batch, S source length, T target length, d = d_model, H heads,
// F = d_ff, V vocabularies. Every kernel is a template compiled for float (training) and double
// (finite-difference checks). Tests: tests/core/test_transformer.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/attention/multi_head.hpp"
#include "attn/data/batching.hpp"
#include "attn/nn/layernorm.hpp"
#include "attn/nn/linear.hpp"
#include "attn/tensor/params.hpp"
#include "attn/tensor/rng.hpp"
#include "attn/tensor/tensor_t.hpp"

namespace attn {

enum class NormPlacement { Post, Pre };
const char* norm_name(NormPlacement n);           // "post", "pre"
NormPlacement norm_from_name(const std::string&);  // throws std::invalid_argument

struct TransformerModelConfig {
  std::size_t src_vocab = 0, tgt_vocab = 0;
  std::size_t d_model = 64;
  std::size_t n_heads = 4;
  std::size_t d_ff = 256;
  std::size_t enc_layers = 2;
  std::size_t dec_layers = 2;
  NormPlacement norm = NormPlacement::Post;
  bool tie_output = true;      // logits = h·E_tgtᵀ + b_out (Press & Wolf 2017; the paper, §3.4)
  std::size_t max_len = 128;   // rows of the sinusoidal table (source and target positions)
};

template <class T>
struct EncoderLayerT {
  MultiHeadT<T> self;  // d -> d
  NormT<T> ln1;        // with self-attention
  LinearT<T> ff1;      // d -> F, then ReLU
  LinearT<T> ff2;      // F -> d
  NormT<T> ln2;        // with the feed-forward
};

template <class T>
struct DecoderLayerT {
  MultiHeadT<T> self;   // causal
  NormT<T> ln1;
  MultiHeadT<T> cross;  // queries from the decoder, keys and values from the memory
  NormT<T> ln2;
  LinearT<T> ff1, ff2;
  NormT<T> ln3;
};

template <class T>
struct TransformerT {
  TransformerModelConfig cfg;
  MatT<T> src_emb, tgt_emb;            // (Vs, d), (Vt, d) ~ N(0, 1/d), scaled by √d when used
  std::vector<EncoderLayerT<T>> enc;
  std::vector<DecoderLayerT<T>> dec;
  NormT<T> enc_norm, dec_norm;         // Pre-Norm only: the final LayerNorms (empty for Post)
  LinearT<T> out;                      // untied: (d, Vt) + (Vt); tied: w empty, b (Vt)
};
using Transformer = TransformerT<float>;
using TransformerD = TransformerT<double>;

// ---- named parameters ----------------------------------------------------------------------------
// Calls f(name, p.x, q.x, …) for every parameter tensor x of the models ps (same structure), in a
// fixed order: "src_emb", "tgt_emb", "enc.0.self.w_q", …, "enc.0.ln1.gamma", "enc.0.ff1.w", …,
// "dec.1.cross.b_o", "enc_norm.gamma", "out.w", "out.b". Empty tensors (absent biases, Post-Norm's
// final norms, a tied output weight) are visited too; callers skip them where they must.
// One visitor serves counting, zeros_like, float↔double, the registry and checkpoints.
template <class F, class... M>
void for_each_param(F&& f, M&... ms);

// Fresh weights, deterministic by rng: embeddings N(0, 1/d); attention and linear U(±1/√fan_in),
// biases 0 (multi_head_init, linear_init); LayerNorm γ = 1, β = 0.
Transformer transformer_init(const TransformerModelConfig& cfg, Rng& rng);
template <class T> TransformerT<T> zeros_like(const TransformerT<T>& m);
TransformerD to_double(const Transformer& m);
void register_params(ParamRegistry& reg, Transformer& m, Transformer& grad);
std::size_t parameter_count(const Transformer& m);

// ---- one layer (exposed for tests, exports and chapters) ----------------------------------------
// One LayerNorm site: its input rows, output rows and statistics (B·L rows of d).
template <class T>
struct NormSiteT {
  MatT<T> in, out;
  VecT<T> mean, rstd;
};

template <class T>
struct EncoderLayerCacheT {
  Tensor3T<T> x;                  // (B, S, d) layer input
  Tensor3T<T> att_in;             // what self-attention reads: x (Post) or LN1(x) (Pre)
  MultiHeadCacheT<T> att;         // weights (B, H, S, S)
  Tensor3T<T> att_out;            // (B, S, d)
  Tensor3T<T> h1;                 // after the first residual (+ LN1 for Post)
  Tensor3T<T> ff_in, ff_hidden, ff_act;  // FFN input (h1 or LN2(h1)), (B, S, F) before/after ReLU
  Tensor3T<T> y;                  // (B, S, d) layer output
  NormSiteT<T> ln1, ln2;
};

template <class T>
struct DecoderLayerCacheT {
  Tensor3T<T> x;                  // (B, T, d)
  Tensor3T<T> self_in;            // x (Post) or LN1(x) (Pre)
  MultiHeadCacheT<T> self_att;    // weights (B, H, T, T)
  Tensor3T<T> self_out;
  Tensor3T<T> h1;
  Tensor3T<T> cross_in;           // h1 (Post) or LN2(h1) (Pre)
  MultiHeadCacheT<T> cross_att;   // weights (B, H, T, S)
  Tensor3T<T> cross_out;
  Tensor3T<T> h2;
  Tensor3T<T> ff_in, ff_hidden, ff_act;
  Tensor3T<T> y;
  NormSiteT<T> ln1, ln2, ln3;
};

// x: (B, S, d) -> cache.y: (B, S, d)
template <class T>
void encoder_layer_forward(EncoderLayerCacheT<T>& cache, const Tensor3T<T>& x, const EncoderLayerT<T>& p,
                           NormPlacement norm);
// dy: (B, S, d) -> dx (+=), dp (+=)
template <class T>
void encoder_layer_backward(Tensor3T<T>& dx, EncoderLayerT<T>& dp, const Tensor3T<T>& dy,
                            const EncoderLayerCacheT<T>& cache, const EncoderLayerT<T>& p, NormPlacement norm);
// x: (B, T, d), memory: (B, S, d) -> cache.y: (B, T, d); self-attention is causal.
template <class T>
void decoder_layer_forward(DecoderLayerCacheT<T>& cache, const Tensor3T<T>& x, const Tensor3T<T>& memory,
                           const DecoderLayerT<T>& p, NormPlacement norm);
// dy: (B, T, d) -> dx (+=), dmemory (+=), dp (+=)
template <class T>
void decoder_layer_backward(Tensor3T<T>& dx, Tensor3T<T>& dmemory, DecoderLayerT<T>& dp, const Tensor3T<T>& dy,
                            const DecoderLayerCacheT<T>& cache, const Tensor3T<T>& memory,
                            const DecoderLayerT<T>& p, NormPlacement norm);

// ---- the whole model, teacher-forced -------------------------------------------------------------
template <class T>
struct TransformerTapeT {
  std::size_t batch = 0, src_len = 0, tgt_len = 0;
  Tensor3T<T> src_x, tgt_x;              // embeddings·√d + positions
  std::vector<EncoderLayerCacheT<T>> enc;
  NormSiteT<T> enc_norm;                 // Pre-Norm only
  Tensor3T<T> memory;                    // (B, S, d) encoder output
  std::vector<DecoderLayerCacheT<T>> dec;
  NormSiteT<T> dec_norm;
  MatT<T> feats;                         // (B·T, d) the decoder's output rows
  MatT<T> probs;                         // (B·T, Vt)
};
using TransformerTape = TransformerTapeT<float>;

// Label smoothing ε of the loss (the paper's 0.1, §5.4).
constexpr double kLabelSmoothing = 0.1;

// Encoder only: src ids (B·S) -> tape.src_x, tape.enc, tape.memory.
template <class T>
void transformer_encode(TransformerTapeT<T>& tape, const TransformerT<T>& m, const std::vector<int>& src,
                        std::size_t batch, std::size_t src_len);
// Teacher-forced mean label-smoothed cross-entropy over the batch's target tokens (<pad> ignored).
template <class T>
T transformer_forward(TransformerTapeT<T>& tape, const TransformerT<T>& m, const Batch& batch,
                      T label_smoothing = T(kLabelSmoothing));
// Gradients of that loss, accumulated into grad.
template <class T>
void transformer_backward(TransformerT<T>& grad, const TransformerTapeT<T>& tape, const TransformerT<T>& m,
                          const Batch& batch, T label_smoothing = T(kLabelSmoothing));

// Gradient norm of each layer's parameters ("enc.0", …, "dec.1", and "embeddings", "out"), in the
// for_each_param order of first appearance: the Post-Norm vs Pre-Norm study of chapter 08.
std::vector<std::pair<std::string, double>> layer_grad_norms(const Transformer& grad);

}  // namespace attn

#include "attn/models/transformer_params.hpp"
