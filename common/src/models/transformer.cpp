// The Transformer's parameters, layers and teacher-forced forward/backward (see
// attn/models/transformer.hpp). Every line of a backward sits under the forward line it
// differentiates; everything is a template so the double gradient checks run this very code.
#include "attn/models/transformer.hpp"

#include <cmath>
#include <stdexcept>

#include "attn/nn/activations.hpp"
#include "attn/nn/embedding.hpp"
#include "attn/nn/loss.hpp"
#include "attn/position/sinusoidal.hpp"
#include "attn/tensor/mask.hpp"
#include "attn/data/vocab.hpp"
#include "tensor/layer_kernels.hpp"

namespace attn {

using namespace detail;

const char* norm_name(NormPlacement n) { return n == NormPlacement::Post ? "post" : "pre"; }

NormPlacement norm_from_name(const std::string& s) {
  if (s == "post") return NormPlacement::Post;
  if (s == "pre") return NormPlacement::Pre;
  throw std::invalid_argument("norm must be 'post' or 'pre', got '" + s + "'");
}

// ---- parameters ------------------------------------------------------------------------------------

namespace {

// The structure without values: layer counts and head counts (which for_each_param does not visit).
template <class T>
TransformerT<T> skeleton(const TransformerModelConfig& cfg) {
  TransformerT<T> m;
  m.cfg = cfg;
  m.enc.resize(cfg.enc_layers);
  m.dec.resize(cfg.dec_layers);
  for (auto& l : m.enc) l.self.n_heads = l.self.n_kv_heads = cfg.n_heads;
  for (auto& l : m.dec) {
    l.self.n_heads = l.self.n_kv_heads = cfg.n_heads;
    l.cross.n_heads = l.cross.n_kv_heads = cfg.n_heads;
  }
  return m;
}

}  // namespace

Transformer transformer_init(const TransformerModelConfig& c, Rng& rng) {
  if (c.src_vocab == 0 || c.tgt_vocab == 0 || c.d_model == 0 || c.d_ff == 0 || c.n_heads == 0 ||
      c.d_model % c.n_heads != 0 || c.d_model % 2 != 0 || c.enc_layers == 0 || c.dec_layers == 0)
    throw std::invalid_argument("transformer_init: need vocabularies, d_model even and divisible by heads, "
                                "d_ff and at least one layer each side (d_model " + std::to_string(c.d_model) +
                                ", heads " + std::to_string(c.n_heads) + ")");
  Transformer m = skeleton<float>(c);
  const float emb_std = 1.0f / std::sqrt(float(c.d_model));  // ×√d in use: unit variance
  m.src_emb = embedding_init(c.src_vocab, c.d_model, rng, emb_std);
  m.tgt_emb = embedding_init(c.tgt_vocab, c.d_model, rng, emb_std);
  for (auto& l : m.enc) {
    l.self = multi_head_init(c.d_model, c.n_heads, c.n_heads, rng);
    l.ln1 = layernorm_init(c.d_model);
    l.ff1 = linear_init(c.d_model, c.d_ff, rng);
    l.ff2 = linear_init(c.d_ff, c.d_model, rng);
    l.ln2 = layernorm_init(c.d_model);
  }
  for (auto& l : m.dec) {
    l.self = multi_head_init(c.d_model, c.n_heads, c.n_heads, rng);
    l.ln1 = layernorm_init(c.d_model);
    l.cross = multi_head_init(c.d_model, c.n_heads, c.n_heads, rng);
    l.ln2 = layernorm_init(c.d_model);
    l.ff1 = linear_init(c.d_model, c.d_ff, rng);
    l.ff2 = linear_init(c.d_ff, c.d_model, rng);
    l.ln3 = layernorm_init(c.d_model);
  }
  if (c.norm == NormPlacement::Pre) {
    m.enc_norm = layernorm_init(c.d_model);
    m.dec_norm = layernorm_init(c.d_model);
  }
  if (c.tie_output) {
    m.out.b = xt::zeros<float>({c.tgt_vocab});
  } else {
    m.out = linear_init(c.d_model, c.tgt_vocab, rng);
  }
  return m;
}

template <class T>
TransformerT<T> zeros_like(const TransformerT<T>& m) {
  TransformerT<T> g = skeleton<T>(m.cfg);
  for_each_param([](const std::string&, auto& gx, const auto& mx) { gx = xt::zeros<T>(mx.shape()); }, g, m);
  return g;
}

TransformerD to_double(const Transformer& m) {
  TransformerD d = skeleton<double>(m.cfg);
  for_each_param([](const std::string&, auto& dx, const auto& mx) { dx = xt::cast<double>(mx); }, d, m);
  return d;
}

void register_params(ParamRegistry& reg, Transformer& m, Transformer& grad) {
  for_each_param([&](const std::string& name, auto& x, auto& g) { reg.add(name, x, g); }, m, grad);
}

std::size_t parameter_count(const Transformer& m) {
  std::size_t n = 0;
  for_each_param([&](const std::string&, const auto& x) { n += x.size(); }, m);
  return n;
}

std::vector<std::pair<std::string, double>> layer_grad_norms(const Transformer& grad) {
  std::vector<std::pair<std::string, double>> out;
  for_each_param(
      [&](const std::string& name, const auto& g) {
        std::string group = name.substr(0, name.find('.'));
        if (group == "enc" || group == "dec") group = name.substr(0, name.find('.', 4));
        if (group == "src_emb" || group == "tgt_emb") group = "embeddings";
        if (group == "enc_norm" || group == "dec_norm") group = "final norms";
        double sq = 0.0;
        for (float v : g) sq += double(v) * double(v);
        if (out.empty() || out.back().first != group) {
          bool found = false;
          for (auto& [n, s] : out)
            if (n == group) { s += sq; found = true; }
          if (!found) out.emplace_back(group, sq);
        } else {
          out.back().second += sq;
        }
      },
      grad);
  for (auto& [n, s] : out) s = std::sqrt(s);
  return out;
}

// ---- pieces ----------------------------------------------------------------------------------------

namespace {

// (B, L, d) <-> (B·L, d) row views, as copies (LayerNorm and the loss work on rows).
template <class T>
MatT<T> rows_of(const Tensor3T<T>& x) {
  MatT<T> m = MatT<T>::from_shape({x.shape(0) * x.shape(1), x.shape(2)});
  std::copy(x.begin(), x.end(), m.begin());
  return m;
}
template <class T>
void copy_rows(Tensor3T<T>& y, const MatT<T>& m, std::size_t b, std::size_t l) {
  ensure_shape(y, {b, l, m.shape(1)});
  std::copy(m.begin(), m.end(), y.begin());
}
template <class T>
void add_rows(Tensor3T<T>& y, const MatT<T>& m) {
  T* p = y.data();
  const T* q = m.data();
  for (std::size_t i = 0; i < y.size(); ++i) p[i] += q[i];
}
template <class T>
Tensor3T<T> zeros3(const Tensor3T<T>& like) {
  return Tensor3T<T>(xt::zeros<T>(like.shape()));
}

// forward: y = LN(x)
template <class T>
void norm_forward(Tensor3T<T>& y, NormSiteT<T>& site, const Tensor3T<T>& x, const NormT<T>& p) {
  site.in = rows_of(x);
  layernorm_forward(site.out, site.mean, site.rstd, site.in, p);
  copy_rows(y, site.out, x.shape(0), x.shape(1));
}
// dx += LN'ᵀ·dy, dp += …
template <class T>
void norm_backward(Tensor3T<T>& dx, NormT<T>& dp, const Tensor3T<T>& dy, const NormSiteT<T>& site,
                   const NormT<T>& p) {
  MatT<T> dxm = xt::zeros<T>(site.in.shape());
  layernorm_backward(dxm, dp, rows_of(dy), site.in, site.mean, site.rstd, p);
  add_rows(dx, dxm);
}

// forward: hidden = x·W1 + b1;  act = ReLU(hidden);  y = act·W2 + b2
template <class T>
void ffn_forward(Tensor3T<T>& y, Tensor3T<T>& hidden, Tensor3T<T>& act, const Tensor3T<T>& x,
                 const LinearT<T>& ff1, const LinearT<T>& ff2) {
  linear_forward(hidden, x, ff1);
  ensure_shape(act, shape_of(hidden));
  activation_forward(Activation::Relu, act.data(), hidden.data(), hidden.size());
  linear_forward(y, act, ff2);
}
template <class T>
void ffn_backward(Tensor3T<T>& dx, LinearT<T>& dff1, LinearT<T>& dff2, const Tensor3T<T>& dy, const Tensor3T<T>& x,
                  const Tensor3T<T>& hidden, const Tensor3T<T>& act, const LinearT<T>& ff1, const LinearT<T>& ff2) {
  // forward: y = act·W2 + b2
  Tensor3T<T> dact = zeros3(act);
  linear_backward(dact, dff2, dy, act, ff2);
  // forward: act = ReLU(hidden)
  Tensor3T<T> dhidden = zeros3(hidden);
  activation_backward(Activation::Relu, dhidden.data(), dact.data(), hidden.data(), hidden.size());
  // forward: hidden = x·W1 + b1
  linear_backward(dx, dff1, dhidden, x, ff1);
}

template <class T>
Tensor3T<T> sum3(const Tensor3T<T>& a, const Tensor3T<T>& b) {
  Tensor3T<T> c = a;
  c += b;
  return c;
}

template <class T>
MatT<T> causal_mask_t(std::size_t n) {
  return xt::cast<T>(causal_mask(n));
}

}  // namespace

// ---- encoder layer ---------------------------------------------------------------------------------

template <class T>
void encoder_layer_forward(EncoderLayerCacheT<T>& c, const Tensor3T<T>& x, const EncoderLayerT<T>& p,
                           NormPlacement norm) {
  c.x = x;
  if (norm == NormPlacement::Post) {
    // h1 = LN1(x + SelfAttn(x));  y = LN2(h1 + FFN(h1))
    c.att_in = x;
    multi_head_forward(c.att_out, c.att, c.att_in, c.att_in, p.self);
    norm_forward(c.h1, c.ln1, sum3(x, c.att_out), p.ln1);
    c.ff_in = c.h1;
    Tensor3T<T> f;
    ffn_forward(f, c.ff_hidden, c.ff_act, c.ff_in, p.ff1, p.ff2);
    norm_forward(c.y, c.ln2, sum3(c.h1, f), p.ln2);
  } else {
    // h1 = x + SelfAttn(LN1(x));  y = h1 + FFN(LN2(h1))
    norm_forward(c.att_in, c.ln1, x, p.ln1);
    multi_head_forward(c.att_out, c.att, c.att_in, c.att_in, p.self);
    c.h1 = sum3(x, c.att_out);
    norm_forward(c.ff_in, c.ln2, c.h1, p.ln2);
    Tensor3T<T> f;
    ffn_forward(f, c.ff_hidden, c.ff_act, c.ff_in, p.ff1, p.ff2);
    c.y = sum3(c.h1, f);
  }
}

// Backward of one residual sub-layer F with its LayerNorm, placed either way, from dy (the
// gradient at the sub-layer's output); sub_backward(d_in, d_out) is F's backward, writing the
// gradient at F's input into d_in.
//   Post, forward y = LN(x + F(x)):    dz = LN'(dy); dx += dz; d_in = F'(dz); dx += d_in
//   Pre,  forward y = x + F(LN(x)):    dx += dy; d_in = F'(dy); dx += LN'(d_in)
template <class T, class SubBackward>
void sublayer_backward(Tensor3T<T>& dx, Tensor3T<T>& d_in, NormT<T>& dln, const Tensor3T<T>& dy,
                       const NormSiteT<T>& site, const NormT<T>& ln, NormPlacement norm, SubBackward sub_backward) {
  if (norm == NormPlacement::Post) {
    Tensor3T<T> dz = zeros3(dy);
    norm_backward(dz, dln, dy, site, ln);
    dx += dz;
    sub_backward(d_in, dz);
    dx += d_in;
  } else {
    dx += dy;
    sub_backward(d_in, dy);
    norm_backward(dx, dln, d_in, site, ln);
  }
}

template <class T>
void encoder_layer_backward(Tensor3T<T>& dx, EncoderLayerT<T>& dp, const Tensor3T<T>& dy,
                            const EncoderLayerCacheT<T>& c, const EncoderLayerT<T>& p, NormPlacement norm) {
  Tensor3T<T> dh1 = zeros3(c.h1), dff_in = zeros3(c.ff_in), datt_in = zeros3(c.att_in);
  // forward: y = LN2(h1 + FFN(h1)) (Post) or h1 + FFN(LN2(h1)) (Pre); ff_in is FFN's input
  sublayer_backward(dh1, dff_in, dp.ln2, dy, c.ln2, p.ln2, norm, [&](Tensor3T<T>& d_in, const Tensor3T<T>& d_out) {
    ffn_backward(d_in, dp.ff1, dp.ff2, d_out, c.ff_in, c.ff_hidden, c.ff_act, p.ff1, p.ff2);
  });
  // forward: h1 = LN1(x + SelfAttn(x)) (Post) or x + SelfAttn(LN1(x)) (Pre); att_in is its input
  sublayer_backward(dx, datt_in, dp.ln1, dh1, c.ln1, p.ln1, norm, [&](Tensor3T<T>& d_in, const Tensor3T<T>& d_out) {
    multi_head_backward(d_in, d_in, dp.self, d_out, c.att, c.att_in, c.att_in, p.self);
  });
}

// ---- decoder layer ---------------------------------------------------------------------------------

template <class T>
void decoder_layer_forward(DecoderLayerCacheT<T>& c, const Tensor3T<T>& x, const Tensor3T<T>& memory,
                           const DecoderLayerT<T>& p, NormPlacement norm) {
  const MatT<T> mask = causal_mask_t<T>(x.shape(1));
  c.x = x;
  Tensor3T<T> f;
  if (norm == NormPlacement::Post) {
    // h1 = LN1(x + SelfAttn(x));  h2 = LN2(h1 + CrossAttn(h1, memory));  y = LN3(h2 + FFN(h2))
    c.self_in = x;
    multi_head_forward(c.self_out, c.self_att, c.self_in, c.self_in, p.self, mask);
    norm_forward(c.h1, c.ln1, sum3(x, c.self_out), p.ln1);
    c.cross_in = c.h1;
    multi_head_forward(c.cross_out, c.cross_att, c.cross_in, memory, p.cross);
    norm_forward(c.h2, c.ln2, sum3(c.h1, c.cross_out), p.ln2);
    c.ff_in = c.h2;
    ffn_forward(f, c.ff_hidden, c.ff_act, c.ff_in, p.ff1, p.ff2);
    norm_forward(c.y, c.ln3, sum3(c.h2, f), p.ln3);
  } else {
    // h1 = x + SelfAttn(LN1(x));  h2 = h1 + CrossAttn(LN2(h1), memory);  y = h2 + FFN(LN3(h2))
    norm_forward(c.self_in, c.ln1, x, p.ln1);
    multi_head_forward(c.self_out, c.self_att, c.self_in, c.self_in, p.self, mask);
    c.h1 = sum3(x, c.self_out);
    norm_forward(c.cross_in, c.ln2, c.h1, p.ln2);
    multi_head_forward(c.cross_out, c.cross_att, c.cross_in, memory, p.cross);
    c.h2 = sum3(c.h1, c.cross_out);
    norm_forward(c.ff_in, c.ln3, c.h2, p.ln3);
    ffn_forward(f, c.ff_hidden, c.ff_act, c.ff_in, p.ff1, p.ff2);
    c.y = sum3(c.h2, f);
  }
}

template <class T>
void decoder_layer_backward(Tensor3T<T>& dx, Tensor3T<T>& dmemory, DecoderLayerT<T>& dp, const Tensor3T<T>& dy,
                            const DecoderLayerCacheT<T>& c, const Tensor3T<T>& memory, const DecoderLayerT<T>& p,
                            NormPlacement norm) {
  Tensor3T<T> dh1 = zeros3(c.h1), dh2 = zeros3(c.h2), dff_in = zeros3(c.ff_in);
  Tensor3T<T> dcross_in = zeros3(c.cross_in), dself_in = zeros3(c.self_in);
  using Grad = Tensor3T<T>;
  // forward: y = LN3(h2 + FFN(h2)) (Post) or h2 + FFN(LN3(h2)) (Pre)
  sublayer_backward(dh2, dff_in, dp.ln3, dy, c.ln3, p.ln3, norm, [&](Grad& d_in, const Grad& d_out) {
    ffn_backward(d_in, dp.ff1, dp.ff2, d_out, c.ff_in, c.ff_hidden, c.ff_act, p.ff1, p.ff2);
  });
  // forward: h2 = LN2(h1 + CrossAttn(h1, memory)) (Post) or h1 + CrossAttn(LN2(h1), memory) (Pre)
  sublayer_backward(dh1, dcross_in, dp.ln2, dh2, c.ln2, p.ln2, norm, [&](Grad& d_in, const Grad& d_out) {
    multi_head_backward(d_in, dmemory, dp.cross, d_out, c.cross_att, c.cross_in, memory, p.cross);
  });
  // forward: h1 = LN1(x + SelfAttn(x)) (Post) or x + SelfAttn(LN1(x)) (Pre)
  sublayer_backward(dx, dself_in, dp.ln1, dh1, c.ln1, p.ln1, norm, [&](Grad& d_in, const Grad& d_out) {
    multi_head_backward(d_in, d_in, dp.self, d_out, c.self_att, c.self_in, c.self_in, p.self);
  });
}

// ---- the whole model -------------------------------------------------------------------------------

namespace {

// ids (B·L) -> (B, L, d) = E[ids]·√d + PE[0 … L)
template <class T>
void embed(Tensor3T<T>& x, const MatT<T>& table, const std::vector<int>& ids, std::size_t b, std::size_t l) {
  const std::size_t d = table.shape(1);
  MatT<T> rows;
  embedding_forward(rows, ids, table);
  const Mat pe = sinusoidal_table(l, d);
  const T scale = std::sqrt(T(d));
  ensure_shape(x, {b, l, d});
  for (std::size_t i = 0; i < b; ++i)
    for (std::size_t t = 0; t < l; ++t)
      for (std::size_t k = 0; k < d; ++k) x(i, t, k) = rows(i * l + t, k) * scale + T(pe(t, k));
}
// forward: x = E[ids]·√d + PE  ->  dE[ids] += √d · dx
template <class T>
void embed_backward(MatT<T>& dtable, const Tensor3T<T>& dx, const std::vector<int>& ids) {
  MatT<T> rows = rows_of(dx);
  rows *= std::sqrt(T(dtable.shape(1)));
  embedding_backward(dtable, rows, ids);
}

template <class T>
void check_batch(const char* fn, const TransformerT<T>& m, const Batch& b) {
  if (b.src.size() != b.size * b.src_len || b.tgt_in.size() != b.size * b.tgt_len ||
      b.tgt_out.size() != b.size * b.tgt_len || b.size == 0 || b.src_len == 0 || b.tgt_len == 0)
    throw ShapeError(std::string(fn) + ": batch of " + std::to_string(b.size) + " × " + std::to_string(b.src_len) +
                     " → " + std::to_string(b.tgt_len) + " holds " + std::to_string(b.src.size()) + " source and " +
                     std::to_string(b.tgt_in.size()) + " target ids");
  (void)m;
}

}  // namespace

template <class T>
void transformer_encode(TransformerTapeT<T>& tape, const TransformerT<T>& m, const std::vector<int>& src,
                        std::size_t batch, std::size_t src_len) {
  if (src.size() != batch * src_len)
    throw ShapeError("transformer_encode: " + std::to_string(src.size()) + " source ids for a batch of " +
                     std::to_string(batch) + " × " + std::to_string(src_len));
  tape.batch = batch;
  tape.src_len = src_len;
  embed(tape.src_x, m.src_emb, src, batch, src_len);
  tape.enc.resize(m.enc.size());
  const Tensor3T<T>* x = &tape.src_x;
  for (std::size_t l = 0; l < m.enc.size(); ++l) {
    encoder_layer_forward(tape.enc[l], *x, m.enc[l], m.cfg.norm);
    x = &tape.enc[l].y;
  }
  if (m.cfg.norm == NormPlacement::Pre)
    norm_forward(tape.memory, tape.enc_norm, *x, m.enc_norm);
  else
    tape.memory = *x;
}

template <class T>
T transformer_forward(TransformerTapeT<T>& tape, const TransformerT<T>& m, const Batch& b, T label_smoothing) {
  check_batch("transformer_forward", m, b);
  transformer_encode(tape, m, b.src, b.size, b.src_len);
  tape.tgt_len = b.tgt_len;
  embed(tape.tgt_x, m.tgt_emb, b.tgt_in, b.size, b.tgt_len);
  tape.dec.resize(m.dec.size());
  const Tensor3T<T>* y = &tape.tgt_x;
  for (std::size_t l = 0; l < m.dec.size(); ++l) {
    decoder_layer_forward(tape.dec[l], *y, tape.memory, m.dec[l], m.cfg.norm);
    y = &tape.dec[l].y;
  }
  if (m.cfg.norm == NormPlacement::Pre) {
    Tensor3T<T> h;
    norm_forward(h, tape.dec_norm, *y, m.dec_norm);
    tape.feats = rows_of(h);
  } else {
    tape.feats = rows_of(*y);
  }
  // logits = feats·W_out + b_out,  W_out = E_tgtᵀ when tied
  MatT<T> logits;
  if (m.cfg.tie_output) {
    logits = MatT<T>::from_shape({tape.feats.shape(0), m.tgt_emb.shape(0)});
    gemm_t(logits, tape.feats, m.tgt_emb, Op::N, Op::T, T(1), T(0));
    logits += m.out.b;
  } else {
    linear_forward(logits, tape.feats, m.out);
  }
  return cross_entropy_forward(tape.probs, logits, b.tgt_out, Vocab::pad, label_smoothing);
}

template <class T>
void transformer_backward(TransformerT<T>& g, const TransformerTapeT<T>& tape, const TransformerT<T>& m,
                          const Batch& b, T label_smoothing) {
  check_batch("transformer_backward", m, b);
  const NormPlacement norm = m.cfg.norm;
  MatT<T> dlogits = xt::zeros<T>(tape.probs.shape());
  cross_entropy_backward(dlogits, tape.probs, b.tgt_out, Vocab::pad, label_smoothing);
  MatT<T> dfeats = xt::zeros<T>(tape.feats.shape());
  if (m.cfg.tie_output) {
    // forward: logits = feats·Eᵀ + b  ->  dfeats = dlogits·E, dE += dlogitsᵀ·feats, db += Σ rows
    gemm_t(dfeats, dlogits, m.tgt_emb, Op::N, Op::N, T(1), T(0));
    gemm_t(g.tgt_emb, dlogits, tape.feats, Op::T, Op::N, T(1), T(1));
    const VecT<T> db = xt::sum(dlogits, {0});  // evaluated first: a lazy += may reallocate g.out.b,
    for (std::size_t v = 0; v < db.size(); ++v) g.out.b(v) += db(v);  // which the registry points into
  } else {
    linear_backward(dfeats, g.out, dlogits, tape.feats, m.out);
  }
  Tensor3T<T> dtop;
  copy_rows(dtop, dfeats, b.size, b.tgt_len);
  const std::size_t nd = m.dec.size();
  Tensor3T<T> dy = zeros3(nd ? tape.dec.back().y : tape.tgt_x);
  if (norm == NormPlacement::Pre)
    norm_backward(dy, g.dec_norm, dtop, tape.dec_norm, m.dec_norm);  // forward: h = LN(y_last)
  else
    dy = dtop;
  Tensor3T<T> dmemory = zeros3(tape.memory);
  for (std::size_t l = nd; l-- > 0;) {
    Tensor3T<T> dx = zeros3(tape.dec[l].x);
    decoder_layer_backward(dx, dmemory, g.dec[l], dy, tape.dec[l], tape.memory, m.dec[l], norm);
    dy = std::move(dx);
  }
  embed_backward(g.tgt_emb, dy, b.tgt_in);
  // forward: memory = LN(enc_y_last) (Pre) or enc_y_last (Post)
  const std::size_t ne = m.enc.size();
  Tensor3T<T> de = zeros3(tape.memory);
  if (norm == NormPlacement::Pre)
    norm_backward(de, g.enc_norm, dmemory, tape.enc_norm, m.enc_norm);
  else
    de = dmemory;
  for (std::size_t l = ne; l-- > 0;) {
    Tensor3T<T> dx = zeros3(tape.enc[l].x);
    encoder_layer_backward(dx, g.enc[l], de, tape.enc[l], m.enc[l], norm);
    de = std::move(dx);
  }
  embed_backward(g.src_emb, de, b.src);
}

#define ATTN_INSTANTIATE_TRANSFORMER(T)                                                                      \
  template TransformerT<T> zeros_like(const TransformerT<T>&);                                               \
  template void encoder_layer_forward(EncoderLayerCacheT<T>&, const Tensor3T<T>&, const EncoderLayerT<T>&,   \
                                      NormPlacement);                                                        \
  template void encoder_layer_backward(Tensor3T<T>&, EncoderLayerT<T>&, const Tensor3T<T>&,                  \
                                       const EncoderLayerCacheT<T>&, const EncoderLayerT<T>&, NormPlacement); \
  template void decoder_layer_forward(DecoderLayerCacheT<T>&, const Tensor3T<T>&, const Tensor3T<T>&,        \
                                      const DecoderLayerT<T>&, NormPlacement);                               \
  template void decoder_layer_backward(Tensor3T<T>&, Tensor3T<T>&, DecoderLayerT<T>&, const Tensor3T<T>&,    \
                                       const DecoderLayerCacheT<T>&, const Tensor3T<T>&,                     \
                                       const DecoderLayerT<T>&, NormPlacement);                              \
  template void transformer_encode(TransformerTapeT<T>&, const TransformerT<T>&, const std::vector<int>&,    \
                                   std::size_t, std::size_t);                                                \
  template T transformer_forward(TransformerTapeT<T>&, const TransformerT<T>&, const Batch&, T);             \
  template void transformer_backward(TransformerT<T>&, const TransformerTapeT<T>&, const TransformerT<T>&,   \
                                     const Batch&, T);
ATTN_INSTANTIATE_TRANSFORMER(float)
ATTN_INSTANTIATE_TRANSFORMER(double)

}  // namespace attn
