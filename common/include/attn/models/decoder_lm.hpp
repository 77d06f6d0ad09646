// A LLaMA-style decoder-only language model (Touvron et al. 2023), small enough to train on two
// cores: token embedding, n_layers Pre-Norm blocks, a final RMSNorm and an untied output layer.
//   block:  h  = RMSNorm(x)                              (Zhang & Sennrich 2019)
//           q  = RoPE(h·W_Q), k = RoPE(h·W_K), v = h·W_V (Su et al. 2021; H query heads, G K/V heads)
//           x' = x + Attention_causal(q, k, v)·W_O       (GQA: query head h reads K/V head h/(H/G))
//           y  = x' + SwiGLU(RMSNorm(x'))                (Shazeer 2020)
//   logits = RMSNorm(x_L)·W_out,  loss = mean cross-entropy of the next token
// RoPE pairs ADJACENT dimensions (2i, 2i+1) of each head, as attn/position/rope.hpp (chapter 05).
// Projections are right-multiplied (x·W), no biases. Forward and backward are templates compiled for
// float (training) and double (finite-difference checks of the very same code).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "attn/attention/kv_cache.hpp"
#include "attn/data/safetensors.hpp"
#include "attn/nn/layernorm.hpp"
#include "attn/nn/linear.hpp"
#include "attn/nn/swiglu.hpp"
#include "attn/position/rope.hpp"

namespace attn {

struct DecoderLMConfig {
  std::size_t vocab = 512;
  std::size_t d_model = 128;
  std::size_t n_layers = 5;
  std::size_t n_heads = 8;     // H query heads
  std::size_t n_kv_heads = 2;  // G key/value heads (divides H)
  std::size_t d_ff = 344;      // SwiGLU hidden size: (2/3)·4·128 rounded up to a multiple of 8
  std::size_t context = 256;   // longest sequence (RoPE tables, KV cache capacity)
  double rope_theta = 10000.0; // RoPE base (RoFormer, LLaMA)
  double norm_eps = 1e-5;      // RMSNorm ε
  std::size_t d_head() const { return n_heads ? d_model / n_heads : 0; }
};
// Throws std::invalid_argument naming the field when the sizes do not fit together.
void check_config(const DecoderLMConfig& cfg);
// The "config" object of the export manifest and of the checkpoint metadata (JSON text).
std::string config_json(const DecoderLMConfig& cfg);
DecoderLMConfig config_from_json(const std::string& json);  // throws std::invalid_argument

template <class T>
struct DecoderBlockT {
  NormT<T> attn_norm;            // γ: (d,)
  LinearT<T> w_q;                // (d, H·dh)
  LinearT<T> w_k, w_v;           // (d, G·dh)
  LinearT<T> w_o;                // (H·dh, d)
  NormT<T> ffn_norm;             // γ: (d,)
  SwiGLUT<T> ffn;                // W_gate, W_up: (d, d_ff), W_down: (d_ff, d)
};

template <class T>
struct DecoderLMT {
  DecoderLMConfig cfg;
  MatT<T> tok_emb;                      // (V, d)
  std::vector<DecoderBlockT<T>> blocks;  // n_layers
  NormT<T> final_norm;                  // γ: (d,)
  LinearT<T> lm_head;                   // (d, V)
  RopeTables rope;                      // (context, dh/2) cos and sin; not a parameter
};
using DecoderBlock = DecoderBlockT<float>;
using DecoderLM = DecoderLMT<float>;
using DecoderLMD = DecoderLMT<double>;

// Every parameter with its checkpoint name, in a fixed order: f(name, tensor_of_m0, tensor_of_m…).
// (Its own name: the seq2seq models' visit_params(model, f) takes its arguments the other way.)
// With one model it counts or saves; with a model and its gradient it registers both.
template <class F, class M0, class... M>
void visit_decoder_params(F&& f, M0& m0, M&... m) {
  f(std::string("tok_emb"), m0.tok_emb, m.tok_emb...);
  for (std::size_t l = 0; l < m0.blocks.size(); ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    f(p + "attn_norm", m0.blocks[l].attn_norm.gamma, m.blocks[l].attn_norm.gamma...);
    f(p + "W_Q", m0.blocks[l].w_q.w, m.blocks[l].w_q.w...);
    f(p + "W_K", m0.blocks[l].w_k.w, m.blocks[l].w_k.w...);
    f(p + "W_V", m0.blocks[l].w_v.w, m.blocks[l].w_v.w...);
    f(p + "W_O", m0.blocks[l].w_o.w, m.blocks[l].w_o.w...);
    f(p + "ffn_norm", m0.blocks[l].ffn_norm.gamma, m.blocks[l].ffn_norm.gamma...);
    f(p + "W_gate", m0.blocks[l].ffn.gate.w, m.blocks[l].ffn.gate.w...);
    f(p + "W_up", m0.blocks[l].ffn.up.w, m.blocks[l].ffn.up.w...);
    f(p + "W_down", m0.blocks[l].ffn.down.w, m.blocks[l].ffn.down.w...);
  }
  f(std::string("final_norm"), m0.final_norm.gamma, m.final_norm.gamma...);
  f(std::string("lm_head"), m0.lm_head.w, m.lm_head.w...);
}

// Initialisation (GPT-2 / llama2.c style): every matrix ~ N(0, 0.02²), and the two matrices that
// write into the residual stream (W_O, W_down) ~ N(0, (0.02/√(2·layers))²); norm gains 1.
DecoderLM decoder_lm_init(const DecoderLMConfig& cfg, std::uint64_t seed);
template <class T> DecoderLMT<T> zeros_like(const DecoderLMT<T>& m);
DecoderLMD to_double(const DecoderLM& m);
std::size_t parameter_count(const DecoderLM& m);
// Every parameter registered under its visit_decoder_params name; matrices and norm gains
// separately when asked (AdamW decays matrices only).
enum class ParamGroup { All, Matrices, Gains };
void register_params(ParamRegistry& reg, DecoderLM& m, DecoderLM& grad, ParamGroup group = ParamGroup::All);

// Checkpoints: safetensors with metadata {"model": "decoder_lm", "config": config_json(…), …}.
void save_decoder_lm(const std::string& path, const DecoderLM& m, Metadata metadata = {});
// The bytes save_decoder_lm writes (path names the file in an error only): for a set of files.
std::string decoder_lm_bytes(const DecoderLM& m, Metadata metadata, const std::string& path);
// Reads the config from the metadata, builds the model and loads it; SafetensorsError names the file.
DecoderLM load_decoder_lm(const std::string& path, Metadata* metadata = nullptr);

// ---- one block, on B sequences of T positions stacked as N = B·T rows ------------------------------
template <class T>
struct DecoderBlockCacheT {
  std::size_t batch = 0, time = 0;
  VecT<T> rstd1, rstd2;  // (N,) RMSNorm's 1/√(mean(x²)+ε)
  MatT<T> h1;            // (N, d) RMSNorm(x)
  MatT<T> q, k, v;       // (N, H·dh), (N, G·dh) ×2; q and k after RoPE
  Tensor4T<T> weights;   // (B, H, T, T) attention weights
  MatT<T> concat;        // (N, H·dh) heads side by side
  MatT<T> x1;            // (N, d) x + attention
  MatT<T> h2;            // (N, d) RMSNorm(x1)
  SwiGLUCacheT<T> ffn;
};
// x: (B·T, d) -> y: (B·T, d); positions 0 … T−1 in every sequence, causal.
template <class T>
void decoder_block_forward(MatT<T>& y, DecoderBlockCacheT<T>& cache, const MatT<T>& x, const DecoderBlockT<T>& p,
                           const DecoderLMConfig& cfg, const RopeTables& rope, std::size_t batch);
// dy: (B·T, d) -> dx (+=), dp (+=)
template <class T>
void decoder_block_backward(MatT<T>& dx, DecoderBlockT<T>& dp, const MatT<T>& dy, const MatT<T>& x,
                            const DecoderBlockCacheT<T>& cache, const DecoderBlockT<T>& p, const DecoderLMConfig& cfg,
                            const RopeTables& rope);

// ---- the whole model -------------------------------------------------------------------------------
template <class T>
struct DecoderLMCacheT {
  std::size_t batch = 0, time = 0;
  std::vector<int> inputs, targets;
  std::vector<MatT<T>> xs;  // xs[l]: input of block l (N, d); xs[L] the last block's output
  std::vector<DecoderBlockCacheT<T>> blocks;
  VecT<T> final_rstd;
  MatT<T> final_h;          // (N, d)
  MatT<T> probs;            // (N, V) softmax of the logits
};
// inputs, targets: B·T token ids (row b·T + t is position t of sequence b); T ≤ context.
// Returns the mean cross-entropy of predicting targets (nats per token).
template <class T>
T decoder_lm_forward(DecoderLMCacheT<T>& cache, const DecoderLMT<T>& m, const std::vector<int>& inputs,
                     const std::vector<int>& targets, std::size_t batch);
// Gradients of that loss into grad (+=).
template <class T>
void decoder_lm_backward(DecoderLMT<T>& grad, const DecoderLMCacheT<T>& cache, const DecoderLMT<T>& m);

// ---- inference on one sequence ---------------------------------------------------------------------
// What an analysis needs from one forward pass over tokens (1 ≤ T ≤ context):
struct DecoderLMTrace {
  Mat logits;           // (T, V)
  Tensor4 attn_weights;  // (layers, H, T, T)
  Mat block0_input;     // (T, d) token embeddings
  Mat block0_output;    // (T, d)
  double loss = 0.0;    // mean cross-entropy of predicting tokens[1 …] from tokens[… T−2] (0 when T = 1)
};
DecoderLMTrace decoder_lm_trace(const DecoderLM& m, const std::vector<int>& tokens);
// Mean next-token loss over `windows` consecutive windows of `time` + 1 tokens (non-overlapping,
// from the start; fewer when the text is short). Throws when not even one window fits.
double decoder_lm_eval_loss(const DecoderLM& m, const std::vector<int>& tokens, std::size_t windows,
                            std::size_t time);

// One KV cache per layer (KVCache of attn/attention/kv_cache.hpp: K, V rows after RoPE).
std::vector<KVCache> decoder_lm_cache(const DecoderLM& m, std::size_t capacity = 0);  // 0: the context
// Feeds tokens at positions cache.len … cache.len + T − 1 (prefill when T > 1, a decode step when
// T = 1): appends their K and V to every layer's cache and returns the last position's logits (V,).
// The queries see the cached keys and themselves causally (mask (T, len + T)).
Vec decoder_lm_feed(const DecoderLM& m, std::vector<KVCache>& cache, const std::vector<int>& tokens);
// The layer loop of decoder_lm_feed with the K/V storage left to `attend`: for each layer it gets
// q: (T, H·dh) and k: (T, G·dh) after RoPE at positions start …, and v: (T, G·dh); it stores k and v
// where it keeps them and returns the heads' outputs side by side, (T, H·dh). The paged cache
// (attn/models/decoder_lm_generate.hpp) plugs in here.
using AttendFn = std::function<Mat(std::size_t layer, const Mat& q, const Mat& k, const Mat& v)>;
Vec decoder_lm_feed_with(const DecoderLM& m, const std::vector<int>& tokens, std::size_t start,
                         const AttendFn& attend);
// Without a cache: the logits of the last position, recomputing the whole prefix (V,).
Vec decoder_lm_last_logits(const DecoderLM& m, const std::vector<int>& tokens);

}  // namespace attn
