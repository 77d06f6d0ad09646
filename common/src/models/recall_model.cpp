// The MQAR models: init, checkpoint names, state bytes, and one training step forward and backward
// (see attn/models/recall_model.hpp).
#include "attn/models/recall_model.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "attn/nn/embedding.hpp"
#include "attn/nn/loss.hpp"

namespace attn {

const char* mixer_id(MixerKind k) {
  switch (k) {
    case MixerKind::attention: return "attention";
    case MixerKind::sliding_window: return "window";
    case MixerKind::linear_attention: return "linear";
    case MixerKind::ssm: return "ssm";
  }
  return "?";
}

RecallModel recall_model_init(const RecallModelConfig& cfg, Rng& rng) {
  if (cfg.d_k == 0 || cfg.d_model % cfg.d_k != 0)
    throw std::invalid_argument("recall_model_init: d_k = " + std::to_string(cfg.d_k) + " must divide d_model = " +
                                std::to_string(cfg.d_model));
  if (cfg.vocab < 2 || cfg.conv_taps == 0 || cfg.window == 0 || cfg.layers.empty())
    throw std::invalid_argument("recall_model_init: need vocab ≥ 2, conv_taps ≥ 1, window ≥ 1 and ≥ 1 layer");
  RecallModel m;
  m.cfg = cfg;
  const std::size_t c = cfg.d_model, h = cfg.heads();
  m.embed = embedding_init(cfg.vocab, c, rng, 1.0f);
  for (MixerKind k : cfg.layers) {
    RecallBlockT<float> b{rmsnorm_init(c), short_conv_init(c, cfg.conv_taps, rng), MultiHead{}};
    switch (k) {
      case MixerKind::attention:
      case MixerKind::sliding_window: b.mixer = multi_head_init(c, h, h, rng, /*bias=*/false); break;
      case MixerKind::linear_attention: b.mixer = linear_attention_layer_init(c, h, rng); break;
      case MixerKind::ssm: b.mixer = selective_ssm_init(c, h, cfg.state_n, rng); break;
    }
    m.blocks.push_back(std::move(b));
  }
  m.norm_f = rmsnorm_init(c);
  m.head = linear_init(c, cfg.vocab, rng, false);
  return m;
}

template <class T>
RecallModelT<T> zeros_like(const RecallModelT<T>& m) {
  RecallModelT<T> z;
  z.cfg = m.cfg;
  z.embed = xt::zeros<T>(m.embed.shape());
  for (const auto& b : m.blocks) {
    RecallBlockT<T> zb{zeros_like(b.norm), zeros_like(b.conv), {}};
    zb.mixer = std::visit([](const auto& mixer) -> MixerT<T> { return zeros_like(mixer); }, b.mixer);
    z.blocks.push_back(std::move(zb));
  }
  z.norm_f = zeros_like(m.norm_f);
  z.head = zeros_like(m.head);
  return z;
}

RecallModelD to_double(const RecallModel& m) {
  RecallModelD out;
  out.cfg = m.cfg;
  out.embed = xt::cast<double>(m.embed);
  for (const auto& b : m.blocks) {
    RecallBlockT<double> db;
    db.norm.gamma = xt::cast<double>(b.norm.gamma);
    db.conv.w = xt::cast<double>(b.conv.w);
    db.mixer = std::visit([](const auto& mixer) -> MixerT<double> {
      using X = std::decay_t<decltype(mixer)>;
      if constexpr (std::is_same_v<X, MultiHead>) {
        return to_double(mixer);
      } else if constexpr (std::is_same_v<X, LinearAttentionLayer>) {
        LinearAttentionLayerD l;
        l.heads = mixer.heads;
        l.q.w = xt::cast<double>(mixer.q.w);
        l.k.w = xt::cast<double>(mixer.k.w);
        l.v.w = xt::cast<double>(mixer.v.w);
        l.out.w = xt::cast<double>(mixer.out.w);
        return l;
      } else {
        SelectiveSsmD s;
        s.heads = mixer.heads;
        s.state_n = mixer.state_n;
        s.in_x.w = xt::cast<double>(mixer.in_x.w);
        s.in_b.w = xt::cast<double>(mixer.in_b.w);
        s.in_c.w = xt::cast<double>(mixer.in_c.w);
        s.in_dt.w = xt::cast<double>(mixer.in_dt.w);
        s.in_dt.b = xt::cast<double>(mixer.in_dt.b);
        s.a_log = xt::cast<double>(mixer.a_log);
        s.d_skip = xt::cast<double>(mixer.d_skip);
        s.out.w = xt::cast<double>(mixer.out.w);
        return s;
      }
    }, b.mixer);
    out.blocks.push_back(std::move(db));
  }
  out.norm_f.gamma = xt::cast<double>(m.norm_f.gamma);
  out.head.w = xt::cast<double>(m.head.w);
  return out;
}

void register_params(ParamRegistry& reg, RecallModel& m, RecallModel& grad) {
  register_visited(reg, m, grad, [](RecallModel& x, auto&& f) { visit_recall_params(x, f); });
}

std::size_t parameter_count(const RecallModel& m) {
  std::size_t n = 0;
  visit_recall_params(m, [&](const std::string&, const auto& t) { n += t.size(); });
  return n;
}

std::size_t recall_state_bytes(const RecallModelConfig& cfg, std::size_t context) {
  const std::size_t c = cfg.d_model, h = cfg.heads();
  std::size_t floats = 0;
  for (MixerKind k : cfg.layers) {
    floats += (cfg.conv_taps - 1) * c;
    switch (k) {
      case MixerKind::attention: floats += 2 * context * c; break;
      case MixerKind::sliding_window: floats += 2 * std::min(context, cfg.window) * c; break;
      case MixerKind::linear_attention: floats += linear_attention_state_floats(c, h); break;
      case MixerKind::ssm: floats += selective_ssm_state_floats(c, h, cfg.state_n); break;
    }
  }
  return floats * sizeof(float);
}

namespace {

// (T, T) additive mask: causal, and with window w only the w most recent keys (itself included).
template <class T>
MatT<T> recall_mask(std::size_t n, std::size_t window) {
  MatT<T> m = xt::zeros<T>({n, n});
  const T neg_inf = -std::numeric_limits<T>::infinity();
  for (std::size_t t = 0; t < n; ++t)
    for (std::size_t s = 0; s < n; ++s)
      if (s > t || (window > 0 && s + window <= t)) m(t, s) = neg_inf;
  return m;
}

template <class T> MatT<T> as_rows(const Tensor3T<T>& x) {
  MatT<T> m = MatT<T>::from_shape({x.shape(0) * x.shape(1), x.shape(2)});
  std::copy(x.begin(), x.end(), m.begin());
  return m;
}
template <class T> Tensor3T<T> as_batch(const MatT<T>& m, std::size_t b, std::size_t t) {
  Tensor3T<T> x = Tensor3T<T>::from_shape({b, t, m.shape(1)});
  std::copy(m.begin(), m.end(), x.begin());
  return x;
}

template <class T>
struct BlockCache {
  Tensor3T<T> x_in;     // the residual stream entering the block
  MatT<T> normed;       // RMSNorm(x_in), rows
  VecT<T> rstd;
  Tensor3T<T> conv_in;  // normed as (B, T, C)
  Tensor3T<T> mixed_in; // conv(normed): the mixer's input
  MultiHeadCacheT<T> mha;
  LinearAttentionCacheT<T> lin;
  SelectiveSsmCacheT<T> ssm;
  MatT<T> mask;
};

}  // namespace

template <class T>
RecallStep recall_model_step(const RecallModelT<T>& m, const MqarBatch& batch, RecallModelT<T>* grad) {
  const std::size_t nb = batch.batch, nt = batch.seq_len, nc = m.cfg.d_model;
  if (batch.tokens.size() != nb * nt || batch.targets.size() != nb * nt)
    throw std::invalid_argument("recall_model_step: the batch's tokens and targets need B·T entries");
  // embedding
  MatT<T> emb;
  embedding_forward(emb, batch.tokens, m.embed);
  Tensor3T<T> x = as_batch(emb, nb, nt);
  std::vector<BlockCache<T>> caches(m.blocks.size());
  for (std::size_t l = 0; l < m.blocks.size(); ++l) {
    const auto& blk = m.blocks[l];
    auto& c = caches[l];
    c.x_in = x;
    const MatT<T> rows = as_rows(x);
    rmsnorm_forward(c.normed, c.rstd, rows, blk.norm);                 // RMSNorm(x)
    c.conv_in = as_batch(c.normed, nb, nt);
    short_conv_forward(c.mixed_in, c.conv_in, blk.conv);              // conv(·)
    Tensor3T<T> out;
    const MixerKind kind = m.cfg.layers.at(l);
    if (kind == MixerKind::attention || kind == MixerKind::sliding_window) {
      c.mask = recall_mask<T>(nt, kind == MixerKind::sliding_window ? m.cfg.window : 0);
      multi_head_forward(out, c.mha, c.mixed_in, c.mixed_in, std::get<MultiHeadT<T>>(blk.mixer), c.mask);
    } else if (kind == MixerKind::linear_attention) {
      linear_attention_layer_forward(out, c.lin, c.mixed_in, std::get<LinearAttentionLayerT<T>>(blk.mixer));
    } else {
      selective_ssm_forward(out, c.ssm, c.mixed_in, std::get<SelectiveSsmT<T>>(blk.mixer));
    }
    x += out;                                                          // x ← x + mixer(…)
  }
  // final norm and the head, only at the queries
  const MatT<T> rows = as_rows(x);
  MatT<T> nf;
  VecT<T> rstd_f;
  rmsnorm_forward(nf, rstd_f, rows, m.norm_f);
  std::vector<std::size_t> qrows;
  std::vector<int> targets;
  for (std::size_t i = 0; i < batch.targets.size(); ++i)
    if (batch.targets[i] >= 0) {
      qrows.push_back(i);
      targets.push_back(batch.targets[i]);
    }
  MatT<T> q = MatT<T>::from_shape({qrows.size(), nc});
  for (std::size_t r = 0; r < qrows.size(); ++r)
    std::copy(&nf(qrows[r], 0), &nf(qrows[r], 0) + nc, &q(r, 0));
  MatT<T> logits, probs;
  linear_forward(logits, q, m.head);
  RecallStep res;
  res.loss = double(cross_entropy_forward(probs, logits, targets));
  res.queries = targets.size();
  for (std::size_t r = 0; r < targets.size(); ++r) {
    std::size_t best = 0;
    for (std::size_t v = 1; v < logits.shape(1); ++v)
      if (logits(r, v) > logits(r, best)) best = v;
    res.correct += int(best) == targets[r];
  }
  if (!grad) return res;

  // ------------------------------------------------------------------ backward
  MatT<T> dlogits = xt::zeros<T>(logits.shape());
  cross_entropy_backward(dlogits, probs, targets);
  MatT<T> dq = xt::zeros<T>(q.shape());
  linear_backward(dq, grad->head, dlogits, q, m.head);
  MatT<T> dnf = xt::zeros<T>(nf.shape());
  for (std::size_t r = 0; r < qrows.size(); ++r)
    for (std::size_t e = 0; e < nc; ++e) dnf(qrows[r], e) += dq(r, e);
  MatT<T> drows = xt::zeros<T>(rows.shape());
  rmsnorm_backward(drows, grad->norm_f, dnf, rows, rstd_f, m.norm_f);
  Tensor3T<T> dx = as_batch(drows, nb, nt);
  for (std::size_t l = m.blocks.size(); l-- > 0;) {
    const auto& blk = m.blocks[l];
    auto& gblk = grad->blocks[l];
    auto& c = caches[l];
    // x ← x + out: dout = dx, and dx passes through unchanged
    Tensor3T<T> dmixed = xt::zeros<T>(c.mixed_in.shape());
    const MixerKind kind = m.cfg.layers.at(l);
    if (kind == MixerKind::attention || kind == MixerKind::sliding_window) {
      multi_head_backward(dmixed, dmixed, std::get<MultiHeadT<T>>(gblk.mixer), dx, c.mha, c.mixed_in, c.mixed_in,
                          std::get<MultiHeadT<T>>(blk.mixer));
    } else if (kind == MixerKind::linear_attention) {
      linear_attention_layer_backward(dmixed, std::get<LinearAttentionLayerT<T>>(gblk.mixer), dx, c.lin,
                                      c.mixed_in, std::get<LinearAttentionLayerT<T>>(blk.mixer));
    } else {
      selective_ssm_backward(dmixed, std::get<SelectiveSsmT<T>>(gblk.mixer), dx, c.ssm, c.mixed_in,
                             std::get<SelectiveSsmT<T>>(blk.mixer));
    }
    Tensor3T<T> dconv = xt::zeros<T>(c.conv_in.shape());
    short_conv_backward(dconv, gblk.conv, dmixed, c.conv_in, blk.conv);
    const MatT<T> dnormed = as_rows(dconv);
    MatT<T> dxin = xt::zeros<T>(dnormed.shape());
    rmsnorm_backward(dxin, gblk.norm, dnormed, as_rows(c.x_in), c.rstd, blk.norm);
    for (std::size_t i = 0; i < dx.size(); ++i) dx.data()[i] += dxin.data()[i];
  }
  embedding_backward(grad->embed, as_rows(dx), batch.tokens);
  return res;
}

template RecallModelT<float> zeros_like(const RecallModelT<float>&);
template RecallModelT<double> zeros_like(const RecallModelT<double>&);
template RecallStep recall_model_step(const RecallModelT<float>&, const MqarBatch&, RecallModelT<float>*);
template RecallStep recall_model_step(const RecallModelT<double>&, const MqarBatch&, RecallModelT<double>*);

}  // namespace attn
