// The narrator every chapter speaks through: a header naming the chapter, seed and BLAS kernel;
// numbered steps ("Step 2/6") with the formula and its source; tensors printed with name, shape
// and token labels (elided when large, --full shows all); heatmaps; tables; a "why" line per
// step; a closing takeaway. Every shown tensor is recorded for --export; every heatmap, every
// shown (heads, T_q, T_k) tensor whose rows are distributions and every attention_view() goes
// into the --html page. With --quiet only results (tables marked as results, result lines, the
// takeaway) are printed.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "attn/attention/attention_stats.hpp"
#include "attn/present/chapters.hpp"
#include "attn/present/export.hpp"
#include "attn/present/table.hpp"
#include "attn/tensor/tensor.hpp"
#include "attn/present/terminal.hpp"

namespace attn {

struct NarratorOptions {
  std::uint64_t seed = 0;
  bool quiet = false;
  bool color = false;
  bool full = false;
  bool pause = false;  // --step: wait for Enter after each step (only when stdin is a terminal)
  std::optional<std::string> export_dir;
  std::optional<std::string> html_file;  // --html FILE: every heatmap and attention view, one page
};

// The header's kernel: OpenBLAS's own name for it (openblas_get_corename), marked
// "(OPENBLAS_CORETYPE)" when the user's OPENBLAS_CORETYPE chose it, and "(OPENBLAS_CORETYPE=X not
// recognised)" when the user set it but OpenBLAS reports another kernel (it ignores an unknown
// name silently). reexec: the variable was set by ensure_fast_openblas's restart, not the user.
std::string blas_kernel_note(const std::string& kernel, const char* user_coretype, bool reexec);
// The header's lines: "left   right" on one line ending at column 92 when that fits in 100
// columns, else left, then right on its own line(s) right-aligned at column 92. No line is wider
// than 100 columns, whatever the language and the kernel note.
std::vector<std::string> header_lines(const std::string& left, const std::string& right);

// A chapter's computation turned NaN or infinite (weights of 1e38, zeros, denormals…): the narrator
// stops the run rather than print a result line, a table cell or a takeaway built on it. The
// message names the step and quotes the line. (Tensors are not checked: a NaN there may mark a
// cell with nothing to measure, e.g. a sentence length the test set lacks.)
class NonFiniteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// The first number in text written as NaN or +infinity ("nan", "-nan", "inf", "nan%"), as a word of
// its own and outside quotes (a quoted token may be the learner's own word), or "". "-inf" is not
// one: a masked score and the online softmax's starting maximum are −∞ by design.
std::string non_finite_word(const std::string& text);

class Narrator {
 public:
  Narrator(ChapterInfo info, NarratorOptions opts, int total_steps, std::ostream& out);

  // The chapter header: title, seed, OpenBLAS kernel and threads.
  void header(const std::string& question);
  // Starts step k of N: "Step k/N  title   formula   source".
  void step(const std::string& title, const std::string& formula = "", const std::string& source = "");
  void say(const std::string& text);  // a narration line
  void why(const std::string& text);  // "why: …", the reason for the step
  // "code: attn/attention/self_attention.hpp: self_attention" — where the step's computation lives.
  void code(const std::string& where);
  // A result line: printed even with --quiet.
  void result(const std::string& text);

  // Print and record a tensor (name = export identifier).
  void show(const std::string& name, const Mat& m, const Labels& rows = {}, const Labels& cols = {},
            const std::string& caption = "");
  // The same in a style of its own (e.g. keep_cols: the columns a narration cites stay in view);
  // --full still shows everything.
  void show(const std::string& name, const Mat& m, const Labels& rows, const Labels& cols, const std::string& caption,
            MatrixStyle style);
  void show(const std::string& name, const Vec& v, const Labels& labels = {}, const std::string& caption = "");
  void show(const std::string& name, const Tensor3& t, const Labels& rows = {}, const Labels& cols = {},
            const std::string& caption = "", const std::string& slice_name = "head");
  // Heatmap of a matrix (recorded under `name` unless that name was already recorded).
  void heatmap(const std::string& name, const Mat& m, const Labels& rows = {}, const Labels& cols = {},
               const std::string& caption = "", HeatmapStyle style = {});
  // Adds every layer × head of a model's attention to the --html page (prints nothing).
  void attention_view(const AttentionSet& set);
  // Record for --export without printing.
  void record(const std::string& name, const Mat& m);
  void record(const std::string& name, const Vec& v);
  void record(const std::string& name, const Tensor3& t);
  void record(const std::string& name, const Tensor4& t);
  // The tokens an exported tensor's axes carry, written beside it in manifest.json, and shown on the
  // --html page's view of that name (recorded before this call).
  void record_tokens(const std::string& name, const Labels& query_tokens, const Labels& key_tokens);
  // An extra top-level entry of the export's manifest.json (value: JSON text).
  void manifest_field(const std::string& key, const std::string& json_value);

  // A whole file for --export (e.g. "results.json"), written with the tensors; nothing printed.
  void export_file(const std::string& file, std::string bytes) { recorder_.add_file(file, std::move(bytes)); }
  // A table; as_result = true keeps it in --quiet runs.
  void table(const Table& t, bool as_result = false);
  // Preformatted lines (a chart) printed as they are; left out with --quiet.
  void block(const std::string& text);
  // The chapter's machine-readable document for --json (ChapterApp::add_json_flag): kept here and
  // printed on stdout by ChapterApp after the run, while the narration goes to stderr.
  void json(std::string document) { json_ = std::move(document); }
  const std::optional<std::string>& json_document() const { return json_; }
  // The closing lines: what was measured and what it means (always printed).
  void takeaway(const std::vector<std::string>& lines);
  // Writes the export and the page (if asked) and checks that the chapter announced as many steps
  // as it ran. ChapterApp::run calls it after the chapter's body; a second call does nothing.
  void finish();

  bool quiet() const { return opts_.quiet; }
  const NarratorOptions& options() const { return opts_; }
  const ExportRecorder& recorder() const { return recorder_; }

 private:
  void pause_if_asked();
  // Throws NonFiniteError when text prints a non-finite number (see non_finite_word).
  void refuse_non_finite_text(const std::string& text) const;
  void record_raw(const std::string& name, const Shape& shape, const float* data);
  std::ostream& out_;
  ChapterInfo info_;
  NarratorOptions opts_;
  int total_steps_;
  int step_ = 0;
  bool finished_ = false;
  std::string step_title_;  // the current step's title, for NonFiniteError's message
  ExportRecorder recorder_;
  std::optional<std::string> json_;
  std::vector<AttentionSet> html_views_;
};

}  // namespace attn
