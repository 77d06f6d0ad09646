// The narrator every chapter speaks through: a header naming the chapter, seed and BLAS kernel;
// numbered steps ("Step 2/6") with the formula and its source; tensors printed with name, shape
// and token labels (elided when large, --full shows all); heatmaps; tables; a "why" line per
// step; a closing takeaway. Every shown tensor is recorded for --export. With --quiet only
// results (tables marked as results, result lines, the takeaway) are printed.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>

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
};

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
  void show(const std::string& name, const Vec& v, const Labels& labels = {}, const std::string& caption = "");
  void show(const std::string& name, const Tensor3& t, const Labels& rows = {}, const Labels& cols = {},
            const std::string& caption = "", const std::string& slice_name = "head");
  // Heatmap of a matrix (recorded under `name` unless that name was already recorded).
  void heatmap(const std::string& name, const Mat& m, const Labels& rows = {}, const Labels& cols = {},
               const std::string& caption = "", HeatmapStyle style = {});
  // Record for --export without printing.
  void record(const std::string& name, const Mat& m);
  void record(const std::string& name, const Vec& v);
  void record(const std::string& name, const Tensor3& t);
  void record(const std::string& name, const Tensor4& t);
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
  // Writes the export (if asked) and checks that the chapter announced as many steps as it ran.
  void finish();

  bool quiet() const { return opts_.quiet; }
  const NarratorOptions& options() const { return opts_; }
  const ExportRecorder& recorder() const { return recorder_; }

 private:
  void pause_if_asked();
  void record_raw(const std::string& name, const Shape& shape, const float* data);
  std::ostream& out_;
  ChapterInfo info_;
  NarratorOptions opts_;
  int total_steps_;
  int step_ = 0;
  ExportRecorder recorder_;
  std::optional<std::string> json_;
};

}  // namespace attn
