// Chapter 00 exercise checks (against solutions.cpp in ctest; against the learner's exercises.cpp
// through `scripts/exercises check 00`). References: the library's GRU (common/src/nn/gru.cpp) on a
// batch of one. Tolerance 1e-5: float32 sums of ~10 terms of size O(1).
#include <string>
#include <vector>

#include "attn/nn/gru.hpp"
#include "attn/tensor/rng.hpp"
#include "exercise_check.hpp"
#include "../../chapters/00_seq2seq_bottleneck/exercises.hpp"  // by path: every chapter has an exercises.hpp

using attn::Mat;
using attn::Vec;

namespace {
Mat as_row(const Vec& v) {
  Mat m = Mat::from_shape({std::size_t(1), v.size()});
  std::copy(v.begin(), v.end(), m.begin());
  return m;
}
}  // namespace

TEST_SUITE("ch00") {

TEST_CASE("00.1 gru_step") {
  attn::Rng rng(100);
  const std::size_t d = 5, h = 3;
  const attn::Gru p = attn::gru_init(d, h, rng);
  const Vec x = rng.normal_vec(d), h0 = rng.normal_vec(h, 0.5f);
  LEARNER_CALL(out, ex00::gru_step(x, h0, p.wx, p.wh, p.bx, p.bh));
  REQUIRE_MESSAGE(out.size() == h, "h' must have the hidden size " << h);
  Mat ref;
  attn::GruStepCacheT<float> cache;
  attn::gru_cell_forward(ref, cache, as_row(x), as_row(h0), p);
  double worst = 0;
  for (std::size_t j = 0; j < h; ++j) worst = std::max(worst, double(std::abs(out(j) - ref(0, j))));
  if (worst > 1e-5) {
    // Diagnose the usual mistakes by recomputing the variants.
    bool looks_like_h_equals_n = true;
    for (std::size_t j = 0; j < h; ++j)
      looks_like_h_equals_n &= std::abs(out(j) - cache.n(0, j)) < 1e-5f;
    CHECK_MESSAGE(!looks_like_h_equals_n, "h' equals the candidate n: mix it with the old state, h' = (1 − z)⊙n + z⊙h");
    bool reversed = true;
    for (std::size_t j = 0; j < h; ++j)
      reversed &= std::abs(out(j) - (cache.z(0, j) * cache.n(0, j) + (1 - cache.z(0, j)) * h0(j))) < 1e-5f;
    CHECK_MESSAGE(!reversed, "z and 1 − z are swapped: h' = (1 − z)⊙n + z⊙h (PyTorch's convention)");
  }
  CHECK_MESSAGE(worst < 1e-5, "h' differs from the GRU by " << worst
                << ": check the gate order (r, z, n in columns 0:H, H:2H, 2H:3H) and that r multiplies (h·W_hn + b_hn)");
  // A zero update gate bias and huge z: h' ≈ h (the gate keeps the old state).
  attn::Gru keep = p;
  for (std::size_t j = 0; j < h; ++j) keep.bx(h + j) = 50.0f;
  LEARNER_CALL(kept, ex00::gru_step(x, h0, keep.wx, keep.wh, keep.bx, keep.bh));
  for (std::size_t j = 0; j < h; ++j)
    CHECK_MESSAGE(std::abs(kept(j) - h0(j)) < 1e-4, "with z ≈ 1 the state must stay h (h' = (1 − z)⊙n + z⊙h)");
}

TEST_CASE("00.2 token_accuracy") {
  using W = std::vector<std::string>;
  LEARNER_CALL(a, ex00::token_accuracy({"lo", "mau", "dorm-a"}, {"lo", "mau", "dorm-a"}));
  CHECK_MESSAGE(a == doctest::Approx(1.0), "identical sentences have accuracy 1");
  LEARNER_CALL(b, ex00::token_accuracy({"lo", "hundo", "dorm-a"}, {"lo", "mau", "dorm-a"}));
  CHECK_MESSAGE(b == doctest::Approx(2.0 / 3.0), "one wrong word of three: 2/3");
  LEARNER_CALL(c, ex00::token_accuracy({"lo"}, {"lo", "mau", "dorm-a", "kaj"}));
  CHECK_MESSAGE(c == doctest::Approx(0.25), "a short output misses the rest: divide by the reference length (4), not the output's (1)");
  LEARNER_CALL(d, ex00::token_accuracy({"mau", "dorm-a"}, {"lo", "mau", "dorm-a"}));
  CHECK_MESSAGE(d == doctest::Approx(0.0), "accuracy is positional: a word one place early does not count");
  LEARNER_CALL(e, ex00::token_accuracy(W{"lo", "mau", "x", "y", "z"}, W{"lo", "mau"}));
  CHECK_MESSAGE(e == doctest::Approx(1.0), "extra output words are not counted (BLEU's brevity/precision handles them)");
  LEARNER_CALL(f, ex00::token_accuracy(W{}, W{}));
  CHECK_MESSAGE(f == doctest::Approx(1.0), "two empty sentences agree: accuracy 1 (and no division by zero)");
}

}
