// Tests for the CUDA kernel ladder: every rung against plain float64 loops on the CPU.
//
// Map of this file:
//   Inputs      a seeded, portable generator (splitmix64, Irwin–Hall normals): same bits everywhere
//   References  reference_forward / reference_backward: the formulas as double loops, nothing fused
//   Error       relative_error = max |got − ref| / max |ref|   (why: see below)
//   Cases       awkward sizes: n = 1, 7, 129, 1000; d = 64, 128; causal or not; n_q ≠ n_k twice
//   Tests       one per (kernel, case): naive, flash_fp32 (+ lse), flash_bf16 (+ lse),
//               flash_fp32_backward, flash_hopper (Hopper + sm_90a only), flash_bf16_backward
//   main        without a device every test prints "skipped: no CUDA device (<why>)" — never passed
//
// Error measure: max |got − ref| over max |ref|, per output tensor. An attention output is a
// convex combination of value rows, so max |ref| is the natural scale of the result; an
// element-wise relative error would explode on outputs that happen to be near zero, and a
// Frobenius ratio would dilute one wrong row among a thousand right ones. The max-norm ratio
// catches a single bad element at the scale of the whole tensor.
// Bounds: FP32 1e-5 (float rounding over sums of ≤ 1000 terms stays around 1e-6); BF16 1e-2 (P is
// rounded to bf16 before P·V and the output is bf16: 2 × 2^-9 ≈ 0.4% at worst; the reference is
// computed from the same bf16-rounded inputs, so input rounding is not counted against the kernel).
// The BF16 backward keeps the 1e-2: P and dS are rounded to bf16 before the products that use
// them, and D = dO·O sees the forward's bf16 output; everything is accumulated in FP32.
#include <cuda_bf16.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "attn/cuda/attention.hpp"
#include "attn/cuda/buffer.hpp"
#include "attn/cuda/check.hpp"

namespace {

using attn::cuda::DeviceBuffer;

// ---------------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------------

// splitmix64 (Steele, Lea, Flood 2014): a 64-bit state, one add and three xor-shift-multiplies.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // 53 random bits → a double in [0, 1), exactly.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Irwin–Hall: the sum of 12 uniforms minus 6 has mean 0 and variance 1 and is close to normal
  // (no tails beyond ±6). Only + and −, so the bits do not depend on the C library's log or cos.
  double normal() {
    double sum = 0.0;
    for (int i = 0; i < 12; ++i) sum += uniform();
    return sum - 6.0;
  }

 private:
  std::uint64_t state_;
};

std::vector<float> random_floats(Rng& rng, std::size_t count, double stddev = 1.0) {
  std::vector<float> out(count);
  for (auto& x : out) x = static_cast<float>(stddev * rng.normal());
  return out;
}

std::vector<double> to_double(const std::vector<float>& x) { return {x.begin(), x.end()}; }

// ---------------------------------------------------------------------------------------------
// References (float64 loops). Layout as in attention.hpp: q (BH, n_q, d), k, v (BH, n_k, d).
// ---------------------------------------------------------------------------------------------

struct Case {
  int bh, n_q, n_k, d;
  bool causal;
  std::string str() const {
    char buf[96];
    std::snprintf(buf, sizeof buf, "bh=%d n_q=%d n_k=%d d=%d %s", bh, n_q, n_k, d, causal ? "causal" : "full");
    return buf;
  }
  double scale() const { return 1.0 / std::sqrt(static_cast<double>(d)); }
  bool visible(int i, int j) const { return !causal || j <= i + (n_k - n_q); }
};

// P for one head: (n_q, n_k), softmax over visible keys, rows with no visible key all zero.
std::vector<double> reference_probabilities(const Case& c, const double* q, const double* k,
                                            std::vector<double>* lse) {
  std::vector<double> p(static_cast<std::size_t>(c.n_q) * c.n_k, 0.0);
  for (int i = 0; i < c.n_q; ++i) {
    double* row = &p[static_cast<std::size_t>(i) * c.n_k];
    double m = -std::numeric_limits<double>::infinity();
    for (int j = 0; j < c.n_k; ++j) {
      if (!c.visible(i, j)) continue;
      double s = 0.0;
      for (int x = 0; x < c.d; ++x) s += q[static_cast<std::size_t>(i) * c.d + x] * k[static_cast<std::size_t>(j) * c.d + x];
      row[j] = s * c.scale();
      m = std::max(m, row[j]);
    }
    if (m == -std::numeric_limits<double>::infinity()) {  // fully masked: zeros, lse = −∞
      for (int j = 0; j < c.n_k; ++j) row[j] = 0.0;
      if (lse) lse->push_back(m);
      continue;
    }
    double sum = 0.0;
    for (int j = 0; j < c.n_k; ++j) {
      row[j] = c.visible(i, j) ? std::exp(row[j] - m) : 0.0;
      sum += row[j];
    }
    for (int j = 0; j < c.n_k; ++j) row[j] /= sum;
    if (lse) lse->push_back(m + std::log(sum));
  }
  return p;
}

// out: (BH, n_q, d), lse: (BH, n_q)
void reference_forward(const Case& c, const std::vector<double>& q, const std::vector<double>& k,
                       const std::vector<double>& v, std::vector<double>& out, std::vector<double>& lse) {
  out.assign(static_cast<std::size_t>(c.bh) * c.n_q * c.d, 0.0);
  lse.clear();
  for (int h = 0; h < c.bh; ++h) {
    const double* qh = &q[static_cast<std::size_t>(h) * c.n_q * c.d];
    const double* kh = &k[static_cast<std::size_t>(h) * c.n_k * c.d];
    const double* vh = &v[static_cast<std::size_t>(h) * c.n_k * c.d];
    double* oh = &out[static_cast<std::size_t>(h) * c.n_q * c.d];
    const std::vector<double> p = reference_probabilities(c, qh, kh, &lse);
    for (int i = 0; i < c.n_q; ++i)
      for (int j = 0; j < c.n_k; ++j) {
        const double pij = p[static_cast<std::size_t>(i) * c.n_k + j];
        if (pij == 0.0) continue;
        for (int x = 0; x < c.d; ++x) oh[static_cast<std::size_t>(i) * c.d + x] += pij * vh[static_cast<std::size_t>(j) * c.d + x];
      }
  }
}

// Gradients of L = Σ dout ∘ O with respect to q, k, v (same layouts as q, k, v).
void reference_backward(const Case& c, const std::vector<double>& q, const std::vector<double>& k,
                        const std::vector<double>& v, const std::vector<double>& dout, std::vector<double>& dq,
                        std::vector<double>& dk, std::vector<double>& dv) {
  dq.assign(q.size(), 0.0);
  dk.assign(k.size(), 0.0);
  dv.assign(v.size(), 0.0);
  const std::size_t nq = c.n_q, nk = c.n_k, d = c.d;
  for (int h = 0; h < c.bh; ++h) {
    const double* qh = &q[h * nq * d];
    const double* kh = &k[h * nk * d];
    const double* vh = &v[h * nk * d];
    const double* doh = &dout[h * nq * d];
    double* dqh = &dq[h * nq * d];
    double* dkh = &dk[h * nk * d];
    double* dvh = &dv[h * nk * d];
    const std::vector<double> p = reference_probabilities(c, qh, kh, nullptr);
    for (std::size_t i = 0; i < nq; ++i) {
      // dP_ij = dO_i·v_j;  D_i = Σ_j P_ij dP_ij;  dS_ij = P_ij (dP_ij − D_i)
      std::vector<double> dp(nk, 0.0);
      double delta = 0.0;
      for (std::size_t j = 0; j < nk; ++j) {
        const double pij = p[i * nk + j];
        if (pij == 0.0) continue;
        for (std::size_t x = 0; x < d; ++x) dp[j] += doh[i * d + x] * vh[j * d + x];
        delta += pij * dp[j];
      }
      for (std::size_t j = 0; j < nk; ++j) {
        const double pij = p[i * nk + j];
        if (pij == 0.0) continue;
        const double ds = pij * (dp[j] - delta);
        for (std::size_t x = 0; x < d; ++x) {
          dvh[j * d + x] += pij * doh[i * d + x];               // dV = Pᵀ·dO
          dqh[i * d + x] += c.scale() * ds * kh[j * d + x];     // dQ = scale·dS·K
          dkh[j * d + x] += c.scale() * ds * qh[i * d + x];     // dK = scale·dSᵀ·Q
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Error
// ---------------------------------------------------------------------------------------------

// max |got − ref| / max |ref|; +∞ if any value is NaN or ±∞ (a poisoned output left unwritten).
double relative_error(const std::vector<double>& got, const std::vector<double>& ref) {
  if (got.size() != ref.size()) return std::numeric_limits<double>::infinity();
  double max_diff = 0.0, max_ref = 0.0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) return std::numeric_limits<double>::infinity();
    max_diff = std::max(max_diff, std::abs(got[i] - ref[i]));
    max_ref = std::max(max_ref, std::abs(ref[i]));
  }
  return max_ref > 0.0 ? max_diff / max_ref : max_diff;
}

// lse: the −∞ of fully masked rows must match exactly; the rest compare like any tensor.
double lse_error(const std::vector<float>& got, const std::vector<double>& ref) {
  std::vector<double> g, r;
  for (std::size_t i = 0; i < got.size() && i < ref.size(); ++i) {
    const bool ref_masked = std::isinf(ref[i]) && ref[i] < 0;
    const bool got_masked = std::isinf(got[i]) && got[i] < 0;
    if (ref_masked != got_masked) return std::numeric_limits<double>::infinity();
    if (ref_masked) continue;
    g.push_back(got[i]);
    r.push_back(ref[i]);
  }
  return got.size() == ref.size() ? relative_error(g, r) : std::numeric_limits<double>::infinity();
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

constexpr double kFp32Bound = 1e-5;
constexpr double kBf16Bound = 1e-2;
// lse of the BF16 forward: FP32 statistics of exact products of bf16 inputs, so only float
// rounding separates it from the reference built from the same bf16 values.
constexpr double kBf16LseBound = 1e-4;

// Fill with 0xFF bytes: a NaN in both float and bf16, so any element a kernel forgets to write
// fails the finiteness check above.
template <typename T>
void poison(DeviceBuffer<T>& buffer) {
  ATTN_CUDA_CHECK(cudaMemset(buffer.get(), 0xFF, buffer.size() * sizeof(T)));
}

struct Result {
  bool ok;
  std::string detail;
  bool skipped = false;  // the kernel cannot run here (detail says why): counted as skipped, never passed
};

std::string err_text(const char* label, double err, double bound) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s %.2e (bound %.0e)", label, err, bound);
  return buf;
}

struct Inputs {
  std::vector<float> q, k, v;
  std::vector<double> qd, kd, vd;
};

// Rounds x to bf16 once; as_double gets exactly the rounded values, so a reference computed from
// it sees what the kernel sees.
std::vector<__nv_bfloat16> to_bf16(const std::vector<float>& x, std::vector<double>& as_double) {
  std::vector<__nv_bfloat16> out(x.size());
  as_double.resize(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    out[i] = __float2bfloat16(x[i]);
    as_double[i] = static_cast<double>(__bfloat162float(out[i]));
  }
  return out;
}

Inputs make_inputs(const Case& c, std::uint64_t seed) {
  Rng rng(seed);
  Inputs in;
  in.q = random_floats(rng, static_cast<std::size_t>(c.bh) * c.n_q * c.d);
  in.k = random_floats(rng, static_cast<std::size_t>(c.bh) * c.n_k * c.d);
  in.v = random_floats(rng, static_cast<std::size_t>(c.bh) * c.n_k * c.d);
  in.qd = to_double(in.q);
  in.kd = to_double(in.k);
  in.vd = to_double(in.v);
  return in;
}

Result test_naive(const Case& c, std::uint64_t seed) {
  const Inputs in = make_inputs(c, seed);
  std::vector<double> ref, ref_lse;
  reference_forward(c, in.qd, in.kd, in.vd, ref, ref_lse);

  DeviceBuffer<float> q(in.q.size()), k(in.k.size()), v(in.v.size()), out(ref.size());
  DeviceBuffer<float> scores(attn::cuda::attention_naive_workspace_floats(c.bh, c.n_q, c.n_k));
  q.upload(in.q);
  k.upload(in.k);
  v.upload(in.v);
  poison(out);
  poison(scores);
  attn::cuda::CublasHandle cublas;
  attn::cuda::attention_naive(out.get(), scores.get(), q.get(), k.get(), v.get(), c.bh, c.n_q, c.n_k, c.d, c.causal,
                              static_cast<float>(c.scale()), cublas.get());
  ATTN_CUDA_CHECK(cudaDeviceSynchronize());
  const double err = relative_error(to_double(out.download()), ref);
  return {err <= kFp32Bound, err_text("rel.err", err, kFp32Bound)};
}

Result test_flash_fp32(const Case& c, std::uint64_t seed) {
  const Inputs in = make_inputs(c, seed);
  std::vector<double> ref, ref_lse;
  reference_forward(c, in.qd, in.kd, in.vd, ref, ref_lse);

  DeviceBuffer<float> q(in.q.size()), k(in.k.size()), v(in.v.size()), out(ref.size()), lse(ref_lse.size());
  q.upload(in.q);
  k.upload(in.k);
  v.upload(in.v);
  poison(out);
  poison(lse);
  attn::cuda::attention_flash_fp32(out.get(), lse.get(), q.get(), k.get(), v.get(), c.bh, c.n_q, c.n_k, c.d, c.causal,
                                   static_cast<float>(c.scale()));
  ATTN_CUDA_CHECK(cudaDeviceSynchronize());
  const double err = relative_error(to_double(out.download()), ref);
  const double err_lse = lse_error(lse.download(), ref_lse);
  return {err <= kFp32Bound && err_lse <= kFp32Bound,
          err_text("rel.err", err, kFp32Bound) + ", " + err_text("lse", err_lse, kFp32Bound)};
}

// Both BF16 tests (device and emulator) run their inputs through this: the bf16-rounded tensors
// and the float64 copies of exactly those values, so the reference sees what the kernel sees.
struct Bf16Inputs {
  std::vector<__nv_bfloat16> q, k, v;
  std::vector<double> qd, kd, vd;
};

Bf16Inputs make_bf16_inputs(const Inputs& in) {
  Bf16Inputs b;
  b.q = to_bf16(in.q, b.qd);
  b.k = to_bf16(in.k, b.kd);
  b.v = to_bf16(in.v, b.vd);
  return b;
}

std::vector<double> bf16_to_double(const std::vector<__nv_bfloat16>& x) {
  std::vector<double> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = static_cast<double>(__bfloat162float(x[i]));
  return out;
}

// Increment of an accumulated gradient: after − before, in double.
std::vector<double> increment(const std::vector<float>& after, const std::vector<float>& before) {
  std::vector<double> inc(after.size());
  for (std::size_t i = 0; i < after.size(); ++i) inc[i] = static_cast<double>(after[i]) - static_cast<double>(before[i]);
  return inc;
}

// The BF16 forward's verdict from its output and lse (shared by the device test and the emulator).
Result judge_flash_bf16(const std::vector<__nv_bfloat16>& out, const std::vector<float>& lse,
                        const std::vector<double>& ref, const std::vector<double>& ref_lse) {
  const double err = relative_error(bf16_to_double(out), ref);
  const double err_lse = lse_error(lse, ref_lse);
  return {err <= kBf16Bound && err_lse <= kBf16LseBound,
          err_text("rel.err", err, kBf16Bound) + ", " + err_text("lse", err_lse, kBf16LseBound)};
}

// Rungs 3 and 5 share their contract; one test body runs either.
using Bf16Forward = void (*)(__nv_bfloat16*, float*, const __nv_bfloat16*, const __nv_bfloat16*,
                             const __nv_bfloat16*, int, int, int, int, bool, float, cudaStream_t);

Result run_bf16_forward(Bf16Forward forward, const Case& c, std::uint64_t seed) {
  const Bf16Inputs in = make_bf16_inputs(make_inputs(c, seed));
  std::vector<double> ref, ref_lse;
  reference_forward(c, in.qd, in.kd, in.vd, ref, ref_lse);

  DeviceBuffer<__nv_bfloat16> q(in.q.size()), k(in.k.size()), v(in.v.size()), out(ref.size());
  DeviceBuffer<float> lse(ref_lse.size());
  q.upload(in.q);
  k.upload(in.k);
  v.upload(in.v);
  poison(out);
  poison(lse);
  forward(out.get(), lse.get(), q.get(), k.get(), v.get(), c.bh, c.n_q, c.n_k, c.d, c.causal,
          static_cast<float>(c.scale()), nullptr);
  ATTN_CUDA_CHECK(cudaDeviceSynchronize());
  return judge_flash_bf16(out.download(), lse.download(), ref, ref_lse);
}

Result test_flash_bf16(const Case& c, std::uint64_t seed) {
  return run_bf16_forward(attn::cuda::attention_flash_bf16, c, seed);
}

// Rung 5 runs only on a Hopper GPU from a build with sm_90a code; elsewhere it is skipped.
Result test_flash_hopper(const Case& c, std::uint64_t seed) {
  const std::string why = attn::cuda::attention_flash_hopper_unavailable();
  if (!why.empty()) return {false, why, true};
  return run_bf16_forward(attn::cuda::attention_flash_hopper, c, seed);
}

// Random dout and starting gradients for a backward test (the gradients accumulate, so they
// start from random values and the test checks the increment).
struct BackwardInputs {
  std::vector<float> dout, dq0, dk0, dv0;
};

BackwardInputs make_backward_inputs(const Case& c, const Inputs& in, std::uint64_t seed) {
  Rng rng(seed ^ 0x5eedULL);
  BackwardInputs b;
  b.dout = random_floats(rng, static_cast<std::size_t>(c.bh) * c.n_q * c.d);
  b.dq0 = random_floats(rng, in.q.size(), 0.5);
  b.dk0 = random_floats(rng, in.k.size(), 0.5);
  b.dv0 = random_floats(rng, in.v.size(), 0.5);
  return b;
}

Result judge_backward(const std::vector<double>& inc_dq, const std::vector<double>& inc_dk,
                      const std::vector<double>& inc_dv, const std::vector<double>& ref_dq,
                      const std::vector<double>& ref_dk, const std::vector<double>& ref_dv, double bound) {
  const double e_dq = relative_error(inc_dq, ref_dq);
  const double e_dk = relative_error(inc_dk, ref_dk);
  const double e_dv = relative_error(inc_dv, ref_dv);
  const bool ok = e_dq <= bound && e_dk <= bound && e_dv <= bound;
  return {ok, err_text("dq", e_dq, bound) + ", " + err_text("dk", e_dk, bound) + ", " + err_text("dv", e_dv, bound)};
}

// The BF16 backward's reference: the float64 gradients of the bf16-rounded q, k, v and dout.
// (The kernel also sees the bf16-rounded forward output through D = dO·O; that rounding is
// counted against it, within the BF16 bound.)
Result test_flash_fp32_backward(const Case& c, std::uint64_t seed) {
  const Inputs in = make_inputs(c, seed);
  const BackwardInputs b = make_backward_inputs(c, in, seed);
  std::vector<double> ref_dq, ref_dk, ref_dv;
  reference_backward(c, in.qd, in.kd, in.vd, to_double(b.dout), ref_dq, ref_dk, ref_dv);

  DeviceBuffer<float> q(in.q.size()), k(in.k.size()), v(in.v.size()), out(in.q.size()), dout(b.dout.size());
  DeviceBuffer<float> lse(static_cast<std::size_t>(c.bh) * c.n_q), delta(static_cast<std::size_t>(c.bh) * c.n_q);
  DeviceBuffer<float> dq(in.q.size()), dk(in.k.size()), dv(in.v.size());
  q.upload(in.q);
  k.upload(in.k);
  v.upload(in.v);
  dout.upload(b.dout);
  dq.upload(b.dq0);
  dk.upload(b.dk0);
  dv.upload(b.dv0);
  poison(out);
  poison(lse);
  poison(delta);
  const float scale = static_cast<float>(c.scale());
  attn::cuda::attention_flash_fp32(out.get(), lse.get(), q.get(), k.get(), v.get(), c.bh, c.n_q, c.n_k, c.d, c.causal,
                                   scale);
  attn::cuda::attention_flash_fp32_backward(dq.get(), dk.get(), dv.get(), delta.get(), dout.get(), q.get(), k.get(),
                                            v.get(), out.get(), lse.get(), c.bh, c.n_q, c.n_k, c.d, c.causal, scale);
  ATTN_CUDA_CHECK(cudaDeviceSynchronize());
  return judge_backward(increment(dq.download(), b.dq0), increment(dk.download(), b.dk0),
                        increment(dv.download(), b.dv0), ref_dq, ref_dk, ref_dv, kFp32Bound);
}

Result test_flash_bf16_backward(const Case& c, std::uint64_t seed) {
  const Inputs raw = make_inputs(c, seed);
  const Bf16Inputs in = make_bf16_inputs(raw);
  const BackwardInputs b = make_backward_inputs(c, raw, seed);
  std::vector<double> dout_d;
  const std::vector<__nv_bfloat16> dout_b = to_bf16(b.dout, dout_d);
  std::vector<double> ref_dq, ref_dk, ref_dv;
  reference_backward(c, in.qd, in.kd, in.vd, dout_d, ref_dq, ref_dk, ref_dv);

  DeviceBuffer<__nv_bfloat16> q(in.q.size()), k(in.k.size()), v(in.v.size()), out(in.q.size()), dout(dout_b.size());
  DeviceBuffer<float> lse(static_cast<std::size_t>(c.bh) * c.n_q), delta(static_cast<std::size_t>(c.bh) * c.n_q);
  DeviceBuffer<float> dq(in.q.size()), dk(in.k.size()), dv(in.v.size());
  q.upload(in.q);
  k.upload(in.k);
  v.upload(in.v);
  dout.upload(dout_b);
  dq.upload(b.dq0);
  dk.upload(b.dk0);
  dv.upload(b.dv0);
  poison(out);
  poison(lse);
  poison(delta);
  const float scale = static_cast<float>(c.scale());
  attn::cuda::attention_flash_bf16(out.get(), lse.get(), q.get(), k.get(), v.get(), c.bh, c.n_q, c.n_k, c.d, c.causal,
                                   scale);
  attn::cuda::attention_flash_bf16_backward(dq.get(), dk.get(), dv.get(), delta.get(), dout.get(), q.get(), k.get(),
                                            v.get(), out.get(), lse.get(), c.bh, c.n_q, c.n_k, c.d, c.causal, scale);
  ATTN_CUDA_CHECK(cudaDeviceSynchronize());
  return judge_backward(increment(dq.download(), b.dq0), increment(dk.download(), b.dk0),
                        increment(dv.download(), b.dv0), ref_dq, ref_dk, ref_dv, kBf16Bound);
}

// Awkward sizes: 1 and 7 are smaller than one 64-row tile, 129 is two tiles plus one row,
// 1000 leaves a partial last tile of 40. Two cases have n_q ≠ n_k: 7 queries over 1000 keys
// (a KV cache: the queries are the last 7 positions) and 129 queries over 7 keys, where the
// causal mask leaves the first 122 rows with no key at all (the output must be zeros).
// (The host emulator, common/cuda/emulate, runs the same list.)
std::vector<Case> kernel_test_cases() {
  return {
      {2, 1, 1, 64, false},     {3, 7, 7, 64, true},         {2, 129, 129, 128, false},
      {2, 129, 129, 64, true},  {1, 1000, 1000, 128, true},  {2, 1000, 1000, 64, false},
      {2, 7, 1000, 128, true},  {2, 129, 7, 64, true},       {1, 1, 1000, 128, false},
  };
}

}  // namespace

// The emulator includes this file for its references and cases, and brings its own main.
#ifndef ATTN_CUDA_TESTS_NO_MAIN
// attn_cuda_tests [CASE …]: only the listed cases (0-based indices into kernel_test_cases()) of
// every kernel — the sanitizers' runs take the small ones; no argument runs them all.
int main(int argc, char** argv) {
  const std::vector<Case> cases = kernel_test_cases();
  std::vector<bool> selected(cases.size(), argc <= 1);
  for (int i = 1; i < argc; ++i) {
    char* end = nullptr;
    const long idx = std::strtol(argv[i], &end, 10);
    if (end == argv[i] || *end != '\0' || idx < 0 || idx >= static_cast<long>(cases.size())) {
      std::fprintf(stderr, "attn_cuda_tests: '%s' is not a case index 0..%zu\n", argv[i], cases.size() - 1);
      return 2;
    }
    selected[static_cast<std::size_t>(idx)] = true;
  }
  struct Kernel {
    const char* name;
    std::function<Result(const Case&, std::uint64_t)> run;
  };
  const std::vector<Kernel> kernels = {
      {"1 naive (cuBLAS + softmax)", test_naive},
      {"2 flash fp32", test_flash_fp32},
      {"3 flash bf16 mma", test_flash_bf16},
      {"4 flash fp32 backward", test_flash_fp32_backward},
      // Rung 6 before rung 5: the seeds then match the emulator's (which has no rung 5), and the
      // rungs that can be checked elsewhere report before the one that needs a Hopper.
      {"6 flash bf16 backward", test_flash_bf16_backward},
      {"5 flash hopper wgmma", test_flash_hopper},
  };

  const attn::cuda::DeviceStatus status = attn::cuda::device_status();
  if (status.available)
    std::printf("device: %s (sm_%d, %d SMs)\n", status.name.c_str(), status.compute_capability,
                status.multiprocessors);

  int passed = 0, failed = 0, skipped = 0;
  std::uint64_t seed = 2024;
  for (const Kernel& kernel : kernels)
    for (std::size_t ci = 0; ci < cases.size(); ++ci) {
      ++seed;  // fresh inputs for every test (the same seed for a case whether or not others run)
      if (!selected[ci]) continue;
      const Case& c = cases[ci];
      const std::string name = std::string(kernel.name) + "  " + c.str();
      if (!status.available) {
        std::printf("%-62s skipped: no CUDA device (%s)\n", name.c_str(), status.error.c_str());
        ++skipped;
        continue;
      }
      Result r{false, ""};
      try {
        r = kernel.run(c, seed);
      } catch (const std::exception& e) {
        r = {false, std::string("exception: ") + e.what()};
      }
      if (r.skipped) {
        std::printf("%-62s skipped: %s\n", name.c_str(), r.detail.c_str());
        ++skipped;
        continue;
      }
      std::printf("%-62s %s  %s\n", name.c_str(), r.ok ? "ok    " : "FAILED", r.detail.c_str());
      std::fflush(stdout);
      (r.ok ? passed : failed) += 1;
    }

  if (skipped > 0)
    std::printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  else
    std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
#endif  // ATTN_CUDA_TESTS_NO_MAIN
