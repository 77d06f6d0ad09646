// Chapter 05 exercise checks (solutions.cpp in ctest; the learner's exercises.cpp through
// `scripts/exercises check 05`). Each check compares with the library and names the usual mistake.
// Tolerance 1e-5 (float32 values in [−1, 1] or small multiples).
#include "attn/position/alibi.hpp"
#include "attn/tensor/rng.hpp"
#include "attn/position/rope.hpp"
#include "attn/position/sinusoidal.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "exercise_check.hpp"
#include "../../chapters/05_positional_encoding/exercises.hpp"  // by path: every chapter has an exercises.hpp

using attn::Mat;
using attn::Tensor3;
using exercise_check::max_diff;

TEST_SUITE("ch05") {

TEST_CASE("05.1 sinusoidal_table") {
  LEARNER_CALL(pe, ex05::sinusoidal_table(20, 8));
  REQUIRE_MESSAGE((pe.shape(0) == 20 && pe.shape(1) == 8), "sinusoidal_table(20, 8) must be (20, 8)");
  const Mat want = attn::sinusoidal_table(20, 8);
  if (max_diff(pe, want) > 1e-5) {
    Mat swapped = want;  // sin and cos exchanged
    for (std::size_t p = 0; p < 20; ++p)
      for (std::size_t i = 0; i < 4; ++i) std::swap(swapped(p, 2 * i), swapped(p, 2 * i + 1));
    if (max_diff(pe, swapped) < 1e-5) FAIL("sin and cos are swapped: sin goes to column 2i, cos to 2i+1");
    if (pe(0, 0) != 0.0f || pe(0, 1) != 1.0f) FAIL("position 0 must be (sin 0, cos 0, …) = (0, 1, 0, 1, …)");
    if (std::abs(pe(1, 2) - std::sin(1.0 / std::pow(10000.0, 1.0 / 8.0))) < 1e-5)
      FAIL("the exponent uses i, not 2i: pair i's angle is pos / 10000^(2i/d)");
    FAIL("values differ from sin/cos(pos / 10000^(2i/d)) by " << max_diff(pe, want));
  }
}

TEST_CASE("05.2 rope_rotate") {
  attn::Rng rng(52);
  const Mat x = rng.normal_mat(5, 8);
  const attn::RopeTables tab = attn::rope_tables(20, 8);
  LEARNER_CALL(y, ex05::rope_rotate(x, 3));
  REQUIRE_MESSAGE((y.shape(0) == 5 && y.shape(1) == 8), "the result must have x's shape (5, 8)");
  const Mat want = attn::rope_rotate(x, tab, 3);
  if (max_diff(y, want) > 1e-5) {
    if (max_diff(y, attn::rope_rotate(x, tab, 0)) < 1e-5) FAIL("you ignored start: row t sits at position start + t");
    Mat back = xt::zeros<float>({5, 8});  // the rotation by −angle
    attn::rope_backward(back, x, tab, 3);
    if (max_diff(y, back) < 1e-5) FAIL("you rotated the wrong way: y[2i] = x0·cos − x1·sin, y[2i+1] = x0·sin + x1·cos");
    // rotate_half pairing (i, i + d/2)
    Mat perm = xt::zeros<float>({5, 8});
    for (std::size_t t = 0; t < 5; ++t)
      for (std::size_t i = 0; i < 4; ++i) perm(t, 2 * i) = x(t, i), perm(t, 2 * i + 1) = x(t, i + 4);
    const Mat rp = attn::rope_rotate(perm, tab, 3);
    Mat unperm = xt::zeros<float>({5, 8});
    for (std::size_t t = 0; t < 5; ++t)
      for (std::size_t i = 0; i < 4; ++i) unperm(t, i) = rp(t, 2 * i), unperm(t, i + 4) = rp(t, 2 * i + 1);
    if (max_diff(y, unperm) < 1e-5)
      FAIL("you paired dimension i with i + d/2 (HuggingFace's rotate_half); this chapter pairs adjacent dimensions (2i, 2i+1)");
    FAIL("rotation differs from RoPE by " << max_diff(y, want));
  }
  // The property that makes RoPE relative: scores depend on m − n only.
  const Mat q = rng.normal_mat(3, 8, 0.5f), k = rng.normal_mat(3, 8, 0.5f);
  LEARNER_CALL(q0, ex05::rope_rotate(q, 0));
  LEARNER_CALL(k0, ex05::rope_rotate(k, 0));
  LEARNER_CALL(q7, ex05::rope_rotate(q, 7));
  LEARNER_CALL(k7, ex05::rope_rotate(k, 7));
  for (std::size_t m = 0; m < 3; ++m)
    for (std::size_t n = 0; n < 3; ++n) {
      double a = 0, b = 0;
      for (std::size_t c = 0; c < 8; ++c) a += double(q0(m, c)) * k0(n, c), b += double(q7(m, c)) * k7(n, c);
      CHECK_MESSAGE(std::abs(a - b) < 1e-5, "q_m·k_n must not change when both move 7 positions on");
    }
}

TEST_CASE("05.3 alibi_bias") {
  LEARNER_CALL(b, ex05::alibi_bias(8, 6));
  REQUIRE_MESSAGE(attn::shape_of(b) == attn::Shape({8, 6, 6}), "alibi_bias(8, 6) must be (heads, T, T) = (8, 6, 6)");
  const Tensor3 want = attn::alibi_bias(attn::alibi_slopes(8), 6);
  if (attn::max_abs_diff(b, want) > 1e-6) {
    if (b(0, 0, 3) > 0) FAIL("the bias must be a penalty (≤ 0): −m·|i − j|");
    if (std::abs(b(0, 0, 1) + std::pow(2.0, -8.0 * 0 / 8.0)) < 1e-6 || std::abs(b(0, 0, 1) + 1.0) < 1e-6)
      FAIL("head 0's slope must be 2^(−8·1/8) = 1/2: the exponent uses h + 1, not h");
    if (std::abs(b(7, 0, 1) + 0.5f) < 1e-6) FAIL("the slopes run the wrong way: head 0 is the steepest (1/2), head 7 the flattest (1/256)");
    if (b(0, 3, 0) == 0.0f) FAIL("the bias is symmetric in this exercise: −m·|i − j| below the diagonal too");
    FAIL("bias differs from −m_h·|i − j| by " << attn::max_abs_diff(b, want));
  }
}

}  // TEST_SUITE
