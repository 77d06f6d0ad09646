// No NaN in, no NaN out, no crash on any file, and the printed story matches what was done — the
// programs run as a learner runs them, on poisoned copies of the shipped files in a temporary
// folder (never the checkout's data/):
//   - every FLOAT option of every chapter refuses nan, inf and -inf (exit 2, naming the flag);
//   - a checkpoint holding a NaN is refused by every loader (chapters 08, 09, 10 too), naming it;
//   - weights that are finite but absurd (1e38) stop the run naming the step and the tensor, never
//     a verdict printed on NaN, and chapter 10 no longer dies in LAPACK (it freed memory twice);
//   - tokenizer.json with the wrong JSON types, ids past 2^31 or a repeated merge: a message naming
//     the file, exit 1;
//   - --norm pre with a Post-Norm file, two identical seed files in chapter 10, and chapter 11 with
//     every naive row skipped say what happened instead of reporting the wrong model or "0%".
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "attn/data/data_files.hpp"
#include "attn/data/safetensors.hpp"
#include "../hostile_support.hpp"
#include "run_program.hpp"

using namespace attn;
namespace fs = std::filesystem;

namespace {

const char* const kChapters[] = {"00_seq2seq_bottleneck", "01_bahdanau", "02_luong", "03_self_attention",
                                 "04_multi_head", "05_positional_encoding", "06_efficient_attention",
                                 "07_cross_attention", "08_transformer", "09_modern_decoder",
                                 "10_interpretability", "11_fast_attention", "12_beyond_attention"};

// Sets one float of the first tensor (by name) to NaN, in place: the copy is otherwise intact.
void hn_poison_one(const fs::path& path) {
  Metadata m;
  TensorMap t = read_safetensors(path.string(), &m);
  t.begin()->second.data[t.begin()->second.data.size() / 2] = NAN;
  write_safetensors(path.string(), t, m);
}


}  // namespace

TEST_CASE("every FLOAT option of every chapter refuses nan, inf and -inf, naming the flag") {
  std::size_t options_seen = 0;
  for (const char* program : kChapters) {
    const RunResult help = run_program(program, {"--help"});
    REQUIRE(help.status == 0);
    const std::regex float_option(R"((--[a-z0-9-]+) FLOAT)");
    std::set<std::string> flags;
    for (std::sregex_iterator it(help.out.begin(), help.out.end(), float_option), end; it != end; ++it)
      flags.insert((*it)[1]);
    for (const std::string& flag : flags) {
      ++options_seen;
      for (const char* bad : {"nan", "NaN", "inf", "-inf", "1e999"}) {
        CAPTURE(program);
        CAPTURE(flag);
        CAPTURE(bad);
        const RunResult r = run_program(program, {flag, bad});
        CHECK(r.status == 2);
        CHECK(r.err_has(flag));
      }
    }
  }
  // 06 --max-full-mib, 08 --lr-factor, 09 --temperature and --top-p, 11 --max-naive-mib, 12 --train-lr
  CHECK(options_seen >= 6);
}

TEST_CASE("a checkpoint with one NaN is refused by chapters 08, 09 and 10, naming the file and the tensor") {
  const fs::path root = scratch_dir("hn-nan");
  for (const char* f : {"ch08", "ch09", "ch10"}) hostile::copy_data_folder(f, root);
  const std::vector<std::string> env = {"ATTN_DATA_DIR=" + root.string()};
  struct Case {
    const char* program;
    fs::path file;
    std::vector<std::string> args;
  };
  const std::vector<Case> cases = {
      {"08_transformer", root / "ch08/transformer_post.safetensors", {"--quiet"}},
      {"09_modern_decoder", root / "ch09/decoder_lm.safetensors", {"--quiet", "--tokens", "5"}},
      {"10_interpretability", root / "ch10/induction.safetensors", {"--quiet"}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.program);
    const std::string good = hostile::read_bytes(c.file);
    hn_poison_one(c.file);
    const RunResult r = run_program(c.program, c.args, env);
    CHECK(r.status == 1);
    CHECK(r.err_has(c.file.string()));
    CHECK(r.err_has("holds a non-finite value (nan)"));
    hostile::write_bytes(c.file, good);
  }
  // Chapter 08 named explicitly with --checkpoint, as the report's reproduction did.
  const fs::path copy = root / "mine.safetensors";
  fs::copy_file(root / "ch08/transformer_post.safetensors", copy);
  hn_poison_one(copy);
  const RunResult r = run_program("08_transformer", {"--quiet", "--checkpoint", copy.string()});
  CHECK(r.status == 1);
  CHECK(r.err_has("non-finite"));
  CHECK_FALSE(r.has("BLEU"));
  fs::remove_all(root);
}

TEST_CASE("weights of 1e38 stop chapters 01, 08 and 10 naming what turned non-finite; no crash, no verdict on NaN") {
  const fs::path root = scratch_dir("hn-huge");
  for (const char* f : {"ch01", "ch08", "ch10"}) hostile::copy_data_folder(f, root);
  const std::vector<std::string> env = {"ATTN_DATA_DIR=" + root.string()};
  const auto huge = [](float) { return 1e38f; };
  hostile::rewrite_checkpoint(root / "ch01/bahdanau.safetensors", root / "ch01/bahdanau.safetensors", huge);
  hostile::rewrite_checkpoint(root / "ch08/transformer_post.safetensors", root / "ch08/transformer_post.safetensors", huge);
  hostile::rewrite_checkpoint(root / "ch10/induction.safetensors", root / "ch10/induction.safetensors", huge);
  for (const char* program : {"01_bahdanau", "08_transformer", "10_interpretability"}) {
    CAPTURE(program);
    const RunResult r = run_program(program, {"--quiet"}, env);
    CHECK_FALSE(hostile::crashed(r.status, r.err));
    CHECK_MESSAGE(r.status == 1, r.err);
    CHECK(r.err_has("non-finite"));
    CHECK_FALSE(r.has("nan"));
    CHECK_FALSE(r.has("Takeaway"));
  }
  fs::remove_all(root);
}

TEST_CASE("tokenizer.json with wrong JSON types, huge ids or a repeated merge: the file named, exit 1") {
  const fs::path root = scratch_dir("hn-tok");
  hostile::copy_data_folder("ch09", root);
  const std::vector<std::string> env = {"ATTN_DATA_DIR=" + root.string()};
  const fs::path tok = root / "ch09/tokenizer.json";
  const std::string good = hostile::read_bytes(tok);
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    const std::size_t at = s.find(from);
    REQUIRE(at != std::string::npos);
    return s.replace(at, from.size(), to);
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {with("\"vocab_size\":512", "\"vocab_size\":\"512\""), "vocab_size"},
      {with("\"type\":\"byte-level BPE\"", "\"type\":5"), "byte-level BPE"},
      {with("\"counts\":[", "\"counts\":[\"many\","), "counts"},
      {with("[116,104]", "[4294967412,104]"), "merge 0"},
      {with("[32,256]", "[116,104]"), "already does"},  // merge 1 repeats merge 0
  };
  for (const auto& [text, what] : cases) {
    CAPTURE(what);
    hostile::write_bytes(tok, text);
    for (const std::vector<std::string>& args : {std::vector<std::string>{"--quiet", "--tokens", "5"},
                                                 std::vector<std::string>{"--quiet", "--prompt", "In the"}}) {
      const RunResult r = run_program("09_modern_decoder", args, env);
      CHECK_FALSE(hostile::crashed(r.status, r.err));
      CHECK(r.status == 1);
      CHECK(r.err_has(tok.string()));
      CHECK(r.err_has(what));
      CHECK_FALSE(r.err_has("[json.exception"));
    }
  }
  fs::remove_all(root);
}

TEST_CASE("--norm pre with a Post-Norm file is refused instead of narrated as Pre-Norm") {
  const RunResult r =
      run_program("08_transformer", {"--quiet", "--norm", "pre", "--checkpoint", require_data_file("ch08/transformer_post.safetensors")});
  CHECK(r.status == 1);
  CHECK(r.err_has("holds a Post-Norm model"));
  CHECK_FALSE(r.has("Pre-Norm Transformer: loaded"));
  const RunResult ok = run_program("08_transformer", {"--quiet", "--norm", "post"});
  CHECK_MESSAGE(ok.status == 0, ok.err);
}

TEST_CASE("chapter 10 with the same model in both seed files refuses the seed baseline") {
  const fs::path root = scratch_dir("hn-seeds");
  hostile::copy_data_folder("ch10", root);
  fs::copy_file(root / "ch10/induction_seed2.safetensors", root / "ch10/induction.safetensors",
                fs::copy_options::overwrite_existing);
  const RunResult r = run_program("10_interpretability", {"--quiet"}, {"ATTN_DATA_DIR=" + root.string()});
  CHECK(r.status == 1);
  CHECK(r.err_has("seed"));
  CHECK_FALSE(r.has("TVD 0.0000"));
  fs::remove_all(root);
}

TEST_CASE("chapter 11 with every naive row skipped says so, not 'naive reaches up to 0%'") {
  const RunResult r = run_program("11_fast_attention", {"--quiet", "--sizes", "256,512", "--dims", "64", "--heads", "2",
                                                        "--gpu-sizes", "256", "--max-naive-mib", "0.01"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(r.has("naive: skipped at every such size"));
  CHECK_FALSE(r.has("naive reaches up to 0%"));
  // The tiled rows are summed up, or, when the machine's load made every one of them noisy, said
  // to be left out (a shared machine can do that; the naive wording is what this case checks).
  CHECK((r.has("tiled up to") || r.has("tiled: no row there left to compare")));
}
