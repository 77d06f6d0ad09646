// Alignments read off attention weights: argmax per target word (first on ties), hits against a
// reference with unaligned and missing target words, agreement of two weight matrices, bad shapes.
#include <doctest/doctest.h>

#include "attn/attention/alignment.hpp"
#include "attn/tensor/tensor_ops.hpp"

using namespace attn;

TEST_CASE("argmax_alignment: each target word's largest weight, the first one on ties") {
  const Mat w = {{0.1f, 0.7f, 0.2f}, {0.5f, 0.2f, 0.3f}, {0.2f, 0.4f, 0.4f}, {0.0f, 0.0f, 0.0f}};
  CHECK(argmax_alignment(w) == std::vector<int>{1, 0, 1, 0});
  CHECK(argmax_alignment(Mat::from_shape({0, 3})).empty());
  CHECK_THROWS_AS(argmax_alignment(Mat::from_shape({2, 0})), ShapeError);
}

TEST_CASE("alignment_hits counts matches, skips unaligned words and counts missing rows as misses") {
  const Mat w = {{0.8f, 0.1f, 0.1f}, {0.1f, 0.1f, 0.8f}, {0.6f, 0.3f, 0.1f}};  // argmax 0, 2, 0
  SUBCASE("every word aligned, rows for all") {
    const AlignmentScore s = alignment_hits(w, {0, 2, 1});
    CHECK(s.hits == 2);
    CHECK(s.total == 3);
    CHECK(s.missing == 0);
    CHECK(s.share() == doctest::Approx(2.0 / 3.0));
  }
  SUBCASE("a target word with no aligned source is neither hit nor miss") {
    const AlignmentScore s = alignment_hits(w, {0, kNoSource, 1});
    CHECK(s.hits == 1);
    CHECK(s.total == 2);
    CHECK(alignment_hits(w, {-5, 2, -1}).total == 1);  // any negative entry means "none"
  }
  SUBCASE("reference longer than the decoded rows: the rest are misses") {
    const AlignmentScore s = alignment_hits(w, {0, 2, 0, 1, kNoSource});
    CHECK(s.hits == 3);
    CHECK(s.total == 4);
    CHECK(s.missing == 1);
    CHECK(s.share() == doctest::Approx(0.75));
  }
  SUBCASE("rows beyond the reference are not scored") {
    const AlignmentScore s = alignment_hits(w, {0});
    CHECK(s.hits == 1);
    CHECK(s.total == 1);
  }
  SUBCASE("nothing to score gives share 0, not NaN") {
    CHECK(alignment_hits(w, {}).share() == 0.0);
    CHECK(alignment_hits(w, {kNoSource, kNoSource}).share() == 0.0);
  }
  SUBCASE("the argmax overload gives the same") {
    const std::vector<int> ref = {2, 2, 0, 1};
    const AlignmentScore a = alignment_hits(w, ref), b = alignment_hits(argmax_alignment(w), ref);
    CHECK(a.hits == b.hits);
    CHECK(a.total == b.total);
    CHECK(a.missing == b.missing);
  }
  SUBCASE("a reference outside the source is a shape error naming it") {
    CHECK_THROWS_WITH_AS(alignment_hits(w, {0, 3}), doctest::Contains("reference[1] = 3"), ShapeError);
  }
}

TEST_CASE("argmax_agreement compares two weight matrices over the rows both have") {
  const Mat a = {{0.9f, 0.1f}, {0.2f, 0.8f}, {0.6f, 0.4f}};
  const Mat b = {{0.7f, 0.3f}, {0.6f, 0.4f}};
  const AlignmentScore s = argmax_agreement(a, b);
  CHECK(s.hits == 1);
  CHECK(s.total == 2);
  CHECK(s.missing == 0);
  CHECK(argmax_agreement(a, a).share() == 1.0);
  CHECK_THROWS_AS(argmax_agreement(a, Mat::from_shape({2, 3})), ShapeError);
}

TEST_CASE("argmax_rows: first index of the largest entry per row") {
  CHECK(argmax_rows(Mat{{0.f, 2.f, 1.f}, {5.f, -1.f, 0.f}, {3.f, 3.f, 1.f}}) == std::vector<int>{1, 0, 0});
  CHECK_THROWS_AS(argmax_rows(Mat::from_shape({1, 0})), ShapeError);
}
