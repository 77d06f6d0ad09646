// The King James Bible corpus and language-model batches (see attn/data/text_corpus.hpp).
#include "attn/data/text_corpus.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace attn {

std::string read_text_file(const std::string& path, std::uint64_t max_bytes) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw std::runtime_error(path + " is a folder, not a text file");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  f.seekg(0, std::ios::end);
  const std::streamoff size = f.tellg();
  f.seekg(0);
  if (size < 0) {  // not seekable (a pipe): read as it comes, up to the limit
    f.clear();
    std::string out;
    char buf[65536];
    while (f.read(buf, sizeof buf) || f.gcount() > 0) {
      out.append(buf, std::size_t(f.gcount()));
      if (out.size() > max_bytes)
        throw std::runtime_error(path + " is longer than " + std::to_string(max_bytes >> 20) + " MiB, more than a text file here may hold");
    }
    return out;
  }
  if (std::uint64_t(size) > max_bytes)
    throw std::runtime_error(path + " is " + std::to_string(std::uint64_t(size) >> 20) + " MiB; text files up to " +
                             std::to_string(max_bytes >> 20) + " MiB are read (the Bible is 4 MiB)");
  std::string out(std::size_t(size), '\0');
  if (size > 0 && !f.read(out.data(), size)) throw std::runtime_error("cannot read " + path);
  return out;
}

KjvSplit kjv_split(const std::string& dump, std::size_t every) {
  if (every < 2) throw std::invalid_argument("kjv_split: every must be at least 2, got " + std::to_string(every));
  KjvSplit out;
  std::istringstream in(dump);
  std::string line, current_chapter;
  std::size_t chapter_index = 0, line_no = 0;
  bool held_out = false;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const auto space = line.find(' ');
    const auto colon = line.find(':');
    if (space == std::string::npos || colon == std::string::npos || colon > space || colon == 0)
      throw std::invalid_argument("kjv_split: line " + std::to_string(line_no) +
                                  " does not start with a verse reference like \"Ge1:1 \": " + line.substr(0, 40));
    const std::string chapter = line.substr(0, colon);  // "Ge1"
    if (chapter != current_chapter) {
      if (!current_chapter.empty()) ++chapter_index;
      current_chapter = chapter;
      held_out = chapter_index % every == every - 1;
      ++(held_out ? out.chapters_valid : out.chapters_train);
    }
    (held_out ? out.valid : out.train) += line.substr(space + 1) + "\n";
    ++out.verses;
  }
  if (out.verses == 0) throw std::invalid_argument("kjv_split: no verses found");
  return out;
}

LmBatch sample_lm_batch(const std::vector<int>& tokens, std::size_t batch, std::size_t time, Rng& rng) {
  if (tokens.size() < time + 1 || time == 0)
    throw std::invalid_argument("sample_lm_batch: " + std::to_string(tokens.size()) +
                                " tokens cannot hold a window of " + std::to_string(time) + " + 1");
  LmBatch b;
  b.inputs.reserve(batch * time);
  b.targets.reserve(batch * time);
  const auto starts = std::uint32_t(tokens.size() - time);  // offsets 0 … size − T − 1
  for (std::size_t i = 0; i < batch; ++i) {
    const std::size_t o = rng.below(starts);
    b.inputs.insert(b.inputs.end(), tokens.begin() + long(o), tokens.begin() + long(o + time));
    b.targets.insert(b.targets.end(), tokens.begin() + long(o + 1), tokens.begin() + long(o + time + 1));
  }
  return b;
}

}  // namespace attn
