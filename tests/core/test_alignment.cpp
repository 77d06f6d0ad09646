// Alignments read off attention weights (attn/data/alignment.hpp): argmax per row, first on ties;
// agreement counted over the positions both alignments have.
#include <doctest/doctest.h>

#include "attn/data/alignment.hpp"

using namespace attn;

TEST_CASE("argmax_alignment picks each row's largest weight, the first on ties") {
  const Mat w = {{0.1f, 0.7f, 0.2f}, {0.5f, 0.1f, 0.4f}, {0.3f, 0.3f, 0.3f}, {0.0f, 0.2f, 0.8f}};
  CHECK(argmax_alignment(w) == std::vector<int>{1, 0, 0, 2});
  CHECK(argmax_alignment(Mat(xt::zeros<float>({0, 3}))).empty());
  CHECK_THROWS_AS(argmax_alignment(Mat(xt::zeros<float>({2, 0}))), ShapeError);
}

TEST_CASE("alignment_agreement counts matching positions over the shorter alignment") {
  const AlignmentAgreement a = alignment_agreement({0, 2, 1, 3}, {0, 1, 1, 3});
  CHECK(a.hits == 3);
  CHECK(a.total == 4);
  CHECK(a.share() == doctest::Approx(0.75));
  const AlignmentAgreement b = alignment_agreement({0, 1}, {0, 2, 2});
  CHECK(b.hits == 1);
  CHECK(b.total == 2);
  CHECK(alignment_agreement({}, {1}).share() == 0.0);
}
