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

// The two source articles the curriculum follows (both in Chinese), named as every chapter cites
// them, in the lesson's language: the article "Attention: from Seq2Seq to the Transformer
// revolution" (注意力机制：从 Seq2Seq 到 Transformer 的革命; its author, date and address are
// unknown to the course, and the citation says so) and its companion reference card "Attention
// mechanism" (注意力机制). Each returns the quoted title, for "the source article {}" and "the
// companion card {}"; the Chinese title appears only in the zh lesson.
std::string source_article();
std::string source_card();

}  // namespace attn
