// placeholder, replaced below
#include <cstdio>
#include "attn/cuda/check.hpp"
int main() {
  const auto s = attn::cuda::device_status();
  if (!s.available) { std::printf("skipped: no CUDA device (%s)\n", s.error.c_str()); return 0; }
  return 0;
}
