// Chapter 08's studies (attn/studies/transformer_study.hpp) on a tiny Transformer: gradient norms
// per layer group at initialisation, the warm-up study, the step timer, and the peer timing file.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "attn/present/transformer_report.hpp"
#include "attn/studies/transformer_study.hpp"
#include "tiny_transformer.hpp"

using namespace attn;
namespace fs = std::filesystem;

namespace {
ToyCorpus tiny_corpus(std::size_t min_len = 4, std::size_t max_len = 8) { return tiny_toy_corpus(min_len, max_len, 10); }

TransformerModelConfig tiny_model(const ToyCorpus& corpus) { return tiny_transformer_config(corpus, 1); }

std::string write_temp(const std::string& name, const std::string& text) {
  const fs::path p = fs::temp_directory_path() / name;
  std::ofstream(p) << text;
  return p.string();
}
}  // namespace

TEST_CASE("grad_norms_at_init: one finite, positive norm per layer group, the same for the same seed") {
  const ToyCorpus corpus = tiny_corpus(20, 20);  // it measures on sources of 20 words
  const TransformerModelConfig cfg = tiny_model(corpus);
  const LayerGradNorms a = grad_norms_at_init(cfg, corpus, 8, 3);
  const LayerGradNorms b = grad_norms_at_init(cfg, corpus, 8, 3);
  REQUIRE(a.layers.size() == a.norms.size());
  CHECK(a.layers.size() >= 4);  // embeddings, enc.0, dec.0, out at least
  CHECK(a.norms == b.norms);
  for (std::size_t i = 0; i < a.norms.size(); ++i) {
    INFO(a.layers[i]);
    CHECK(std::isfinite(a.norms[i]));
    // Post-Norm (the default) has no final norms: that group is empty, every other one learns.
    if (a.layers[i] == "final norms") CHECK(a.norms[i] == 0.0);
    else CHECK(a.norms[i] > 0.0);
  }
  const LayerGradNorms c = grad_norms_at_init(cfg, corpus, 8, 4);
  CHECK(c.norms != a.norms);
}

TEST_CASE("initial_predictions: the untrained model is not uniform, so an unrelated target costs more than ln V") {
  const ToyCorpus corpus = tiny_corpus(20, 20);
  const TransformerModelConfig cfg = tiny_model(corpus);
  const InitialPredictions a = initial_predictions(cfg, corpus, 8, 3);
  const double lnV = std::log(double(corpus.target_vocab.size()));
  CHECK(a.rows > 8);  // every target position of 8 sentences, <pad> left out
  CHECK(a.entropy > 0.0);
  CHECK(a.entropy < lnV);         // not uniform
  CHECK(a.unrelated_loss > lnV);  // −(1/V)·Σ ln p ≥ ln V, strictly for a p that is not uniform
  CHECK(initial_predictions(cfg, corpus, 8, 3).unrelated_loss == a.unrelated_loss);  // the same seed: the same bits
  CHECK(initial_predictions(cfg, corpus, 8, 4).unrelated_loss != a.unrelated_loss);
}

TEST_CASE("warmup_study: one run per norm × warm-up × seed, finite losses below the uniform guess") {
  const ToyCorpus corpus = tiny_corpus();
  const TransformerModelConfig cfg = tiny_model(corpus);
  WarmupStudyConfig sc;
  sc.steps = 20;
  sc.batch = 8;
  sc.warmup = 10;
  sc.seeds = {1};
  const std::vector<WarmupRun> runs = warmup_study(cfg, corpus, sc);
  REQUIRE(runs.size() == 4);
  for (const WarmupRun& r : runs) {
    CHECK(std::isfinite(r.final_loss));
    CHECK(r.final_loss < std::log(double(cfg.tgt_vocab)) + 1.0);  // label smoothing adds a little
  }
}

TEST_CASE("time_transformer_step: positive medians, the batch shape it timed") {
  const ToyCorpus corpus = tiny_corpus();
  const StepTiming t = time_transformer_step(tiny_model(corpus), corpus, 4, 5, 3);
  CHECK(t.median_ms > 0.0);
  CHECK(t.median_cpu_ms >= 0.0);
  CHECK(t.batch == 4);
  CHECK(t.src_len == 5);
  CHECK(t.tgt_len == 6);
  CHECK(t.reps == 3);
}

TEST_CASE("read_peer_step_time: reads the generator's JSON; refuses a missing, corrupt or incomplete file") {
  const std::string good = write_temp("attn_peer_good.json",
      R"({"pytorch_ms_per_step": 120.5, "pytorch_cpu_ms_per_step": 110.0, "batch": 64, "src_len": 30,)"
      R"( "tgt_len": 31, "threads": 1, "steps": 7, "torch": "1.13.0", "parameters": 240766,)"
      R"( "load_average_1min": 0.5})");
  const PeerStepTime p = read_peer_step_time(good);
  CHECK(p.framework == "PyTorch 1.13.0");
  CHECK(p.wall_ms == doctest::Approx(120.5));
  CHECK(p.cpu_ms == doctest::Approx(110.0));
  CHECK(p.batch == 64);
  CHECK(p.src_len == 30);
  CHECK(p.tgt_len == 31);
  CHECK(p.threads == 1);
  CHECK(p.parameters == 240766);
  CHECK(p.load_average == doctest::Approx(0.5));

  auto message_of = [](const std::string& path) {
    try {
      read_peer_step_time(path);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  const std::string missing = (fs::temp_directory_path() / "attn_peer_none.json").string();
  fs::remove(missing);
  CHECK(message_of(missing).find("attn_peer_none.json: cannot open") != std::string::npos);
  const std::string corrupt = write_temp("attn_peer_corrupt.json", "{\"pytorch_ms_per_step\": ");
  CHECK(message_of(corrupt).find("attn_peer_corrupt.json: not a peer timing file") != std::string::npos);
  const std::string partial = write_temp("attn_peer_partial.json", R"({"pytorch_ms_per_step": 1.0})");
  CHECK(message_of(partial).find("not a peer timing file") != std::string::npos);
  const std::string negative = write_temp("attn_peer_negative.json",
      R"({"pytorch_ms_per_step": -1, "pytorch_cpu_ms_per_step": 1, "batch": 1, "src_len": 1, "tgt_len": 2,)"
      R"( "threads": 1, "torch": "x", "parameters": 1, "load_average_1min": 0})");
  CHECK(message_of(negative).find("\"pytorch_ms_per_step\" is -1, not a number from") != std::string::npos);
  // 1e30 threads used to print "0 thread(s)" (a float cast to an integer); -4 wrapped to 2^64 − 4.
  for (const char* threads : {"1e30", "-4", "2.5", "\"2\""}) {
    CAPTURE(threads);
    const std::string odd = write_temp("attn_peer_threads.json",
        std::string(R"({"pytorch_ms_per_step": 1, "pytorch_cpu_ms_per_step": 1, "batch": 1, "src_len": 1, "tgt_len": 2,)") +
        R"( "torch": "x", "parameters": 1, "load_average_1min": 0, "threads": )" + threads + "}");
    CHECK(message_of(odd).find("\"threads\" is") != std::string::npos);
    fs::remove(odd);
  }
  for (const auto& f : {good, corrupt, partial, negative}) fs::remove(f);
}

TEST_CASE("peer_step_lines: no figure, another shape, or both figures with their date and no ratio") {
  StepTiming ours;
  ours.median_ms = 150.0;
  ours.median_cpu_ms = 50.0;
  ours.batch = 64;
  ours.src_len = 30;
  ours.tgt_len = 31;
  ours.reps = 7;
  const std::vector<std::string> none = peer_step_lines(ours, 1, 1000, std::nullopt);
  REQUIRE(none.size() == 1);
  CHECK(none[0].find("not measured") != std::string::npos);

  PeerStepTime p;
  p.framework = "PyTorch 1.13.0";
  p.wall_ms = 130.0;
  p.cpu_ms = 120.0;
  p.batch = 64;
  p.src_len = 30;
  p.tgt_len = 31;
  p.threads = 1;
  p.parameters = 1000;
  const std::vector<std::string> both = peer_step_lines(ours, 1, 1000, p);
  REQUIRE(both.size() == 3);
  CHECK(both[0].find("stored figure, not measured in this run") != std::string::npos);
  CHECK(both[0].find("120.0 ms CPU per step, 130.0 ms wall") != std::string::npos);
  CHECK(both[0].find("date not recorded") != std::string::npos);
  CHECK(both[0].find("batch 64 × 30 → 31, 1 thread:") != std::string::npos);
  // No machine in the file: said once, with what the script that wrote it did record.
  CHECK(both[1].find("machine: not recorded") != std::string::npos);
  CHECK(both[1].find("time.process_time") != std::string::npos);
  CHECK(both[1].find("did not wait") == std::string::npos);  // 120 vs 130 ms: it may have waited
  CHECK(both[2].find("50.0 ms CPU per step") != std::string::npos);
  CHECK(both[2].find("as fast") == std::string::npos);  // two runs: no speed ratio
  p.measured_on = "2026-12-01";
  p.machine = "Some CPU";
  const std::vector<std::string> dated = peer_step_lines(ours, 1, 1000, p);
  CHECK(dated[0].find("2026-12-01") != std::string::npos);
  CHECK(dated[1] == "machine: Some CPU");
  CHECK(peer_step_lines(ours, 2, 1000, p)[0].find("not compared") != std::string::npos);
  CHECK(peer_step_lines(ours, 1, 999, p)[0].find("not compared") != std::string::npos);
  p.wall_ms = p.cpu_ms;  // one value for both, timed separately: that run did not wait for a core
  const std::vector<std::string> same = peer_step_lines(ours, 1, 1000, p);
  REQUIRE(same.size() == 3);
  CHECK(same[1].find("Some CPU; its CPU and wall-clock times are equal") != std::string::npos);
  CHECK(same[2].find("50.0 ms CPU per step") != std::string::npos);
}
