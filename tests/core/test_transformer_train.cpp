// Training and checkpoints of the Transformer (attn/models/transformer_train.hpp): the learning-rate
// schedule with and without warm-up, a short deterministic run that lowers the loss, and
// checkpoints (round trip with curves, wrong model, missing, misshapen and extra tensors).
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

#include "attn/models/transformer_train.hpp"
#include "tiny_transformer.hpp"

using namespace attn;
namespace fs = std::filesystem;

TEST_CASE("transformer learning rate: warm-up then inverse square root; without warm-up the peak from step 1") {
  TransformerTrainConfig tc;
  tc.warmup = 400;
  tc.lr_factor = 1.0;
  const double peak = 1.0 / std::sqrt(64.0) / std::sqrt(400.0);
  CHECK(transformer_learning_rate(tc, 64, 400) == doctest::Approx(peak));
  CHECK(transformer_learning_rate(tc, 64, 100) == doctest::Approx(peak / 4));
  CHECK(transformer_learning_rate(tc, 64, 1600) == doctest::Approx(peak / 2));
  tc.use_warmup = false;
  CHECK(transformer_learning_rate(tc, 64, 1) == doctest::Approx(peak));
  CHECK(transformer_learning_rate(tc, 64, 1600) == doctest::Approx(peak / 2));
}

TEST_CASE("transformer training: deterministic, the loss falls, curves recorded; checkpoints round trip") {
  CorpusConfig cc;
  cc.n_train = 300;
  cc.n_valid = 20;
  cc.n_test = 20;
  cc.max_len = 8;
  const ToyCorpus corpus = make_toy_corpus(cc);
  const TransformerModelConfig cfg = tiny_transformer_config(corpus, 1);
  TransformerTrainConfig tc;
  tc.steps = 40;
  tc.batch = 16;
  tc.warmup = 10;
  tc.valid_every = 20;
  const TransformerTrainResult a = train_transformer(cfg, corpus, tc), b = train_transformer(cfg, corpus, tc);
  REQUIRE(a.train_losses.size() == 40);
  CHECK(a.train_losses == b.train_losses);
  CHECK(a.grad_norms.size() == 40);
  CHECK(a.valid.size() == 2);
  double first = 0, last = 0;
  for (int i = 0; i < 5; ++i) first += a.train_losses[std::size_t(i)], last += a.train_losses[std::size_t(35 + i)];
  CHECK(last < first);

  const fs::path dir = fs::temp_directory_path() / "attn-transformer-ckpt";
  fs::create_directories(dir);
  const std::string path = (dir / "t.safetensors").string();
  save_transformer(path, a.best, curves_of(a), {{"steps", "40"}});
  TrainingCurves curves;
  Metadata meta;
  const Transformer back = load_transformer(path, &curves, &meta);
  CHECK(meta.at("steps") == "40");
  CHECK(meta.at("norm") == "post");
  CHECK(curves.train_loss == a.train_losses);
  CHECK(curves.valid_bleu.size() == 2);
  CHECK(parameter_count(back) == parameter_count(a.best));
  CHECK(back.dec[0].cross.w_v(3, 5) == a.best.dec[0].cross.w_v(3, 5));

  CHECK_THROWS_WITH_AS(load_transformer((dir / "none.safetensors").string()), doctest::Contains("not found"),
                       SafetensorsError);
  TensorMap t = read_safetensors(path, &meta);
  t.erase("dec.0.ln3.gamma");
  write_safetensors((dir / "missing.safetensors").string(), t, meta);
  CHECK_THROWS_WITH_AS(load_transformer((dir / "missing.safetensors").string()), doctest::Contains("dec.0.ln3.gamma"),
                       SafetensorsError);
  t = read_safetensors(path, &meta);
  t["extra"] = TensorF32{Shape{1}, {1.0f}};
  write_safetensors((dir / "extra.safetensors").string(), t, meta);
  CHECK_THROWS_AS(load_transformer((dir / "extra.safetensors").string()), SafetensorsError);
  t = read_safetensors(path, &meta);
  Metadata wrong = meta;
  wrong["d_model"] = "32";
  write_safetensors((dir / "shape.safetensors").string(), t, wrong);
  CHECK_THROWS_WITH_AS(load_transformer((dir / "shape.safetensors").string()), doctest::Contains("shape"),
                       SafetensorsError);
  wrong = meta;
  wrong["model"] = "bahdanau";
  write_safetensors((dir / "model.safetensors").string(), t, wrong);
  CHECK_THROWS_WITH_AS(load_transformer((dir / "model.safetensors").string()), doctest::Contains("transformer"),
                       SafetensorsError);
  fs::remove_all(dir);
}
