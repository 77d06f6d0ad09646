// The shared main() of every doctest executable: switch OpenBLAS to its fast kernel first (as
// every program does), then run doctest with the command line as given.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "attn/tensor/openblas.hpp"

int main(int argc, char** argv) {
  attn::ensure_fast_openblas(argc, argv);
  doctest::Context context;
  context.applyCommandLine(argc, argv);
  return context.run();
}
