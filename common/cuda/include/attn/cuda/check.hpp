// Error checking for the CUDA kernels: every CUDA and cuBLAS call goes through a macro that
// throws std::runtime_error naming the call, the file and the line; every kernel launch is
// followed by ATTN_CUDA_CHECK_LAUNCH, which reads cudaGetLastError (bad launch configurations
// are reported there, not by the launch itself). Also: device_status(), which tells a test or a
// benchmark whether there is a device at all and, if not, the CUDA error string that says why.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>

namespace attn::cuda {

[[noreturn]] void throw_cuda_error(const char* call, const char* message, const char* file, int line);

// Whether a CUDA device can be used. On a machine with no driver, cudaGetDeviceCount fails with
// e.g. "CUDA driver version is insufficient for CUDA runtime version"; that string is kept in
// `error` so that a skipped test can say exactly why it skipped.
struct DeviceStatus {
  bool available = false;
  int count = 0;
  std::string name;            // of device 0, when available
  int compute_capability = 0;  // major*10 + minor, e.g. 90 for an H100/H200
  int multiprocessors = 0;
  std::string error;           // empty when available
};
DeviceStatus device_status();

}  // namespace attn::cuda

#define ATTN_CUDA_CHECK(call)                                                                     \
  do {                                                                                            \
    const cudaError_t attn_err_ = (call);                                                         \
    if (attn_err_ != cudaSuccess)                                                                 \
      ::attn::cuda::throw_cuda_error(#call, cudaGetErrorString(attn_err_), __FILE__, __LINE__);   \
  } while (0)

#define ATTN_CUBLAS_CHECK(call)                                                                   \
  do {                                                                                            \
    const cublasStatus_t attn_st_ = (call);                                                       \
    if (attn_st_ != CUBLAS_STATUS_SUCCESS)                                                        \
      ::attn::cuda::throw_cuda_error(#call, cublasGetStatusString(attn_st_), __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: the name says which launch failed.
#define ATTN_CUDA_CHECK_LAUNCH(kernel_name)                                                       \
  do {                                                                                            \
    const cudaError_t attn_err_ = cudaGetLastError();                                             \
    if (attn_err_ != cudaSuccess)                                                                 \
      ::attn::cuda::throw_cuda_error("launch " kernel_name, cudaGetErrorString(attn_err_),       \
                                     __FILE__, __LINE__);                                         \
  } while (0)
