// Chapter 06's sweep: every efficient attention variant against exact (full, materialised)
// attention on the same random inputs, for growing n: time, working memory, error, and the fitted
// log-log slope of time against n (≈ 2 for full attention, ≈ 1 for window / BigBird / linear).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attn {

struct VariantPoint {
  std::size_t n = 0;
  double seconds = 0.0;
  double work_mib = 0.0;   // counted working memory beyond Q, K, V and the output
  double rss_mib = -1.0;   // measured growth of peak RSS over one run (-1: unavailable)
  double err_vs_full = -1.0;  // max |variant − full attention| (-1: full attention skipped at this n)
  bool skipped = false;
  std::string note;
};

struct VariantSweep {
  std::string name;        // "full", "window", …
  std::string complexity;  // "O(n²·d)", …
  std::vector<VariantPoint> points;
  double slope = 0.0;      // log-log slope of time vs n over the measured points with n >= 1024
};

struct EfficientSweepConfig {
  std::size_t d = 64;
  std::size_t window = 128;       // window half-width (keys each side, incl. itself): 2w − 1 keys
  std::size_t dilation = 2;
  std::size_t block = 64;         // BigBird block, and the tiled variant's tile
  std::size_t random_blocks = 2;  // BigBird
  std::size_t global_blocks = 1;  // BigBird; Longformer: token 0 is global
  double max_full_mib = 2048.0;   // full attention (scores + weights) beyond this is skipped
  int repeats = 2;
  std::uint64_t seed = 6;
};

// Runs every variant at every n (non-causal, one head, Q, K, V ~ N(0, 1)).
std::vector<VariantSweep> sweep_efficient_variants(const std::vector<std::size_t>& sizes, const EfficientSweepConfig& cfg);

// Autoregressive generation of `steps` tokens with and without the KV cache (seconds each).
struct KVCacheTiming {
  double with_cache = 0.0, without_cache = 0.0, max_diff = 0.0;
};
KVCacheTiming time_kv_cache(std::size_t d_model, std::size_t heads, std::size_t kv_heads, std::size_t steps,
                            std::uint64_t seed);

}  // namespace attn
