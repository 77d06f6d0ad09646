// Multi-head attention against torch.nn.MultiheadAttention (data/golden/mha, made by
// tests/golden/golden_mha.py): d_model 16, 4 heads, biases, plain and causal. Our weights are
// right-multiplied (Q = X·W_Q); the generator handed PyTorch their transposes. Both our narrated
// trace (mha_trace.hpp) and the training layer (multi_head.hpp) must agree to 1e-5.
#include <doctest/doctest.h>

#include <string>

#include "attn/tensor/mask.hpp"
#include "attn/attention/mha_trace.hpp"
#include "attn/attention/multi_head.hpp"
#include "attn/data/npy.hpp"
#include "golden_io.hpp"
#include "attn/tensor/tensor_ops.hpp"

using namespace attn;

namespace {
NpyArray golden_mha(const std::string& name) { return golden_io::load("mha", name); }
Mat gmat_mha(const std::string& n) { return golden_io::mat("mha", n); }
Vec gvec(const std::string& n) { return golden_io::vec("mha", n); }
using golden_io::max_err;
MultiHead golden_weights() {
  MultiHead p;
  p.n_heads = 4;
  p.n_kv_heads = 4;
  p.w_q = gmat_mha("W_Q"), p.w_k = gmat_mha("W_K"), p.w_v = gmat_mha("W_V"), p.w_o = gmat_mha("W_O");
  p.b_q = gvec("b_Q"), p.b_k = gvec("b_K"), p.b_v = gvec("b_V"), p.b_o = gvec("b_O");
  return p;
}
}  // namespace

TEST_CASE("golden: our multi-head attention equals nn.MultiheadAttention (per-head weights too)") {
  const MultiHead p = golden_weights();
  const Mat x = gmat_mha("X");
  const MhaTrace t = multi_head_trace(x, p);
  CHECK(max_err(t.output, golden_mha("output")) < 1e-5);
  CHECK(max_err(t.weights, golden_mha("weights")) < 1e-5);
  const MhaTrace c = multi_head_trace(x, p, causal_mask(x.shape(0)));
  CHECK(max_err(c.output, golden_mha("causal_output")) < 1e-5);
  CHECK(max_err(c.weights, golden_mha("causal_weights")) < 1e-5);
}

TEST_CASE("golden: the training layer multi_head_forward equals nn.MultiheadAttention") {
  const MultiHead p = golden_weights();
  const Mat x = gmat_mha("X");
  Tensor3 x3 = xt::zeros<float>({std::size_t(1), x.shape(0), x.shape(1)});
  std::copy(x.begin(), x.end(), x3.begin());
  Tensor3 out;
  MultiHeadCacheT<float> cache;
  multi_head_forward(out, cache, x3, x3, p, causal_mask(x.shape(0)));
  CHECK(max_err(slice_of(out, 0), golden_mha("causal_output")) < 1e-5);
}
