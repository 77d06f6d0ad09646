// libFuzzer target: the JSON readers of files a learner may swap — chapter 08's peer timing
// (data/ch08/pytorch_step_time.json) and the decoder LM's config (its checkpoint's metadata) —
// from arbitrary bytes. Anything but the readers' own errors (std::runtime_error naming the file,
// std::invalid_argument for the config), such as nlohmann::type_error or a float-to-integer
// overflow under UBSan, is a finding.
//   scripts/fuzz json 60
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "attn/models/decoder_lm.hpp"
#include "attn/studies/transformer_study.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)attn::parse_peer_step_time(text, "fuzz.json");
  } catch (const std::runtime_error&) {
  }
  try {
    (void)attn::config_from_json(text);
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
