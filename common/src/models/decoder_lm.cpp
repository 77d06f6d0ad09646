// The decoder-only language model: blocks, forward, backward, inference with a KV cache, files
// (see attn/models/decoder_lm.hpp). Each gradient line sits under the forward line it differentiates.
#include "attn/models/decoder_lm.hpp"

#include "attn/data/json_fields.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "attn/nn/embedding.hpp"
#include "attn/nn/loss.hpp"
#include "attn/tensor/mask.hpp"
#include "attn/tensor/rng.hpp"
#include "tensor/layer_kernels.hpp"

namespace attn {

using namespace detail;

// ---- configuration ---------------------------------------------------------------------------------

void check_config(const DecoderLMConfig& c) {
  auto bad = [](const std::string& what) { throw std::invalid_argument("decoder_lm config: " + what); };
  if (c.vocab == 0 || c.d_model == 0 || c.n_layers == 0 || c.d_ff == 0 || c.context == 0)
    bad("vocab, d_model, n_layers, d_ff and context must be positive");
  if (c.n_heads == 0 || c.d_model % c.n_heads != 0)
    bad("n_heads " + std::to_string(c.n_heads) + " must divide d_model " + std::to_string(c.d_model));
  if (c.d_head() % 2 != 0) bad("d_head " + std::to_string(c.d_head()) + " must be even (RoPE rotates pairs)");
  if (c.n_kv_heads == 0 || c.n_heads % c.n_kv_heads != 0)
    bad("n_kv_heads " + std::to_string(c.n_kv_heads) + " must divide n_heads " + std::to_string(c.n_heads));
  if (!(c.rope_theta > 1.0) || !(c.norm_eps > 0.0)) bad("rope_theta must be > 1 and norm_eps > 0");
}

std::string config_json(const DecoderLMConfig& c) {
  nlohmann::ordered_json j;
  j["d_model"] = c.d_model;
  j["n_heads"] = c.n_heads;
  j["n_kv_heads"] = c.n_kv_heads;
  j["d_ff"] = c.d_ff;
  j["layers"] = c.n_layers;
  j["rope_theta"] = c.rope_theta;
  j["norm_eps"] = c.norm_eps;
  j["vocab"] = c.vocab;
  j["context"] = c.context;
  return j.dump();
}

DecoderLMConfig config_from_json(const std::string& text) {
  DecoderLMConfig c;
  try {
    const auto j = nlohmann::json::parse(text);
    // Bounded so that a file cannot make the model allocate more than its tensors could fill.
    c.d_model = json_whole(j, "d_model", 1, 1 << 16);
    c.n_heads = json_whole(j, "n_heads", 1, 1 << 12);
    c.n_kv_heads = json_whole(j, "n_kv_heads", 1, 1 << 12);
    c.d_ff = json_whole(j, "d_ff", 1, 1 << 18);
    c.n_layers = json_whole(j, "layers", 1, 1 << 10);
    c.rope_theta = json_number(j, "rope_theta", 1.0, 1e12);
    c.norm_eps = json_number(j, "norm_eps", 1e-30, 1.0);
    c.vocab = json_whole(j, "vocab", 1, 1 << 22);
    c.context = json_whole(j, "context", 1, 1 << 22);
  } catch (const std::exception& e) {
    throw std::invalid_argument(std::string("decoder_lm config: cannot read ") + text + " (" + e.what() + ")");
  }
  check_config(c);
  return c;
}

// ---- parameters ------------------------------------------------------------------------------------

DecoderLM decoder_lm_init(const DecoderLMConfig& cfg, std::uint64_t seed) {
  check_config(cfg);
  Rng rng(seed);
  const std::size_t d = cfg.d_model, dh = cfg.d_head();
  const float std_w = 0.02f, std_res = 0.02f / std::sqrt(2.0f * float(cfg.n_layers));
  auto lin = [&](std::size_t in, std::size_t out, float sd) { return Linear{rng.normal_mat(in, out, sd), {}}; };
  DecoderLM m;
  m.cfg = cfg;
  m.tok_emb = rng.normal_mat(cfg.vocab, d, std_w);
  for (std::size_t l = 0; l < cfg.n_layers; ++l) {
    DecoderBlock b;
    b.attn_norm = rmsnorm_init(d);
    b.w_q = lin(d, cfg.n_heads * dh, std_w);
    b.w_k = lin(d, cfg.n_kv_heads * dh, std_w);
    b.w_v = lin(d, cfg.n_kv_heads * dh, std_w);
    b.w_o = lin(cfg.n_heads * dh, d, std_res);
    b.ffn_norm = rmsnorm_init(d);
    b.ffn.gate = lin(d, cfg.d_ff, std_w);
    b.ffn.up = lin(d, cfg.d_ff, std_w);
    b.ffn.down = lin(cfg.d_ff, d, std_res);
    m.blocks.push_back(std::move(b));
  }
  m.final_norm = rmsnorm_init(d);
  m.lm_head = lin(d, cfg.vocab, std_w);
  m.rope = rope_tables(cfg.context, dh, cfg.rope_theta);
  return m;
}

template <class T>
DecoderLMT<T> zeros_like(const DecoderLMT<T>& m) {
  DecoderLMT<T> g;
  g.cfg = m.cfg;
  g.rope = m.rope;
  g.tok_emb = xt::zeros<T>(m.tok_emb.shape());
  g.blocks.resize(m.blocks.size());
  g.final_norm.gamma = xt::zeros<T>(m.final_norm.gamma.shape());
  g.lm_head.w = xt::zeros<T>(m.lm_head.w.shape());
  visit_decoder_params(
      [](const std::string&, auto& z, const auto& src) {
        z = xt::zeros<typename std::decay_t<decltype(z)>::value_type>(src.shape());
      },
      g, m);
  return g;
}

DecoderLMD to_double(const DecoderLM& m) {
  DecoderLMD out;
  out.cfg = m.cfg;
  out.rope = m.rope;
  out.blocks.resize(m.blocks.size());
  visit_decoder_params([](const std::string&, auto& dst, const auto& src) { dst = xt::cast<double>(src); }, out, m);
  return out;
}

std::size_t parameter_count(const DecoderLM& m) {
  std::size_t n = 0;
  visit_decoder_params([&](const std::string&, const auto& t) { n += t.size(); }, m);
  return n;
}

void register_params(ParamRegistry& reg, DecoderLM& m, DecoderLM& grad, ParamGroup group) {
  visit_decoder_params(
      [&](const std::string& name, auto& p, auto& g) {
        const bool is_gain = p.dimension() == 1;
        if (group == ParamGroup::All || (group == ParamGroup::Gains) == is_gain) reg.add(name, p, g);
      },
      m, grad);
}

namespace {
TensorMap decoder_tensors(const DecoderLM& m, Metadata& metadata) {
  TensorMap tensors;
  visit_decoder_params(
      [&](const std::string& name, const auto& t) {
        tensors[name] = TensorF32{shape_of(t), std::vector<float>(t.begin(), t.end())};
      },
      m);
  metadata["model"] = "decoder_lm";
  metadata["config"] = config_json(m.cfg);
  metadata["rope_pairing"] = "interleaved";
  return tensors;
}
}  // namespace

void save_decoder_lm(const std::string& path, const DecoderLM& m, Metadata metadata) {
  const TensorMap tensors = decoder_tensors(m, metadata);
  write_safetensors(path, tensors, metadata);
}

std::string decoder_lm_bytes(const DecoderLM& m, Metadata metadata, const std::string& path) {
  const TensorMap tensors = decoder_tensors(m, metadata);
  return safetensors_bytes(tensors, metadata, path);
}

DecoderLM load_decoder_lm(const std::string& path, Metadata* metadata) {
  Metadata meta;
  TensorMap tensors = read_safetensors(path, &meta);
  if (meta.count("model") == 0 || meta.at("model") != "decoder_lm" || meta.count("config") == 0)
    throw SafetensorsError(path + ": not a decoder_lm checkpoint (metadata needs \"model\": \"decoder_lm\" and "
                                  "\"config\")");
  DecoderLMConfig cfg;
  try {
    cfg = config_from_json(meta.at("config"));
  } catch (const std::invalid_argument& e) {
    throw SafetensorsError(path + ": " + e.what());
  }
  DecoderLM m = decoder_lm_init(cfg, 0);
  // Check every tensor before copying any (all or nothing).
  std::size_t used = 0;
  visit_decoder_params(
      [&](const std::string& name, const auto& t) {
        auto it = tensors.find(name);
        if (it == tensors.end()) throw SafetensorsError(path + ": tensor " + name + " is missing");
        if (it->second.shape != shape_of(t))
          throw SafetensorsError(path + ": tensor " + name + " has shape " + shape_str(it->second.shape) +
                                 ", the config needs " + shape_str(shape_of(t)));
        ++used;
      },
      m);
  if (used != tensors.size())
    throw SafetensorsError(path + ": holds " + std::to_string(tensors.size() - used) +
                           " tensor(s) the decoder_lm config does not have");
  visit_decoder_params(
      [&](const std::string& name, auto& t) {
        std::copy(tensors[name].data.begin(), tensors[name].data.end(), t.begin());
      },
      m);
  if (metadata) *metadata = meta;
  return m;
}

// ---- attention pieces shared by training and inference ---------------------------------------------

namespace {

// Rotate every head of rows [0, rows) of buf (row stride ld, `heads` heads of dh columns) by RoPE at
// positions start … start + rows − 1, forward (q, k) or transposed (their gradients), via
// attn/position/rope.hpp on one head at a time.
template <class T>
void rope_heads(T* buf, std::size_t rows, std::size_t ld, std::size_t heads, std::size_t dh, const RopeTables& tab,
                std::size_t start, bool backward) {
  MatT<T> head = xt::zeros<T>({rows, dh}), out = xt::zeros<T>({rows, dh});
  for (std::size_t h = 0; h < heads; ++h) {
    for (std::size_t r = 0; r < rows; ++r) std::copy(buf + r * ld + h * dh, buf + r * ld + (h + 1) * dh, head.data() + r * dh);
    if (backward) {
      fill_zero(out);
      rope_backward(out, head, tab, start);  // dx = Rᵀ·dy
    } else {
      rope_forward(out, head, tab, start);
    }
    for (std::size_t r = 0; r < rows; ++r) std::copy(out.data() + r * dh, out.data() + (r + 1) * dh, buf + r * ld + h * dh);
  }
}

template <class T>
MatT<T> causal_mask_t(std::size_t t, std::size_t s) {
  const Mat m = causal_mask(t, s);
  return xt::cast<T>(m);
}

// Causal grouped-query attention of T queries on S keys (the last T of them are the queries' own):
// q: (T, H·dh), k, v: (S, G·dh) with row strides; concat: (T, H·dh), weights: (H, T, S).
template <class T>
void grouped_attention(T* concat, T* weights, const T* q, std::size_t ldq, const T* k, const T* v, std::size_t ldkv,
                       const T* mask, std::size_t t, std::size_t s, std::size_t heads, std::size_t kv_heads,
                       std::size_t dh) {
  const std::size_t group = heads / kv_heads;
  const T scale = T(1) / std::sqrt(T(dh));
  for (std::size_t h = 0; h < heads; ++h) {
    const std::size_t g = h / group;  // the K/V head query head h reads
    sdpa_forward_raw(concat + h * dh, heads * dh, weights + h * t * s, q + h * dh, ldq, k + g * dh, ldkv, v + g * dh,
                     ldkv, mask, t, s, dh, dh, scale);
  }
}

template <class T>
void check_block(const char* fn, const DecoderBlockT<T>& p, const DecoderLMConfig& cfg) {
  const std::size_t d = cfg.d_model, dh = cfg.d_head();
  expect_shape(fn, "attn_norm", shape_of(p.attn_norm.gamma), {d});
  expect_shape(fn, "W_Q", shape_of(p.w_q.w), {d, cfg.n_heads * dh});
  expect_shape(fn, "W_K", shape_of(p.w_k.w), {d, cfg.n_kv_heads * dh});
  expect_shape(fn, "W_V", shape_of(p.w_v.w), {d, cfg.n_kv_heads * dh});
  expect_shape(fn, "W_O", shape_of(p.w_o.w), {cfg.n_heads * dh, d});
  expect_shape(fn, "ffn_norm", shape_of(p.ffn_norm.gamma), {d});
}

}  // namespace

// ---- one block -------------------------------------------------------------------------------------

template <class T>
void decoder_block_forward(MatT<T>& y, DecoderBlockCacheT<T>& c, const MatT<T>& x, const DecoderBlockT<T>& p,
                           const DecoderLMConfig& cfg, const RopeTables& rope, std::size_t batch) {
  // x: (B·T, d) -> y: (B·T, d)
  const char* fn = "decoder_block_forward";
  check_block(fn, p, cfg);
  expect_shape(fn, "x", shape_of(x), {0, cfg.d_model});
  if (batch == 0 || x.shape(0) % batch != 0)
    throw ShapeError(std::string(fn) + ": " + std::to_string(x.shape(0)) + " rows do not split into " +
                     std::to_string(batch) + " sequences");
  const std::size_t n = x.shape(0), t = n / batch, h = cfg.n_heads, g = cfg.n_kv_heads, dh = cfg.d_head();
  if (t > rope.positions())
    throw ShapeError(std::string(fn) + ": sequences of " + std::to_string(t) + " positions, RoPE tables for " +
                     std::to_string(rope.positions()));
  const T eps = T(cfg.norm_eps);
  c.batch = batch;
  c.time = t;
  rmsnorm_forward(c.h1, c.rstd1, x, p.attn_norm, eps);  // h1 = RMSNorm(x)
  linear_forward(c.q, c.h1, p.w_q);                      // q = h1·W_Q
  linear_forward(c.k, c.h1, p.w_k);                      // k = h1·W_K
  linear_forward(c.v, c.h1, p.w_v);                      // v = h1·W_V
  for (std::size_t b = 0; b < batch; ++b) {              // q, k = RoPE(q), RoPE(k) at positions 0 … T−1
    rope_heads(c.q.data() + b * t * h * dh, t, h * dh, h, dh, rope, 0, false);
    rope_heads(c.k.data() + b * t * g * dh, t, g * dh, g, dh, rope, 0, false);
  }
  ensure_shape(c.weights, {batch, h, t, t});
  ensure_shape(c.concat, {n, h * dh});
  const MatT<T> mask = causal_mask_t<T>(t, t);
  for (std::size_t b = 0; b < batch; ++b)  // concat = [softmax(q_h·k_gᵀ/√dh + M)·v_g]_h
    grouped_attention(c.concat.data() + b * t * h * dh, c.weights.data() + b * h * t * t, c.q.data() + b * t * h * dh,
                      h * dh, c.k.data() + b * t * g * dh, c.v.data() + b * t * g * dh, g * dh, mask.data(), t, t, h,
                      g, dh);
  linear_forward(c.x1, c.concat, p.w_o);  // x1 = x + concat·W_O
  c.x1 += x;
  rmsnorm_forward(c.h2, c.rstd2, c.x1, p.ffn_norm, eps);  // h2 = RMSNorm(x1)
  swiglu_forward(y, c.ffn, c.h2, p.ffn);                   // y = x1 + SwiGLU(h2)
  y += c.x1;
}

template <class T>
void decoder_block_backward(MatT<T>& dx, DecoderBlockT<T>& dp, const MatT<T>& dy, const MatT<T>& x,
                            const DecoderBlockCacheT<T>& c, const DecoderBlockT<T>& p, const DecoderLMConfig& cfg,
                            const RopeTables& rope) {
  const char* fn = "decoder_block_backward";
  check_block(fn, p, cfg);
  expect_same_shape(fn, "dy", dy, "x", x);
  expect_same_shape(fn, "dx", dx, "x", x);
  const std::size_t n = x.shape(0), t = c.time, batch = c.batch, h = cfg.n_heads, g = cfg.n_kv_heads,
                    dh = cfg.d_head();
  // forward: y = x1 + SwiGLU(h2)   ->  dx1 = dy + dh2·∂RMSNorm
  MatT<T> dx1 = dy;
  MatT<T> dh2 = xt::zeros<T>({n, cfg.d_model});
  swiglu_backward(dh2, dp.ffn, dy, c.h2, c.ffn, p.ffn);
  // forward: h2 = RMSNorm(x1)
  rmsnorm_backward(dx1, dp.ffn_norm, dh2, c.x1, c.rstd2, p.ffn_norm);
  // forward: x1 = x + concat·W_O
  dx += dx1;
  MatT<T> dconcat = xt::zeros<T>({n, h * dh});
  linear_backward(dconcat, dp.w_o, dx1, c.concat, p.w_o);
  // forward: concat_h = softmax(q_h·k_gᵀ/√dh + M)·v_g  (q, k after RoPE)
  MatT<T> dq = xt::zeros<T>({n, h * dh}), dk = xt::zeros<T>({n, g * dh}), dv = xt::zeros<T>({n, g * dh});
  const T scale = T(1) / std::sqrt(T(dh));
  const std::size_t group = h / g;
  for (std::size_t b = 0; b < batch; ++b)
    for (std::size_t hh = 0; hh < h; ++hh) {
      const std::size_t gg = hh / group, qo = b * t * h * dh + hh * dh, ko = b * t * g * dh + gg * dh;
      sdpa_backward_raw(dq.data() + qo, h * dh, dk.data() + ko, g * dh, dv.data() + ko, g * dh, dconcat.data() + qo,
                        h * dh, c.weights.data() + (b * h + hh) * t * t, c.q.data() + qo, c.k.data() + ko,
                        c.v.data() + ko, t, t, dh, dh, scale);
    }
  // forward: q, k = RoPE(q), RoPE(k)  ->  the gradients rotate back (Rᵀ)
  for (std::size_t b = 0; b < batch; ++b) {
    rope_heads(dq.data() + b * t * h * dh, t, h * dh, h, dh, rope, 0, true);
    rope_heads(dk.data() + b * t * g * dh, t, g * dh, g, dh, rope, 0, true);
  }
  // forward: q = h1·W_Q, k = h1·W_K, v = h1·W_V
  MatT<T> dh1 = xt::zeros<T>({n, cfg.d_model});
  linear_backward(dh1, dp.w_q, dq, c.h1, p.w_q);
  linear_backward(dh1, dp.w_k, dk, c.h1, p.w_k);
  linear_backward(dh1, dp.w_v, dv, c.h1, p.w_v);
  // forward: h1 = RMSNorm(x)
  rmsnorm_backward(dx, dp.attn_norm, dh1, x, c.rstd1, p.attn_norm);
}

// ---- the whole model -------------------------------------------------------------------------------

template <class T>
T decoder_lm_forward(DecoderLMCacheT<T>& c, const DecoderLMT<T>& m, const std::vector<int>& inputs,
                     const std::vector<int>& targets, std::size_t batch) {
  const char* fn = "decoder_lm_forward";
  if (batch == 0 || inputs.empty() || inputs.size() % batch != 0 || targets.size() != inputs.size())
    throw ShapeError(std::string(fn) + ": " + std::to_string(inputs.size()) + " inputs and " +
                     std::to_string(targets.size()) + " targets must be equal and split into " + std::to_string(batch) +
                     " sequences");
  const std::size_t t = inputs.size() / batch;
  if (t > m.cfg.context)
    throw ShapeError(std::string(fn) + ": sequences of " + std::to_string(t) + " tokens exceed the context of " +
                     std::to_string(m.cfg.context));
  const std::size_t layers = m.blocks.size();
  c.batch = batch;
  c.time = t;
  c.inputs = inputs;
  c.targets = targets;
  c.xs.resize(layers + 1);
  c.blocks.resize(layers);
  embedding_forward(c.xs[0], inputs, m.tok_emb);  // x0 = E[tokens]
  for (std::size_t l = 0; l < layers; ++l)        // x_{l+1} = block_l(x_l)
    decoder_block_forward(c.xs[l + 1], c.blocks[l], c.xs[l], m.blocks[l], m.cfg, m.rope, batch);
  rmsnorm_forward(c.final_h, c.final_rstd, c.xs[layers], m.final_norm, T(m.cfg.norm_eps));  // RMSNorm(x_L)
  MatT<T> logits;
  linear_forward(logits, c.final_h, m.lm_head);  // logits = h·W_out
  return cross_entropy_forward(c.probs, logits, targets);
}

template <class T>
void decoder_lm_backward(DecoderLMT<T>& grad, const DecoderLMCacheT<T>& c, const DecoderLMT<T>& m) {
  const std::size_t layers = m.blocks.size(), n = c.inputs.size(), d = m.cfg.d_model;
  // forward: loss = mean CE(softmax(logits), targets)
  MatT<T> dlogits = xt::zeros<T>(c.probs.shape());
  cross_entropy_backward(dlogits, c.probs, c.targets);
  // forward: logits = h·W_out
  MatT<T> dh = xt::zeros<T>({n, d});
  linear_backward(dh, grad.lm_head, dlogits, c.final_h, m.lm_head);
  // forward: h = RMSNorm(x_L)
  MatT<T> dx = xt::zeros<T>({n, d});
  rmsnorm_backward(dx, grad.final_norm, dh, c.xs[layers], c.final_rstd, m.final_norm);
  for (std::size_t l = layers; l-- > 0;) {  // forward: x_{l+1} = block_l(x_l)
    MatT<T> dprev = xt::zeros<T>({n, d});
    decoder_block_backward(dprev, grad.blocks[l], dx, c.xs[l], c.blocks[l], m.blocks[l], m.cfg, m.rope);
    dx = std::move(dprev);
  }
  // forward: x0 = E[tokens]
  embedding_backward(grad.tok_emb, dx, c.inputs);
}

// ---- inference ---------------------------------------------------------------------------------------

DecoderLMTrace decoder_lm_trace(const DecoderLM& m, const std::vector<int>& tokens) {
  if (tokens.empty() || tokens.size() > m.cfg.context)
    throw ShapeError("decoder_lm_trace: need 1 … " + std::to_string(m.cfg.context) + " tokens, got " +
                     std::to_string(tokens.size()));
  const std::size_t t = tokens.size(), layers = m.blocks.size(), h = m.cfg.n_heads;
  DecoderLMCacheT<float> c;
  std::vector<int> targets(t, 0);
  for (std::size_t i = 0; i + 1 < t; ++i) targets[i] = tokens[i + 1];
  decoder_lm_forward(c, m, tokens, targets, 1);
  DecoderLMTrace tr;
  tr.block0_input = c.xs[0];
  tr.block0_output = c.xs[1];
  tr.attn_weights = xt::zeros<float>({layers, h, t, t});
  for (std::size_t l = 0; l < layers; ++l)
    std::copy(c.blocks[l].weights.begin(), c.blocks[l].weights.end(), tr.attn_weights.data() + l * h * t * t);
  linear_forward(tr.logits, c.final_h, m.lm_head);
  double total = 0.0;  // the loss of positions 0 … T−2 (the last has no next token)
  for (std::size_t i = 0; i + 1 < t; ++i) total -= std::log(double(c.probs(i, std::size_t(tokens[i + 1]))));
  tr.loss = t > 1 ? total / double(t - 1) : 0.0;
  return tr;
}

double decoder_lm_eval_loss(const DecoderLM& m, const std::vector<int>& tokens, std::size_t windows,
                            std::size_t time) {
  if (time == 0 || time > m.cfg.context || tokens.size() < time + 1)
    throw std::invalid_argument("decoder_lm_eval_loss: " + std::to_string(tokens.size()) +
                                " tokens do not hold one window of " + std::to_string(time) + " + 1");
  const std::size_t fit = (tokens.size() - 1) / time, w = std::min(windows, fit);
  double total = 0.0;
  DecoderLMCacheT<float> c;
  for (std::size_t i = 0; i < w; ++i) {
    std::vector<int> in(tokens.begin() + long(i * time), tokens.begin() + long(i * time + time));
    std::vector<int> tg(tokens.begin() + long(i * time + 1), tokens.begin() + long(i * time + time + 1));
    total += double(decoder_lm_forward(c, m, in, tg, 1));
  }
  return total / double(w);
}

std::vector<KVCache> decoder_lm_cache(const DecoderLM& m, std::size_t capacity) {
  if (capacity == 0) capacity = m.cfg.context;
  std::vector<KVCache> cache(m.blocks.size());
  const std::size_t width = m.cfg.n_kv_heads * m.cfg.d_head();
  for (auto& c : cache) {
    c.k = xt::zeros<float>({capacity, width});
    c.v = xt::zeros<float>({capacity, width});
    c.len = 0;
  }
  return cache;
}

Vec decoder_lm_feed_with(const DecoderLM& m, const std::vector<int>& tokens, std::size_t start,
                         const AttendFn& attend) {
  const std::size_t t = tokens.size(), h = m.cfg.n_heads, g = m.cfg.n_kv_heads, dh = m.cfg.d_head();
  if (t == 0) throw ShapeError("decoder_lm_feed: no tokens to feed");
  if (start + t > m.cfg.context)
    throw ShapeError("decoder_lm_feed: positions up to " + std::to_string(start + t) + " exceed the context of " +
                     std::to_string(m.cfg.context));
  const float eps = float(m.cfg.norm_eps);
  Mat x, hn, q, k, v, out, hf;
  Vec rstd;
  embedding_forward(x, tokens, m.tok_emb);  // x = E[tokens]  (T, d)
  for (std::size_t l = 0; l < m.blocks.size(); ++l) {
    const DecoderBlock& p = m.blocks[l];
    rmsnorm_forward(hn, rstd, x, p.attn_norm, eps);  // h = RMSNorm(x)
    linear_forward(q, hn, p.w_q);
    linear_forward(k, hn, p.w_k);
    linear_forward(v, hn, p.w_v);
    rope_heads(q.data(), t, h * dh, h, dh, m.rope, start, false);  // positions start … start + T − 1
    rope_heads(k.data(), t, g * dh, g, dh, m.rope, start, false);
    const Mat concat = attend(l, q, k, v);
    expect_shape("decoder_lm_feed", "attention output", shape_of(concat), {t, h * dh});
    linear_forward(out, concat, p.w_o);  // x = x + concat·W_O
    x += out;
    rmsnorm_forward(hn, rstd, x, p.ffn_norm, eps);  // x = x + SwiGLU(RMSNorm(x))
    SwiGLUCacheT<float> fc;
    swiglu_forward(out, fc, hn, p.ffn);
    x += out;
  }
  Mat last = xt::view(x, xt::range(t - 1, t), xt::all());
  rmsnorm_forward(hf, rstd, last, m.final_norm, eps);
  Mat logits;
  linear_forward(logits, hf, m.lm_head);
  return xt::view(logits, 0, xt::all());
}

Vec decoder_lm_feed(const DecoderLM& m, std::vector<KVCache>& cache, const std::vector<int>& tokens) {
  const char* fn = "decoder_lm_feed";
  if (cache.size() != m.blocks.size())
    throw ShapeError(std::string(fn) + ": a cache of " + std::to_string(cache.size()) + " layers for a model of " +
                     std::to_string(m.blocks.size()));
  const std::size_t t = tokens.size(), start = cache[0].len, s = start + t;
  const std::size_t h = m.cfg.n_heads, g = m.cfg.n_kv_heads, dh = m.cfg.d_head();
  if (s > cache[0].k.shape(0))
    throw ShapeError(std::string(fn) + ": positions up to " + std::to_string(s) + " exceed the cache capacity " +
                     std::to_string(cache[0].k.shape(0)));
  const Mat mask = causal_mask(t, s);  // query i sits at position start + i: sees keys 0 … start + i
  std::vector<float> weights(h * t * s);
  return decoder_lm_feed_with(m, tokens, start, [&](std::size_t l, const Mat& q, const Mat& k, const Mat& v) {
    KVCache& kv = cache[l];
    std::copy(k.begin(), k.end(), kv.k.data() + start * g * dh);  // append this chunk's K, V
    std::copy(v.begin(), v.end(), kv.v.data() + start * g * dh);
    kv.len = s;
    Mat concat = xt::zeros<float>({t, h * dh});
    grouped_attention(concat.data(), weights.data(), q.data(), h * dh, kv.k.data(), kv.v.data(), g * dh, mask.data(),
                      t, s, h, g, dh);
    return concat;
  });
}

Vec decoder_lm_last_logits(const DecoderLM& m, const std::vector<int>& tokens) {
  auto cache = decoder_lm_cache(m, tokens.size());
  return decoder_lm_feed(m, cache, tokens);
}

#define ATTN_INSTANTIATE_DECODER_LM(T)                                                                         \
  template DecoderLMT<T> zeros_like(const DecoderLMT<T>&);                                                    \
  template void decoder_block_forward(MatT<T>&, DecoderBlockCacheT<T>&, const MatT<T>&, const DecoderBlockT<T>&, \
                                      const DecoderLMConfig&, const RopeTables&, std::size_t);                \
  template void decoder_block_backward(MatT<T>&, DecoderBlockT<T>&, const MatT<T>&, const MatT<T>&,           \
                                       const DecoderBlockCacheT<T>&, const DecoderBlockT<T>&,                 \
                                       const DecoderLMConfig&, const RopeTables&);                            \
  template T decoder_lm_forward(DecoderLMCacheT<T>&, const DecoderLMT<T>&, const std::vector<int>&,            \
                                const std::vector<int>&, std::size_t);                                        \
  template void decoder_lm_backward(DecoderLMT<T>&, const DecoderLMCacheT<T>&, const DecoderLMT<T>&);
ATTN_INSTANTIATE_DECODER_LM(float)
ATTN_INSTANTIATE_DECODER_LM(double)

}  // namespace attn
