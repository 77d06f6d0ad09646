// GRU encoder–decoder models with and without attention (see attn/models/seq2seq.hpp): initialisation,
// teacher-forced forward, backward through the decoder steps and the encoder, greedy decoding.
#include "attn/models/seq2seq.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "attn/nn/embedding.hpp"
#include "attn/nn/loss.hpp"
#include "attn/data/vocab.hpp"
#include "tensor/layer_kernels.hpp"

namespace attn {

using namespace detail;

// ---- configuration -------------------------------------------------------------------------------

std::string model_name(const Seq2SeqConfig& cfg) {
  switch (cfg.kind) {
    case AttentionKind::None: return "no_attention";
    case AttentionKind::Bahdanau: return "bahdanau";
    case AttentionKind::Luong: break;
  }
  std::string n = std::string("luong_") + luong_score_name(cfg.luong.score);
  if (cfg.luong.window == LuongWindow::LocalP) return cfg.luong.score == LuongScore::General ? "luong_local_p" : n + "_local_p";
  if (cfg.luong.window == LuongWindow::LocalM) return cfg.luong.score == LuongScore::General ? "luong_local_m" : n + "_local_m";
  return n;
}

std::string model_title(const Seq2SeqConfig& cfg) {
  switch (cfg.kind) {
    case AttentionKind::None: return "no attention (c = h_S)";
    case AttentionKind::Bahdanau: return "Bahdanau (additive)";
    case AttentionKind::Luong: break;
  }
  std::string t = std::string("Luong ") + luong_window_name(cfg.luong.window) + " " + luong_score_name(cfg.luong.score);
  if (cfg.luong.window != LuongWindow::Global) t += " (D = " + std::to_string(cfg.luong.half_width) + ")";
  return t;
}

Seq2SeqConfig config_for(const std::string& name, std::size_t src_vocab, std::size_t tgt_vocab) {
  Seq2SeqConfig cfg;
  cfg.src_vocab = src_vocab;
  cfg.tgt_vocab = tgt_vocab;
  cfg.luong.half_width = 5;
  if (name == "no_attention") {
    cfg.kind = AttentionKind::None;
    return cfg;
  }
  if (name == "bahdanau") return cfg;
  cfg.kind = AttentionKind::Luong;
  for (LuongScore s : {LuongScore::Dot, LuongScore::General, LuongScore::Concat})
    for (LuongWindow w : {LuongWindow::Global, LuongWindow::LocalM, LuongWindow::LocalP}) {
      cfg.luong.score = s;
      cfg.luong.window = w;
      if (model_name(cfg) == name) return cfg;
    }
  throw std::invalid_argument("config_for: unknown model '" + name + "'");
}

std::size_t encoder_state_size(const Seq2SeqConfig& cfg) {
  return cfg.kind == AttentionKind::None ? cfg.dec_hidden : 2 * cfg.enc_hidden;
}

namespace {
// What the decoder GRU reads besides the previous word: c_i (He) or, with input feeding, h̃_{i−1} (Hd).
std::size_t feed_size(const Seq2SeqConfig& cfg) {
  return cfg.kind == AttentionKind::Luong ? cfg.dec_hidden : encoder_state_size(cfg);
}
}  // namespace

// ---- parameters ----------------------------------------------------------------------------------

Seq2Seq seq2seq_init(const Seq2SeqConfig& cfg, Rng& rng) {
  if (cfg.src_vocab == 0 || cfg.tgt_vocab == 0) throw std::invalid_argument("seq2seq_init: empty vocabulary");
  if (cfg.kind == AttentionKind::Luong && cfg.luong.score == LuongScore::Dot && 2 * cfg.enc_hidden != cfg.dec_hidden)
    throw std::invalid_argument("seq2seq_init: Luong's dot score needs dec_hidden = 2·enc_hidden");
  Seq2Seq m;
  m.cfg = cfg;
  const std::size_t he = encoder_state_size(cfg);
  // N(0, 1) embeddings, PyTorch's default: with N(0, 0.1²) the no-attention model reached valid
  // BLEU 1.5 instead of 5.7 after 300 steps (measured).
  // The draws keep one order (embeddings, encoder, init, attention, decoder, combine, out), so that
  // a seed gives the same model as it always did.
  m.src_emb = embedding_init(cfg.src_vocab, cfg.emb, rng, 1.0f);
  m.tgt_emb = embedding_init(cfg.tgt_vocab, cfg.emb, rng, 1.0f);
  if (cfg.kind == AttentionKind::None) {
    m.family = NoAttentionT<float>{gru_init(cfg.emb, cfg.dec_hidden, rng)};
  } else {
    BiGru enc = bigru_init(cfg.emb, cfg.enc_hidden, rng);
    Linear init = linear_init(cfg.enc_hidden, cfg.dec_hidden, rng);
    if (cfg.kind == AttentionKind::Bahdanau)
      m.family = BahdanauSeq2SeqT<float>{enc, init, bahdanau_init(cfg.dec_hidden, he, cfg.attn, rng)};
    else
      m.family = LuongSeq2SeqT<float>{enc, init, luong_init(cfg.luong, cfg.dec_hidden, he, cfg.attn, rng), {}};
  }
  m.dec = gru_init(cfg.emb + feed_size(cfg), cfg.dec_hidden, rng);
  if (cfg.kind == AttentionKind::Luong) {
    std::get<LuongSeq2SeqT<float>>(m.family).combine = linear_init(he + cfg.dec_hidden, cfg.dec_hidden, rng);
    m.out = linear_init(cfg.dec_hidden, cfg.tgt_vocab, rng);
  } else {
    m.out = linear_init(cfg.dec_hidden + he, cfg.tgt_vocab, rng);
  }
  return m;
}

template <class T>
Seq2SeqT<T> zeros_like(const Seq2SeqT<T>& m) {
  Seq2SeqT<T> g = m;  // same family, same shapes
  visit_params(g, [](const std::string&, auto& t) { std::fill(t.begin(), t.end(), T(0)); });
  return g;
}

namespace {
// FamilyT<float> -> FamilyT<double>
template <class F> struct Rebind;
template <template <class> class F, class T> struct Rebind<F<T>> {
  template <class U> using to = F<U>;
};
}  // namespace

Seq2SeqD to_double(const Seq2Seq& m) {
  Seq2SeqD d;
  d.cfg = m.cfg;
  std::visit([&](const auto& f) { d.family = typename Rebind<std::decay_t<decltype(f)>>::template to<double>{}; },
             m.family);
  std::vector<std::pair<Shape, const float*>> from;
  visit_params(m, [&](const std::string&, const auto& t) { from.emplace_back(shape_of(t), t.data()); });
  std::size_t i = 0;
  visit_params(d, [&](const std::string&, auto& t) {
    ensure_shape(t, from.at(i).first);
    std::copy(from[i].second, from[i].second + t.size(), t.begin());
    ++i;
  });
  return d;
}

void register_params(ParamRegistry& reg, Seq2Seq& m, Seq2Seq& g) {
  register_visited(reg, m, g, [](auto& model, auto&& f) { visit_params(model, f); });
}

std::size_t parameter_count(const Seq2Seq& m) {
  std::size_t n = 0;
  visit_params(m, [&](const std::string&, const auto& t) { n += t.size(); });
  return n;
}

template <class T>
const MatT<T>& DecoderStepT<T>::alpha() const {
  return luong.alpha.size() > 0 ? luong.alpha : bahdanau.alpha;
}

// ---- small helpers -------------------------------------------------------------------------------
namespace {

// out = [a | b] column-wise; a: (B, m), b: (B, n) -> (B, m + n)
template <class T>
void concat_cols(MatT<T>& out, const MatT<T>& a, const MatT<T>& b) {
  const std::size_t rows = a.shape(0), ca = a.shape(1), cb = b.shape(1);
  ensure_shape(out, {rows, ca + cb});
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t j = 0; j < ca; ++j) out(i, j) = a(i, j);
    for (std::size_t j = 0; j < cb; ++j) out(i, ca + j) = b(i, j);
  }
}
// a += x[:, from : from + a.cols]
template <class T>
void add_cols(MatT<T>& a, const MatT<T>& x, std::size_t from) {
  for (std::size_t i = 0; i < a.shape(0); ++i)
    for (std::size_t j = 0; j < a.shape(1); ++j) a(i, j) += x(i, from + j);
}
template <class T>
MatT<T> cols(const MatT<T>& x, std::size_t from, std::size_t n) {
  MatT<T> out = xt::zeros<T>({x.shape(0), n});
  add_cols(out, x, from);
  return out;
}
// Column i of a (B, T) id matrix.
std::vector<int> column(const std::vector<int>& ids, std::size_t batch, std::size_t len, std::size_t i) {
  std::vector<int> out(batch);
  for (std::size_t b = 0; b < batch; ++b) out[b] = ids[b * len + i];
  return out;
}
template <class T>
void tanh_inplace(MatT<T>& m) {
  for (auto& v : m) v = std::tanh(v);
}

// The family's layers by role, for the steps that differ between families (m.cfg.kind says which).
template <template <class> class F, class T>
F<T>& family_of(Seq2SeqT<T>& m) { return std::get<F<T>>(m.family); }
template <template <class> class F, class T>
const F<T>& family_of(const Seq2SeqT<T>& m) { return std::get<F<T>>(m.family); }
// The bidirectional encoder and s_0's layer, which both attention families have.
template <class M>
auto& bienc_of(M& m) {
  if (auto* b = std::get_if<1>(&m.family)) return b->enc;
  return std::get<2>(m.family).enc;
}
template <class M>
auto& init_of(M& m) {
  if (auto* b = std::get_if<1>(&m.family)) return b->init;
  return std::get<2>(m.family).init;
}

}  // namespace

// ---- encoder -------------------------------------------------------------------------------------

template <class T>
void seq2seq_encode(Seq2SeqTapeT<T>& tape, const Seq2SeqT<T>& m, const std::vector<int>& src, std::size_t batch,
                    std::size_t src_len) {
  // src: (B·S) ids -> enc: (B, S, He), s0: (B, Hd)
  if (src.size() != batch * src_len || src_len == 0)
    throw ShapeError("seq2seq_encode: src has " + std::to_string(src.size()) + " ids, expected B·S = " +
                     std::to_string(batch) + "·" + std::to_string(src_len));
  const std::size_t e = m.cfg.emb, h = m.cfg.enc_hidden;
  tape.batch = batch;
  tape.src_len = src_len;
  MatT<T> rows;
  embedding_forward(rows, src, m.src_emb);  // (B·S, E)
  tape.xs = Tensor3T<T>::from_shape({batch, src_len, e});
  std::copy(rows.begin(), rows.end(), tape.xs.begin());
  if (m.cfg.kind == AttentionKind::None) {
    const MatT<T> h0 = xt::zeros<T>({batch, m.cfg.dec_hidden});
    gru_sequence_forward(tape.enc, tape.enc_cache, tape.xs, h0, family_of<NoAttentionT>(m).enc);
    tape.s0 = MatT<T>::from_shape({batch, m.cfg.dec_hidden});
    for (std::size_t b = 0; b < batch; ++b)
      for (std::size_t j = 0; j < m.cfg.dec_hidden; ++j) tape.s0(b, j) = tape.enc(b, src_len - 1, j);  // c = h_S
    return;
  }
  bigru_forward(tape.enc, tape.bienc_cache, tape.xs, bienc_of(m));
  tape.init_in = MatT<T>::from_shape({batch, h});
  for (std::size_t b = 0; b < batch; ++b)
    for (std::size_t j = 0; j < h; ++j) tape.init_in(b, j) = tape.enc(b, 0, h + j);  // ←h_1
  linear_forward(tape.s0, tape.init_in, init_of(m));
  tanh_inplace(tape.s0);  // s_0 = tanh(←h_1·W_s + b_s)
  if (m.cfg.kind == AttentionKind::Bahdanau) bahdanau_keys_forward(tape.keys, tape.enc, family_of<BahdanauSeq2SeqT>(m).attention);
  if (m.cfg.kind == AttentionKind::Luong)  // concat: H·W_c[Hd:], once per sentence (other scores: none)
    luong_keys_forward(tape.keys, tape.enc, family_of<LuongSeq2SeqT>(m).attention, m.cfg.luong.score);
}

// ---- one decoder step ----------------------------------------------------------------------------

template <class T>
void seq2seq_decoder_step(DecoderStepT<T>& st, const Seq2SeqT<T>& m, const Seq2SeqTapeT<T>& tape,
                          const std::vector<int>& y_prev, const MatT<T>& s_prev, const MatT<T>& feed, std::size_t i) {
  // y_prev: (B,), s_prev: (B, Hd), feed: (B, He) luong's h̃_{i−1} -> st.s, st.context, st.o
  MatT<T> y_emb;
  embedding_forward(y_emb, y_prev, m.tgt_emb);  // (B, E)
  st.s_prev = s_prev;
  switch (m.cfg.kind) {
    case AttentionKind::None:
      st.context = tape.s0;  // the one fixed context vector c = h_S, at every step
      concat_cols(st.x, y_emb, st.context);
      break;
    case AttentionKind::Bahdanau:
      // e_ij = v_aᵀ tanh(W_a s_{i−1} + U_a h_j), α = softmax(e), c_i = Σ α_ij h_j
      bahdanau_step_forward(st.context, st.bahdanau, s_prev, tape.enc, tape.keys, family_of<BahdanauSeq2SeqT>(m).attention);
      concat_cols(st.x, y_emb, st.context);
      break;
    case AttentionKind::Luong:
      concat_cols(st.x, y_emb, feed);  // input feeding: [E y_{i−1}; h̃_{i−1}]
      break;
  }
  gru_cell_forward(st.s, st.cell, st.x, s_prev, m.dec);  // s_i = GRU(x_i, s_{i−1})
  if (m.cfg.kind == AttentionKind::Luong) {
    luong_forward(st.context, st.luong, st.s, tape.enc, tape.keys, family_of<LuongSeq2SeqT>(m).attention, m.cfg.luong,
                  i);  // c_i = attend(s_i, H)
    concat_cols(st.cat, st.context, st.s);
    linear_forward(st.o, st.cat, family_of<LuongSeq2SeqT>(m).combine);
    tanh_inplace(st.o);  // h̃_i = tanh([c_i; s_i]·W_c + b_c)
  } else {
    concat_cols(st.o, st.s, st.context);  // o_i = [s_i; c_i]
  }
}

// ---- teacher-forced forward and backward ---------------------------------------------------------

template <class T>
T seq2seq_forward(Seq2SeqTapeT<T>& tape, const Seq2SeqT<T>& m, const Batch& batch) {
  // batch: src (B, S), tgt_in/tgt_out (B, T) -> mean cross-entropy
  seq2seq_encode(tape, m, batch.src, batch.size, batch.src_len);
  const std::size_t nb = batch.size, nt = batch.tgt_len;
  tape.tgt_len = nt;
  tape.steps.resize(nt);
  MatT<T> feed = xt::zeros<T>({nb, feed_size(m.cfg)});  // h̃_0 = 0
  const MatT<T>* s_prev = &tape.s0;
  for (std::size_t i = 0; i < nt; ++i) {
    DecoderStepT<T>& st = tape.steps[i];
    seq2seq_decoder_step(st, m, tape, column(batch.tgt_in, nb, nt, i), *s_prev, feed, i);
    if (m.cfg.kind == AttentionKind::Luong) feed = st.o;
    s_prev = &st.s;
  }
  const std::size_t of = tape.steps[0].o.shape(1);
  tape.feats = MatT<T>::from_shape({nb * nt, of});
  for (std::size_t i = 0; i < nt; ++i)
    for (std::size_t b = 0; b < nb; ++b)
      for (std::size_t k = 0; k < of; ++k) tape.feats(b * nt + i, k) = tape.steps[i].o(b, k);
  MatT<T> logits;
  linear_forward(logits, tape.feats, m.out);  // (B·T, Vt)
  return cross_entropy_forward(tape.probs, logits, batch.tgt_out, Vocab::pad);
}

template <class T>
void seq2seq_backward(Seq2SeqT<T>& g, const Seq2SeqTapeT<T>& tape, const Seq2SeqT<T>& m, const Batch& batch) {
  const std::size_t nb = tape.batch, ns = tape.src_len, nt = tape.tgt_len;
  const std::size_t e = m.cfg.emb, h = m.cfg.enc_hidden, hd = m.cfg.dec_hidden, he = encoder_state_size(m.cfg);
  const bool luong = m.cfg.kind == AttentionKind::Luong;
  // forward: loss = CE(feats·W_o + b_o, tgt_out)
  MatT<T> dlogits = xt::zeros<T>(tape.probs.shape());
  cross_entropy_backward(dlogits, tape.probs, batch.tgt_out, Vocab::pad);
  MatT<T> dfeats = xt::zeros<T>(tape.feats.shape());
  linear_backward(dfeats, g.out, dlogits, tape.feats, m.out);

  Tensor3T<T> denc = xt::zeros<T>(tape.enc.shape());
  Tensor3T<T> dkeys;
  if (m.cfg.kind != AttentionKind::None) dkeys = xt::zeros<T>(tape.keys.shape());
  MatT<T> ds = xt::zeros<T>({nb, hd});     // ∂L/∂s_i from later steps
  const std::size_t fs = feed_size(m.cfg);
  MatT<T> dfeed = xt::zeros<T>({nb, fs});  // luong: ∂L/∂h̃_i from step i+1's input
  MatT<T> dc_fixed = xt::zeros<T>({nb, he});  // none: ∂L/∂c summed over steps
  const std::size_t of = tape.feats.shape(1);
  MatT<T> d_o({nb, of}), dx({nb, e + fs}), ds_prev({nb, hd});
  for (std::size_t i = nt; i-- > 0;) {
    const DecoderStepT<T>& st = tape.steps[i];
    for (std::size_t b = 0; b < nb; ++b)
      for (std::size_t k = 0; k < of; ++k) d_o(b, k) = dfeats(b * nt + i, k);
    MatT<T> dctx = xt::zeros<T>({nb, he});
    if (luong) {
      // forward: o = h̃_i = tanh(cat·W_c + b_c), and h̃_i is also step i+1's input (feed)
      MatT<T> dpre = d_o + dfeed;
      for (std::size_t b = 0; b < nb; ++b)
        for (std::size_t k = 0; k < hd; ++k) dpre(b, k) *= T(1) - st.o(b, k) * st.o(b, k);
      MatT<T> dcat = xt::zeros<T>(st.cat.shape());
      linear_backward(dcat, family_of<LuongSeq2SeqT>(g).combine, dpre, st.cat, family_of<LuongSeq2SeqT>(m).combine);
      // forward: cat = [c_i; s_i]
      add_cols(dctx, dcat, 0);
      add_cols(ds, dcat, he);
      // forward: c_i = attend(s_i, H)
      luong_backward(ds, denc, dkeys, family_of<LuongSeq2SeqT>(g).attention, dctx, st.luong, st.s, tape.enc,
                     family_of<LuongSeq2SeqT>(m).attention, m.cfg.luong);
    } else {
      // forward: o = [s_i; c_i]
      add_cols(ds, d_o, 0);
      add_cols(dctx, d_o, hd);
    }
    // forward: s_i = GRU(x_i, s_{i−1})
    fill_zero(dx);
    fill_zero(ds_prev);
    gru_cell_backward(dx, ds_prev, g.dec, ds, st.cell, st.x, st.s_prev, m.dec);
    // forward: x_i = [E y_{i−1}; c_i or h̃_{i−1}]
    embedding_backward(g.tgt_emb, cols(dx, 0, e), column(batch.tgt_in, nb, nt, i));
    if (luong) {
      dfeed = cols(dx, e, fs);
    } else {
      MatT<T> dctx_in = cols(dx, e, he);
      dctx += dctx_in;
      if (m.cfg.kind == AttentionKind::None) {
        dc_fixed += dctx;
      } else {
        bahdanau_step_backward(ds_prev, denc, dkeys, family_of<BahdanauSeq2SeqT>(g).attention, dctx, st.bahdanau,
                               st.s_prev, tape.enc, family_of<BahdanauSeq2SeqT>(m).attention);
      }
    }
    std::swap(ds, ds_prev);  // ∂L/∂s_{i−1}
  }
  // ds now holds ∂L/∂s_0.
  Tensor3T<T> dxs = xt::zeros<T>(tape.xs.shape());
  if (m.cfg.kind == AttentionKind::None) {
    // forward: s_0 = c = h_S = enc[:, S−1], and c feeds every step
    for (std::size_t b = 0; b < nb; ++b)
      for (std::size_t j = 0; j < hd; ++j) denc(b, ns - 1, j) += ds(b, j) + dc_fixed(b, j);
    MatT<T> no_dh0;
    gru_sequence_backward(dxs, no_dh0, family_of<NoAttentionT>(g).enc, denc, tape.enc_cache, family_of<NoAttentionT>(m).enc);
  } else {
    // forward: s_0 = tanh(←h_1·W_s + b_s)
    MatT<T> dpre = ds;
    for (std::size_t b = 0; b < nb; ++b)
      for (std::size_t k = 0; k < hd; ++k) dpre(b, k) *= T(1) - tape.s0(b, k) * tape.s0(b, k);
    MatT<T> dinit = xt::zeros<T>(tape.init_in.shape());
    linear_backward(dinit, init_of(g), dpre, tape.init_in, init_of(m));
    for (std::size_t b = 0; b < nb; ++b)
      for (std::size_t j = 0; j < h; ++j) denc(b, 0, h + j) += dinit(b, j);
    // forward: keys = H·U_a (bahdanau) or H·W_c[Hd:] (luong concat)
    if (m.cfg.kind == AttentionKind::Bahdanau) bahdanau_keys_backward(denc, family_of<BahdanauSeq2SeqT>(g).attention, dkeys, tape.enc,
                                                                           family_of<BahdanauSeq2SeqT>(m).attention);
    if (m.cfg.kind == AttentionKind::Luong && m.cfg.luong.score == LuongScore::Concat)
      luong_keys_backward(denc, family_of<LuongSeq2SeqT>(g).attention, dkeys, tape.enc, family_of<LuongSeq2SeqT>(m).attention);
    bigru_backward(dxs, bienc_of(g), denc, tape.bienc_cache, bienc_of(m));
  }
  // forward: xs = src_emb[src]
  MatT<T> dxs_rows = MatT<T>::from_shape({nb * ns, e});
  std::copy(dxs.begin(), dxs.end(), dxs_rows.begin());
  embedding_backward(g.src_emb, dxs_rows, batch.src);
}

// ---- greedy decoding -----------------------------------------------------------------------------

namespace {
// Runs greedy decoding on a batch; keeps every step when keep_steps (B = 1 traces).
void greedy_run(Seq2SeqTape& tape, std::vector<std::vector<int>>& out_ids, std::vector<std::vector<Mat>>* alphas,
                std::vector<Mat>* logits_out, const Seq2Seq& m, const std::vector<int>& src, std::size_t batch,
                std::size_t src_len, std::size_t max_len, bool keep_steps) {
  seq2seq_encode(tape, m, src, batch, src_len);
  out_ids.assign(batch, {});
  std::vector<char> done(batch, 0);
  std::vector<int> y(batch, Vocab::bos);
  Mat feed = xt::zeros<float>({batch, feed_size(m.cfg)});
  Mat s_prev = tape.s0;
  tape.steps.clear();
  DecoderStepT<float> st;
  for (std::size_t i = 0; i < max_len + 1; ++i) {
    seq2seq_decoder_step(st, m, tape, y, s_prev, feed, i);
    Mat logits;
    linear_forward(logits, st.o, m.out);
    const std::vector<int> next = argmax_rows(logits);
    bool all_done = true;
    for (std::size_t b = 0; b < batch; ++b) {
      if (done[b]) continue;
      if (alphas && st.alpha().size() > 0) {
        Mat row = Mat::from_shape({std::size_t(1), src_len});
        for (std::size_t j = 0; j < src_len; ++j) row(0, j) = st.alpha()(b, j);
        (*alphas)[b].push_back(row);
      }
      if (next[b] == Vocab::eos || i == max_len) {
        done[b] = 1;
      } else {
        out_ids[b].push_back(next[b]);
        all_done = false;
      }
    }
    if (logits_out) logits_out->push_back(logits);
    y = next;
    s_prev = st.s;
    if (m.cfg.kind == AttentionKind::Luong) feed = st.o;
    if (keep_steps) tape.steps.push_back(st);
    if (all_done) break;
  }
}
}  // namespace

std::vector<Translation> greedy_translate(const Seq2Seq& m, const std::vector<int>& src, std::size_t batch,
                                          std::size_t src_len, std::size_t max_len) {
  Seq2SeqTape tape;
  std::vector<std::vector<int>> ids;
  std::vector<std::vector<Mat>> alphas(batch);
  greedy_run(tape, ids, &alphas, nullptr, m, src, batch, src_len, max_len, false);
  std::vector<Translation> out(batch);
  for (std::size_t b = 0; b < batch; ++b) {
    out[b].ids = std::move(ids[b]);
    if (!alphas[b].empty()) {
      out[b].alignment = Mat::from_shape({alphas[b].size(), src_len});
      for (std::size_t r = 0; r < alphas[b].size(); ++r)
        for (std::size_t j = 0; j < src_len; ++j) out[b].alignment(r, j) = alphas[b][r](0, j);
    }
  }
  return out;
}

DecodeTrace greedy_trace(const Seq2Seq& m, const std::vector<int>& src, std::size_t max_len) {
  DecodeTrace tr;
  std::vector<std::vector<int>> ids;
  std::vector<Mat> logits;
  greedy_run(tr.tape, ids, nullptr, &logits, m, src, 1, src.size(), max_len, true);
  tr.ids = ids[0];
  tr.inputs.push_back(Vocab::bos);
  for (std::size_t i = 0; i + 1 < tr.tape.steps.size(); ++i) tr.inputs.push_back(tr.ids[i]);
  tr.logits = Mat::from_shape({logits.size(), m.cfg.tgt_vocab});
  for (std::size_t r = 0; r < logits.size(); ++r)
    for (std::size_t v = 0; v < m.cfg.tgt_vocab; ++v) tr.logits(r, v) = logits[r](0, v);
  if (m.cfg.kind != AttentionKind::None) {
    tr.alignment = Mat::from_shape({tr.tape.steps.size(), src.size()});
    for (std::size_t r = 0; r < tr.tape.steps.size(); ++r)
      for (std::size_t j = 0; j < src.size(); ++j) tr.alignment(r, j) = tr.tape.steps[r].alpha()(0, j);
  }
  return tr;
}

#define ATTN_SEQ2SEQ_INSTANTIATE(T)                                                                        \
  template Seq2SeqT<T> zeros_like(const Seq2SeqT<T>&);                                                     \
  template struct DecoderStepT<T>;                                                                         \
  template void seq2seq_encode(Seq2SeqTapeT<T>&, const Seq2SeqT<T>&, const std::vector<int>&, std::size_t, \
                               std::size_t);                                                               \
  template void seq2seq_decoder_step(DecoderStepT<T>&, const Seq2SeqT<T>&, const Seq2SeqTapeT<T>&,         \
                                     const std::vector<int>&, const MatT<T>&, const MatT<T>&, std::size_t); \
  template T seq2seq_forward(Seq2SeqTapeT<T>&, const Seq2SeqT<T>&, const Batch&);                          \
  template void seq2seq_backward(Seq2SeqT<T>&, const Seq2SeqTapeT<T>&, const Seq2SeqT<T>&, const Batch&);
ATTN_SEQ2SEQ_INSTANTIATE(float)
ATTN_SEQ2SEQ_INSTANTIATE(double)

}  // namespace attn
