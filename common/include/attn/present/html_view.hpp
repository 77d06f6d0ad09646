// An offline head view in the style of BertViz (Vig 2019): one self-contained HTML page (inline
// SVG and JavaScript, no network, no CDN) with the query tokens on the left, the key tokens on the
// right and a line between every pair whose opacity is the attention weight; a selector for the
// attention set (encoder, decoder, cross-attention, a chapter's heatmaps), the layer and the head,
// and the selected matrix as a heatmap grid below. The state is also read from the URL's hash,
// "#set=0&layer=1&head=2", so a page can be opened (or tested) on one head directly.
// Values outside [0, 1] (scores, not weights) are drawn scaled to their min..max; −∞ cells as 0.
#pragma once

#include <string>
#include <vector>

#include "attn/attention/attention_stats.hpp"

namespace attn {

// The page as a string. Throws ShapeError when a set's tokens do not match its layers' shapes.
std::string head_view_html(const std::string& title, const std::vector<AttentionSet>& sets);
// Writes the page atomically (a temporary file in the same folder, renamed over path); throws
// std::runtime_error naming the path when it cannot be written (the target is then untouched).
void write_head_view_html(const std::string& path, const std::string& title, const std::vector<AttentionSet>& sets);

}  // namespace attn
