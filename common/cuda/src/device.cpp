// Error reporting and the "is there a GPU?" question, shared by the kernels, tests and benchmark.
// device_status() never throws: on a machine without a driver it returns the CUDA error string
// so that callers can print "skipped: no CUDA device (<why>)".
#include <stdexcept>
#include <string>

#include "attn/cuda/check.hpp"

namespace attn::cuda {

void throw_cuda_error(const char* call, const char* message, const char* file, int line) {
  throw std::runtime_error(std::string(call) + " failed: " + message + " (" + file + ":" + std::to_string(line) + ")");
}

DeviceStatus device_status() {
  DeviceStatus status;
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    status.error = cudaGetErrorString(err);
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return status;
  }
  if (count == 0) {
    status.error = "cudaGetDeviceCount found 0 devices";
    return status;
  }
  cudaDeviceProp prop{};
  const cudaError_t perr = cudaGetDeviceProperties(&prop, 0);
  if (perr != cudaSuccess) {
    status.error = cudaGetErrorString(perr);
    cudaGetLastError();
    return status;
  }
  status.available = true;
  status.count = count;
  status.name = prop.name;
  status.compute_capability = prop.major * 10 + prop.minor;
  status.multiprocessors = prop.multiProcessorCount;
  return status;
}

}  // namespace attn::cuda
