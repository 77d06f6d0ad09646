// Fast attention on the CPU (chapter 11): a fused, tiled, multi-threaded forward pass.
//   O = softmax(Q·Kᵀ·scale [+ causal mask]) · V, computed one (query block × key tile) at a time
// with an online softmax (running max m, running sum ℓ), so the n×n matrix never exists. Work is
// split over batch×heads×query blocks between threads. Inside a tile the two products run on
// hand-written AVX-512 micro-kernels (common/src/attention/fast_attention_avx512.cpp, chosen at
// run time) or, on other CPUs, on single-threaded OpenBLAS calls per tile.
// naive_attention_forward is the three-pass baseline it is measured against.
#pragma once

#include <cstddef>
#include <string>

#include "attn/tensor/tensor.hpp"

namespace attn {

// BH = batch × heads, N = query rows, S = key rows, d = head size (the same for Q, K and V).

enum class FastIsa {
  Auto,      // AVX-512 when the CPU has it (and d <= 256), otherwise Portable
  Avx512,    // hand-written AVX-512 micro-kernels; throws std::runtime_error if the CPU lacks them
  Portable,  // the same tiling with one single-threaded OpenBLAS sgemm per tile product
};

struct FastAttentionConfig {
  bool causal = false;  // query i sees key j when j <= i + (S − N)   (attn::causal_mask's rule)
  float scale = 0.0f;   // <= 0: 1/√d
  int threads = 0;      // <= 0: std::thread::hardware_concurrency()
  FastIsa isa = FastIsa::Auto;
  int block_q = 0;      // query rows per block; 0: 96 (a multiple of the micro-kernels' 12 and 6 rows)
  int block_k = 0;      // keys per tile; 0: 256 (a multiple of the 32-key panels)
};

// True when this CPU can run the AVX-512 path: it has every subset the micro-kernels are compiled
// for — AVX-512 F, DQ, VL and BW, and FMA — checked at run time (false on other architectures).
bool fast_attention_avx512_available();

// The path `cfg` resolves to for head size d on this CPU: "avx512" or "portable".
std::string fast_attention_path(const FastAttentionConfig& cfg, std::size_t d);

// out: (BH, N, d) <- attention of q: (BH, N, d) over k, v: (BH, S, d). Raw row-major pointers.
// Calls OpenBLAS single-threaded from its own threads (portable path): it sets OpenBLAS to one
// thread for the duration of the call and restores the previous count.
void fast_attention_forward(float* out, const float* q, const float* k, const float* v, std::size_t bh,
                            std::size_t n, std::size_t s, std::size_t d, const FastAttentionConfig& cfg = {});

// Tensor form: q: (BH, N, d), k: (BH, S, d), v: (BH, S, d) -> (BH, N, d).
Tensor3 fast_attention(const Tensor3& q, const Tensor3& k, const Tensor3& v, const FastAttentionConfig& cfg = {});

// Bytes of working memory fast_attention_forward allocates (all threads together), beyond q, k,
// v and out: per thread a packed Kᵀ of one head, a Q block, an S/P tile, an O accumulator, m, ℓ.
std::size_t fast_attention_workspace_bytes(std::size_t n, std::size_t s, std::size_t d,
                                           const FastAttentionConfig& cfg = {});

// The baseline: three passes with the n×n matrix materialised for every head at once, as a
// framework does: S = scale·Q·Kᵀ (multi-threaded OpenBLAS), softmax of each row (rows split
// between `threads` threads), O = P·V (OpenBLAS).
//   workspace: (BH, N, S) floats, caller-provided (naive_attention_workspace_bytes tells how much)
void naive_attention_forward(float* out, float* workspace, const float* q, const float* k, const float* v,
                             std::size_t bh, std::size_t n, std::size_t s, std::size_t d, bool causal,
                             float scale = 0.0f, int threads = 0);
Tensor3 naive_attention(const Tensor3& q, const Tensor3& k, const Tensor3& v, bool causal, float scale = 0.0f);
std::size_t naive_attention_workspace_bytes(std::size_t bh, std::size_t n, std::size_t s);

// Floating-point operations of the attention forward, the usual count: 4·N·S·d per head
// (2 for Q·Kᵀ, 2 for P·V; softmax not counted); causal counts the visible pairs only
// (≈ half for N = S).
double attention_forward_flops(std::size_t bh, std::size_t n, std::size_t s, std::size_t d, bool causal);

}  // namespace attn
