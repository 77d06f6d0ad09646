// A small attention set with known heads for the head-view tests (test_html_view.cpp,
// test_html_chromium.cpp), and a substring counter for the pages they check.
#pragma once

#include <string>

#include "attn/attention/attention_stats.hpp"

namespace head_view_sample {

// Two layers × three heads over 5 tokens: head 0 the identity, head 1 previous-token, head 2
// all on the first token; layer 1 the same shifted (for a visible layer switch).
inline attn::AttentionSet sample_set() {
  attn::AttentionSet s;
  s.name = "sample";
  s.query_tokens = s.key_tokens = {"the", "cat", "<sat>", "on", "mats"};
  s.causal = true;
  for (std::size_t l = 0; l < 2; ++l) {
    attn::Tensor3 t = xt::zeros<float>({3, 5, 5});
    for (std::size_t i = 0; i < 5; ++i) {
      t(0, i, i) = 1.0f;
      t(1, i, i ? i - 1 : 0) = 1.0f;
      t(2, i, l) = i >= l ? 1.0f : 0.0f;
      if (i < l) t(2, i, 0) = 1.0f;
    }
    s.layers.push_back(t);
  }
  return s;
}
inline std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

}  // namespace head_view_sample
