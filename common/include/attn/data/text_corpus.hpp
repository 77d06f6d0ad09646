// Real text for the language model of chapter 09: the King James Bible (1611, public domain) as
// Debian's bible-kjv package prints it (`bible -f Gen1:1-Rev22:21`: one verse per line, "Ge1:1 In
// the beginning …"), split by whole chapters into training and held-out text, and random windows
// of a token stream for training batches.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/tensor/rng.hpp"

namespace attn {

// Reads a whole file; std::runtime_error naming the file when it cannot, when it is a folder, or
// when it is longer than max_bytes (256 MiB: a 1 GB file is refused by name, not by bad_alloc).
std::string read_text_file(const std::string& path, std::uint64_t max_bytes = std::uint64_t(256) << 20);

struct KjvSplit {
  std::string train, valid;  // verses without their references, one per line
  std::size_t chapters_train = 0, chapters_valid = 0, verses = 0;
};
// Every `every`-th chapter (the last of each run of `every`) is held out. Throws
// std::invalid_argument when a line does not start with a reference like "Ge1:1 " or no verse is found.
KjvSplit kjv_split(const std::string& bible_dump, std::size_t every = 20);

// The names of the chapters kjv_split holds out, in Bible order ("Genesis 20", "Genesis 40",
// "Exodus 10", …, "Revelation 13" for every = 20), from the 66 books' chapter counts of the
// Protestant canon the King James Version prints (1,189 chapters in all).
std::vector<std::string> kjv_held_out_chapters(std::size_t every = 20);
constexpr std::size_t kKjvChapters = 1189;

// B windows of T + 1 consecutive tokens at uniform random offsets: inputs = window[0 … T−1],
// targets = window[1 … T], sequence b in rows b·T … b·T + T − 1.
struct LmBatch {
  std::vector<int> inputs, targets;
};
LmBatch sample_lm_batch(const std::vector<int>& tokens, std::size_t batch, std::size_t time, Rng& rng);

}  // namespace attn
