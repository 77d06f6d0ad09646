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

std::vector<std::string> kjv_held_out_chapters(std::size_t every) {
  if (every < 2) throw std::invalid_argument("kjv_held_out_chapters: every must be at least 2");
  struct Book {
    const char* name;
    std::size_t chapters;
  };
  static constexpr Book kBooks[] = {
      {"Genesis", 50}, {"Exodus", 40}, {"Leviticus", 27}, {"Numbers", 36}, {"Deuteronomy", 34}, {"Joshua", 24},
      {"Judges", 21}, {"Ruth", 4}, {"1 Samuel", 31}, {"2 Samuel", 24}, {"1 Kings", 22}, {"2 Kings", 25},
      {"1 Chronicles", 29}, {"2 Chronicles", 36}, {"Ezra", 10}, {"Nehemiah", 13}, {"Esther", 10}, {"Job", 42},
      {"Psalms", 150}, {"Proverbs", 31}, {"Ecclesiastes", 12}, {"Song of Solomon", 8}, {"Isaiah", 66},
      {"Jeremiah", 52}, {"Lamentations", 5}, {"Ezekiel", 48}, {"Daniel", 12}, {"Hosea", 14}, {"Joel", 3},
      {"Amos", 9}, {"Obadiah", 1}, {"Jonah", 4}, {"Micah", 7}, {"Nahum", 3}, {"Habakkuk", 3}, {"Zephaniah", 3},
      {"Haggai", 2}, {"Zechariah", 14}, {"Malachi", 4}, {"Matthew", 28}, {"Mark", 16}, {"Luke", 24}, {"John", 21},
      {"Acts", 28}, {"Romans", 16}, {"1 Corinthians", 16}, {"2 Corinthians", 13}, {"Galatians", 6},
      {"Ephesians", 6}, {"Philippians", 4}, {"Colossians", 4}, {"1 Thessalonians", 5}, {"2 Thessalonians", 3},
      {"1 Timothy", 6}, {"2 Timothy", 4}, {"Titus", 3}, {"Philemon", 1}, {"Hebrews", 13}, {"James", 5},
      {"1 Peter", 5}, {"2 Peter", 3}, {"1 John", 5}, {"2 John", 1}, {"3 John", 1}, {"Jude", 1}, {"Revelation", 22}};
  std::vector<std::string> out;
  std::size_t index = 0;  // counted from 0 in Bible order, as kjv_split counts
  for (const Book& b : kBooks)
    for (std::size_t c = 1; c <= b.chapters; ++c, ++index)
      if (index % every == every - 1) out.push_back(std::string(b.name) + " " + std::to_string(c));
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
