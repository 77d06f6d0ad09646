// A two-layer attention-only transformer (Elhage et al. 2021, "A Mathematical Framework for
// Transformer Circuits"): no MLPs, no LayerNorm, so every path from input to logits goes through
// attention heads and can be read off. B = batch, T = time, C = d_model, V = vocabulary.
//   x_0 = W_E[tokens] + W_pos[0..T)                                  (B, T, C) residual stream
//   x_{l+1} = x_l + MHA_l(x_l)   causal, no biases (attn/attention/multi_head.hpp)
//   logits = x_L·W_U                                                 (B·T, V)
// Loss: mean cross-entropy of the next token over the positions whose target is ≥ 0.
// Backward restates each forward line; the residual adds the layer's gradient to the stream's.
// Forward can edit heads' weights on the way (attn/attention/head_intervention.hpp) and take an
// extra mask (leave-one-out); the training path never does either.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/attention/head_intervention.hpp"
#include "attn/attention/multi_head.hpp"
#include "attn/data/safetensors.hpp"
#include "attn/tensor/params.hpp"
#include "attn/tensor/rng.hpp"

namespace attn {

struct AttnOnlyConfig {
  std::size_t vocab = 64;    // V
  std::size_t d_model = 64;  // C
  std::size_t heads = 4;     // per layer; d_head = C / heads
  std::size_t layers = 2;
  std::size_t context = 64;  // rows of W_pos: the longest sequence
};

template <class T>
struct AttnOnlyT {
  AttnOnlyConfig cfg;
  MatT<T> w_e;                      // (V, C) token embedding
  MatT<T> w_pos;                    // (context, C) learned positions
  std::vector<MultiHeadT<T>> attn;  // one per layer
  MatT<T> w_u;                      // (C, V) unembedding
};
using AttnOnly = AttnOnlyT<float>;
using AttnOnlyD = AttnOnlyT<double>;

// W_E, W_pos ~ N(0, 0.02²)·… (small, GPT-2's init), attention as multi_head_init (no biases),
// W_U ~ U(±1/√C). Throws std::invalid_argument on a config that does not fit (heads ∤ C, zeros).
AttnOnly attn_only_init(const AttnOnlyConfig& cfg, Rng& rng);
template <class T> AttnOnlyT<T> zeros_like(const AttnOnlyT<T>& m);
AttnOnlyD to_double(const AttnOnly& m);
void register_params(ParamRegistry& reg, AttnOnly& m, AttnOnly& grad);
std::size_t parameter_count(const AttnOnly& m);

// One head edited during a forward pass.
struct HeadEditSpec {
  std::size_t layer = 0, head = 0;
  HeadEdit edit = HeadEdit::zero;
  std::uint64_t seed = 1;  // permute's shuffle
};

template <class T>
struct AttnOnlyCacheT {
  std::size_t batch = 0, len = 0;
  std::vector<int> tokens;               // (B·T)
  MatT<T> mask;                          // (T, T) additive mask used (causal, or the caller's)
  std::vector<Tensor3T<T>> resid;        // layers + 1 tensors (B, T, C): resid[0] = x_0
  std::vector<MultiHeadCacheT<T>> attn;  // per layer; attn[l].weights (B, H, T, T) after edits
  MatT<T> logits, probs;                 // (B·T, V)
};
using AttnOnlyCache = AttnOnlyCacheT<float>;

// tokens: (B·T) ids, row-major; targets: (B·T), −1 = not scored; T ≤ context.
// mask: (T, T) additive or empty (= causal_mask(T)). Returns the mean loss over scored positions.
template <class T>
T attn_only_forward(AttnOnlyCacheT<T>& cache, const AttnOnlyT<T>& m, const std::vector<int>& tokens,
                    const std::vector<int>& targets, std::size_t batch, const std::vector<HeadEditSpec>& edits = {},
                    const MatT<T>& mask = {});
// Gradient of that mean loss into grad (+=). d_resid0 (if given): ∂loss/∂x_0, (B, T, C), +=.
template <class T>
void attn_only_backward(AttnOnlyT<T>& grad, const AttnOnlyCacheT<T>& cache, const AttnOnlyT<T>& m,
                        const std::vector<int>& targets, Tensor3T<T>* d_resid0 = nullptr);

// Checkpoints: every parameter plus the config (and any extra tensors, e.g. a loss curve) in one
// safetensors file; written atomically.
void save_attn_only(const std::string& path, const AttnOnly& m, const TensorMap& extra = {},
                    const Metadata& metadata = {});
// Throws SafetensorsError naming the file when a tensor is missing or its shape does not fit the
// config stored with it. extra (if given) receives the tensors that are not parameters.
AttnOnly load_attn_only(const std::string& path, TensorMap* extra = nullptr, Metadata* metadata = nullptr);

}  // namespace attn
