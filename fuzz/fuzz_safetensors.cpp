// libFuzzer target: the safetensors reader and load_checkpoint on arbitrary bytes. Anything but
// a SafetensorsError (another exception, a crash, a sanitizer report, a hang) is a finding.
//   scripts/fuzz safetensors 60
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include "attn/data/safetensors.hpp"

namespace {
std::string scratch_file() {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/attn-fuzz-st-" + std::to_string(::getpid()) + ".safetensors";
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = scratch_file();
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data), std::streamsize(size));
  }
  try {
    attn::Metadata meta;
    const attn::TensorMap t = attn::read_safetensors(path, &meta);
    // And the load path: a small model whose names a mutated shipped file may still match.
    attn::Mat w = xt::zeros<float>({std::size_t(2), std::size_t(2)}), gw = w;
    attn::Vec b = xt::zeros<float>({std::size_t(2)}), gb = b;
    attn::ParamRegistry reg;
    reg.add("w", w, gw);
    reg.add("b", b, gb);
    attn::load_checkpoint(path, reg, /*allow_extra=*/true, nullptr, {{"model", "fuzz"}});
  } catch (const attn::SafetensorsError&) {
  }
  return 0;
}
