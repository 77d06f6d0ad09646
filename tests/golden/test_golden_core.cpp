// Core numerics against PyTorch goldens (data/golden/core, made by tests/golden/gen_golden.py
// from golden_core.py). Expected values were computed by PyTorch in float64 from the same
// float32 inputs; our float32 results must agree to 1e-5 (absolute, values O(1)).
#include <doctest/doctest.h>

#include <string>

#include "attn/attention/attention.hpp"
#include "attn/tensor/blas.hpp"
#include "attn/data/npy.hpp"
#include "golden_io.hpp"
#include "attn/tensor/softmax.hpp"
#include "attn/tensor/tensor_ops.hpp"

using namespace attn;

namespace {
NpyArray golden_core(const std::string& name) { return golden_io::load("core", name); }
Mat gmat_core(const std::string& name) { return golden_io::mat("core", name); }
Tensor3 gt3(const std::string& name) { return golden_io::tensor3("core", name); }
MatD gmatd(const std::string& name) {
  const NpyArray a = golden_core(name);
  MatD m = xt::zeros<double>({a.shape.at(0), a.shape.at(1)});
  std::copy(a.data.begin(), a.data.end(), m.data());
  return m;
}
}  // namespace

TEST_CASE("golden: softmax equals torch.softmax") {
  CHECK(max_abs_diff(softmax(gmat_core("softmax_x")), gmatd("softmax_y")) < 1e-5);
  CHECK(max_abs_diff(softmax(gmat_core("softmax_big_x")), gmatd("softmax_big_y")) < 1e-5);
}

TEST_CASE("golden: masked softmax equals torch (fully masked row: zeros by our convention)") {
  const Mat y = softmax(gmat_core("softmax_x"), gmat_core("softmax_mask"));
  CHECK(max_abs_diff(y, gmatd("softmax_masked_y")) < 1e-5);
}

TEST_CASE("golden: scaled dot-product attention equals PyTorch, plain and causal") {
  const Mat q = gmat_core("attn_q"), k = gmat_core("attn_k"), v = gmat_core("attn_v");
  CHECK(max_abs_diff(scaled_dot_product_attention(q, k, v).output, gmatd("attn_out")) < 1e-5);
  CHECK(max_abs_diff(scaled_dot_product_attention(q, k, v, gmat_core("attn_causal_mask")).output, gmatd("attn_causal_out")) < 1e-5);
}

TEST_CASE("golden: batched gemm with a transposed operand equals torch.bmm") {
  const Tensor3 c = matmul_batched(gt3("bgemm_a"), gt3("bgemm_b"), Op::N, Op::T);
  CHECK(golden_io::max_err(c, golden_core("bgemm_c")) < 1e-4);  // 33-term float32 dot products of N(0,1) values: |error| ~ 33·2^-24·|terms| ≈ 1e-5
}
