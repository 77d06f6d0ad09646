// Chapter 05's length-extrapolation experiment: the task's targets by hand; a short training run
// lowers the loss; the shipped checkpoints (data/ch05, made by `05_positional_encoding --train`)
// reproduce the chapter's table. Pinned figures: loss ±2e-3, accuracy ±0.5 points (an OpenBLAS kernel
// may reorder float sums; the evaluation sets are fixed by seed).
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <unistd.h>

#include "attn/data/data_files.hpp"
#include "attn/studies/extrapolation.hpp"
#include "attn/data/safetensors.hpp"

using namespace attn;

TEST_CASE("recall data: the target is the value of the latest earlier token with the same key") {
  Rng rng(4);
  const RecallData d = make_recall_data(rng, 3, 40, 4, 8);
  for (std::size_t s = 0; s < 3; ++s)
    for (std::size_t t = 0; t < 40; ++t) {
      int want = -1;
      for (std::size_t j = 0; j < t; ++j)
        if (d.tokens[s][j] / 8 == d.tokens[s][t] / 8) want = d.tokens[s][j] % 8;
      CHECK(d.targets[s][t] == want);
    }
}

TEST_CASE("extrapolation model: training lowers the loss; learned positions stop at train_len") {
  ExtrapolationConfig cfg;
  cfg.steps = 150;
  Rng init(1);
  PositionModel m(PositionEncoding::Rope, cfg, init);
  Rng eval(99);
  const RecallData data = make_recall_data(eval, 50, cfg.train_len, cfg.keys, cfg.values);
  const double before = evaluate_extrapolation(m, data).loss;
  train_extrapolation(m, cfg);
  const ExtrapolationResult after = evaluate_extrapolation(m, data);
  CHECK(after.available);
  CHECK(after.loss < 0.8 * before);
  Rng init2(2);
  PositionModel learned(PositionEncoding::Learned, cfg, init2);
  Rng long_rng(3);
  CHECK_FALSE(evaluate_extrapolation(learned, make_recall_data(long_rng, 2, 2 * cfg.train_len, 4, 8)).available);
}

TEST_CASE("extrapolation table from the shipped checkpoints (the figures chapter 05 prints); they load unchanged") {
  // encoding, then (loss, accuracy) at L = 16, 2L, 4L; −1: no row (learned table).
  struct Row { PositionEncoding e; double v[6]; };
  const Row want[] = {
      {PositionEncoding::None, {0.694, 0.637, 1.111, 0.482, 1.477, 0.376}},
      {PositionEncoding::Sinusoidal, {0.024, 0.995, 3.815, 0.681, 6.602, 0.417}},
      {PositionEncoding::Learned, {0.009, 0.998, -1, -1, -1, -1}},
      {PositionEncoding::Rope, {0.020, 0.995, 0.274, 0.966, 3.097, 0.719}},
      {PositionEncoding::Alibi, {0.041, 0.984, 0.086, 0.974, 0.123, 0.966}},
  };
  const ExtrapolationConfig cfg;
  for (const Row& r : want) {
    const auto path = find_data_file(std::string("ch05/") + position_encoding_name(r.e) + ".safetensors");
    REQUIRE_MESSAGE(path.has_value(), "missing checkpoint for " << position_encoding_name(r.e));
    Rng init(cfg.seed + std::uint64_t(r.e));
    PositionModel m(r.e, cfg, init);
    Metadata meta;
    load_checkpoint(*path, m.registry(), /*allow_extra=*/false, &meta);
    {  // the file loads unchanged: saved back from the model, it is the same bytes
      const std::string again = (std::filesystem::temp_directory_path() /
                                 ("attn-ch05-again-" + std::to_string(::getpid()) + ".safetensors")).string();
      save_checkpoint(again, m.registry(), meta);
      auto bytes = [](const std::string& p) {
        std::ifstream f(p, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(f), {});
      };
      CHECK(bytes(again) == bytes(*path));
      std::filesystem::remove(again);
    }
    const std::vector<ExtrapolationResult> row = extrapolation_table_row(m, cfg);
    for (std::size_t i = 0; i < 3; ++i) {
      INFO(position_encoding_name(r.e) << " at length " << row[i].length);
      if (r.v[2 * i] < 0) {
        CHECK_FALSE(row[i].available);
        continue;
      }
      REQUIRE(row[i].available);
      CHECK(std::abs(row[i].loss - r.v[2 * i]) < 2e-3);
      CHECK(std::abs(row[i].accuracy - r.v[2 * i + 1]) < 0.005);
    }
  }
}
