// The translation models of chapters 00–02 (attn/seq2seq*.hpp).
// Map: (1) finite-difference gradient checks of the whole model in double, every parameter, for
// no attention, Bahdanau and Luong dot/general/concat × global/local-m/local-p; (2) greedy decoding
// (alignment rows sum to 1, trace == batch decode); (3) checkpoints (round trip, wrong model,
// missing and corrupt files); (4) evaluation by length on hand-made outputs; (5) the trainer
// (determinism, best kept); (6) the timing helpers.
// Tolerance: relative gradient error < 1e-6 (double, central differences, ε = 1e-5).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <variant>
#include <vector>

#include <unistd.h>

#include "attn/nn/gradcheck.hpp"
#include "attn/models/seq2seq.hpp"
#include "attn/models/seq2seq_eval.hpp"
#include "attn/models/seq2seq_train.hpp"
#include "attn/data/corpus.hpp"
#include "attn/data/safetensors.hpp"
#include "attn/data/vocab.hpp"
#include "attn/tensor/tensor_ops.hpp"

using namespace attn;

namespace {

// Two sentences of source length 5; the second target is shorter (one <pad> to ignore).
Batch tiny_batch() {
  Batch b;
  b.size = 2;
  b.src_len = 5;
  b.tgt_len = 4;
  b.src = {4, 5, 6, 4, 7, 6, 6, 5, 7, 4};
  b.tgt_in = {Vocab::bos, 4, 5, 6, Vocab::bos, 7, 4, Vocab::pad};
  b.tgt_out = {4, 5, 6, Vocab::eos, 7, 4, Vocab::eos, Vocab::pad};
  return b;
}

Seq2SeqConfig tiny_config(AttentionKind kind, LuongScore score = LuongScore::General,
                          LuongWindow window = LuongWindow::Global, std::size_t d = 2) {
  Seq2SeqConfig c;
  c.kind = kind;
  c.luong = {score, window, d};
  c.src_vocab = 8;
  c.tgt_vocab = 9;
  c.emb = 3;
  c.enc_hidden = 3;
  c.dec_hidden = 6;
  c.attn = 4;
  return c;
}

// Every parameter of m with its gradient in g: the model's own visitor, walked in lockstep.
template <class F>
void for_each_tensor(Seq2SeqD& m, Seq2SeqD& g, F f) {
  std::vector<double*> grads;
  visit_params(g, [&](const std::string&, auto& t) { grads.push_back(t.data()); });
  std::size_t i = 0;
  visit_params(m, [&](const std::string& name, auto& t) { f(name, t.data(), grads.at(i++), t.size()); });
}

void check_model_gradients(const Seq2SeqConfig& cfg) {
  Rng rng(5);
  Seq2SeqD m = to_double(seq2seq_init(cfg, rng));
  // Twice the default init, so that every path carries a gradient well above rounding noise (the
  // concat score's W_c otherwise gets gradients of ~1e-6, where ε = 1e-5 differences are noisy).
  Seq2SeqD g = zeros_like(m);
  for_each_tensor(m, g, [](const std::string&, double* x, const double*, std::size_t n) {
    for (std::size_t k = 0; k < n; ++k) x[k] *= 2.0;
  });
  const Batch b = tiny_batch();
  Seq2SeqTapeT<double> tape;
  seq2seq_forward(tape, m, b);
  seq2seq_backward(g, tape, m, b);
  std::size_t checked = 0;
  for_each_tensor(m, g, [&](const std::string& name, double* x, const double* ga, std::size_t n) {
    if (n == 0) return;
    Seq2SeqTapeT<double> t2;
    const auto r = check_gradient([&] { return seq2seq_forward(t2, m, b); }, x, ga, n);
    INFO(model_name(cfg) << " " << name << ": rel error " << r.rel_error << ", worst " << r.max_abs_error);
    CHECK(r.rel_error < 1e-6);
    ++checked;
  });
  CHECK(checked >= 12);
}

}  // namespace

TEST_CASE("seq2seq gradients match finite differences: no attention and Bahdanau") {
  check_model_gradients(tiny_config(AttentionKind::None));
  check_model_gradients(tiny_config(AttentionKind::Bahdanau));
}

TEST_CASE("seq2seq gradients match finite differences: Luong scores and windows") {
  check_model_gradients(tiny_config(AttentionKind::Luong, LuongScore::Dot));
  check_model_gradients(tiny_config(AttentionKind::Luong, LuongScore::General));
  check_model_gradients(tiny_config(AttentionKind::Luong, LuongScore::Concat));
  check_model_gradients(tiny_config(AttentionKind::Luong, LuongScore::General, LuongWindow::LocalP, 2));
  check_model_gradients(tiny_config(AttentionKind::Luong, LuongScore::Dot, LuongWindow::LocalM, 1));
}

TEST_CASE("seq2seq names, configs and parameter registry") {
  for (const char* n : {"no_attention", "bahdanau", "luong_dot", "luong_general", "luong_concat", "luong_local_p",
                        "luong_local_m", "luong_dot_local_p"})
    CHECK(model_name(config_for(n, 10, 10)) == n);
  CHECK_THROWS_AS(config_for("luong_cosine", 10, 10), std::invalid_argument);
  CHECK(model_title(config_for("luong_local_p", 10, 10)) == "Luong local-p general (D = 5)");
  Rng rng(1);
  Seq2Seq m = seq2seq_init(config_for("bahdanau", 51, 51), rng), g = zeros_like(m);
  ParamRegistry reg;
  register_params(reg, m, g);
  CHECK(reg.find("attention.w_a") != nullptr);
  CHECK(reg.find("encoder.bwd.wh") != nullptr);
  CHECK(reg.find("combine.w") == nullptr);
  CHECK(parameter_count(m) == reg.total_size());
  // The issue's ~0.2M-parameter size.
  CHECK(parameter_count(m) > 100000);
  CHECK(parameter_count(m) < 300000);
  Seq2SeqConfig bad = config_for("luong_dot", 10, 10);
  bad.dec_hidden = 100;
  CHECK_THROWS_AS(seq2seq_init(bad, rng), std::invalid_argument);
}

TEST_CASE("greedy decoding: alignments are distributions; the trace decodes like the batch") {
  for (const char* name : {"no_attention", "bahdanau", "luong_general", "luong_local_p"}) {
    Seq2SeqConfig cfg = config_for(name, 8, 9);
    Rng rng(3);
    const Seq2Seq m = seq2seq_init(cfg, rng);
    const Batch b = tiny_batch();
    const auto t = greedy_translate(m, b.src, 2, 5, 6);
    REQUIRE(t.size() == 2);
    for (const auto& tr : t) {
      CHECK(tr.ids.size() <= 6);
      if (cfg.kind == AttentionKind::None) {
        CHECK(tr.alignment.size() == 0);
        continue;
      }
      REQUIRE(tr.alignment.shape(0) == std::min<std::size_t>(tr.ids.size() + 1, 7));
      for (std::size_t i = 0; i < tr.alignment.shape(0); ++i) {
        double sum = 0;
        for (std::size_t j = 0; j < 5; ++j) sum += tr.alignment(i, j);
        if (cfg.luong.window == LuongWindow::LocalP) CHECK(sum <= 1.0 + 1e-6);  // × Gaussian ≤ 1
        else CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
      }
    }
    const std::vector<int> first(b.src.begin(), b.src.begin() + 5);
    const DecodeTrace tr = greedy_trace(m, first, 6);
    CHECK(tr.ids == t[0].ids);
    CHECK(tr.inputs.size() == tr.tape.steps.size());
    CHECK(tr.logits.shape(0) == tr.tape.steps.size());
    CHECK(tr.inputs[0] == Vocab::bos);
    // The trace's alignment is the batch's: one α row per step, the <eos> step last.
    if (cfg.kind == AttentionKind::None) {
      CHECK(tr.alignment.size() == 0);
    } else {
      REQUIRE(tr.alignment.shape(0) == tr.tape.steps.size());
      CHECK(max_abs_diff(tr.alignment, t[0].alignment) <= 1e-6);
    }
  }
}

TEST_CASE("seq2seq checkpoints: round trip, wrong model, missing and corrupt files") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "attn-seq2seq-ckpt";
  fs::create_directories(dir);
  Rng rng(9);
  const Seq2Seq m = seq2seq_init(config_for("luong_local_p", 8, 9), rng);
  const std::string path = (dir / "m.safetensors").string();
  save_seq2seq(path, m, {{"step", "3"}});
  Metadata meta;
  const Seq2Seq back = load_seq2seq(path, "luong_local_p", 8, 9, &meta);
  CHECK(meta.at("model") == "luong_local_p");
  CHECK(meta.at("step") == "3");
  CHECK(back.luong().attention.w_p == m.luong().attention.w_p);
  CHECK(back.out.w == m.out.w);
  CHECK_THROWS_WITH_AS(load_seq2seq(path, "luong_general", 8, 9), doctest::Contains("m.safetensors"), SafetensorsError);
  CHECK_THROWS_WITH_AS(load_seq2seq((dir / "none.safetensors").string(), "bahdanau", 8, 9),
                       doctest::Contains("none.safetensors: checkpoint not found"), SafetensorsError);
  { std::ofstream(dir / "bad.safetensors") << "not a checkpoint"; }
  CHECK_THROWS_WITH_AS(load_seq2seq((dir / "bad.safetensors").string(), "bahdanau", 8, 9),
                       doctest::Contains("bad.safetensors"), SafetensorsError);
  fs::remove_all(dir);
}

TEST_CASE("evaluation by length: BLEU, exact match and token accuracy per bucket") {
  CHECK(token_accuracy({"a", "b", "c"}, {"a", "x", "c", "d"}) == doctest::Approx(0.5));
  CHECK(token_accuracy({}, {}) == 1.0);
  std::vector<SentencePair> pairs(3);
  pairs[0].src = Tokens(6, "s");  // bucket 5-10
  pairs[0].tgt = {"a", "b", "c", "d", "e", "f"};
  pairs[1].src = Tokens(12, "s");  // bucket 11-20
  pairs[1].tgt = Tokens(12, "w");
  pairs[2].src = Tokens(4, "s");  // in no bucket
  pairs[2].tgt = {"q"};
  const std::vector<Tokens> hyps = {pairs[0].tgt, Tokens(6, "w"), {"q"}};
  const EvalResult r = evaluate_translations(hyps, pairs);
  REQUIRE(r.buckets.size() == 6);
  CHECK(r.buckets[0].sentences == 1);
  CHECK(r.buckets[0].bleu == doctest::Approx(100.0));
  CHECK(r.buckets[0].exact == doctest::Approx(100.0));
  CHECK(r.buckets[1].exact == 0.0);
  CHECK(r.buckets[1].token_acc == doctest::Approx(50.0));  // 6 of 12 positions right
  CHECK(r.buckets[1].bleu < 50.0);                          // brevity penalty
  CHECK(r.buckets[2].sentences == 0);
  CHECK(r.overall.sentences == 2);
  CHECK(r.overall.token_acc == doctest::Approx(100.0 * 12 / 18));
  const Mat pa = position_accuracy(hyps, pairs, {{5, 10}, {11, 20}}, {{1, 5}, {6, 10}, {11, 20}});
  CHECK(pa(0, 0) == doctest::Approx(100.0));
  CHECK(pa(1, 1) == doctest::Approx(20.0));  // positions 6–10 of "w"×12: only 6 is right
  CHECK(std::isnan(pa(0, 2)));
  CHECK_THROWS_AS(evaluate_translations({}, pairs), std::invalid_argument);
}

TEST_CASE("training: deterministic by seed, loss falls, the best validation model is kept") {
  CorpusConfig cc;
  cc.n_train = 300;
  cc.n_valid = 40;
  cc.n_test = 0;
  cc.max_len = 8;
  const ToyCorpus c = make_toy_corpus(cc);
  Seq2SeqConfig cfg = config_for("bahdanau", c.source_vocab.size(), c.target_vocab.size());
  cfg.emb = 8;
  cfg.enc_hidden = 8;
  cfg.dec_hidden = 16;
  cfg.attn = 8;
  TrainConfig tc;
  tc.steps = 30;
  tc.batch = 16;
  tc.valid_every = 10;
  tc.lr = 1e-2f;
  const TrainResult a = train_seq2seq(cfg, c, tc), b = train_seq2seq(cfg, c, tc);
  CHECK(a.train_losses == b.train_losses);
  REQUIRE(a.valid.size() == 3);
  CHECK(a.valid.back().loss < a.valid.front().loss);
  double best = -1;
  for (const auto& v : a.valid) best = std::max(best, v.bleu);
  CHECK(a.best_bleu == best);
  const ValidPoint* kept = nullptr;
  for (const auto& v : a.valid)
    if (v.step == a.best_step) kept = &v;
  REQUIRE(kept != nullptr);
  CHECK(mean_loss(a.best, c.valid, c.source_vocab, c.target_vocab) == doctest::Approx(kept->loss).epsilon(1e-6));
}

TEST_CASE("timing helpers return positive per-call times") {
  for (const char* k : {"bahdanau", "dot", "general", "concat"}) CHECK(time_score_function(k, 10, 16, 8, 20) > 0.0);
  CHECK_THROWS_AS(time_score_function("cosine", 10, 16, 8, 5), std::invalid_argument);
  CHECK(time_training_step(config_for("luong_dot", toy_source_vocab().size(), toy_target_vocab().size()), 4, 6, 2) > 0.0);
  const auto both = time_training_steps({config_for("bahdanau", toy_source_vocab().size(), toy_target_vocab().size()),
                                         config_for("no_attention", toy_source_vocab().size(), toy_target_vocab().size())},
                                        4, 6, 3);
  REQUIRE(both.size() == 2);
  CHECK(both[0] > 0.0);
  CHECK(both[1] > 0.0);
}

TEST_CASE("seq2seq families: each model holds only its family's weights, named as in the checkpoints") {
  Rng rng(4);
  const Seq2Seq none = seq2seq_init(config_for("no_attention", 10, 11), rng);
  const Seq2Seq bah = seq2seq_init(config_for("bahdanau", 10, 11), rng);
  const Seq2Seq lp = seq2seq_init(config_for("luong_local_p", 10, 11), rng);
  CHECK(std::holds_alternative<NoAttentionT<float>>(none.family));
  CHECK(bah.bahdanau().attention.w_a.size() > 0);
  CHECK_THROWS_AS(bah.luong(), std::bad_variant_access);
  CHECK(lp.luong().combine.w.size() > 0);
  auto names = [](const Seq2Seq& m) {
    std::vector<std::string> out;
    visit_params(m, [&](const std::string& n, const auto& t) {
      if (t.size() > 0) out.push_back(n);
    });
    return out;
  };
  CHECK(names(none) == std::vector<std::string>{"src_emb", "tgt_emb", "encoder.wx", "encoder.wh", "encoder.bx", "encoder.bh",
                                                 "decoder.wx", "decoder.wh", "decoder.bx", "decoder.bh", "out.w", "out.b"});
  const auto nb = names(bah);
  CHECK(std::find(nb.begin(), nb.end(), "encoder.fwd.wx") != nb.end());
  CHECK(std::find(nb.begin(), nb.end(), "attention.u_a") != nb.end());
  CHECK(std::find(nb.begin(), nb.end(), "combine.w") == nb.end());
  const auto nl = names(lp);
  CHECK(std::find(nl.begin(), nl.end(), "attention.w_p") != nl.end());
  CHECK(std::find(nl.begin(), nl.end(), "attention.w_c") == nl.end());  // general score: no W_c
  // Counting, the registry and the double copy all see the same parameters.
  for (const Seq2Seq* m : {&none, &bah, &lp}) {
    Seq2Seq copy = *m, g = zeros_like(*m);
    ParamRegistry reg;
    register_params(reg, copy, g);
    CHECK(reg.total_size() == parameter_count(*m));
    CHECK(reg.entries().size() == names(*m).size());
    const Seq2SeqD d = to_double(*m);
    std::size_t nd = 0;
    visit_params(d, [&](const std::string&, const auto& t) { nd += t.size(); });
    CHECK(nd == parameter_count(*m));
    CHECK(d.out.w(1, 2) == double(m->out.w(1, 2)));
  }
}

TEST_CASE("the shipped checkpoints load unchanged and save back to the same bytes") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("attn-shipped-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto bytes = [](const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  };
  const std::size_t vs = toy_source_vocab().size(), vt = toy_target_vocab().size();
  const std::vector<std::pair<std::string, std::string>> shipped = {
      {"ch00", "no_attention"}, {"ch01", "bahdanau"}, {"ch02", "luong_dot"}, {"ch02", "luong_general"}, {"ch02", "luong_local_p"}};
  for (const auto& [chapter, name] : shipped) {
    CAPTURE(name);
    const fs::path file = fs::path(ATTN_DATA_DIR) / chapter / (name + ".safetensors");
    Metadata meta;
    const Seq2Seq m = load_seq2seq(file.string(), name, vs, vt, &meta);
    // Every tensor in the file is one of the model's, under the same name, with the same values.
    const TensorMap in_file = read_safetensors(file.string());
    std::size_t seen = 0;
    visit_params(m, [&](const std::string& n, const auto& t) {
      if (t.size() == 0) return;
      REQUIRE(in_file.count(n) == 1);
      CHECK(std::equal(t.begin(), t.end(), in_file.at(n).data.begin()));
      ++seen;
    });
    CHECK(seen == in_file.size());
    save_seq2seq((dir / "again.safetensors").string(), m, meta);
    CHECK(bytes(dir / "again.safetensors") == bytes(file));
  }
  fs::remove_all(dir);
}
