// Toy word vectors for the small worked examples: each word gets a fixed random vector derived
// from the word itself and the seed (FNV-1a hash → PCG32 stream), so "cat" has the same vector
// in "the cat eats fish" and in "fish eats the cat" — which the permutation demos rely on.
#pragma once

#include <cstdint>
#include <string>

#include "attn/tensor/tensor.hpp"

namespace attn {

// 64-bit FNV-1a hash of a string (Fowler–Noll–Vo; offset basis 14695981039346656037, prime 1099511628211).
std::uint64_t fnv1a(const std::string& s);

// words: n strings -> (n, d), row i = N(0, 1) vector of words[i] (scaled by `scale`).
Mat word_vectors(const Labels& words, std::size_t d, std::uint64_t seed, float scale = 1.0f);

// Split on spaces (several spaces count as one).
Labels split_words(const std::string& sentence);

}  // namespace attn
