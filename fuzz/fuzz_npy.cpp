// libFuzzer target: the .npy parser and the rank / shape converters on arbitrary bytes. Anything
// but an NpyError (another exception, a crash, a sanitizer report, a hang) is a finding.
//   scripts/fuzz npy 60
#include <cstddef>
#include <cstdint>
#include <string>

#include "attn/data/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const attn::NpyArray a = attn::parse_npy(std::string(reinterpret_cast<const char*>(data), size), "fuzz.npy");
    switch (a.shape.size()) {
      case 1: (void)attn::npy_to_vec(a, "fuzz.npy"); break;
      case 2: (void)attn::npy_to_mat(a, "fuzz.npy"); break;
      case 3: (void)attn::npy_to_tensor3(a, "fuzz.npy"); break;
      default: break;
    }
    attn::expect_npy_shape(a, {attn::kAnyDim, 16}, "fuzz.npy");
  } catch (const attn::NpyError&) {
  }
  return 0;
}
