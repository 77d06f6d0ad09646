// Host emulation of the CUDA features the kernels use: one std::thread per CUDA thread,
// std::barrier for __syncthreads and warp-level exchanges.
#pragma once
#include <vector_types.h>
#include <vector_functions.h>
#include <cuda_bf16.h>
#include <algorithm>
#include <atomic>
#include <barrier>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <thread>
#include <vector>
#include <memory>
#include <functional>
using std::min; using std::max;

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)

inline thread_local dim3 threadIdx;
inline dim3 blockIdx, gridDim, blockDim;
inline std::unique_ptr<std::barrier<>> g_block_barrier;
inline std::vector<std::unique_ptr<std::barrier<>>> g_warp_barriers;
inline void __syncthreads() { g_block_barrier->arrive_and_wait(); }
inline void warp_sync() { g_warp_barriers[threadIdx.x / 32]->arrive_and_wait(); }

// per-warp exchange buffers
struct WarpX { float f[32]; std::uint32_t a[32][4]; std::uint32_t b[32][2]; float c[32][4]; std::uint32_t addr[32]; };
inline WarpX g_wx[32];

inline float __shfl_xor_sync(unsigned, float v, int m) {
  WarpX& w = g_wx[threadIdx.x / 32]; int lane = threadIdx.x % 32;
  w.f[lane] = v; warp_sync();
  float r = w.f[lane ^ m]; warp_sync();
  return r;
}

// FP32 atomic add to global memory (the BF16 backward's dQ): a true atomic on the host too, since
// the emulated threads run concurrently.
inline float atomicAdd(float* address, float value) { return std::atomic_ref<float>(*address).fetch_add(value); }

alignas(16) inline unsigned char g_smem[256 * 1024];
inline std::uint32_t emu_cvta(const void* p) { return (std::uint32_t)((const unsigned char*)p - g_smem); }

// cp.async state of each thread (emu_ptx.hpp): the copies issued since the last commit, and the
// committed groups not yet waited for.
struct PendingCopy { std::uint32_t dst; const void* src; bool valid; };
inline thread_local std::vector<PendingCopy> t_current;
inline thread_local std::vector<std::vector<PendingCopy>> t_groups;

// Runs the grid's blocks one after another. The block's threads are created once per launch and
// reused for every block (creating 256 threads per block made the naive rung's 2000-block softmax
// launches take most of the run); between blocks the main thread sets blockIdx and poisons shared
// memory while the workers wait at `start`.
template <typename Kernel>
void launch(dim3 grid, int threads, Kernel k) {
  gridDim = grid; blockDim = dim3(threads);
  g_block_barrier = std::make_unique<std::barrier<>>(threads);
  g_warp_barriers.clear();
  for (int w = 0; w < threads / 32; ++w) g_warp_barriers.push_back(std::make_unique<std::barrier<>>(32));
  std::barrier<> start(threads + 1), done(threads + 1);
  bool stop = false;
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([t, &k, &start, &done, &stop] {
      threadIdx = dim3(t);
      for (;;) {
        start.arrive_and_wait();
        if (stop) return;
        t_current.clear();  // cp.async state never carries over from one block to the next
        t_groups.clear();
        k();
        done.arrive_and_wait();
      }
    });
  for (unsigned by = 0; by < grid.y; ++by)
    for (unsigned bx = 0; bx < grid.x; ++bx) {
      blockIdx = dim3(bx, by);
      std::memset(g_smem, 0xFF, sizeof g_smem);  // poison shared memory
      start.arrive_and_wait();
      done.arrive_and_wait();
    }
  stop = true;
  start.arrive_and_wait();
  for (auto& t : ts) t.join();
}
