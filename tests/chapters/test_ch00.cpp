// Chapter 00 end to end, from the shipped checkpoint data/ch00/no_attention.safetensors:
// every step runs; the by-length figures (results.json, as printed) are pinned, so a change in the
// corpus, the model code, the evaluation or the checkpoint shows here; the "done when"
// (BLEU falls ≥ 50% from 5-10 to 51-60); exported tensors recompute; a missing or corrupt
// --checkpoint is an error naming the file (exit 1); bad flags exit 2.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "attn/data/npy.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "check_chapter.hpp"
#include "seq2seq_pins.hpp"

using namespace attn;
using seq2seq_pins::check_pinned;
using seq2seq_pins::kBuckets;
using seq2seq_pins::read_json;
namespace fs = std::filesystem;

namespace {
const char* kProgram00 = "00_seq2seq_bottleneck";
}  // namespace

TEST_CASE("chapter 00 runs every step from the shipped checkpoint") {
  const RunResult r = check_chapter_runs(kProgram00, {"--no-color"});
  CHECK(r.has("Chapter 00 · The Seq2Seq bottleneck"));
  CHECK(r.has("no attention (c = h_S): loaded"));
  CHECK(r.has("encoder_states (9×128)"));
  CHECK(r.has("context (128)"));
  CHECK(r.has("source length  sentences  no_attention BLEU  exact %  tok %"));
  CHECK(r.has("0 ─── BLEU (0–100) ───► 100"));
  CHECK(r.has("first five words right:"));
  CHECK(r.has("Takeaway"));
}

TEST_CASE("chapter 00 reproduces the pinned BLEU / exact / token accuracy by length") {
  const fs::path dir = scratch_dir("ch00-export");
  const RunResult r = run_program(kProgram00, {"--quiet", "--export", dir.string()});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto j = read_json(dir / "results.json");
  // Pinned from the shipped checkpoint, to the printed precision (one decimal; evaluation is
  // deterministic: greedy decoding, one OpenBLAS thread, fixed corpus seed).
  check_pinned(j, "no_attention",
               std::vector<std::array<double, 3>>{{68.4, 50.5, 82.0}, {24.7, 0.0, 33.4}, {13.6, 0.0, 18.6}, {11.9, 0.0, 12.3}, {10.2, 0.0, 9.7}, {9.9, 0.0, 8.2}});
  // Done when: no-attention BLEU falls by at least 50% from 5-10 to 51-60.
  const double first = j["bleu_by_length"]["no_attention"]["5-10"], last = j["bleu_by_length"]["no_attention"]["51-60"];
  CHECK(last <= 0.5 * first);
  // The quiet run still prints the results table.
  CHECK(r.has("no_attention BLEU"));
  CHECK_FALSE(r.has("Step 1/"));
}

TEST_CASE("chapter 00 --export: the contract, and the tensors recompute") {
  const fs::path dir = scratch_dir("ch00-export2");
  const RunResult r = run_program(kProgram00, {"--quiet", "--export", dir.string()});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto j = read_json(dir / "manifest.json");
  CHECK(j["chapter"] == "00");
  std::set<std::string> names;
  for (const auto& t : j["tensors"]) names.insert(t["name"].get<std::string>());
  for (const char* n : {"src_embeddings", "encoder_states", "context", "decoder_states", "decoder_logits", "position_accuracy"})
    CHECK_MESSAGE(names.count(n) == 1, "missing export " << std::string(n));
  const Mat H = npy_to_mat(read_npy((dir / "encoder_states.npy").string()), "encoder_states");
  const Vec c = npy_to_vec(read_npy((dir / "context.npy").string()), "context");
  // c = h_S: the last encoder state, exactly.
  CHECK(max_abs_diff(c, row_of(H, H.shape(0) - 1)) == 0.0);
  const Mat pa = npy_to_mat(read_npy((dir / "position_accuracy.npy").string()), "position_accuracy");
  CHECK(pa.shape(0) == 6);
  CHECK(pa.shape(1) == 7);
}

TEST_CASE("chapter 00: a missing or corrupt checkpoint is a clear error") {
  const fs::path dir = scratch_dir("ch00-bad");
  fs::create_directories(dir);
  RunResult r = run_program(kProgram00, {"--quiet", "--checkpoint", (dir / "nope.safetensors").string()});
  CHECK(r.status == 1);
  CHECK(r.err_has("error: "));
  CHECK(r.err_has("nope.safetensors"));
  { std::ofstream(dir / "bad.safetensors") << "\x10\x00\x00\x00\x00\x00\x00\x00{\"a\": 1}"; }
  r = run_program(kProgram00, {"--quiet", "--checkpoint", (dir / "bad.safetensors").string()});
  CHECK(r.status == 1);
  CHECK(r.err_has("bad.safetensors"));
  fs::remove_all(dir);
}

TEST_CASE("chapter 00: bad flags exit 2 naming the flag") {
  RunResult r = run_program(kProgram00, {"--steps", "0"});
  CHECK(r.status == 2);
  CHECK((r.err_has("--steps") || r.has("--steps")));
  r = run_program(kProgram00, {"--no-such-flag"});
  CHECK(r.status == 2);
}
