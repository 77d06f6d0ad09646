// The PTX instructions of rung 3 (src/03_flash_bf16_mma.cu), emulated per the PTX ISA's fragment
// tables ("Warp-level matrix instructions"): cp.async (copies held per thread until
// cp.async.wait_group, so a missing wait reads stale shared memory), ldmatrix .x4 and .x4.trans,
// and mma.sync.m16n8k16 BF16 → FP32. Warp-wide operations exchange registers through g_wx with a
// per-warp barrier. This is one reading of those tables: a misreading here and the same one in the
// kernel would agree with each other and still be wrong on a GPU.
__device__ __forceinline__ void cp_async_16(std::uint32_t dst, const void* src, bool valid) { t_current.push_back({dst, src, valid}); }
__device__ __forceinline__ void cp_async_commit() { t_groups.push_back(std::move(t_current)); t_current.clear(); }
template <int N> __device__ __forceinline__ void cp_async_wait() {
  while ((int)t_groups.size() > N) {
    for (auto& c : t_groups.front()) { if (c.valid) std::memcpy(g_smem + c.dst, c.src, 16); else std::memset(g_smem + c.dst, 0, 16); }
    t_groups.erase(t_groups.begin());
  }
}
inline std::uint16_t smem_b16(std::uint32_t addr) { std::uint16_t v; std::memcpy(&v, g_smem + addr, 2); return v; }
inline void ldmatrix_impl(std::uint32_t (&r)[4], std::uint32_t address, bool trans) {
  WarpX& w = g_wx[threadIdx.x / 32]; int lane = threadIdx.x % 32;
  w.addr[lane] = address; warp_sync();
  int g = lane / 4, t = lane % 4;
  for (int i = 0; i < 4; ++i) {
    std::uint16_t lo, hi;
    if (!trans) { std::uint32_t row = w.addr[8 * i + g]; lo = smem_b16(row + 2 * (2 * t)); hi = smem_b16(row + 2 * (2 * t + 1)); }
    else { lo = smem_b16(w.addr[8 * i + 2 * t] + 2 * g); hi = smem_b16(w.addr[8 * i + 2 * t + 1] + 2 * g); }
    r[i] = (std::uint32_t)lo | ((std::uint32_t)hi << 16);
  }
  warp_sync();
}
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t a) { ldmatrix_impl(r, a, false); }
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], std::uint32_t a) { ldmatrix_impl(r, a, true); }

inline float bf16_half(std::uint32_t reg, int half) {
  std::uint32_t bits = half ? (reg & 0xFFFF0000u) : (reg << 16); float f; std::memcpy(&f, &bits, 4); return f;
}
__device__ __forceinline__ void mma_bf16_m16n8k16(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
  WarpX& w = g_wx[threadIdx.x / 32]; int lane = threadIdx.x % 32;
  for (int i = 0; i < 4; ++i) w.a[lane][i] = a[i];
  w.b[lane][0] = b0; w.b[lane][1] = b1;
  warp_sync();
  auto A = [&](int r, int k) { int L = (r % 8) * 4 + (k % 8) / 2; int reg = (r >= 8 ? 1 : 0) + (k >= 8 ? 2 : 0); return bf16_half(w.a[L][reg], k % 2); };
  auto B = [&](int k, int n) { int L = n * 4 + (k % 8) / 2; int reg = k >= 8 ? 1 : 0; return bf16_half(w.b[L][reg], k % 2); };
  int g = lane / 4, t = lane % 4;
  for (int e = 0; e < 4; ++e) {
    int r = g + 8 * (e / 2), n = 2 * t + (e % 2);
    float acc = c[e];
    for (int k = 0; k < 16; ++k) acc += A(r, k) * B(k, n);
    c[e] = acc;
  }
  warp_sync();
}
