// Chapter 01 exercise checks. References: the library's batched Bahdanau attention
// (common/src/attention/additive_attention.cpp) on a batch of one. Tolerance 1e-5 (float32, O(1) values).
#include <limits>

#include "attn/attention/additive_attention.hpp"
#include "attn/tensor/rng.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "exercise_check.hpp"
#include "../../chapters/01_bahdanau/exercises.hpp"  // by path: every chapter has an exercises.hpp

using attn::Mat;
using attn::Tensor3;
using attn::Vec;

namespace {
struct Case {
  Vec s_prev;
  Mat H;
  attn::Bahdanau p;
  Vec energies, alpha, context;  // the library's answers
};
Case make_case(std::uint64_t seed, std::size_t s, std::size_t hd, std::size_t he, std::size_t a) {
  attn::Rng rng(seed);
  Case c;
  c.s_prev = rng.normal_vec(hd);
  c.H = rng.normal_mat(s, he);
  c.p = attn::bahdanau_init(hd, he, a, rng);
  Tensor3 enc = Tensor3::from_shape({std::size_t(1), s, he});
  std::copy(c.H.begin(), c.H.end(), enc.begin());
  Mat sp = Mat::from_shape({std::size_t(1), hd});
  std::copy(c.s_prev.begin(), c.s_prev.end(), sp.begin());
  Tensor3 keys;
  attn::bahdanau_keys_forward(keys, enc, c.p);
  attn::BahdanauStepT<float> step;
  Mat ctx;
  attn::bahdanau_step_forward(ctx, step, sp, enc, keys, c.p);
  c.energies = attn::row_of(step.energies, 0);
  c.alpha = attn::row_of(step.alpha, 0);
  c.context = attn::row_of(ctx, 0);
  return c;
}
}  // namespace

TEST_SUITE("ch01") {

TEST_CASE("01.1 bahdanau_energies") {
  const Case c = make_case(11, 7, 5, 6, 4);
  LEARNER_CALL(e, ex01::bahdanau_energies(c.s_prev, c.H, c.p.w_a, c.p.u_a, c.p.v_a));
  REQUIRE_MESSAGE(e.size() == 7, "one energy per source word (S = 7), got " << e.size());
  const double err = attn::max_abs_diff(e, c.energies);
  if (err > 1e-5) {
    // Without the tanh the energies are linear in s_prev and h_j.
    Vec lin = xt::zeros<float>({7});
    for (std::size_t j = 0; j < 7; ++j)
      for (std::size_t k = 0; k < 4; ++k) {
        float q = 0, key = 0;
        for (std::size_t i = 0; i < 5; ++i) q += c.s_prev(i) * c.p.w_a(i, k);
        for (std::size_t i = 0; i < 6; ++i) key += c.H(j, i) * c.p.u_a(i, k);
        lin(j) += c.p.v_a(k) * (q + key);
      }
    CHECK_MESSAGE(attn::max_abs_diff(e, lin) > 1e-5, "your energies are linear: apply tanh to (s_prev·W_a + h_j·U_a) before the dot with v_a");
  }
  CHECK_MESSAGE(err < 1e-5, "energies differ by " << err << ": e_j = Σ_a v_a[a]·tanh((s_prev·W_a)[a] + (h_j·U_a)[a])");
}

TEST_CASE("01.2 attention_weights") {
  const Case c = make_case(12, 9, 4, 4, 3);
  LEARNER_CALL(a, ex01::attention_weights(c.energies));
  REQUIRE_MESSAGE(a.size() == 9, "one weight per energy");
  double sum = 0;
  for (float x : a) sum += x;
  CHECK_MESSAGE(std::abs(sum - 1.0) < 1e-5, "weights sum to " << sum << ", not 1: divide by Σ_k exp(e_k)");
  CHECK_MESSAGE(attn::max_abs_diff(a, c.alpha) < 1e-5, "weights differ from softmax(e)");
  const Vec big = {1000.0f, 1001.0f, 998.0f};
  LEARNER_CALL(b, ex01::attention_weights(big));
  bool finite = true;
  for (float x : b) finite &= std::isfinite(x);
  CHECK_MESSAGE(finite, "NaN or inf for energies near 1000: subtract the largest energy before exp");
}

TEST_CASE("01.3 context_vector") {
  const Case c = make_case(13, 6, 4, 5, 3);
  LEARNER_CALL(ctx, ex01::context_vector(c.alpha, c.H));
  REQUIRE_MESSAGE(ctx.size() == 5, "the context has the encoder state's size He = 5 (not S = 6)");
  CHECK_MESSAGE(attn::max_abs_diff(ctx, c.context) < 1e-5, "c must be Σ_j α_j h_j (a weighted sum of H's rows)");
  Vec onehot = xt::zeros<float>({6});
  onehot(2) = 1.0f;
  LEARNER_CALL(pick, ex01::context_vector(onehot, c.H));
  CHECK_MESSAGE(attn::max_abs_diff(pick, attn::row_of(c.H, 2)) < 1e-6, "with α one-hot on word 2, c must be exactly h_2");
}

}
