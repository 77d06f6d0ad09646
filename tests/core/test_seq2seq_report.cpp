// Presentation and plumbing of chapters 00–02 (attn/present/seq2seq_report.hpp, parts of seq2seq_train.hpp
// and seq2seq_eval.hpp): the by-length table, the BLEU chart, results.json, getting a chapter's
// model (train / load / errors), the shipped-checkpoint lookup, the one-thread BLAS guard.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/tensor/openblas.hpp"
#include "attn/present/ch00_report.hpp"
#include "attn/present/chapter_models.hpp"
#include "attn/present/seq2seq_report.hpp"
#include "attn/present/terminal.hpp"

using namespace attn;
namespace fs = std::filesystem;

namespace {
EvalResult fake_result(double scale) {
  EvalResult r;
  for (const auto& b : default_length_buckets()) {
    BucketMetrics m;
    m.bucket = b;
    m.sentences = 10;
    m.bleu = scale * double(b.lo);
    m.exact = 12.25;  // rounds to 12.2 the way fmt prints it
    m.token_acc = 50.0;
    r.buckets.push_back(m);
  }
  r.overall = r.buckets.front();
  r.overall.bucket = {5, 60};
  return r;
}
}  // namespace

TEST_CASE("length_table: one row per bucket plus 'all', three columns per model") {
  const Table t = length_table({{"no_attention", fake_result(1.0)}, {"bahdanau", fake_result(0.5)}});
  CHECK(t.header().size() == 2 + 2 * 3);
  CHECK(t.header()[2] == "no_attention BLEU");
  CHECK(t.header()[5] == "bahdanau BLEU");
  REQUIRE(t.rows() == 7);
  CHECK(t.data()[0][0] == "5-10");
  CHECK(t.data()[0][2] == "5.0");
  CHECK(t.data()[5][5] == "25.5");
  CHECK(t.data()[6][0] == "all");
  CHECK(format_score(12.25) == "12.2");  // what a learner sees, printed with one decimal
  // Below 100 never reads as a perfect score: two decimals, cut, from 99.95 up; 100 itself is 100.0.
  CHECK(format_score(99.94) == "99.9");
  CHECK(format_score(99.95) == "99.95");
  CHECK(format_score(99.96) == "99.96");
  CHECK(format_score(99.999) == "99.99");
  CHECK(format_score(100.0) == "100.0");
}

TEST_CASE("bleu_chart: a bar per bucket and model, scaled to 0–100") {
  const std::string c = bleu_chart({{"no_attention", fake_result(1.0)}, {"bahdanau", fake_result(0.0)}}, 30);
  CHECK(c.find("51-60") != std::string::npos);
  CHECK(c.find("no_attention") != std::string::npos);
  CHECK(c.find("███████████████▎") != std::string::npos);  // 51 BLEU of 100 over 30 cells: 15.3 cells
  CHECK(c.find(" 0.0\n") != std::string::npos);
  CHECK(c.find("BLEU (0–100)") != std::string::npos);
  // the axis is as wide as the bars: "100" ends where a bar of BLEU 100 ends (30 cells here)
  const std::size_t axis = c.rfind("0 ─");
  REQUIRE(axis != std::string::npos);
  CHECK(display_width(c.substr(axis, c.find('\n', axis) - axis)) == 30);
  CHECK(c.find("► 100\n") != std::string::npos);
}

TEST_CASE("results_json: the figures as printed, and extra top-level fields") {
  const auto j = nlohmann::json::parse(results_json({{"bahdanau", fake_result(1.0)}}));
  CHECK(j["bleu_by_length"]["bahdanau"]["51-60"] == 51.0);
  CHECK(j["exact_match_by_length"]["bahdanau"]["5-10"] == 12.2);
  CHECK(j["token_accuracy_by_length"]["bahdanau"]["31-40"] == 50.0);
  CHECK(j["bleu_by_length"]["bahdanau"].size() == 6);
  const auto e = nlohmann::json::parse(results_json({{"bahdanau", fake_result(1.0)}}, R"({"train_ms_per_step": 3.5})"));
  CHECK(e["train_ms_per_step"] == 3.5);
  CHECK_THROWS_AS(results_json({}, "[1, 2]"), std::invalid_argument);
}

TEST_CASE("chapter_model: trains and saves, loads back the same, and names a missing file") {
  const fs::path dir = fs::temp_directory_path() / "attn-chapter-model";
  fs::remove_all(dir);
  fs::create_directories(dir);  // the folder holding the checkpoint's folder must exist; "sub" is made
  CorpusConfig cc;
  cc.n_train = 200;
  cc.n_valid = 20;
  cc.n_test = 0;
  cc.max_len = 6;
  const ToyCorpus c = make_toy_corpus(cc);
  TrainConfig tc;
  tc.steps = 3;
  tc.batch = 8;
  tc.valid_every = 0;
  const std::string path = (dir / "sub" / "m.safetensors").string();
  const ChapterModel trained = chapter_model("00", "no_attention", c, true, path, tc);
  CHECK(trained.trained);
  CHECK(fs::exists(path));
  CHECK(trained.training.train_losses.size() == 3);
  CHECK(describe_model(trained).find("trained now") != std::string::npos);
  const ChapterModel loaded = chapter_model("00", "no_attention", c, false, path, tc);
  CHECK_FALSE(loaded.trained);
  CHECK(loaded.model.out.w == trained.model.out.w);
  CHECK(loaded.metadata.at("steps") == "3");
  CHECK(describe_model(loaded).find("loaded") != std::string::npos);
  // The loaded model's time is said not comparable, unless the caller explains it once for all.
  CHECK(describe_model(loaded).find("not comparable") != std::string::npos);
  CHECK(describe_model(loaded, /*times_explained=*/true).find("not comparable") == std::string::npos);
  CHECK(describe_model(loaded, true).find("trained earlier in") != std::string::npos);
  CHECK_THROWS_WITH_AS(chapter_model("00", "bahdanau", c, false, (dir / "x.safetensors").string(), tc),
                       doctest::Contains("x.safetensors"), SafetensorsError);
  fs::remove_all(dir);
}

TEST_CASE("shipped_checkpoint finds data/chNN/<name>.safetensors next to the build folder") {
  const std::string p = shipped_checkpoint("01", "bahdanau");
  CHECK(p.size() > std::string("ch01/bahdanau.safetensors").size());
  CHECK(p.substr(p.size() - 25) == "ch01/bahdanau.safetensors");
  CHECK(fs::is_regular_file(p));
  CHECK(chapter_corpus_config().n_test == 1200);
}

TEST_CASE("SingleThreadBlas: one thread inside, the previous count restored after") {
  const int before = blas_info().threads;
  {
    SingleThreadBlas guard;
    CHECK(blas_info().threads == 1);
  }
  CHECK(blas_info().threads == before);
}

TEST_CASE("result_named finds a model's evaluation by name, or says which is missing") {
  std::vector<NamedResult> results(2);
  results[0].first = "luong_general";
  results[0].second.overall.bleu = 1.0;
  results[1].first = "bahdanau";
  results[1].second.overall.bleu = 2.0;
  CHECK(result_named(results, "bahdanau").overall.bleu == 2.0);
  CHECK(result_named(results, "luong_general").overall.bleu == 1.0);
  CHECK_THROWS_WITH_AS(result_named(results, "luong_dot"), doctest::Contains("luong_dot"), std::invalid_argument);
}

namespace {
int parse(ChapterApp& ch, std::vector<std::string> args) {
  args.insert(args.begin(), "prog");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  try {
    ch.app().parse(int(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    return e.get_exit_code();
  }
  return 0;
}
}  // namespace

TEST_CASE("ChapterModels: one set of flags, and where each model comes from") {
  SUBCASE("defaults: the shipped files, 1500 steps, the run's seed") {
    ChapterApp ch("02", 1, 7);
    ChapterModels models(ch, {"luong_dot", "luong_general"}, "luong_general");
    models.add_earlier("--bahdanau", "01", "bahdanau");
    REQUIRE(parse(ch, {}) == 0);
    CHECK_FALSE(models.train());
    CHECK(models.path_for("luong_dot") == shipped_checkpoint("02", "luong_dot"));
    CHECK(models.path_for("bahdanau") == shipped_checkpoint("01", "bahdanau"));
    CHECK_THROWS_WITH_AS(models.path_for("no_attention"), doctest::Contains("no_attention"), std::invalid_argument);
    std::ostringstream out;
    NarratorOptions opts;
    opts.seed = 42;
    Narrator nar(chapter_info("02"), opts, 7, out);
    const TrainConfig tc = models.train_config(nar);
    CHECK(tc.steps == TrainConfig{}.steps);
    CHECK(tc.seed == 42);
  }
  SUBCASE("--checkpoint names one model, --checkpoint-dir the others, --<flag> an earlier one") {
    ChapterApp ch("02", 1, 7);
    ChapterModels models(ch, {"luong_dot", "luong_general"}, "luong_general");
    models.add_earlier("--bahdanau", "01", "bahdanau");
    const std::string b = shipped_checkpoint("01", "bahdanau");  // an earlier model's file must be there
    REQUIRE(parse(ch, {"--train", "--checkpoint", "g.st", "--checkpoint-dir", "dir", "--bahdanau", b, "--steps", "7"}) == 0);
    CHECK(models.train());
    CHECK(models.is_own("luong_dot"));
    CHECK_FALSE(models.is_own("bahdanau"));
    CHECK(models.path_for("luong_general") == "g.st");
    CHECK(models.path_for("luong_dot") == "dir/luong_dot.safetensors");
    CHECK(models.path_for("bahdanau") == b);
    std::ostringstream out;
    Narrator nar(chapter_info("02"), {}, 7, out);
    CHECK(models.train_config(nar).steps == 7);
  }
  SUBCASE("a chapter with one model has no --checkpoint-dir; a bad --steps is a usage error") {
    ChapterApp ch("00", 1, 7);
    ChapterModels models(ch, {"no_attention"});
    CHECK(parse(ch, {"--checkpoint-dir", "x"}) != 0);
    ChapterApp ch2("00", 1, 7);
    ChapterModels models2(ch2, {"no_attention"});
    CHECK(parse(ch2, {"--steps", "0"}) != 0);
  }
  SUBCASE("an earlier chapter's model must be there: a missing file is a usage error while parsing") {
    ChapterApp ch("02", 1, 7);
    ChapterModels models(ch, {"luong_dot"});
    models.add_earlier("--bahdanau", "01", "bahdanau");
    CHECK(parse(ch, {"--bahdanau", "/nonexistent/b.st"}) != 0);
    CHECK(parse(ch, {"--bahdanau", shipped_checkpoint("01", "bahdanau")}) == 0);
  }
  SUBCASE("--checkpoint must name one of the chapter's own models") {
    ChapterApp ch("01", 1, 7);
    CHECK_THROWS_AS(ChapterModels(ch, {"bahdanau"}, "no_attention"), std::invalid_argument);
  }
}

TEST_CASE("fall_against_article: steeper when the whole percents differ, as steep when they are equal") {
  const double article = 1.0 - 18.7 / 35.2;  // 47% lower: the source article's fall
  const std::string steeper = fall_against_article(judge_at_least(0.86, article, 0.1));
  CHECK(steeper.find("steeper than the article's 47%") != std::string::npos);
  const std::string same = fall_against_article(judge_at_least(0.4705, article, 0.1));
  CHECK(same.find("as steep as the article's 47%") != std::string::npos);
  CHECK(same.find("steeper") == std::string::npos);
}
