// Toy word vectors (see attn/data/word_vectors.hpp).
#include "attn/data/word_vectors.hpp"

#include <sstream>

#include "attn/tensor/rng.hpp"

namespace attn {

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 14695981039346656037ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

Mat word_vectors(const Labels& words, std::size_t d, std::uint64_t seed, float scale) {
  Mat x = xt::zeros<float>({words.size(), d});
  for (std::size_t i = 0; i < words.size(); ++i) {
    Rng rng(seed, fnv1a(words[i]));  // the word picks the stream: same word, same vector
    for (std::size_t j = 0; j < d; ++j) x(i, j) = scale * rng.normal();
  }
  return x;
}

Labels split_words(const std::string& sentence) {
  Labels out;
  std::istringstream in(sentence);
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

}  // namespace attn
