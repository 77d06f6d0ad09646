// Greedy and beam-search decoding with a KV cache, and attention weights of one sentence
// (see attn/models/transformer_decode.hpp).
#include "attn/models/transformer_decode.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "attn/data/batching.hpp"
#include "attn/data/vocab.hpp"
#include "attn/nn/layernorm.hpp"
#include "attn/position/sinusoidal.hpp"
#include "attn/tensor/softmax.hpp"
#include "tensor/layer_kernels.hpp"

namespace attn {

using namespace detail;

double gnmt_length_penalty(std::size_t len, double alpha) { return std::pow((5.0 + double(len)) / 6.0, alpha); }

namespace {

// y (rows, out) = x (rows, in)·W + b
void project(Mat& y, const Mat& x, const Mat& w, const Vec& b) {
  const std::size_t rows = x.shape(0), in = w.shape(0), out = w.shape(1);
  y = Mat::from_shape({rows, out});
  gemm_raw(Op::N, Op::N, rows, out, in, 1.0f, x.data(), in, w.data(), out, 0.0f, y.data(), out);
  if (b.size() > 0)
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t j = 0; j < out; ++j) y(i, j) += b(j);
}

Mat layer_norm(const Mat& x, const Norm& p) {
  Mat y;
  Vec mean, rstd;
  layernorm_forward(y, mean, rstd, x, p);
  return y;
}

// The decoder of one batch of hypotheses, one position at a time. Hypothesis n belongs to
// sentence sent[n]; its self-attention keys at position j live in row (origin[n][j], j) of the
// cache (the hypothesis that wrote them), so reordering beams moves indices, not vectors.
class IncrementalDecoder {
 public:
  IncrementalDecoder(const Transformer& m, const Tensor3& memory, std::vector<std::size_t> sent, std::size_t max_len)
      : m_(m), sent_(std::move(sent)), cap_(max_len + 1), d_(m.cfg.d_model), heads_(m.cfg.n_heads) {
    const std::size_t b = memory.shape(0), s = memory.shape(1), n = sent_.size(), layers = m.dec.size();
    src_len_ = s;
    Mat mem = Mat::from_shape({b * s, d_});
    std::copy(memory.begin(), memory.end(), mem.begin());
    cross_k_.resize(layers);
    cross_v_.resize(layers);
    self_k_.assign(layers, Tensor3(xt::zeros<float>({n, cap_, d_})));
    self_v_.assign(layers, Tensor3(xt::zeros<float>({n, cap_, d_})));
    for (std::size_t l = 0; l < layers; ++l) {
      project(cross_k_[l], mem, m.dec[l].cross.w_k, m.dec[l].cross.b_k);  // (B·S, d)
      project(cross_v_[l], mem, m.dec[l].cross.w_v, m.dec[l].cross.b_v);
    }
    origin_.assign(n, std::vector<std::size_t>(cap_, 0));
    pe_ = sinusoidal_table(cap_, d_);
  }

  // tokens (N,) at position t (0 = <bos>) -> log-probabilities (N, Vt)
  Mat step(const std::vector<int>& tokens, std::size_t t) {
    const std::size_t n = tokens.size();
    if (t >= cap_) throw std::out_of_range("IncrementalDecoder: position beyond max_len");
    Mat x = Mat::from_shape({n, d_});
    const float scale = std::sqrt(float(d_));
    for (std::size_t i = 0; i < n; ++i) {
      if (tokens[i] < 0 || std::size_t(tokens[i]) >= m_.tgt_emb.shape(0))
        throw std::out_of_range("transformer decoding: token id out of range");
      origin_[i][t] = i;
      for (std::size_t k = 0; k < d_; ++k) x(i, k) = m_.tgt_emb(std::size_t(tokens[i]), k) * scale + pe_(t, k);
    }
    const bool post = m_.cfg.norm == NormPlacement::Post;
    for (std::size_t l = 0; l < m_.dec.size(); ++l) {
      const DecoderLayer& p = m_.dec[l];
      if (post) {
        Mat h1 = x + self_attend(l, x, t);
        h1 = layer_norm(h1, p.ln1);
        Mat h2 = h1 + cross_attend(l, h1);
        h2 = layer_norm(h2, p.ln2);
        Mat y = h2 + ffn(h2, p);
        x = layer_norm(y, p.ln3);
      } else {
        Mat h1 = x + self_attend(l, layer_norm(x, p.ln1), t);
        Mat h2 = h1 + cross_attend(l, layer_norm(h1, p.ln2));
        x = h2 + ffn(layer_norm(h2, p.ln3), p);
      }
    }
    if (!post) x = layer_norm(x, m_.dec_norm);
    Mat logits;
    if (m_.cfg.tie_output) {
      logits = Mat::from_shape({n, m_.tgt_emb.shape(0)});
      gemm_t(logits, x, m_.tgt_emb, Op::N, Op::T, 1.0f, 0.0f);
      logits += m_.out.b;
    } else {
      project(logits, x, m_.out.w, m_.out.b);
    }
    const std::size_t vocab = logits.shape(1);
    for (std::size_t i = 0; i < n; ++i) log_softmax_row(logits.data() + i * vocab, logits.data() + i * vocab, vocab);
    return logits;
  }

  // Hypothesis i continues hypothesis parent[i] (positions 0 … t).
  void reorder(const std::vector<std::size_t>& parent, std::size_t t) {
    std::vector<std::vector<std::size_t>> o(parent.size());
    std::vector<std::size_t> s(parent.size());
    for (std::size_t i = 0; i < parent.size(); ++i) {
      o[i] = origin_[parent[i]];
      s[i] = sent_[parent[i]];
    }
    // Each position's cache rows are written once, at its own step, so the rows a hypothesis
    // points to are never overwritten: only the index tables move.
    origin_ = std::move(o);
    sent_ = std::move(s);
    (void)t;
  }

 private:
  using DecoderLayer = DecoderLayerT<float>;

  Mat ffn(const Mat& x, const DecoderLayer& p) const {
    Mat h, y;
    project(h, x, p.ff1.w, p.ff1.b);
    for (auto& v : h) v = std::max(v, 0.0f);
    project(y, h, p.ff2.w, p.ff2.b);
    return y;
  }

  // Causal self-attention of the new rows x (N, d) at position t over positions 0 … t.
  Mat self_attend(std::size_t l, const Mat& x, std::size_t t) {
    const MultiHead& p = m_.dec[l].self;
    Mat q, k, v;
    project(q, x, p.w_q, p.b_q);
    project(k, x, p.w_k, p.b_k);
    project(v, x, p.w_v, p.b_v);
    for (std::size_t i = 0; i < x.shape(0); ++i)
      for (std::size_t c = 0; c < d_; ++c) {
        self_k_[l](i, t, c) = k(i, c);
        self_v_[l](i, t, c) = v(i, c);
      }
    Mat concat = Mat::from_shape({x.shape(0), d_});
    std::vector<const float*> krow(t + 1), vrow(t + 1);
    for (std::size_t i = 0; i < x.shape(0); ++i) {
      for (std::size_t j = 0; j <= t; ++j) {
        krow[j] = &self_k_[l](origin_[i][j], j, 0);
        vrow[j] = &self_v_[l](origin_[i][j], j, 0);
      }
      attend_row(&concat(i, 0), &q(i, 0), krow, vrow);
    }
    Mat out;
    project(out, concat, p.w_o, p.b_o);
    return out;
  }

  Mat cross_attend(std::size_t l, const Mat& x) {
    const MultiHead& p = m_.dec[l].cross;
    Mat q;
    project(q, x, p.w_q, p.b_q);
    Mat concat = Mat::from_shape({x.shape(0), d_});
    std::vector<const float*> krow(src_len_), vrow(src_len_);
    for (std::size_t i = 0; i < x.shape(0); ++i) {
      for (std::size_t j = 0; j < src_len_; ++j) {
        krow[j] = &cross_k_[l](sent_[i] * src_len_ + j, 0);
        vrow[j] = &cross_v_[l](sent_[i] * src_len_ + j, 0);
      }
      attend_row(&concat(i, 0), &q(i, 0), krow, vrow);
    }
    Mat out;
    project(out, concat, p.w_o, p.b_o);
    return out;
  }

  // out (d) = for each head h: softmax(q_h·K_hᵀ/√dh)·V_h over the given key/value rows
  void attend_row(float* out, const float* q, const std::vector<const float*>& k,
                  const std::vector<const float*>& v) {
    const std::size_t dh = d_ / heads_, n = k.size();
    scores_.resize(n);
    weights_.resize(n);
    const float scale = 1.0f / std::sqrt(float(dh));
    for (std::size_t h = 0; h < heads_; ++h) {
      const std::size_t o = h * dh;
      for (std::size_t j = 0; j < n; ++j) {
        float s = 0;
        for (std::size_t c = 0; c < dh; ++c) s += q[o + c] * k[j][o + c];
        scores_[j] = s * scale;
      }
      softmax_row(weights_.data(), scores_.data(), nullptr, n);
      for (std::size_t c = 0; c < dh; ++c) out[o + c] = 0;
      for (std::size_t j = 0; j < n; ++j)
        for (std::size_t c = 0; c < dh; ++c) out[o + c] += weights_[j] * v[j][o + c];
    }
  }

  const Transformer& m_;
  std::vector<std::size_t> sent_;
  std::size_t cap_, d_, heads_, src_len_ = 0;
  std::vector<Mat> cross_k_, cross_v_;    // per layer (B·S, d)
  std::vector<Tensor3> self_k_, self_v_;  // per layer (N, cap, d)
  std::vector<std::vector<std::size_t>> origin_;
  Mat pe_;
  std::vector<float> scores_, weights_;
};

Tensor3 encode_memory(const Transformer& m, const std::vector<int>& src, std::size_t batch, std::size_t src_len) {
  TransformerTape tape;
  transformer_encode(tape, m, src, batch, src_len);
  return tape.memory;
}

}  // namespace

std::vector<std::vector<int>> transformer_greedy(const Transformer& m, const std::vector<int>& src, std::size_t batch,
                                                 std::size_t src_len, std::size_t max_len) {
  const Tensor3 memory = encode_memory(m, src, batch, src_len);
  std::vector<std::size_t> sent(batch);
  std::iota(sent.begin(), sent.end(), std::size_t(0));
  IncrementalDecoder dec(m, memory, sent, max_len);
  std::vector<std::vector<int>> out(batch);
  std::vector<int> tokens(batch, Vocab::bos);
  std::vector<bool> done(batch, false);
  std::size_t live = batch;
  for (std::size_t t = 0; t < max_len && live > 0; ++t) {
    const Mat logp = dec.step(tokens, t);
    for (std::size_t i = 0; i < batch; ++i) {
      std::size_t best = 0;
      for (std::size_t v = 1; v < logp.shape(1); ++v)
        if (logp(i, v) > logp(i, best)) best = v;
      tokens[i] = int(best);
      if (done[i]) continue;
      if (int(best) == Vocab::eos) {
        done[i] = true;
        --live;
      } else {
        out[i].push_back(int(best));
      }
    }
  }
  return out;
}

Mat transformer_step_log_probs(const Transformer& m, const std::vector<int>& src, const std::vector<int>& tgt) {
  const Tensor3 memory = encode_memory(m, src, 1, src.size());
  IncrementalDecoder dec(m, memory, {0}, tgt.size());
  Mat out = Mat::from_shape({tgt.size(), m.tgt_emb.shape(0)});
  for (std::size_t t = 0; t < tgt.size(); ++t) xt::view(out, t, xt::all()) = xt::view(dec.step({tgt[t]}, t), 0, xt::all());
  return out;
}

std::vector<BeamCandidate> beam_candidates(const std::vector<double>& cum, const Mat& logp, std::size_t width) {
  if (logp.shape(0) != cum.size())
    throw ShapeError("beam_candidates: cum has " + std::to_string(cum.size()) + " hypotheses, logp " +
                     shape_str(shape_of(logp)));
  std::vector<BeamCandidate> all;
  for (std::size_t k = 0; k < cum.size(); ++k) {
    if (!std::isfinite(cum[k])) continue;
    for (std::size_t v = 0; v < logp.shape(1); ++v) all.push_back({k, int(v), cum[k] + double(logp(k, v))});
  }
  const std::size_t keep = std::min(width, all.size());
  std::partial_sort(all.begin(), all.begin() + std::ptrdiff_t(keep), all.end(),
                    [](const BeamCandidate& a, const BeamCandidate& b) {
                      if (a.score != b.score) return a.score > b.score;
                      return a.parent != b.parent ? a.parent < b.parent : a.token < b.token;
                    });
  all.resize(keep);
  return all;
}

std::vector<std::vector<int>> transformer_beam(const Transformer& m, const std::vector<int>& src, std::size_t batch,
                                               std::size_t src_len, std::size_t max_len, std::size_t beam,
                                               double alpha) {
  if (beam == 0) throw std::invalid_argument("transformer_beam: beam must be at least 1");
  const Tensor3 memory = encode_memory(m, src, batch, src_len);
  const std::size_t n = batch * beam;
  std::vector<std::size_t> sent(n);
  for (std::size_t i = 0; i < n; ++i) sent[i] = i / beam;
  IncrementalDecoder dec(m, memory, sent, max_len);
  const double neg_inf = -std::numeric_limits<double>::infinity();
  // Live hypotheses: slot b·beam + k. At the start only slot k = 0 of each sentence is live.
  std::vector<double> cum(n, neg_inf);
  std::vector<std::vector<int>> hyp(n);
  for (std::size_t b = 0; b < batch; ++b) cum[b * beam] = 0.0;
  struct Finished {
    std::vector<int> ids;
    double score;
  };
  std::vector<std::vector<Finished>> finished(batch);
  std::vector<bool> done(batch, false);
  std::vector<int> tokens(n, Vocab::bos);
  for (std::size_t t = 0; t < max_len; ++t) {
    const Mat logp = dec.step(tokens, t);
    std::vector<std::size_t> parent(n);
    std::vector<double> next_cum(n, neg_inf);
    std::vector<std::vector<int>> next_hyp(n);
    for (std::size_t b = 0; b < batch; ++b) {
      for (std::size_t k = 0; k < beam; ++k) parent[b * beam + k] = b * beam + k;
      if (done[b]) continue;
      const std::vector<double> c(cum.begin() + std::ptrdiff_t(b * beam), cum.begin() + std::ptrdiff_t((b + 1) * beam));
      const Mat lp = xt::view(logp, xt::range(b * beam, (b + 1) * beam), xt::all());
      // 2·beam candidates: enough for `beam` live ones even if up to `beam` of them end in <eos>.
      std::size_t slot = 0, rank = 0;
      for (const BeamCandidate& cand : beam_candidates(c, lp, 2 * beam)) {
        const std::size_t from = b * beam + cand.parent;
        if (cand.token == Vocab::eos) {
          // an <eos> among the top `beam` candidates ends its hypothesis (as in fairseq)
          if (rank++ < beam)
            finished[b].push_back({hyp[from], cand.score / gnmt_length_penalty(hyp[from].size() + 1, alpha)});
          continue;
        }
        ++rank;
        if (slot == beam) continue;
        const std::size_t to = b * beam + slot++;
        parent[to] = from;
        next_cum[to] = cand.score;
        next_hyp[to] = hyp[from];
        next_hyp[to].push_back(cand.token);
      }
      // Stop when no live hypothesis can still beat the best finished one: Σ log p only falls, and
      // lp grows with length, so a live score can at best reach cum / lp(max_len).
      double best_fin = neg_inf, best_live = neg_inf;
      for (const auto& f : finished[b]) best_fin = std::max(best_fin, f.score);
      for (std::size_t k = 0; k < slot; ++k)
        best_live = std::max(best_live, next_cum[b * beam + k] / gnmt_length_penalty(max_len, alpha));
      if (slot == 0 || (!finished[b].empty() && best_live <= best_fin)) done[b] = true;
    }
    bool all_done = true;
    for (std::size_t b = 0; b < batch; ++b) all_done = all_done && done[b];
    if (all_done) break;
    dec.reorder(parent, t);
    cum = std::move(next_cum);
    hyp = std::move(next_hyp);
    for (std::size_t i = 0; i < n; ++i) tokens[i] = hyp[i].empty() ? Vocab::bos : hyp[i].back();
  }
  std::vector<std::vector<int>> out(batch);
  for (std::size_t b = 0; b < batch; ++b) {
    auto& fin = finished[b];
    if (fin.empty())  // nothing ended within max_len: the best live hypothesis, penalised the same way
      for (std::size_t k = 0; k < beam; ++k)
        if (std::isfinite(cum[b * beam + k]))
          fin.push_back({hyp[b * beam + k], cum[b * beam + k] / gnmt_length_penalty(hyp[b * beam + k].size(), alpha)});
    std::size_t best = 0;
    for (std::size_t i = 1; i < fin.size(); ++i)
      if (fin[i].score > fin[best].score) best = i;
    if (!fin.empty()) out[b] = fin[best].ids;
  }
  return out;
}

TransformerTape transformer_teacher_forced(const Transformer& m, const std::vector<int>& src,
                                           const std::vector<int>& output) {
  Batch b;
  b.size = 1;
  b.src_len = src.size();
  b.tgt_len = output.size() + 1;
  b.src = src;
  b.tgt_in.push_back(Vocab::bos);
  b.tgt_in.insert(b.tgt_in.end(), output.begin(), output.end());
  b.tgt_out = output;
  b.tgt_out.push_back(Vocab::eos);
  TransformerTape tape;
  transformer_forward(tape, m, b);
  return tape;
}

TransformerAttention transformer_attention(const Transformer& m, const std::vector<int>& src,
                                           const std::vector<int>& output) {
  const TransformerTape tape = transformer_teacher_forced(m, src, output);
  const std::size_t h = m.cfg.n_heads, s = src.size(), t = output.size() + 1;
  TransformerAttention a;
  a.enc_self = Tensor4::from_shape({m.enc.size(), h, s, s});
  a.dec_self = Tensor4::from_shape({m.dec.size(), h, t, t});
  a.cross = Tensor4::from_shape({m.dec.size(), h, t, s});
  for (std::size_t l = 0; l < m.enc.size(); ++l)
    xt::view(a.enc_self, l) = xt::view(tape.enc[l].att.weights, 0);
  for (std::size_t l = 0; l < m.dec.size(); ++l) {
    xt::view(a.dec_self, l) = xt::view(tape.dec[l].self_att.weights, 0);
    xt::view(a.cross, l) = xt::view(tape.dec[l].cross_att.weights, 0);
  }
  return a;
}

std::vector<Tokens> transformer_translate_pairs(const Transformer& m, const std::vector<SentencePair>& pairs,
                                                const Vocab& src_vocab, const Vocab& tgt_vocab, std::size_t beam,
                                                std::size_t batch) {
  std::vector<Tokens> out(pairs.size());
  for (const Batch& b : make_batches(pairs, src_vocab, tgt_vocab, batch)) {
    const std::size_t max_len = b.src_len + 10;
    const auto ids = beam <= 1 ? transformer_greedy(m, b.src, b.size, b.src_len, max_len)
                               : transformer_beam(m, b.src, b.size, b.src_len, max_len, beam);
    for (std::size_t i = 0; i < b.size; ++i) out[b.index[i]] = tgt_vocab.decode(ids[i]);
  }
  return out;
}

}  // namespace attn
