// Chapter 04 exercise checks (solutions.cpp in ctest; the learner's exercises.cpp through
// `scripts/exercises check 04`). Messages name the usual mistakes. Tolerance 1e-5 (float32, O(1) values).
#include "attn/attention/mha_trace.hpp"
#include "attn/attention/multi_head.hpp"
#include "attn/tensor/rng.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "exercise_check.hpp"
#include "../../chapters/04_multi_head/exercises.hpp"  // by path: every chapter has an exercises.hpp

using attn::Mat;
using attn::Tensor3;

namespace {
double diff3(const Tensor3& a, const Tensor3& b) {
  if (attn::shape_of(a) != attn::shape_of(b)) return INFINITY;
  return attn::max_abs_diff(a, b);
}
}  // namespace

TEST_SUITE("ch04") {

TEST_CASE("04.1 split_heads") {
  attn::Rng rng(41);
  const Mat x = rng.normal_mat(5, 12);  // n = 5, 3 heads of 4: n != h catches swapped axes
  LEARNER_CALL(h, ex04::split_heads(x, 3));
  REQUIRE_MESSAGE(attn::shape_of(h) == attn::Shape({3, 5, 4}), "split_heads(x (5×12), 3) must be (h, n, d_k) = (3, 5, 4)");
  const Tensor3 want = attn::split_heads(x, 3);
  if (diff3(h, want) > 0) {
    Tensor3 reshaped = xt::zeros<float>({3, 5, 4});  // the row-major reshape mistake
    std::copy(x.begin(), x.end(), reshaped.begin());
    if (diff3(h, reshaped) == 0) FAIL("you reshaped the memory of x directly: that cuts rows apart. Head i is the column block [4i, 4i+4) of every row");
    FAIL("out(h, t, c) must equal x(t, h·d_k + c)");
  }
}

TEST_CASE("04.2 multi_head_attention") {
  attn::Rng rng(42);
  const std::size_t T = 5, d = 16, H = 4;
  attn::MultiHead p = attn::multi_head_init(d, H, H, rng, false);
  const Mat x = rng.normal_mat(T, d);
  LEARNER_CALL(out, ex04::multi_head_attention(x, p.w_q, p.w_k, p.w_v, p.w_o, H));
  REQUIRE_MESSAGE((out.shape(0) == T && out.shape(1) == d), "the output must be (n, d_model) = (5, 16)");
  const Mat want = attn::multi_head_trace(x, p).output;
  if (exercise_check::max_diff(out, want) > 1e-5) {
    const attn::MhaTrace t = attn::multi_head_trace(x, p);
    if (exercise_check::max_diff(out, t.concat) < 1e-5) FAIL("this is the concatenation: multiply it by W_O at the end");
    attn::MultiHead one = p;
    one.n_heads = one.n_kv_heads = 1;
    if (exercise_check::max_diff(out, attn::multi_head_trace(x, one).output) < 1e-5)
      FAIL("this is ONE head over all 16 columns (scaled by 1/√16): split Q, K, V into 4 heads and attend in each");
    // The scale 1/√d_model instead of 1/√d_k: scale Q by √d_k/√d_model = 1/2 and compare.
    attn::MultiHead wrong = p;
    wrong.w_q = p.w_q * 0.5f;
    if (exercise_check::max_diff(out, attn::multi_head_trace(x, wrong).output) < 1e-5)
      FAIL("scores are divided by √d_model: each head divides by √d_k = √(d_model/h)");
    FAIL("output differs from Concat(head_1 … head_h)·W_O by " << exercise_check::max_diff(out, want));
  }
}

}  // TEST_SUITE
