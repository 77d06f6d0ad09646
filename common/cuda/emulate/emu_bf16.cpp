// Emulated launch of rung 3 (BF16 mma.sync forward): the kernel from the generated
// 03_flash_bf16_mma.emu.cpp, its PTX replaced by emu_ptx.hpp, started as its launcher does.
#include "emu.hpp"
#include "03_flash_bf16_mma.emu.cpp"

namespace emu {
using namespace attn::cuda;

void flash_bf16(__nv_bfloat16* out, float* lse, const __nv_bfloat16* q, const __nv_bfloat16* k,
                const __nv_bfloat16* v, int bh, int n_q, int n_k, int d, bool causal, float scale) {
  const dim3 grid(detail::ceil_div(n_q, kQueryTile), bh);  // as launch_flash_bf16_forward
  static_assert(Bf16Dims<128>::kSmemBytes <= static_cast<int>(sizeof g_smem), "emulated shared memory too small");
  if (d == 64)
    launch(grid, kThreads, [&] { flash_bf16_forward_kernel<64>(out, lse, q, k, v, n_q, n_k, causal, scale * detail::kLog2e); });
  else
    launch(grid, kThreads, [&] { flash_bf16_forward_kernel<128>(out, lse, q, k, v, n_q, n_k, causal, scale * detail::kLog2e); });
}

}  // namespace emu
