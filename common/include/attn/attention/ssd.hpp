// A selective state-space layer in the Mamba-2 form, one head, computed three ways (Dao & Gu 2024,
// "Transformers are SSMs", §3-§6: the state-space duality). Per token t the head has a scalar
// decay a_t = exp(log_a_t) in (0, 1] (log_a_t = −Δ_t·A), an input vector B_t and an output vector
// C_t (both N wide) and a value row x_t (P wide); its state h_t is N × P:
//   recurrent scan:  h_t = a_t·h_{t−1} + B_t x_tᵀ,   y_t = h_tᵀ C_t            O(T·N·P), sequential
//   quadratic form:  Y = (L ∘ C Bᵀ) X,  L_ts = a_{s+1}·…·a_t for s ≤ t, else 0   O(T²·(N + P))
//   chunked:         the quadratic form inside blocks of Q tokens, the scan across blocks
// The quadratic form is masked attention with a decay mask L instead of a softmax: C plays the
// queries, B the keys, X the values. All three compute the same map; only the cost differs.
// Shapes: x (T, P), b (T, N), c (T, N), log_a (T,) ≤ 0 -> y (T, P). Run:
//   ./build/bin/test_core -tc="ssd*"
#pragma once

#include <cstddef>

#include "attn/tensor/tensor_t.hpp"

namespace attn {

// L (T, T): L_ts = exp(log_a_{s+1} + … + log_a_t) for s ≤ t (L_tt = 1), 0 above the diagonal.
// Each entry sums its own segment of log_a (no difference of two long cumulative sums).
Mat ssd_decay_mask(const Vec& log_a);

// One step of the recurrence: state (N, P) <- a·state + b xᵀ; returns y = stateᵀ c (P,).
Vec ssd_scan_step(Mat& state, float a, const Vec& b, const Vec& c, const Vec& x);

// The recurrent scan over t = 0 … T−1 from a zero state. final_state, when given, receives h_{T−1}.
Mat ssd_scan(const Mat& x, const Mat& b, const Mat& c, const Vec& log_a, Mat* final_state = nullptr);

// The quadratic ("attention") form: M = L ∘ (C Bᵀ) (T, T), then Y = M X, both products by BLAS.
Mat ssd_quadratic(const Mat& x, const Mat& b, const Mat& c, const Vec& log_a);

// Chunked, blocks of `chunk` tokens (the last one may be shorter), as in Dao & Gu 2024, §6:
//   1. inside each block, the quadratic form;
//   2. each block's contribution to the state at its end: Σ_s (decay from s to the end) B_s x_sᵀ;
//   3. across blocks, the scan on those states: H_c = (decay over block c)·H_{c−1} + state_c;
//   4. each row t adds what came from before its block: (decay from the block start to t)·C_tᵀ H_{c−1}.
Mat ssd_chunked(const Mat& x, const Mat& b, const Mat& c, const Vec& log_a, std::size_t chunk);

// The reference every form is tested against: the recurrent scan in double.
MatD ssd_reference(const Mat& x, const Mat& b, const Mat& c, const Vec& log_a);

// The delta rule (DeltaNet; Schlag et al. 2021, Yang et al. 2024): before writing, the state
// forgets what it held at key k_t, so a key written twice keeps its latest value:
//   S_t = S_{t−1} + β_t k_t (v_t − S_{t−1}ᵀ k_t)ᵀ,   y_t = S_tᵀ q_t         S: (N, P)
// q, k: (T, N), v: (T, P), beta: (T,) in [0, 1] -> (T, P). Keys of unit length make β = 1 an
// exact overwrite.
Mat delta_rule_scan(const Mat& q, const Mat& k, const Mat& v, const Vec& beta);

}  // namespace attn
