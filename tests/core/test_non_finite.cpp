// No NaN in, no NaN out (the core half; the programs are in tests/chapters/test_hostile_numbers.cpp):
// the float-option check, the safetensors reader's finiteness and size checks, the optimisers'
// divergence stop, the narrator's refusal to print a NaN, copying_score on a NaN matrix, the BPE
// file's types and ids, and chapter 05's final-loss mean for runs shorter than 100 steps.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "attn/attention/attention_stats.hpp"
#include "attn/data/bpe.hpp"
#include "attn/data/safetensors.hpp"
#include "attn/nn/optim.hpp"
#include "attn/present/cli.hpp"
#include "attn/present/narrate.hpp"
#include "attn/studies/extrapolation.hpp"
#include "../hostile_support.hpp"

using namespace attn;
namespace fs = std::filesystem;

namespace {
std::string nf_check(const CLI::Validator& v, std::string s) { return v(s); }
}  // namespace

TEST_CASE("finite_range refuses nan, ±inf and overflow, and values outside its bounds") {
  const CLI::Validator v = finite_range(0.01, 10.0);
  for (const char* bad : {"nan", "NaN", "-nan", "inf", "-inf", "infinity", "1e999"}) {
    CAPTURE(bad);
    CHECK(nf_check(v, bad).find("not a finite number") != std::string::npos);
  }
  CHECK(nf_check(v, "0.001").find("not in 0.01 … 10") != std::string::npos);
  CHECK(nf_check(v, "11") != "");
  CHECK(nf_check(v, "abc") != "");
  CHECK(nf_check(v, "0.01") == "");
  CHECK(nf_check(v, "10") == "");
  CHECK(nf_check(v, "2.5") == "");
  CHECK(finite_number_problem("3") == "");
  CHECK(finite_number_problem("nan") != "");
  CHECK(v.get_description() == "FLOAT in [0.01 - 10]");
}

TEST_CASE("read_safetensors refuses a NaN or ±inf in any tensor, and a shape larger than the file") {
  const fs::path dir = hostile::fresh_dir("nf-st");
  const std::string path = (dir / "m.safetensors").string();
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()}) {
    CAPTURE(bad);
    write_safetensors(path, {{"curve", TensorF32{{3}, {1.0f, bad, 2.0f}}}, {"w", TensorF32{{1}, {1.0f}}}});
    CHECK_THROWS_WITH_AS(read_safetensors(path), doctest::Contains("tensor 'curve' holds a non-finite value"),
                         SafetensorsError);
    CHECK_THROWS_WITH_AS(read_safetensors(path), doctest::Contains(path.c_str()), SafetensorsError);
  }
  // Denormals and the largest float are finite: read as they are.
  const float tiny = std::numeric_limits<float>::denorm_min(), big = std::numeric_limits<float>::max();
  write_safetensors(path, {{"w", TensorF32{{2}, {tiny, big}}}});
  CHECK(read_safetensors(path).at("w").data == std::vector<float>{tiny, big});

  // One dimension of 2^62 with no data: count·4 wraps to 0 bytes, which matched the empty span.
  const std::string header = R"({"w":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,0]}})";
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[std::size_t(i)] = char((header.size() >> (8 * i)) & 0xff);
  std::ofstream(path, std::ios::binary) << bytes << header;
  CHECK_THROWS_WITH_AS(read_safetensors(path), doctest::Contains("larger than the whole file"), SafetensorsError);
  fs::remove_all(dir);
}

TEST_CASE("Adam and SGD stop on a NaN gradient or learning rate, naming the step and the parameter") {
  Mat w = xt::ones<float>({std::size_t(2), std::size_t(2)}), g = xt::zeros<float>({std::size_t(2), std::size_t(2)});
  ParamRegistry reg;
  reg.add("layer.w", w, g);
  Adam adam(reg, AdamConfig{});
  g(0, 0) = 0.5f;
  adam.step();  // finite: fine
  const Mat before = w;
  g(1, 0) = std::numeric_limits<float>::quiet_NaN();
  CHECK_THROWS_WITH_AS(adam.step(), doctest::Contains("Adam step 2: the gradient of 'layer.w' is nan at index 2"),
                       TrainingDivergedError);
  CHECK(w == before);  // refused before anything changed
  g(1, 0) = 0.1f;
  CHECK_THROWS_WITH_AS(adam.step(std::numeric_limits<float>::quiet_NaN()),
                       doctest::Contains("Adam step 2: the learning rate is nan"), TrainingDivergedError);
  CHECK(w == before);
  CHECK(adam.steps_taken() == 1);  // a refused step is not counted (nor is Adam's bias correction moved)
  Sgd sgd(reg, SgdConfig{});
  CHECK_THROWS_WITH_AS(sgd.step(std::numeric_limits<float>::infinity()), doctest::Contains("SGD step 1"),
                       TrainingDivergedError);
  // A finite step that overflows a weight.
  g(0, 0) = 1e30f;
  CHECK_THROWS_WITH_AS(sgd.step(1e10f), doctest::Contains("weight 'layer.w' became"), TrainingDivergedError);
}

TEST_CASE("non_finite_word finds NaN and infinity written as numbers, not words that contain them") {
  CHECK(non_finite_word("Post-Norm is -nan% lower") == "-nan");
  CHECK(non_finite_word("loss nan after 3 steps") == "nan");
  CHECK(non_finite_word("above the diagonal: -nan") == "-nan");
  CHECK(non_finite_word("running max m = -inf") == "");  // −∞ by design
  CHECK(non_finite_word("ratio inf") == "inf");
  CHECK(non_finite_word("information, infinite, nanometre, Finland, banana") == "");
  CHECK(non_finite_word("the word 'nan' as the learner typed it") == "");
  CHECK(non_finite_word("loss 2.31, accuracy 0.98") == "");
  CHECK(non_finite_word("−∞ is a masked score") == "");
}

TEST_CASE("the narrator refuses a NaN result line, table cell or takeaway, naming the step") {
  std::ostringstream out;
  NarratorOptions opts;
  Narrator nar(chapter_info("03"), opts, 3, out);
  nar.step("Score every pair");
  Mat m = xt::zeros<float>({std::size_t(2), std::size_t(2)});
  m(0, 1) = -std::numeric_limits<float>::infinity();  // a masked score
  m(1, 1) = std::numeric_limits<float>::quiet_NaN();  // a cell with nothing to measure
  nar.show("scores", m);
  nar.step("Compare");
  CHECK_THROWS_WITH_AS(nar.result("Post-Norm is -nan% lower"), doctest::Contains("step 2 (Compare)"), NonFiniteError);
  Table t({"model", "BLEU"});
  t.add({"nan", "12.5"});  // a row named by a learner's word is fine
  nar.table(t);
  t.add({"post", "nan"});
  CHECK_THROWS_AS(nar.table(t), NonFiniteError);
  nar.step("End");
  CHECK_THROWS_AS(nar.takeaway({"tiled is inf times faster"}), NonFiniteError);
  CHECK(out.str().find("Takeaway") == std::string::npos);  // nothing half-printed
  nar.takeaway({"tiled is 3x faster"});
}

TEST_CASE("copying_score refuses a non-finite matrix instead of handing it to LAPACK") {
  Mat m = xt::eye<float>(3);
  CHECK(copying_score(m) == doctest::Approx(1.0));
  m(1, 2) = std::numeric_limits<float>::infinity();
  CHECK_THROWS_WITH_AS(copying_score(m), doctest::Contains("holds inf at (1, 2)"), std::domain_error);
  m(1, 2) = std::numeric_limits<float>::quiet_NaN();
  CHECK_THROWS_AS(copying_score(m), std::domain_error);
}

TEST_CASE("bpe_load: wrong JSON types, ids past 2^31 and repeated merges are BpeErrors naming the file") {
  const fs::path dir = hostile::fresh_dir("nf-bpe");
  const std::string path = (dir / "tokenizer.json").string();
  const std::string ok = R"({"type":"byte-level BPE","vocab_size":258,"merges":[[116,104],[256,101]],"counts":[5,3]})";
  std::ofstream(path) << ok;
  CHECK(bpe_load(path).vocab_size() == 258);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"type":5,"merges":[]})", "not a byte-level BPE file"},
      {R"({"type":"byte-level BPE","vocab_size":"258","merges":[[116,104],[256,101]]})", "found a JSON string: \"258\""},
      {R"({"type":"byte-level BPE","merges":[[116,104],[256,101]],"counts":[5,"many"]})", "count 1 is not"},
      {R"({"type":"byte-level BPE","merges":[[116,104],[256,101]],"counts":[5,-3]})", "count 1 is not"},
      {R"({"type":"byte-level BPE","merges":[[4294967412,104]]})", "merge 0 is not a pair of ids"},
      {R"({"type":"byte-level BPE","merges":[[116,-1]]})", "merge 0 is not a pair of ids"},
      {R"({"type":"byte-level BPE","merges":[[116,104.5]]})", "merge 0 is not a pair of ids"},
      {R"({"type":"byte-level BPE","merges":[[116,104],[116,104]]})", "as merge 0 already does"},
      {R"({"type":"byte-level BPE","merges":{"a":1}})", "found \"merges\" as a JSON object"},
      {R"([1,2,3])", "not a byte-level BPE file: expected a JSON object"},
      {R"({"merges":[]})", "found no \"type\""},
      {R"({"type":"BPE","merges":[]})", "found \"type\": \"BPE\""},
      {R"({"type":"byte-level BPE","merges":[[116,104]],"counts":[1,2]})", "expected an array of 1, found 2 entries"},
      {R"({"type":"byte-level BPE","vocab_size":300,"merges":[[116,104]]})", "says 300 but its 1 merges give 257"},
      {R"({"type":"byte-level BPE","merges":[[300,104]]})", "merge 0 joins ids 300 and 104 but only ids 0 … 255 exist"},
      {"{\"type\": \"byte-level BPE\", \"merges\": [", "expected JSON, found text that is not: parse error"},
  };
  for (const auto& [text, what] : cases) {
    CAPTURE(text);
    std::ofstream(path, std::ios::trunc) << text;
    CHECK_THROWS_WITH_AS(bpe_load(path), doctest::Contains(what.c_str()), BpeError);
    // Which file and what is wrong, for a learner: never a C++ function's name or the JSON library's code.
    CHECK_THROWS_WITH_AS(bpe_load(path), doctest::Contains(("tokenizer " + path + ": ").c_str()), BpeError);
    try {
      (void)bpe_load(path);
    } catch (const BpeError& e) {
      const std::string msg = e.what();
      CHECK(msg.find("bpe_") == std::string::npos);
      CHECK(msg.find("[json.exception") == std::string::npos);
    }
  }
  // A file that cannot be read says so, and why; a path with a newline is shown escaped.
  CHECK_THROWS_WITH_AS(bpe_load((dir / "missing.json").string()), doctest::Contains("cannot be read: No such file"),
                       BpeError);
  CHECK_THROWS_WITH(bpe_load((dir / "a\nb.json").string()), doctest::Contains("a\\nb.json cannot be read"));
  fs::remove_all(dir);
}

TEST_CASE("train_extrapolation's final loss is the mean over the steps it ran when fewer than 100") {
  ExtrapolationConfig cfg;
  cfg.steps = 1;
  Rng rng(1);
  PositionModel m(PositionEncoding::Sinusoidal, cfg, rng);
  const double one = train_extrapolation(m, cfg);
  // A first step of an untrained model: about ln(values), not a hundredth of it.
  CHECK(one > 0.5 * std::log(double(cfg.values)));
  CHECK(one < 2.0 * std::log(double(cfg.values)));
}
