// Chapter 02 exercise checks. References: the library's batched Luong attention
// (common/src/attention/luong_attention.cpp) on a batch of one. Tolerance 1e-5 (float32, O(1) values).
#include <cmath>

#include "attn/attention/luong_attention.hpp"
#include "attn/tensor/rng.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "exercise_check.hpp"
#include "../../chapters/02_luong/exercises.hpp"  // by path: every chapter has an exercises.hpp

using attn::Mat;
using attn::Tensor3;
using attn::Vec;

namespace {
Tensor3 batch1(const Mat& H) {
  Tensor3 t = Tensor3::from_shape({std::size_t(1), H.shape(0), H.shape(1)});
  std::copy(H.begin(), H.end(), t.begin());
  return t;
}
Mat row1(const Vec& v) {
  Mat m = Mat::from_shape({std::size_t(1), v.size()});
  std::copy(v.begin(), v.end(), m.begin());
  return m;
}
}  // namespace

TEST_SUITE("ch02") {

TEST_CASE("02.1 luong_general_scores") {
  attn::Rng rng(21);
  const Vec h = rng.normal_vec(5);
  const Mat H = rng.normal_mat(7, 4);
  const Mat w = rng.normal_mat(5, 4, 0.5f);
  LEARNER_CALL(s, ex02::luong_general_scores(h, H, w));
  REQUIRE_MESSAGE(s.size() == 7, "one score per source position (S = 7)");
  attn::Luong p;
  p.w_a = w;
  attn::LuongStepT<float> step;
  Mat ref;
  attn::luong_scores_forward(ref, step, row1(h), batch1(H), p, attn::LuongScore::General);
  CHECK_MESSAGE(attn::max_abs_diff(s, attn::row_of(ref, 0)) < 1e-5,
                "scores differ: score_s = Σ_k (h_t·W_a)[k]·h̄_s[k] — W_a is (Hd × He), applied to h_t first");
}

TEST_CASE("02.2 local_p_position") {
  attn::Rng rng(22);
  const Vec h = rng.normal_vec(6);
  attn::LuongConfig cfg{attn::LuongScore::Dot, attn::LuongWindow::LocalP, 3};
  const attn::Luong p = attn::luong_init(cfg, 6, 6, 4, rng);
  const Mat H = rng.normal_mat(11, 6);
  attn::LuongStepT<float> step;
  Mat ctx;
  attn::luong_forward(ctx, step, row1(h), batch1(H), p, cfg);
  LEARNER_CALL(pt, ex02::local_p_position(h, p.w_p, p.v_p, 11));
  CHECK_MESSAGE(pt > 0.0, "p_t = S·σ(…) is always positive");
  CHECK_MESSAGE(pt < 11.0, "p_t = S·σ(…) is always below S = 11: did you forget the sigmoid?");
  CHECK_MESSAGE(std::abs(pt - double(step.p(0))) < 1e-4, "p_t = " << pt << ", expected " << step.p(0)
                << ": p_t = S·σ(v_pᵀ tanh(h_t·W_p))");
}

TEST_CASE("02.3 local_p_weights") {
  attn::Rng rng(23);
  const std::size_t s = 12, d = 2;
  // Reconstruct the library's local-p weights for a chosen p_t via a dot-score model whose scores we know.
  const Mat H = rng.normal_mat(s, 4);
  const Vec h = rng.normal_vec(4);
  attn::Luong p;
  attn::LuongStepT<float> step;
  Mat scores;
  attn::luong_scores_forward(scores, step, row1(h), batch1(H), p, attn::LuongScore::Dot);
  const Vec sc = attn::row_of(scores, 0);
  const double p_t = 5.3;
  LEARNER_CALL(a, ex02::local_p_weights(sc, p_t, d));
  REQUIRE_MESSAGE(a.size() == s, "one weight per source position");
  for (std::size_t j = 0; j < s; ++j)
    if (std::abs(double(j) - p_t) > double(d))
      CHECK_MESSAGE(a(j) == 0.0f, "position " << j << " is outside the window |s − p_t| ≤ D: its weight must be 0");
  // Reference in double.
  double m = -1e30, z = 0;
  for (std::size_t j = 0; j < s; ++j) if (std::abs(double(j) - p_t) <= double(d)) m = std::max(m, double(sc(j)));
  for (std::size_t j = 0; j < s; ++j) if (std::abs(double(j) - p_t) <= double(d)) z += std::exp(double(sc(j)) - m);
  double sum = 0;
  for (std::size_t j = 0; j < s; ++j) {
    if (std::abs(double(j) - p_t) > double(d)) continue;
    const double dist = double(j) - p_t, sigma = double(d) / 2.0;
    const double align = std::exp(double(sc(j)) - m) / z, want = align * std::exp(-dist * dist / (2 * sigma * sigma));
    sum += a(j);
    if (std::abs(double(a(j)) - align) < 1e-5 && std::abs(align - want) > 1e-4)
      FAIL("position " << j << ": you returned the windowed softmax without the Gaussian factor exp(−(s − p_t)²/(2σ²))");
    CHECK_MESSAGE(std::abs(double(a(j)) - want) < 1e-5, "position " << j << ": got " << a(j) << ", expected " << want
                  << " (softmax over the window only, times the Gaussian with σ = D/2)");
  }
  CHECK_MESSAGE(sum < 1.0, "local-p weights sum below 1 (the Gaussian shrinks them); do not renormalise after it");
}

}
