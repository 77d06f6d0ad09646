// The curriculum: every chapter's number, folder (= program name in build/bin) and one line on
// what it teaches. The tour prints this list; each chapter's header uses its own entry.
#pragma once

#include <string>
#include <vector>

namespace attn {

struct ChapterInfo {
  std::string number;  // "03"
  std::string folder;  // "03_self_attention" (also the program's name)
  std::string title;   // "Self-attention"
  std::string teaches; // one line
};

const std::vector<ChapterInfo>& chapter_list();
// Throws std::out_of_range for an unknown number.
const ChapterInfo& chapter_info(const std::string& number);

}  // namespace attn
