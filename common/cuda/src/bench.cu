// The benchmark behind attn/cuda/bench.hpp: cuBLAS roofs and the per-size timing of every rung
// (CUDA events after warm-up, median of the repeats). Inputs are filled on the device from a
// hash of the index (uniform, variance 1), so gigabytes need no host copy.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "attn/cuda/attention.hpp"
#include "attn/cuda/bench.hpp"
#include "attn/cuda/buffer.hpp"
#include "attn/cuda/check.hpp"

namespace attn::cuda {
namespace {

using bf16 = __nv_bfloat16;

// ---- device helpers --------------------------------------------------------------------------

// Uniform in [−√3, √3) (variance 1) from a hash of the index: fills gigabytes without a host copy.
__global__ void fill_uniform_kernel(float* x, std::size_t count, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    std::uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (i + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    const float u = static_cast<float>(z >> 40) * 0x1.0p-24f;  // [0, 1)
    x[i] = (2.0f * u - 1.0f) * 1.7320508f;
  }
}
__global__ void to_bf16_kernel(bf16* y, const float* x, std::size_t count) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    y[i] = __float2bfloat16(x[i]);
}
void fill_uniform(DeviceBuffer<float>& b, std::uint64_t seed) {
  fill_uniform_kernel<<<1024, 256>>>(b.get(), b.size(), seed);
  ATTN_CUDA_CHECK_LAUNCH("fill_uniform_kernel");
}
void to_bf16(DeviceBuffer<bf16>& y, const DeviceBuffer<float>& x) {
  to_bf16_kernel<<<1024, 256>>>(y.get(), x.get(), x.size());
  ATTN_CUDA_CHECK_LAUNCH("to_bf16_kernel");
}

// Median milliseconds of `repeats` runs, each bracketed by CUDA events, after `warmup` runs.
double time_ms(const std::function<void()>& run, int warmup, int repeats) {
  for (int i = 0; i < warmup; ++i) run();
  ATTN_CUDA_CHECK(cudaDeviceSynchronize());
  cudaEvent_t start, stop;
  ATTN_CUDA_CHECK(cudaEventCreate(&start));
  ATTN_CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> ms;
  for (int i = 0; i < repeats; ++i) {
    ATTN_CUDA_CHECK(cudaEventRecord(start));
    run();
    ATTN_CUDA_CHECK(cudaEventRecord(stop));
    ATTN_CUDA_CHECK(cudaEventSynchronize(stop));
    float t = 0.0f;
    ATTN_CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  ATTN_CUDA_CHECK(cudaEventDestroy(start));
  ATTN_CUDA_CHECK(cudaEventDestroy(stop));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

double tflops(double flops, double ms) { return flops / (ms * 1e-3) / 1e12; }

// max |a − b| / max |b| over the first `count` elements.
double rel_diff(const std::vector<float>& a, const std::vector<float>& b, std::size_t count) {
  double diff = 0.0, ref = 0.0;
  for (std::size_t i = 0; i < count; ++i) {
    diff = std::max(diff, static_cast<double>(std::abs(a[i] - b[i])));
    ref = std::max(ref, static_cast<double>(std::abs(b[i])));
    if (!(a[i] == a[i])) return INFINITY;  // NaN
  }
  return ref > 0.0 ? diff / ref : diff;
}

// ---- roof ------------------------------------------------------------------------------------

GpuRoof measure_roofs_with(const GpuBenchConfig& o, cublasHandle_t cublas) {
  const int n = o.gemm;
  const std::size_t count = static_cast<std::size_t>(n) * n;
  DeviceBuffer<float> a(count), b(count), c(count);
  DeviceBuffer<bf16> ah(count), bh(count), ch(count);
  fill_uniform(a, 1);
  fill_uniform(b, 2);
  to_bf16(ah, a);
  to_bf16(bh, b);
  const float one = 1.0f, zero = 0.0f;
  const double flops = 2.0 * n * static_cast<double>(n) * n;
  GpuRoof r;
  r.gemm = n;
  // CUBLAS_COMPUTE_32F: true FP32 (no TF32), the same arithmetic as rungs 1, 2 and 4.
  r.sgemm = tflops(flops, time_ms([&] {
                     ATTN_CUBLAS_CHECK(cublasGemmEx(cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a.get(), CUDA_R_32F,
                                                    n, b.get(), CUDA_R_32F, n, &zero, c.get(), CUDA_R_32F, n,
                                                    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
                   }, o.warmup + 1, o.repeats));
  // BF16 in, BF16 out, FP32 accumulation: the arithmetic of rung 3.
  r.bf16 = tflops(flops, time_ms([&] {
                    ATTN_CUBLAS_CHECK(cublasGemmEx(cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, ah.get(), CUDA_R_16BF,
                                                   n, bh.get(), CUDA_R_16BF, n, &zero, ch.get(), CUDA_R_16BF, n,
                                                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
                  }, o.warmup + 1, o.repeats));
  return r;
}

// ---- one problem size ------------------------------------------------------------------------

GpuBenchSize run_size(const GpuBenchConfig& o, cublasHandle_t cublas, int d, int n, bool causal) {
  GpuBenchSize row;
  row.d = d;
  row.n = n;
  row.causal = causal;
  row.bh = static_cast<int>(std::max(1LL, std::min(65535LL, o.tokens / n)));
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  const std::size_t count = static_cast<std::size_t>(row.bh) * n * d;
  const std::size_t rows = static_cast<std::size_t>(row.bh) * n;
  // Forward: Q·Kᵀ and P·V, 2·n²·d each per head; the causal mask skips half of both.
  const double fwd_flops = 4.0 * n * static_cast<double>(n) * d * (causal ? 0.5 : 1.0);

  DeviceBuffer<float> q(count), k(count), v(count), out(count), lse(rows);
  fill_uniform(q, 11);
  fill_uniform(k, 12);
  fill_uniform(v, 13);

  // 1. naive: its n × n scores per head limit the heads it can take.
  const double per_head_bytes = 4.0 * n * static_cast<double>(n);
  row.bh_naive = static_cast<int>(std::min<double>(row.bh, o.naive_gib * 1073741824.0 / per_head_bytes));
  std::vector<float> naive_out;
  if (row.bh_naive >= 1) {
    DeviceBuffer<float> scores(attn::cuda::attention_naive_workspace_floats(row.bh_naive, n, n));
    DeviceBuffer<float> out_naive(static_cast<std::size_t>(row.bh_naive) * n * d);
    const double ms = time_ms([&] {
      attn::cuda::attention_naive(out_naive.get(), scores.get(), q.get(), k.get(), v.get(), row.bh_naive, n, n, d,
                                  causal, scale, cublas);
    }, o.warmup, o.repeats);
    // The naive path computes the masked half too: count the same useful FLOPs as the others.
    row.naive = tflops(fwd_flops * row.bh_naive, ms);
    naive_out = out_naive.download();
    if (row.bh_naive < row.bh) row.note = "naive on " + std::to_string(row.bh_naive) + " heads (memory)";
  } else {
    row.note = "naive skipped: one head's n×n scores exceed --naive-gib";
  }
  // Compare the fused kernels with the naive output on at most 8 heads (a cheap sanity check;
  // the tests are the real correctness check).
  const std::size_t check_count = static_cast<std::size_t>(std::min(row.bh_naive, 8)) * n * d;

  // 2. flash fp32
  row.flash_fp32 = tflops(fwd_flops * row.bh, time_ms([&] {
                      attn::cuda::attention_flash_fp32(out.get(), lse.get(), q.get(), k.get(), v.get(), row.bh, n, n, d,
                                                       causal, scale);
                    }, o.warmup, o.repeats));
  if (check_count > 0) row.check_fp32 = rel_diff(out.download(), naive_out, check_count);

  // 3. flash bf16 (inputs are the fp32 ones rounded), then 6. its backward on the same tensors
  {
    DeviceBuffer<bf16> qb(count), kb(count), vb(count), ob(count);
    to_bf16(qb, q);
    to_bf16(kb, k);
    to_bf16(vb, v);
    row.flash_bf16 = tflops(fwd_flops * row.bh, time_ms([&] {
                        attn::cuda::attention_flash_bf16(ob.get(), lse.get(), qb.get(), kb.get(), vb.get(), row.bh, n,
                                                         n, d, causal, scale);
                      }, o.warmup, o.repeats));
    if (check_count > 0) {
      std::vector<bf16> got = ob.download();
      std::vector<float> got_f(check_count);
      for (std::size_t i = 0; i < check_count; ++i) got_f[i] = __bfloat162float(got[i]);
      row.check_bf16 = rel_diff(got_f, naive_out, check_count);
    }
    // 5. the Hopper rung on the same inputs, where this device and build can run it
    const std::string hopper_why = o.hopper ? attn::cuda::attention_flash_hopper_unavailable() : "--no-hopper";
    if (hopper_why.empty()) {
      DeviceBuffer<bf16> oh(count);
      row.flash_hopper = tflops(fwd_flops * row.bh, time_ms([&] {
                            attn::cuda::attention_flash_hopper(oh.get(), nullptr, qb.get(), kb.get(), vb.get(), row.bh,
                                                               n, n, d, causal, scale);
                          }, o.warmup, o.repeats));
      if (check_count > 0) {
        std::vector<bf16> got = oh.download();
        std::vector<float> got_f(check_count);
        for (std::size_t i = 0; i < check_count; ++i) got_f[i] = __bfloat162float(got[i]);
        row.check_hopper = rel_diff(got_f, naive_out, check_count);
      }
    } else {
      row.note += std::string(row.note.empty() ? "" : "; ") + "rung 5 skipped: " + hopper_why;
    }
    if (o.backward) {
      // ob and lse hold the forward's output and statistics from the last timed run.
      DeviceBuffer<float> dout(count), dq(count), dk(count), dv(count), delta(rows);
      DeviceBuffer<bf16> doutb(count);
      fill_uniform(dout, 15);
      to_bf16(doutb, dout);
      ATTN_CUDA_CHECK(cudaMemset(dq.get(), 0, count * sizeof(float)));
      ATTN_CUDA_CHECK(cudaMemset(dk.get(), 0, count * sizeof(float)));
      ATTN_CUDA_CHECK(cudaMemset(dv.get(), 0, count * sizeof(float)));
      // Five n²·d products, the same count as the 2.5 × convention: no recomputation to hide.
      row.backward_bf16 = tflops(2.5 * fwd_flops * row.bh, time_ms([&] {
                          attn::cuda::attention_flash_bf16_backward(dq.get(), dk.get(), dv.get(), delta.get(),
                                                                    doutb.get(), qb.get(), kb.get(), vb.get(), ob.get(),
                                                                    lse.get(), row.bh, n, n, d, causal, scale);
                        }, o.warmup, o.repeats));
    }
  }

  // 4. backward: counted as 2.5 × the forward (FlashAttention-2's convention: five n²·d
  // products against two). Our two-kernel split recomputes S and dP in both kernels, seven in all.
  if (o.backward) {
    attn::cuda::attention_flash_fp32(out.get(), lse.get(), q.get(), k.get(), v.get(), row.bh, n, n, d, causal, scale);
    DeviceBuffer<float> dout(count), dq(count), dk(count), dv(count), delta(rows);
    fill_uniform(dout, 14);
    ATTN_CUDA_CHECK(cudaMemset(dq.get(), 0, count * sizeof(float)));
    ATTN_CUDA_CHECK(cudaMemset(dk.get(), 0, count * sizeof(float)));
    ATTN_CUDA_CHECK(cudaMemset(dv.get(), 0, count * sizeof(float)));
    row.backward_fp32 = tflops(2.5 * fwd_flops * row.bh, time_ms([&] {
                       attn::cuda::attention_flash_fp32_backward(dq.get(), dk.get(), dv.get(), delta.get(), dout.get(),
                                                                 q.get(), k.get(), v.get(), out.get(), lse.get(), row.bh,
                                                                 n, n, d, causal, scale);
                     }, o.warmup, o.repeats));
  }
  ATTN_CUDA_CHECK(cudaDeviceSynchronize());
  return row;
}

}  // namespace

GpuRoof measure_roofs(const GpuBenchConfig& config) {
  CublasHandle cublas;
  return measure_roofs_with(config, cublas.get());
}

std::vector<GpuBenchSize> run_gpu_sweep(const GpuBenchConfig& config,
                                        const std::function<void(const GpuBenchSize&)>& on_size) {
  CublasHandle cublas;
  std::vector<GpuBenchSize> sizes;
  for (int d : config.d)
    for (int n : config.n)
      for (int causal = 0; causal <= 1; ++causal) {
        if ((causal == 0 && !config.full) || (causal == 1 && !config.causal)) continue;
        sizes.push_back(run_size(config, cublas.get(), d, n, causal != 0));
        if (on_size) on_size(sizes.back());
      }
  return sizes;
}

std::vector<GpuBenchRow> gpu_bench_rows(const std::vector<GpuBenchSize>& sizes, const GpuRoof& roof) {
  std::vector<GpuBenchRow> rows;
  for (const GpuBenchSize& s : sizes) {
    const struct {
      const char* kernel;
      double tflops;
      bool bf16_roof;
    } kernels[] = {{"naive", s.naive, false},
                   {"flash_fp32", s.flash_fp32, false},
                   {"flash_bf16", s.flash_bf16, true},
                   {"flash_hopper", s.flash_hopper, true},
                   {"backward_fp32", s.backward_fp32, false},
                   {"backward_bf16", s.backward_bf16, true}};
    for (const auto& k : kernels) {
      if (k.tflops < 0) continue;  // not run
      GpuBenchRow r;
      r.kernel = k.kernel;
      r.n = s.n;
      r.d = s.d;
      r.bh = k.kernel == std::string("naive") ? s.bh_naive : s.bh;
      r.causal = s.causal;
      r.tflops = k.tflops;
      r.roof = k.bf16_roof ? "bf16_gemm" : "sgemm";
      const double top = k.bf16_roof ? roof.bf16 : roof.sgemm;
      r.pct_of_roof = top > 0 ? 100.0 * k.tflops / top : 0.0;
      rows.push_back(r);
    }
  }
  return rows;
}

}  // namespace attn::cuda
