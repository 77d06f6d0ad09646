// libFuzzer target: tokenizer.json (chapter 09's byte-level BPE file) from arbitrary bytes, then,
// when it loads, an encode/decode round trip of a fixed text. Anything but a BpeError (another
// exception such as nlohmann::type_error, a crash, a sanitizer report, a hang) is a finding.
//   scripts/fuzz tokenizer 60
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "attn/data/bpe.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const attn::BpeTokenizer tok = attn::bpe_parse(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json");
    const std::string text = "In the beginning God created the heaven and the earth.\n";
    if (attn::bpe_decode(tok, attn::bpe_encode(tok, text)) != text) throw std::logic_error("round trip changed the text");
  } catch (const attn::BpeError&) {
  }
  return 0;
}
