// Positional encodings against independent float64 torch implementations (data/golden/positional,
// made by tests/golden/golden_positional.py): the sinusoidal table, RoPE as in Meta's LLaMA code
// (adjacent pairs), the ALiBi authors' slopes and bias. Tolerance 1e-5 (float32 results, values O(1)).
#include <doctest/doctest.h>

#include <string>

#include "attn/position/alibi.hpp"
#include "attn/data/npy.hpp"
#include "golden_io.hpp"
#include "attn/position/rope.hpp"
#include "attn/position/sinusoidal.hpp"
#include "attn/tensor/tensor_ops.hpp"

using namespace attn;

namespace {
NpyArray golden_positional(const std::string& name) { return golden_io::load("positional", name); }
using golden_io::max_err;
}  // namespace

TEST_CASE("golden: sinusoidal table equals the paper's formula in torch float64") {
  CHECK(max_err(sinusoidal_table(50, 16), golden_positional("sinusoidal_pe")) < 1e-5);
}

TEST_CASE("golden: RoPE tables and rotation equal LLaMA's apply_rotary_emb (adjacent pairs)") {
  const RopeTables tab = rope_tables(32, 16);
  CHECK(max_err(tab.cos, golden_positional("rope_cos")) < 1e-5);
  CHECK(max_err(tab.sin, golden_positional("rope_sin")) < 1e-5);
  const Mat x = npy_to_mat(golden_positional("rope_x"), "rope_x");
  CHECK(max_err(rope_rotate(x, tab), golden_positional("rope_x_rot")) < 1e-5);
  CHECK(max_err(rope_rotate(x, tab, 13), golden_positional("rope_x_rot_start13")) < 1e-5);
}

TEST_CASE("golden: ALiBi slopes (8, 12 and 1 heads) and bias equal the authors' get_slopes") {
  for (int h : {8, 12, 1}) CHECK(max_err(alibi_slopes(std::size_t(h)), golden_positional("alibi_slopes_" + std::to_string(h))) < 1e-7);
  CHECK(max_err(alibi_bias(alibi_slopes(8), 6), golden_positional("alibi_bias_8x6")) < 1e-6);
}
