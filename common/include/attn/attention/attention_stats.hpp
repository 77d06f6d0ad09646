// What a head's attention weights look like, in numbers (chapter 10). Every function reads one
// head's weight matrix P: (T_q, T_k), rows are distributions over the keys the query may see.
//   entropy        H_i = −Σ_j P_ij log P_ij (nats; 0·log 0 = 0), Clark et al. 2019 §3
//   uniformity     H_i / log n_i, n_i = keys row i may see (all T_k, or i + 1 + T_k − T_q when
//                  causal); 1 = spread evenly, 0 = one key. Rows with n_i = 1 are skipped.
//   distance       Σ_j P_ij |pos_i − j|, pos_i = i + T_k − T_q: how far a query looks, in tokens
//                  (the ViT paper's "mean attention distance", Dosovitskiy et al. 2021, Fig. 7)
//   previous-token P_i,i−1 averaged over rows that have a previous token
//   prefix matching Σ P_i,j+1 over earlier j with token_j = token_i: attention to the token
//                  that followed an earlier copy of the current one (Olsson et al. 2022, §2)
//   copying        of an OV circuit M (V × V, row = source token, column = output logit):
//                  Σλ / Σ|λ| over M's eigenvalues, Elhage et al. 2021 ("positive eigenvalues")
//   Kendall τ_b    rank agreement of two importance vectors, ties corrected (Kendall 1945)
//   total variation ½ Σ_v |p_v − q_v| between two distributions (0 = same, 1 = disjoint)
// (Argmax alignment against a reference is attn/attention/alignment.hpp's alignment_hits.)
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "attn/tensor/tensor.hpp"

namespace attn {

// p: (T_q, T_k) -> (T_q,): each row's entropy in nats.
Vec attention_entropy(const Mat& p);
// Keys each query may see: T_k, or (causal) i + 1 + T_k − T_q, at least 0.
std::vector<std::size_t> visible_keys(std::size_t t_q, std::size_t t_k, bool causal);
// Mean of the rows' entropies (nats).
double mean_entropy(const Mat& p);
// Mean over rows with n_i ≥ 2 of H_i / log n_i (1 = uniform); 0 when no row qualifies.
double uniformity(const Mat& p, bool causal);
// uniformity(p, causal) ≥ 1 − tolerance: the head is "within 5 %" of uniform for tolerance 0.05.
bool near_uniform(const Mat& p, bool causal, double tolerance = 0.05);
// Mean over rows of Σ_j P_ij |i + T_k − T_q − j|, in tokens.
double mean_attention_distance(const Mat& p);
// Mean over rows i ≥ 1 + T_q − T_k … of P_i,pos_i − 1; 0 when T_k = 1.
double previous_token_score(const Mat& p);
// tokens: the T_k key tokens (queries are the last T_q of them). Mean over rows that have an
// earlier copy of their token (with a successor ≤ pos_i) of Σ P_i,j+1; 0 when no row has one.
double prefix_matching_score(const Mat& p, const std::vector<int>& tokens);
// Number of rows prefix_matching_score averages over.
std::size_t prefix_matching_rows(std::size_t t_q, const std::vector<int>& tokens);
// m: (V, V) -> Σ Re λ / Σ |λ| over the eigenvalues λ of m (in [−1, 1]; 0 for the zero matrix).
// A NaN or infinite entry throws std::domain_error naming it (LAPACK would corrupt the heap).
double copying_score(const Mat& m);
// Kendall's τ_b of two equally long vectors (−1 … 1); 0 when either is constant.
double kendall_tau(const std::vector<double>& a, const std::vector<double>& b);
// ½ Σ |p − q| of two distributions of the same size.
double total_variation(const Vec& p, const Vec& q);
// Mean over rows of the total variation between p's and q's rows (same shapes).
double mean_total_variation(const Mat& p, const Mat& q);

}  // namespace attn

namespace attn {

// One model's attention on one input, as the chapter measures and draws it: per layer a
// (heads, T_q, T_k) tensor, the query tokens (rows) and the key tokens (columns).
struct AttentionSet {
  std::string name;  // "induction model", "encoder self-attention", "cross-attention", …
  Labels query_tokens, key_tokens;
  std::vector<Tensor3> layers;
  bool causal = false;  // queries see only keys up to their own position
};
// (layers, heads, T_q, T_k); throws ShapeError when the layers' shapes differ.
Tensor4 stack_layers(const std::vector<Tensor3>& layers);

}  // namespace attn
