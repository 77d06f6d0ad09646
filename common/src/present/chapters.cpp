// The chapter list (see attn/present/chapters.hpp). Keep in step with README.md's chapter table.
#include "attn/present/chapters.hpp"

#include <stdexcept>

#include "attn/present/i18n.hpp"

namespace attn {

const std::vector<ChapterInfo>& chapter_list() {
  static const std::vector<ChapterInfo> list = {
      {"00", "00_seq2seq_bottleneck", N_("The Seq2Seq bottleneck"), N_("one fixed context vector, and BLEU falling with sentence length")},
      {"01", "01_bahdanau", N_("Bahdanau attention"), N_("additive scores e, weights α, context c; alignment heatmaps")},
      {"02", "02_luong", N_("Luong attention"), N_("dot / general / concat scores, global vs local-p, measured cost")},
      {"03", "03_self_attention", N_("Self-attention"), N_("Q, K, V; softmax(QKᵀ/√d_k)V; masks; why √d_k; permutation")},
      {"04", "04_multi_head", N_("Multi-head attention"), N_("split, per-head attention, concat, W_O; MQA and GQA")},
      {"05", "05_positional_encoding", N_("Positional encodings"), N_("sinusoidal, learned, RoPE, ALiBi; length extrapolation")},
      {"06", "06_efficient_attention", N_("Efficient attention"), N_("window, BigBird, linear, tiled online softmax, KV cache")},
      {"07", "07_cross_attention", N_("Cross-attention"), N_("queries from one sequence, keys and values from another")},
      {"08", "08_transformer", N_("The Transformer"), N_("encoder-decoder, causal mask, training, decoding")},
      {"09", "09_modern_decoder", N_("A modern decoder"), N_("RMSNorm, SwiGLU, RoPE, GQA, KV and paged caches; a 1M-parameter LM")},
      {"10", "10_interpretability", N_("Interpretability"), N_("head patterns, attention vs gradients, perturbation")},
      {"11", "11_fast_attention", N_("Fast attention"), N_("roofline, a tiled CPU kernel measured against sgemm, CUDA kernels")},
      {"12", "12_beyond_attention", N_("Beyond softmax attention"), N_("state-space layers, linear recurrences, hybrids; the recall wall")},
  };
  return list;
}

const ChapterInfo& chapter_info(const std::string& number) {
  for (const auto& c : chapter_list())
    if (c.number == number) return c;
  throw std::out_of_range("no chapter numbered " + number);
}

std::string source_article() {
  // The course holds the article's text (shared/seeds) but no author, date or address for it, so
  // the citation says so; the Chinese title is the zh lesson's (po/zh_CN.po), not the English one's.
  return _("\"Attention: from Seq2Seq to the Transformer revolution\" (a Chinese-language article; its author, "
           "date and address are unknown to this course)");
}

std::string source_card() { return _("\"Attention mechanism\" (注意力机制)"); }

}  // namespace attn
