// Editing one head's attention weights after the fact, to ask what the weights are worth
// (Jain & Wallace 2019 §4; Michel et al. 2019 for ablation). For a head's weights P: (T, S):
//   zero      P ← 0: the head adds nothing (ablation; its output is b_O's share only)
//   uniform   P_ij ← 1 / n_i over the keys row i may see (mask entry finite)
//   permute   each row's visible weights shuffled among its visible keys (same multiset of
//             weights, different keys: the "adversarial-free" random permutation of §4.1)
// Then the layer's output is recomputed from the edited weights and the cached V:
//   O_h = P_h·V_g,  concat = [O_1 … O_H],  out = concat·W_O + b_O   (as multi_head_forward)
#pragma once

#include <cstdint>
#include <string>

#include "attn/attention/multi_head.hpp"

namespace attn {

enum class HeadEdit { zero, uniform, permute };
std::string head_edit_name(HeadEdit e);  // "zero", "uniform", "permute"

// p: (T, S) one head's weights, edited in place; mask: (T, S) additive (−∞ = hidden) or empty
// (every key visible). rng is used by permute only.
template <class T>
void edit_head_weights(MatT<T>& p, HeadEdit edit, const MatT<T>& mask, Rng& rng);

// Recomputes cache.concat from cache.weights and cache.v, then out = concat·W_O + b_O.
// After an unedited multi_head_forward this reproduces its output exactly.
template <class T>
void multi_head_recombine(Tensor3T<T>& out, MultiHeadCacheT<T>& cache, const MultiHeadT<T>& p);

}  // namespace attn
