// Emulated launches of rungs 2 and 4 (FP32 forward, backward): the kernels from the generated
// 02_/04_*.emu.cpp, started with the grids and block sizes of their launchers in src/.
#include "emu.hpp"
#include "02_flash_fp32.emu.cpp"
#include "04_flash_fp32_backward.emu.cpp"

namespace emu {
using namespace attn::cuda;

void flash_fp32(float* out, float* lse, const float* q, const float* k, const float* v, int bh, int n_q, int n_k,
                int d, bool causal, float scale) {
  const dim3 grid(detail::ceil_div(n_q, kTile), bh);  // as launch_flash_fp32_forward
  if (d == 64)
    launch(grid, kThreads, [&] { flash_fp32_forward_kernel<64>(out, lse, q, k, v, n_q, n_k, causal, scale * detail::kLog2e); });
  else
    launch(grid, kThreads, [&] { flash_fp32_forward_kernel<128>(out, lse, q, k, v, n_q, n_k, causal, scale * detail::kLog2e); });
}

void flash_fp32_backward(float* dq, float* dk, float* dv, float* delta, const float* dout, const float* q,
                         const float* k, const float* v, const float* out, const float* lse, int bh, int n_q, int n_k,
                         int d, bool causal, float scale) {
  // As attention_flash_fp32_backward: the delta kernel (8 rows per 256-thread block), then dK/dV, then dQ.
  const long long rows = static_cast<long long>(bh) * n_q;
  launch(dim3(static_cast<unsigned>((rows + 7) / 8)), 256, [&] { attention_backward_delta_kernel(delta, dout, out, rows, d); });
  const dim3 grid_kv(detail::ceil_div(n_k, kTile), bh), grid_q(detail::ceil_div(n_q, kTile), bh);
  if (d == 64) {
    launch(grid_kv, kThreads, [&] { flash_fp32_backward_dkdv_kernel<64>(dk, dv, dout, q, k, v, lse, delta, n_q, n_k, causal, scale); });
    launch(grid_q, kThreads, [&] { flash_fp32_backward_dq_kernel<64>(dq, dout, q, k, v, lse, delta, n_q, n_k, causal, scale); });
  } else {
    launch(grid_kv, kThreads, [&] { flash_fp32_backward_dkdv_kernel<128>(dk, dv, dout, q, k, v, lse, delta, n_q, n_k, causal, scale); });
    launch(grid_q, kThreads, [&] { flash_fp32_backward_dq_kernel<128>(dq, dout, q, k, v, lse, delta, n_q, n_k, causal, scale); });
  }
}

}  // namespace emu
