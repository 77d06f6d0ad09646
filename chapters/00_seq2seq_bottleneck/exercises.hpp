// Chapter 00 exercises: the GRU step every encoder and decoder here is made of, and the measure
// that shows the bottleneck.
//   scripts/exercises check 00     build your exercises.cpp and run its checks
//   scripts/exercises hint 00      the hints again
// Your file is exercises.cpp; solutions.cpp holds one worked answer (peek only when stuck).
#pragma once

#include <string>
#include <vector>

#include "attn/tensor/tensor.hpp"

namespace ex00 {

// 00.1 — one GRU step for one sentence (PyTorch's gate order r, z, n; weights right-multiplied):
//   r = σ(x·Wx[:, 0:H] + bx[0:H] + h·Wh[:, 0:H] + bh[0:H])
//   z = σ(x·Wx[:, H:2H] + bx[H:2H] + h·Wh[:, H:2H] + bh[H:2H])
//   n = tanh(x·Wx[:, 2H:3H] + bx[2H:3H] + r ⊙ (h·Wh[:, 2H:3H] + bh[2H:3H]))
//   h' = (1 − z) ⊙ n + z ⊙ h
// x: (D,), h: (H,), wx: (D, 3H), wh: (H, 3H), bx, bh: (3H,) -> h': (H,)
attn::Vec gru_step(const attn::Vec& x, const attn::Vec& h, const attn::Mat& wx, const attn::Mat& wh,
                   const attn::Vec& bx, const attn::Vec& bh);

// 00.2 — positional token accuracy: the fraction of reference positions i where hyp[i] == ref[i].
// A hypothesis shorter than the reference misses the rest; extra hypothesis words are not counted.
// Both empty -> 1.
double token_accuracy(const std::vector<std::string>& hyp, const std::vector<std::string>& ref);

}  // namespace ex00
