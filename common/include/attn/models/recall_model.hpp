// The small 2-layer models chapter 12 trains on MQAR (attn/data/mqar.hpp), one sequence mixer per
// layer: softmax attention, sliding-window attention, causal linear attention or the selective
// SSM, so that a hybrid is simply a list with two kinds in it. Each block is pre-norm:
//   x ← x + mixer(conv(RMSNorm(x)))      conv: the short causal convolution of every model
//   logits = RMSNorm(x)·W_head            only at the query positions (the rest has no target)
// Templated on float and double (the double model is the gradient check's referee).
#pragma once

#include <cstddef>
#include <string>
#include <variant>
#include <vector>

#include "attn/attention/multi_head.hpp"
#include "attn/data/mqar.hpp"
#include "attn/nn/layernorm.hpp"
#include "attn/nn/linear.hpp"
#include "attn/nn/sequence_mixers.hpp"
#include "attn/tensor/params.hpp"

namespace attn {

enum class MixerKind { attention, sliding_window, linear_attention, ssm };
// "attention", "window", "linear", "ssm": checkpoint metadata and export names.
const char* mixer_id(MixerKind k);

struct RecallModelConfig {
  std::size_t vocab = 256;
  std::size_t d_model = 32;
  std::size_t d_k = 16;        // head size: heads = d_model / d_k
  std::size_t state_n = 16;    // N of the selective SSM
  std::size_t window = 16;     // w, keys a sliding-window query sees (itself included)
  std::size_t conv_taps = 2;   // K of the short convolution
  std::vector<MixerKind> layers{MixerKind::attention, MixerKind::attention};
  std::size_t heads() const { return d_model / d_k; }
};

template <class T>
using MixerT = std::variant<MultiHeadT<T>, LinearAttentionLayerT<T>, SelectiveSsmT<T>>;

template <class T>
struct RecallBlockT {
  NormT<T> norm;
  ShortConvT<T> conv;
  MixerT<T> mixer;
};

template <class T>
struct RecallModelT {
  RecallModelConfig cfg;
  MatT<T> embed;                       // (V, C)
  std::vector<RecallBlockT<T>> blocks;
  NormT<T> norm_f;
  LinearT<T> head;                     // (C, V), no bias
};
using RecallModel = RecallModelT<float>;
using RecallModelD = RecallModelT<double>;

RecallModel recall_model_init(const RecallModelConfig& cfg, Rng& rng);
template <class T> RecallModelT<T> zeros_like(const RecallModelT<T>& m);
RecallModelD to_double(const RecallModel& m);
// Every tensor by name ("embed", "block0.norm.gamma", "block1.mixer.in_x.w", …), checkpoint order.
template <class M, class F> void visit_recall_params(M& m, F&& f);
void register_params(ParamRegistry& reg, RecallModel& m, RecallModel& grad);
std::size_t parameter_count(const RecallModel& m);

// Bytes of what one sequence must keep to generate its next token after `context` tokens, float32:
// the KV cache of each attention layer (2·context·C, or 2·min(context, w)·C with a window), the
// recurrent state of the others, and each short convolution's last K − 1 inputs.
std::size_t recall_state_bytes(const RecallModelConfig& cfg, std::size_t context);

struct RecallStep {
  double loss = 0.0;         // mean cross-entropy over the queries
  std::size_t correct = 0;   // queries whose argmax is the right value
  std::size_t queries = 0;
};
// Forward over a batch; with grad non-null also the backward, accumulated into *grad.
template <class T>
RecallStep recall_model_step(const RecallModelT<T>& m, const MqarBatch& batch, RecallModelT<T>* grad = nullptr);

// ------------------------------------------------------------------ visitor (templates)
namespace detail {
template <class P, class F> void visit_multi_head(P& p, const std::string& prefix, F&& f) {
  f(prefix + ".w_q", p.w_q);
  f(prefix + ".w_k", p.w_k);
  f(prefix + ".w_v", p.w_v);
  f(prefix + ".w_o", p.w_o);
}
}  // namespace detail

template <class M, class F>
void visit_recall_params(M& m, F&& f) {
  f(std::string("embed"), m.embed);
  for (std::size_t l = 0; l < m.blocks.size(); ++l) {
    auto& b = m.blocks[l];
    const std::string pre = "block" + std::to_string(l);
    f(pre + ".norm.gamma", b.norm.gamma);
    visit_params(b.conv, pre + ".conv", f);
    std::visit([&](auto& mixer) {
      using X = std::decay_t<decltype(mixer)>;
      if constexpr (is_layer<X, MultiHeadT>::value) detail::visit_multi_head(mixer, pre + ".mixer", f);
      else visit_params(mixer, pre + ".mixer", f);
    }, b.mixer);
  }
  f(std::string("norm_f.gamma"), m.norm_f.gamma);
  visit_params(m.head, "head", f);
}

}  // namespace attn
