// Length-extrapolation experiment: data, model, training, evaluation (see attn/studies/extrapolation.hpp).
#include "attn/studies/extrapolation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attn/position/alibi.hpp"
#include "attn/attention/attention_layer.hpp"
#include "attn/position/learned_position.hpp"
#include "attn/nn/loss.hpp"
#include "attn/nn/optim.hpp"
#include "attn/nn/train_loop.hpp"
#include "attn/position/rope.hpp"
#include "attn/position/sinusoidal.hpp"

namespace attn {

RecallData make_recall_data(Rng& rng, std::size_t n, std::size_t T, std::size_t keys, std::size_t values) {
  RecallData d;
  for (std::size_t s = 0; s < n; ++s) {
    std::vector<int> tok(T), tgt(T, -1), last(keys, -1);
    for (std::size_t t = 0; t < T; ++t) {
      tok[t] = int(rng.below(std::uint32_t(keys * values)));
      const std::size_t key = std::size_t(tok[t]) / values;
      if (last[key] >= 0) tgt[t] = last[key];
      last[key] = tok[t] % int(values);
    }
    d.tokens.push_back(std::move(tok));
    d.targets.push_back(std::move(tgt));
  }
  return d;
}

PositionModel::PositionModel(PositionEncoding enc, const ExtrapolationConfig& cfg, Rng& rng) : enc_(enc), cfg_(cfg) {
  const std::size_t C = cfg.d_model;
  emb_ = embedding_init(cfg.keys * cfg.values, C, rng);
  demb_ = xt::zeros<float>(emb_.shape());
  wq_ = linear_init(C, C, rng, false);
  wk_ = linear_init(C, C, rng, false);
  wv_ = linear_init(C, C, rng, false);
  wo_ = linear_init(C, C, rng, false);
  out_ = linear_init(C, cfg.values, rng, true);
  dwq_ = zeros_like(wq_), dwk_ = zeros_like(wk_), dwv_ = zeros_like(wv_), dwo_ = zeros_like(wo_), dout_ = zeros_like(out_);
  reg_.add("embedding", emb_, demb_);
  if (enc == PositionEncoding::Learned) {
    pos_ = learned_position_init(cfg.train_len, C, rng);
    dpos_ = xt::zeros<float>(pos_.shape());
    reg_.add("positions", pos_, dpos_);
  }
  register_params(reg_, "attn.q", wq_, dwq_);
  register_params(reg_, "attn.k", wk_, dwk_);
  register_params(reg_, "attn.v", wv_, dwv_);
  register_params(reg_, "attn.o", wo_, dwo_);
  register_params(reg_, "readout", out_, dout_);
}

namespace {
Mat columns(const Mat& x, std::size_t c0, std::size_t n) {  // x[:, c0:c0+n]
  Mat y = xt::zeros<float>({x.shape(0), n});
  for (std::size_t t = 0; t < x.shape(0); ++t)
    for (std::size_t c = 0; c < n; ++c) y(t, c) = x(t, c0 + c);
  return y;
}
void add_columns(Mat& x, const Mat& y, std::size_t c0) {  // x[:, c0:c0+n] += y
  for (std::size_t t = 0; t < y.shape(0); ++t)
    for (std::size_t c = 0; c < y.shape(1); ++c) x(t, c0 + c) += y(t, c);
}
}  // namespace

double PositionModel::run(const std::vector<int>& tokens, const std::vector<int>& targets, std::size_t* correct, bool train,
                          float grad_scale) {
  // B = 1 sequence, T tokens, C = d_model, H heads of D = C/H
  const std::size_t T = tokens.size(), C = cfg_.d_model, H = cfg_.heads, D = C / H;
  Mat x;
  embedding_forward(x, tokens, emb_);  // (T, C)
  Mat xp = x;
  if (enc_ == PositionEncoding::Sinusoidal) xp += sinusoidal_table(T, C);
  if (enc_ == PositionEncoding::Learned) learned_position_forward(xp, x, pos_);
  Mat q, k, v;
  linear_forward(q, xp, wq_);
  linear_forward(k, xp, wk_);
  linear_forward(v, xp, wv_);
  // strict causal mask: token t reads tokens j < t (the answer is never itself); row 0 reads nothing
  Mat mask = xt::zeros<float>({T, T});
  for (std::size_t i = 0; i < T; ++i)
    for (std::size_t j = i; j < T; ++j) mask(i, j) = -std::numeric_limits<float>::infinity();
  Tensor3 bias;
  if (enc_ == PositionEncoding::Alibi) alibi_bias_forward(bias, Vec(alibi_slopes(H)), T, T);
  const RopeTables tab = enc_ == PositionEncoding::Rope ? rope_tables(T, D) : RopeTables{};
  std::vector<Mat> qh(H), kh(H), vh(H), wts(H);
  std::vector<Mat> masks(H, mask);
  Mat concat = xt::zeros<float>({T, C});
  for (std::size_t h = 0; h < H; ++h) {
    qh[h] = columns(q, h * D, D), kh[h] = columns(k, h * D, D), vh[h] = columns(v, h * D, D);
    if (enc_ == PositionEncoding::Rope) rope_forward(qh[h], qh[h], tab), rope_forward(kh[h], kh[h], tab);
    if (enc_ == PositionEncoding::Alibi) masks[h] += xt::view(bias, h, xt::all(), xt::all());
    Mat o;
    sdpa_forward(o, wts[h], qh[h], kh[h], vh[h], masks[h]);
    add_columns(concat, o, h * D);
  }
  Mat attn_out, logits, probs;
  linear_forward(attn_out, concat, wo_);
  linear_forward(logits, attn_out, out_);
  const double loss = cross_entropy_forward(probs, logits, targets, -1);
  if (correct) {
    const std::vector<int> pred = argmax_rows(logits);
    for (std::size_t t = 0; t < T; ++t) *correct += targets[t] >= 0 && pred[t] == targets[t];
  }
  if (!train) return loss;

  // backward, each line undoing one line of the forward above
  Mat dlogits = xt::zeros<float>(logits.shape()), dattn = xt::zeros<float>(attn_out.shape());
  Mat dconcat = xt::zeros<float>(concat.shape());
  cross_entropy_backward(dlogits, probs, targets, -1, 0.0f, grad_scale);
  linear_backward(dattn, dout_, dlogits, attn_out, out_);   // logits = attn_out·W_out + b
  linear_backward(dconcat, dwo_, dattn, concat, wo_);       // attn_out = concat·W_O
  Mat dq = xt::zeros<float>({T, C}), dk = xt::zeros<float>({T, C}), dv = xt::zeros<float>({T, C});
  for (std::size_t h = 0; h < H; ++h) {
    Mat dqh = xt::zeros<float>({T, D}), dkh = xt::zeros<float>({T, D}), dvh = xt::zeros<float>({T, D});
    sdpa_backward(dqh, dkh, dvh, columns(dconcat, h * D, D), wts[h], qh[h], kh[h], vh[h]);  // o_h = sdpa(q_h, k_h, v_h)
    if (enc_ == PositionEncoding::Rope) {  // q_h ← rope(q_h), k_h ← rope(k_h)
      Mat rq = xt::zeros<float>({T, D}), rk = xt::zeros<float>({T, D});
      rope_backward(rq, dqh, tab);
      rope_backward(rk, dkh, tab);
      dqh = rq, dkh = rk;
    }
    add_columns(dq, dqh, h * D), add_columns(dk, dkh, h * D), add_columns(dv, dvh, h * D);
  }
  Mat dxp = xt::zeros<float>({T, C});
  linear_backward(dxp, dwq_, dq, xp, wq_);  // q = xp·W_Q (likewise k, v)
  linear_backward(dxp, dwk_, dk, xp, wk_);
  linear_backward(dxp, dwv_, dv, xp, wv_);
  if (enc_ == PositionEncoding::Learned) {  // xp = x + P[t]
    Mat none;
    learned_position_backward(none, dpos_, dxp);
  }
  embedding_backward(demb_, dxp, tokens);  // x = E[tokens]  (a sinusoidal table has no gradient)
  return loss;
}

ExtrapolationResult evaluate_extrapolation(PositionModel& m, const RecallData& data) {
  ExtrapolationResult r;
  r.length = data.tokens.empty() ? 0 : data.tokens[0].size();
  double loss_sum = 0.0;
  std::size_t correct = 0;
  try {
    for (std::size_t s = 0; s < data.tokens.size(); ++s) {
      const std::size_t n = count_targets(data.targets[s], -1);
      loss_sum += m.run(data.tokens[s], data.targets[s], &correct, false) * double(n);
      r.scored += n;
    }
  } catch (const PositionLimitError&) {
    return r;  // available = false
  }
  r.available = true;
  r.loss = r.scored ? loss_sum / double(r.scored) : 0.0;
  r.accuracy = r.scored ? double(correct) / double(r.scored) : 0.0;
  return r;
}

double train_extrapolation(PositionModel& m, const ExtrapolationConfig& cfg) {
  Rng rng(cfg.seed * 7919 + std::uint64_t(m.encoding()));
  AdamConfig ac;
  ac.lr = cfg.lr;
  Adam adam(m.registry(), ac);
  double recent = 0.0;
  const std::size_t window = std::min<std::size_t>(100, cfg.steps);  // the last steps averaged
  TrainLoop loop(cfg.steps, /*clip=*/1.0, /*valid_every=*/0);
  loop.forward_backward = [&](std::size_t) {
    const RecallData batch = make_recall_data(rng, cfg.batch, cfg.train_len, cfg.keys, cfg.values);
    double loss = 0.0;
    for (std::size_t s = 0; s < cfg.batch; ++s)
      loss += m.run(batch.tokens[s], batch.targets[s], nullptr, true, 1.0f / float(cfg.batch));
    return loss;
  };
  loop.after_step = [&](const TrainStep& s) {  // s.step is 1-based
    if (s.step + window > cfg.steps) recent += s.loss / double(cfg.batch) / double(window);
  };
  run_train_loop(loop, m.registry(), {&adam});
  return recent;
}

}  // namespace attn

namespace attn {
std::vector<ExtrapolationResult> extrapolation_table_row(PositionModel& m, const ExtrapolationConfig& cfg) {
  std::vector<ExtrapolationResult> row;
  for (std::size_t mult : {1u, 2u, 4u}) {
    const std::size_t T = mult * cfg.train_len;
    Rng rng(2024 + T);  // 2024: an arbitrary fixed seed, shared by all encodings
    row.push_back(evaluate_extrapolation(m, make_recall_data(rng, kExtrapolationTestSequences, T, cfg.keys, cfg.values)));
    row.back().length = T;
  }
  return row;
}

ExtrapolationResult order_blind_vote(const RecallData& data, std::size_t values) {
  ExtrapolationResult r;
  r.length = data.tokens.empty() ? 0 : data.tokens[0].size();
  r.available = true;
  double right = 0.0;
  for (std::size_t s = 0; s < data.tokens.size(); ++s) {
    std::vector<std::vector<std::size_t>> seen;  // seen[key][value]: how often so far
    for (std::size_t t = 0; t < data.tokens[s].size(); ++t) {
      const std::size_t tok = std::size_t(data.tokens[s][t]), key = tok / values;
      if (seen.size() <= key) seen.resize(key + 1, std::vector<std::size_t>(values, 0));
      const int target = data.targets[s][t];
      if (target >= 0) {
        const std::vector<std::size_t>& c = seen[key];
        const std::size_t top = *std::max_element(c.begin(), c.end());
        const auto tied = std::count(c.begin(), c.end(), top);
        if (c[std::size_t(target)] == top) right += 1.0 / double(tied);
        ++r.scored;
      }
      ++seen[key][tok % values];
    }
  }
  r.accuracy = r.scored ? right / double(r.scored) : 0.0;
  return r;
}

std::vector<ExtrapolationResult> order_blind_vote_row(const ExtrapolationConfig& cfg) {
  std::vector<ExtrapolationResult> row;
  for (std::size_t mult : {1u, 2u, 4u}) {
    const std::size_t T = mult * cfg.train_len;
    Rng rng(2024 + T);  // extrapolation_table_row's sequences
    row.push_back(order_blind_vote(make_recall_data(rng, kExtrapolationTestSequences, T, cfg.keys, cfg.values),
                                   cfg.values));
  }
  return row;
}
}  // namespace attn
