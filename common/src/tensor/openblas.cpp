// OpenBLAS kernel check and re-exec (see attn/tensor/openblas.hpp).
#include "attn/tensor/openblas.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

extern "C" {
char* openblas_get_corename(void);
char* openblas_get_config(void);
int openblas_get_num_threads(void);
void openblas_set_num_threads(int);
}

namespace attn {

BlasInfo blas_info() {
  BlasInfo info;
  info.kernel = openblas_get_corename();
  info.threads = openblas_get_num_threads();
  info.config = openblas_get_config();
  return info;
}

std::string better_openblas_coretype(const std::string& kernel, bool cpu_avx512, bool cpu_avx2) {
  // Kernels (OpenBLAS's names) grouped by the widest vector ISA their sgemm uses.
  static const std::set<std::string> avx512 = {"SkylakeX", "Cooperlake", "SapphireRapids"};
  static const std::set<std::string> avx2 = {"Haswell", "Zen"};
  if (cpu_avx512 && avx512.count(kernel) == 0) return "SkylakeX";
  if (!cpu_avx512 && cpu_avx2 && avx512.count(kernel) == 0 && avx2.count(kernel) == 0) return "Haswell";
  return "";
}

void ensure_fast_openblas(int argc, char** argv) {
  (void)argc;
  const char* user = std::getenv("OPENBLAS_CORETYPE");
  if (user != nullptr && user[0] != '\0') return;      // the user chose; respect it
  if (std::getenv("ATTN_OPENBLAS_REEXEC") != nullptr) return;  // second pass: never loop
  const std::string kernel = openblas_get_corename();
  // Only a DYNAMIC_ARCH build can switch kernels at load time.
  if (std::strstr(openblas_get_config(), "DYNAMIC_ARCH") == nullptr) return;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  const bool avx512 = false, avx2 = false;
#endif
  const std::string better = better_openblas_coretype(kernel, avx512, avx2);
  if (better.empty()) return;
  std::fprintf(stderr, "OpenBLAS chose its %s kernel for this %s CPU; restarting with OPENBLAS_CORETYPE=%s.\n",
               kernel.c_str(), avx512 ? "AVX-512" : "AVX2", better.c_str());
  std::fflush(stderr);
  std::fflush(stdout);
  setenv("OPENBLAS_CORETYPE", better.c_str(), 1);
  setenv("ATTN_OPENBLAS_REEXEC", "1", 1);
  execv("/proc/self/exe", argv);
  // execv only returns on failure: carry on with the slower kernel, which is still correct.
  std::fprintf(stderr, "OpenBLAS: re-exec failed (%s); continuing with %s.\n", std::strerror(errno),
               kernel.c_str());
  unsetenv("OPENBLAS_CORETYPE");
}

void set_blas_threads(int threads) {
  if (threads > 0) openblas_set_num_threads(threads);
}

ScopedBlasThreads::ScopedBlasThreads(int threads) : saved_(blas_info().threads) { set_blas_threads(threads); }
ScopedBlasThreads::~ScopedBlasThreads() { set_blas_threads(saved_); }

}  // namespace attn
