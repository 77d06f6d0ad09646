// Emulated launches of rung 6 (the BF16 backward): the delta kernel and the backward kernel from
// the generated 06_flash_bf16_backward.emu.cpp, started as attention_flash_bf16_backward does.
#include "emu.hpp"
#include "06_flash_bf16_backward.emu.cpp"

namespace emu {
using namespace attn::cuda;

void flash_bf16_backward(float* dq, float* dk, float* dv, float* delta, const __nv_bfloat16* dout,
                         const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                         const __nv_bfloat16* out, const float* lse, int bh, int n_q, int n_k, int d, bool causal,
                         float scale) {
  const long long rows = static_cast<long long>(bh) * n_q;
  launch(dim3(static_cast<unsigned>((rows + 7) / 8)), 256, [&] { bf16_backward_delta_kernel(delta, dout, out, rows, d); });
  static_assert(BwdDims<128>::kSmemBytes <= static_cast<int>(sizeof g_smem), "emulated shared memory too small");
  const dim3 grid(detail::ceil_div(n_k, kBwdKeyTile), bh);
  const float scale_log2 = scale * detail::kLog2e;
  if (d == 64)
    launch(grid, kBwdThreads, [&] {
      flash_bf16_backward_kernel<64>(dq, dk, dv, dout, q, k, v, lse, delta, n_q, n_k, causal, scale, scale_log2);
    });
  else
    launch(grid, kBwdThreads, [&] {
      flash_bf16_backward_kernel<128>(dq, dk, dv, dout, q, k, v, lse, delta, n_q, n_k, causal, scale, scale_log2);
    });
}

}  // namespace emu
