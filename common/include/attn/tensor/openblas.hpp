// Making sure OpenBLAS runs its fast kernel. Debian's OpenBLAS 0.3.21 does not know recent CPUs
// and falls back to a weaker kernel (generic "Prescott" on some Xeons, AVX2 "Haswell" on AVX-512
// EPYCs), 2-4x slower with results just as correct. Every program calls ensure_fast_openblas()
// first: if the kernel is weaker than the CPU allows and the user did not set
// OPENBLAS_CORETYPE, the program re-executes itself with the right core type and says so.
#pragma once

#include <string>

namespace attn {

struct BlasInfo {
  std::string kernel;  // openblas_get_corename(), e.g. "SkylakeX"
  int threads = 1;     // openblas_get_num_threads()
  std::string config;  // openblas_get_config()
};

BlasInfo blas_info();

// The kernel OpenBLAS should use on this CPU, or "" when the current one is already right:
// "SkylakeX" when the CPU has AVX-512 (F, BW, DQ, VL) but the kernel does not use it,
// "Haswell" when the CPU has AVX2+FMA and the kernel is a pre-AVX2 one.
std::string better_openblas_coretype(const std::string& current_kernel, bool cpu_avx512, bool cpu_avx2);

// Call first thing in main(). May not return: re-executes /proc/self/exe with
// OPENBLAS_CORETYPE set, after one line on stderr. Does nothing when the user set
// OPENBLAS_CORETYPE, when the kernel is already right, or on the second pass.
void ensure_fast_openblas(int argc, char** argv);

// Set OpenBLAS's thread count (0 = leave as is).
void set_blas_threads(int threads);

// OpenBLAS with `threads` threads (0 = leave as is) for the lifetime of the guard; the previous
// count is restored after. The thread count also fixes the order of OpenBLAS's sums: training with
// the same count reproduces the same weights bit for bit.
class ScopedBlasThreads {
 public:
  explicit ScopedBlasThreads(int threads);
  ~ScopedBlasThreads();
  ScopedBlasThreads(const ScopedBlasThreads&) = delete;
  ScopedBlasThreads& operator=(const ScopedBlasThreads&) = delete;

 private:
  int saved_;
};

}  // namespace attn
