// Chapter 10's metrics on hand-made attention matrices whose answers are known by hand, the head
// edits (zero / uniform / permute) and the recombined layer output, the attention-only model's
// backward against finite differences (double, tolerance 1e-6 as tests/core/test_layers_grad.cpp
// explains), its checkpoint round trip, the induction task's sequences, and the studies' figures
// on a model where the answer is forced.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include "attn/attention/alignment.hpp"
#include "attn/attention/attention_stats.hpp"
#include "attn/attention/head_intervention.hpp"
#include "attn/models/attn_only.hpp"
#include "attn/nn/gradcheck.hpp"
#include "attn/studies/induction.hpp"
#include "attn/studies/interpretability.hpp"
#include "attn/studies/interpretability_claims.hpp"
#include "attn/tensor/mask.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "tiny_transformer.hpp"

using namespace attn;

namespace {
Mat mat(std::initializer_list<std::initializer_list<float>> rows) {
  Mat m = xt::zeros<float>({rows.size(), rows.begin()->size()});
  std::size_t i = 0;
  for (const auto& r : rows) {
    std::size_t j = 0;
    for (float x : r) m(i, j++) = x;
    ++i;
  }
  return m;
}
// Lower-triangular uniform weights: row i spreads 1/(i+1) over keys 0..i.
Mat causal_uniform(std::size_t n) {
  Mat m = xt::zeros<float>({n, n});
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j) m(i, j) = 1.0f / float(i + 1);
  return m;
}
}  // namespace

TEST_CASE("entropy: one-hot rows 0, two equal keys log 2, four log 4") {
  const Mat p = mat({{1, 0, 0, 0}, {0.5f, 0.5f, 0, 0}, {0.25f, 0.25f, 0.25f, 0.25f}});
  const Vec h = attention_entropy(p);
  CHECK(h(0) == doctest::Approx(0.0));
  CHECK(h(1) == doctest::Approx(std::log(2.0)));
  CHECK(h(2) == doctest::Approx(std::log(4.0)));
  CHECK(mean_entropy(p) == doctest::Approx((std::log(2.0) + std::log(4.0)) / 3.0));
}

TEST_CASE("uniformity: causal uniform weights are 1, the identity 0; near_uniform at 5 %") {
  CHECK(uniformity(causal_uniform(6), true) == doctest::Approx(1.0));
  const Mat eye = xt::eye<float>(6);
  CHECK(uniformity(eye, true) == doctest::Approx(0.0));
  CHECK(near_uniform(causal_uniform(6), true));
  CHECK_FALSE(near_uniform(eye, true));
  // Non-causal: every row sees all 4 keys. Row (0.5, 0.5, 0, 0): log 2 / log 4 = 0.5.
  CHECK(uniformity(mat({{0.5f, 0.5f, 0, 0}}), false) == doctest::Approx(0.5));
  // Judged against log T (not log(i+1)), causal uniform rows would look far from uniform: the
  // causal flag matters.
  CHECK(uniformity(causal_uniform(6), false) < 0.8);
  const auto n = visible_keys(3, 5, true);
  CHECK(n == std::vector<std::size_t>{3, 4, 5});  // queries are the last 3 of 5 positions
  // Row (0.9, 0.1): H / log 2 = 0.469 — not within 5 %; (0.55, 0.45): 0.993 — within.
  CHECK_FALSE(near_uniform(mat({{0.9f, 0.1f}}), false));
  CHECK(near_uniform(mat({{0.55f, 0.45f}}), false));
}

TEST_CASE("mean attention distance: identity 0, previous token 1, first token i") {
  CHECK(mean_attention_distance(xt::eye<float>(5)) == doctest::Approx(0.0));
  Mat first = xt::zeros<float>({4, 4});
  for (std::size_t i = 0; i < 4; ++i) first(i, 0) = 1.0f;  // every query looks at token 0: distances 0,1,2,3
  CHECK(mean_attention_distance(first) == doctest::Approx(1.5));
  // Two queries at the end of five keys (positions 3 and 4), both looking at key 0: (3 + 4) / 2.
  CHECK(mean_attention_distance(mat({{1, 0, 0, 0, 0}, {1, 0, 0, 0, 0}})) == doctest::Approx(3.5));
}

TEST_CASE("previous-token and prefix-matching scores on an induction pattern") {
  // tokens A B C A B C: at position i ≥ 3 the earlier copy of token i is at i − 3, and the
  // token that followed it is at i − 2. An induction head puts its weight there.
  const std::vector<int> tokens = {7, 8, 9, 7, 8, 9};
  Mat induction = xt::zeros<float>({6, 6}), prev = xt::zeros<float>({6, 6});
  for (std::size_t i = 0; i < 6; ++i) {
    induction(i, i >= 3 ? i - 2 : i) = 1.0f;
    prev(i, i >= 1 ? i - 1 : 0) = 1.0f;
  }
  CHECK(prefix_matching_score(induction, tokens) == doctest::Approx(1.0));
  CHECK(prefix_matching_rows(6, tokens) == 3);
  CHECK(prefix_matching_score(prev, tokens) == doctest::Approx(0.0));
  CHECK(previous_token_score(prev) == doctest::Approx(1.0));
  CHECK(previous_token_score(induction) == doctest::Approx(0.0));
  // Half the weight on the right key: 0.5.
  Mat half = causal_uniform(6);
  for (std::size_t i = 3; i < 6; ++i) {
    for (std::size_t j = 0; j < 6; ++j) half(i, j) = 0.0f;
    half(i, i - 2) = 0.5f;
    half(i, i) = 0.5f;
  }
  CHECK(prefix_matching_score(half, tokens) == doctest::Approx(0.5));
  // No repeated token: no row counts, score 0.
  CHECK(prefix_matching_score(induction, {1, 2, 3, 4, 5, 6}) == 0.0);
  CHECK_THROWS_AS(prefix_matching_score(induction, {1, 2, 3}), ShapeError);
}

TEST_CASE("copying score: identity 1, minus identity −1, a rotation 0") {
  CHECK(copying_score(xt::eye<float>(5)) == doctest::Approx(1.0));
  CHECK(copying_score(Mat(-xt::eye<float>(5))) == doctest::Approx(-1.0));
  CHECK(copying_score(mat({{0, -1}, {1, 0}})) == doctest::Approx(0.0).epsilon(1e-9));  // λ = ±i
  CHECK(copying_score(mat({{2, 0}, {0, -1}})) == doctest::Approx(1.0 / 3.0));            // (2 − 1) / (2 + 1)
  CHECK(copying_score(xt::zeros<float>({3, 3})) == 0.0);
}

TEST_CASE("Kendall tau_b: same order 1, reversed −1, one swap 2/3, ties corrected") {
  CHECK(kendall_tau({1, 2, 3, 4}, {10, 20, 30, 40}) == doctest::Approx(1.0));
  CHECK(kendall_tau({1, 2, 3, 4}, {4, 3, 2, 1}) == doctest::Approx(-1.0));
  CHECK(kendall_tau({1, 2, 3, 4}, {1, 3, 2, 4}) == doctest::Approx(4.0 / 6.0));  // 5 concordant, 1 discordant
  CHECK(kendall_tau({1, 1, 2}, {1, 2, 3}) == doctest::Approx(2.0 / std::sqrt(6.0)));  // scipy: 0.8165
  CHECK(kendall_tau({5, 5, 5}, {1, 2, 3}) == 0.0);  // a constant ranks nothing
  CHECK_THROWS_AS(kendall_tau({1, 2}, {1, 2, 3}), ShapeError);
}

TEST_CASE("total variation distance") {
  Vec a = xt::zeros<float>({2}), b = xt::zeros<float>({2});
  a(0) = 1;
  b(1) = 1;
  CHECK(total_variation(a, b) == doctest::Approx(1.0));
  CHECK(total_variation(a, a) == 0.0);
  CHECK(mean_total_variation(mat({{0.5f, 0.5f}, {1, 0}}), mat({{0.25f, 0.75f}, {1, 0}})) == doctest::Approx(0.125));
}

TEST_CASE("stack_layers: (layers, heads, T_q, T_k), refuses differing shapes") {
  Tensor3 a = xt::ones<float>({2, 3, 4}), b = xt::zeros<float>({2, 3, 4});
  const Tensor4 s = stack_layers({a, b});
  CHECK(shape_of(s) == Shape{2, 2, 3, 4});
  CHECK(s(0, 1, 2, 3) == 1.0f);
  CHECK(s(1, 1, 2, 3) == 0.0f);
  CHECK_THROWS_AS(stack_layers({a, Tensor3(xt::zeros<float>({2, 3, 5}))}), ShapeError);
}

TEST_CASE("head edits: zero, uniform over visible keys, permute keeps each row's weights") {
  Rng rng(3);
  const Mat mask = causal_mask(5);
  Mat p = causal_uniform(5);
  for (std::size_t i = 0; i < 5; ++i)  // make rows uneven so that a permutation shows
    for (std::size_t j = 0; j <= i; ++j) p(i, j) = float(j + 1) / float((i + 1) * (i + 2) / 2);
  Mat perm = p;
  edit_head_weights(perm, HeadEdit::permute, mask, rng);
  bool moved = false;
  for (std::size_t i = 0; i < 5; ++i) {
    std::vector<float> r0, r1;
    for (std::size_t j = 0; j <= i; ++j) {
      r0.push_back(p(i, j));
      r1.push_back(perm(i, j));
      moved |= p(i, j) != perm(i, j);
    }
    for (std::size_t j = i + 1; j < 5; ++j) CHECK(perm(i, j) == 0.0f);  // masked keys stay 0
    std::sort(r0.begin(), r0.end());
    std::sort(r1.begin(), r1.end());
    CHECK(r0 == r1);
  }
  CHECK(moved);
  Mat uni = p;
  edit_head_weights(uni, HeadEdit::uniform, mask, rng);
  CHECK(max_abs_diff(uni, causal_uniform(5)) < 1e-7);
  Mat zero = p;
  edit_head_weights(zero, HeadEdit::zero, mask, rng);
  CHECK(xt::amax(xt::abs(zero))() == 0.0f);
  CHECK(head_edit_name(HeadEdit::permute) == "permute");
}

TEST_CASE("multi_head_recombine: reproduces the forward, and a zeroed head drops its share") {
  Rng rng(5);
  MultiHead p = multi_head_init(8, 2, 2, rng, true);
  p.b_o = rng.normal_vec(8);
  Tensor3 x = rng.normal_tensor3(2, 5, 8), out, again;
  MultiHeadCacheT<float> cache;
  multi_head_forward(out, cache, x, x, p, causal_mask(5));
  multi_head_recombine(again, cache, p);
  CHECK(max_abs_diff(out, again) < 1e-6);
  // Zero head 1: the output is head 0's columns of concat times W_O's first 4 rows, plus b_O.
  for (std::size_t b = 0; b < 2; ++b) xt::view(cache.weights, b, 1, xt::all(), xt::all()) = 0.0f;
  multi_head_recombine(again, cache, p);
  const Mat c0 = xt::view(cache.concat, 0, xt::all(), xt::range(0, 4));
  const Mat w0 = xt::view(p.w_o, xt::range(0, 4), xt::all());
  Mat want = xt::zeros<float>({5, 8});
  for (std::size_t i = 0; i < 5; ++i)
    for (std::size_t j = 0; j < 8; ++j) {
      double s = p.b_o(j);
      for (std::size_t k = 0; k < 4; ++k) s += double(c0(i, k)) * double(w0(k, j));
      want(i, j) = float(s);
    }
  const Mat got = xt::view(again, 0, xt::all(), xt::all());
  CHECK(max_abs_diff(got, want) < 1e-5);
}

TEST_CASE("attention-only model: backward matches finite differences for every parameter and x_0") {
  Rng rng(11);
  AttnOnlyConfig cfg{7, 8, 2, 2, 6};  // V 7, C 8, 2 heads, 2 layers, context 6: odd sizes
  const AttnOnly mf = attn_only_init(cfg, rng);
  AttnOnlyD m = to_double(mf);
  for (auto& a : m.attn) a.w_q *= 3.0;  // sharper attention: the softmax's backward matters
  const std::vector<int> tokens = {1, 4, 2, 6, 0, 3, 3, 5, 1, 2};   // B = 2, T = 5
  const std::vector<int> targets = {4, 2, -1, 0, 3, 5, 1, 2, 6, -1};
  AttnOnlyCacheT<double> cache;
  auto loss = [&] { AttnOnlyCacheT<double> c; return attn_only_forward(c, m, tokens, targets, 2); };
  attn_only_forward(cache, m, tokens, targets, 2);
  AttnOnlyD g = zeros_like(m);
  Tensor3D dx0;
  attn_only_backward(g, cache, m, targets, &dx0);
  CHECK(check_gradient(loss, m.w_e, g.w_e).rel_error < 1e-6);
  CHECK(check_gradient(loss, m.w_pos, g.w_pos).rel_error < 1e-6);
  CHECK(check_gradient(loss, m.w_u, g.w_u).rel_error < 1e-6);
  for (std::size_t l = 0; l < 2; ++l) {
    CHECK(check_gradient(loss, m.attn[l].w_q, g.attn[l].w_q).rel_error < 1e-6);
    CHECK(check_gradient(loss, m.attn[l].w_k, g.attn[l].w_k).rel_error < 1e-6);
    CHECK(check_gradient(loss, m.attn[l].w_v, g.attn[l].w_v).rel_error < 1e-6);
    CHECK(check_gradient(loss, m.attn[l].w_o, g.attn[l].w_o).rel_error < 1e-6);
  }
  // ∂loss/∂x_0: perturb x_0 through W_pos (x_0 = W_E[tokens] + W_pos), batch row by batch row:
  // Σ_b dx0[b] equals dW_pos restricted to the first T rows.
  for (std::size_t i = 0; i < 5; ++i)
    for (std::size_t c = 0; c < 8; ++c) CHECK(dx0(0, i, c) + dx0(1, i, c) == doctest::Approx(g.w_pos(i, c)).epsilon(1e-12));
  CHECK(xt::amax(xt::abs(xt::view(g.w_pos, 5, xt::all())))() == 0.0);  // row 5 unused at T = 5
}

TEST_CASE("attention-only model: forward edits, shapes, bad input, checkpoint round trip") {
  Rng rng(2);
  const AttnOnly m = attn_only_init({16, 16, 4, 2, 12}, rng);
  const std::vector<int> tokens = {1, 2, 3, 4, 5, 6, 1, 2, 3, 4};
  const std::vector<int> targets = {2, 3, 4, 5, 6, 1, 2, 3, 4, -1};
  AttnOnlyCache a, b;
  const float l0 = attn_only_forward(a, m, tokens, targets, 1);
  CHECK(shape_of(a.attn[1].weights) == Shape{1, 4, 10, 10});
  CHECK(std::isfinite(l0));
  attn_only_forward(b, m, tokens, targets, 1, {{1, 2, HeadEdit::uniform, 1}});
  const Mat p = xt::view(b.attn[1].weights, 0, 2, xt::all(), xt::all());
  CHECK(max_abs_diff(p, causal_uniform(10)) < 1e-6);
  const Mat untouched = xt::view(b.attn[1].weights, 0, 1, xt::all(), xt::all());
  const Mat before = xt::view(a.attn[1].weights, 0, 1, xt::all(), xt::all());
  CHECK(max_abs_diff(untouched, before) == 0.0);
  CHECK_THROWS_AS(attn_only_forward(b, m, std::vector<int>(13, 1), std::vector<int>(13, 1), 1), ShapeError);
  CHECK_THROWS_AS(attn_only_forward(b, m, tokens, targets, 1, {{2, 0, HeadEdit::zero, 1}}), std::out_of_range);
  CHECK_THROWS_AS(attn_only_init({16, 10, 4, 2, 12}, rng), std::invalid_argument);

  const std::string path = (std::filesystem::temp_directory_path() / "attn-test-attn-only.safetensors").string();
  TensorMap extra;
  extra["loss_curve"] = TensorF32{{3}, {3.0f, 2.0f, 1.0f}};
  save_attn_only(path, m, extra, {{"steps", "3"}});
  TensorMap back_extra;
  Metadata md;
  const AttnOnly back = load_attn_only(path, &back_extra, &md);
  CHECK(back.cfg.context == 12);
  CHECK(max_abs_diff(back.w_u, m.w_u) == 0.0);
  CHECK(max_abs_diff(back.attn[1].w_k, m.attn[1].w_k) == 0.0);
  CHECK(back_extra.at("loss_curve").data == std::vector<float>{3.0f, 2.0f, 1.0f});
  CHECK(md.at("steps") == "3");
  CHECK(parameter_count(back) == parameter_count(m));
  // A file whose config does not match its tensors is refused with the tensor's name.
  TensorMap bad = read_safetensors(path, &md);
  md["d_model"] = "8";
  write_safetensors(path, bad, md);
  try {
    load_attn_only(path);
    FAIL("a mismatched config was accepted");
  } catch (const SafetensorsError& e) {
    CHECK(std::string(e.what()).find("shape") != std::string::npos);
  }
  std::filesystem::remove(path);
}

TEST_CASE("induction task: distinct tokens per period, exact repeats, next-token targets") {
  Rng rng(9);
  InductionTask task{32, 40, 5, 12};
  const InductionBatch b = induction_batch(rng, task, 20);
  CHECK(b.tokens.size() == 800);
  for (std::size_t s = 0; s < 20; ++s) {
    const std::size_t p = b.periods[s];
    CHECK((p >= 5 && p <= 12));
    const std::vector<int> seq = b.sequence(s);
    std::vector<int> block(seq.begin(), seq.begin() + std::ptrdiff_t(p));
    std::sort(block.begin(), block.end());
    CHECK(std::adjacent_find(block.begin(), block.end()) == block.end());
    for (std::size_t i = p; i < 40; ++i) CHECK(seq[i] == seq[i - p]);
    CHECK(b.targets[s * 40 + 39] == -1);
    CHECK(b.targets[s * 40 + 3] == seq[4]);
  }
  // Repeat 2 keeps exactly positions period−1 … 2·period−2 (they predict tokens period … 2·period−1).
  const std::vector<int> r2 = repeat_targets(b, 2);
  const std::size_t p0 = b.periods[0];
  for (std::size_t i = 0; i < 40; ++i) CHECK((r2[i] >= 0) == (i + 1 >= p0 && i + 1 < 2 * p0));
  CHECK_THROWS_AS(induction_batch(rng, {8, 40, 5, 12}, 1), std::invalid_argument);  // period > vocab
}

TEST_CASE("studies: head stats by layer, edits vs unchanged model, importance agreement") {
  // A hand-built head pattern: layer 0 previous-token, layer 1 uniform.
  const std::size_t T = 6;
  Tensor3 l0 = xt::zeros<float>({std::size_t(1), T, T}), l1 = xt::zeros<float>({std::size_t(1), T, T});
  for (std::size_t i = 0; i < T; ++i) l0(0, i, i ? i - 1 : 0) = 1.0f;
  xt::view(l1, 0, xt::all(), xt::all()) = causal_uniform(T);
  const std::vector<std::vector<Tensor3>> examples = {{l0, l1}};
  const auto stats = head_stats(examples, {std::vector<int>{}}, true);
  REQUIRE(stats.size() == 2);
  CHECK(stats[0].previous_token == doctest::Approx(1.0));
  CHECK(stats[0].distance == doctest::Approx(5.0 / 6.0));  // rows 1..5 look 1 back, row 0 at itself
  CHECK(stats[1].uniformity == doctest::Approx(1.0));
  const auto layers = layer_means(stats);
  CHECK(layers[1].distance == doctest::Approx(mean_attention_distance(causal_uniform(T))));

  Rng rng(4);
  const AttnOnly m = attn_only_init({16, 16, 2, 2, 12}, rng);
  Rng data(1);
  const InductionBatch b = induction_batch(data, {16, 12, 3, 5}, 4);
  const OutputChange none = edit_effect(m, b.tokens, b.targets, b.batch, {});
  CHECK(none.tvd == 0.0);
  CHECK(none.loss_change == 0.0);
  const OutputChange zero = edit_effect(m, b.tokens, b.targets, b.batch, {{0, 0, HeadEdit::zero, 1}});
  CHECK(zero.tvd > 0.0);
  CHECK(model_difference(m, m, b.tokens, b.targets, b.batch).tvd == 0.0);

  const TokenImportance ti = token_importance(m, b.sequence(0), 10, b.sequence(0)[11]);
  CHECK(ti.attention.size() == 2);
  CHECK(ti.attention[1].size() == 11);
  double sum = 0.0;
  for (double a : ti.attention[1]) sum += a;
  CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));  // mean over heads of rows that sum to 1
  CHECK(ti.grad_input.size() == 11);
  CHECK(ti.leave_one_out.size() == 11);
  const ImportanceAgreement ag = importance_agreement(m, {b.sequence(0), b.sequence(1)}, {10, 6}, 1);
  CHECK(ag.sequences == 2);
  for (double t : ag.attn_top1) CHECK((t >= 0.0 && t <= 1.0));
  CHECK_THROWS_AS(importance_agreement(m, {b.sequence(0)}, {}, 1), std::invalid_argument);
  CHECK(ag.uniform_vs_loo == 0.0);
  CHECK((ag.random_top1 >= 0.0 && ag.random_top1 <= 1.0));
  CHECK(ag.chance_top1 == doctest::Approx((1.0 / 11 + 1.0 / 7) / 2));  // 11 and 7 tokens ranked
  for (double t : ag.attn_vs_loo) CHECK((t >= -1.0 && t <= 1.0));
}

TEST_CASE("studies on chapter 08 and 09's models: shapes, ranges, and a forced alignment") {
  // A tiny random Transformer: per-head accuracies are shares in [0, 1]; the encoder stats are
  // non-causal rows over the source; a cross head forced onto the alignment would score 1.
  const ToyCorpus corpus = make_toy_corpus({3, 40, 5, 20, 4, 12});
  const TransformerModelConfig cfg = tiny_transformer_config(corpus, 2);
  Rng rng(8);
  const Transformer tf = transformer_init(cfg, rng);
  const SentencePair& p = corpus.test[0];
  const PairAttention ta = transformer_attention(tf, p, corpus.source_vocab, corpus.target_vocab);
  REQUIRE(ta.cross.size() == 2);
  CHECK(shape_of(ta.cross[1]) == Shape{2, p.tgt.size() + 1, p.src.size()});
  CHECK(shape_of(ta.enc_self[0]) == Shape{2, p.src.size(), p.src.size()});
  const CrossAlignment ca = transformer_alignment(tf, {corpus.test.begin(), corpus.test.begin() + 3}, corpus.source_vocab,
                                                  corpus.target_vocab);
  CHECK(shape_of(ca.accuracy) == Shape{2, 2});
  for (float a : ca.accuracy) CHECK((a >= 0.0f && a <= 1.0f));
  CHECK(ca.words == corpus.test[0].tgt.size() + corpus.test[1].tgt.size() + corpus.test[2].tgt.size());
  CHECK(ca.enc.size() == 4);
  Mat forced = xt::zeros<float>({p.tgt.size() + 1, p.src.size()});
  for (std::size_t i = 0; i < p.alignment.size(); ++i) forced(i, std::size_t(p.alignment[i])) = 1.0f;
  CHECK(alignment_hits(forced, p.alignment).share() == 1.0);  // the helper the study counts with

  // A tiny random decoder LM: repeated random tokens give per-head stats for every head and two
  // finite losses; text stats refuse text shorter than one window.
  DecoderLMConfig lc;
  lc.vocab = 300;
  lc.d_model = 16;
  lc.n_layers = 2;
  lc.n_heads = 2;
  lc.n_kv_heads = 1;
  lc.d_ff = 32;
  lc.context = 32;
  const DecoderLM lm = decoder_lm_init(lc, 5);
  const LmInduction li = decoder_lm_induction(lm, 8, 3, 1);
  CHECK(li.heads.size() == 4);
  CHECK(li.sequences == 3);
  CHECK((std::isfinite(li.first) && std::isfinite(li.second) && li.first > 0.0));
  for (const HeadStat& h : li.heads) CHECK((h.prefix_matching >= 0.0 && h.prefix_matching <= 1.0));
  CHECK_THROWS_AS(decoder_lm_induction(lm, 17, 1, 1), std::invalid_argument);  // 34 > context 32
  std::vector<int> text(40);
  for (std::size_t i = 0; i < text.size(); ++i) text[i] = int(i % 300);
  CHECK(decoder_lm_text_stats(lm, text, 3, 16).size() == 4);
  CHECK_THROWS_AS(decoder_lm_text_stats(lm, text, 1, 41), std::invalid_argument);
  // Any passages repeated once: the random probe is this on random_passages' ids; text_passages
  // spreads n passages over the whole text (40 tokens, 4 passages: at 0, 10, 20, 30).
  const LmInduction again = decoder_lm_repeats(lm, random_passages(lc.vocab, 8, 3, 1));
  CHECK(again.first == li.first);
  CHECK(again.second == li.second);
  const std::vector<std::vector<int>> ps = text_passages(text, 8, 4);
  REQUIRE(ps.size() == 4);
  CHECK(ps[1] == std::vector<int>{10, 11, 12, 13, 14, 15, 16, 17});
  CHECK(ps[3].back() == 37);
  CHECK(decoder_lm_repeats(lm, ps).sequences == 4);
  CHECK_THROWS_AS(text_passages(text, 11, 4), std::invalid_argument);      // 44 > 40 tokens
  CHECK_THROWS_AS(decoder_lm_repeats(lm, {{1, 2, 3}, {1, 2}}), std::invalid_argument);  // unequal lengths
  CHECK_THROWS_AS(decoder_lm_repeats(lm, {}), std::invalid_argument);
  // lm_induction_study: both probes, and the ids the held-out text (here ids 0 … 39) never holds.
  const LmInductionStudy st = lm_induction_study(lm, text, 8, 3, 1);
  REQUIRE(st.text);
  CHECK(st.text->result.sequences == 3);
  CHECK(st.random.result.first == li.first);
  CHECK(st.unseen_ids == 260);
  CHECK(st.held_out_tokens == 40);
  std::size_t unseen = 0;
  for (const std::vector<int>& p : random_passages(lc.vocab, 8, 3, 1))
    for (int id : p) unseen += id >= 40;
  CHECK(st.drawn == 24);
  CHECK(st.drawn_unseen == unseen);
  CHECK(st.random.copies.outcome == judge_copying(st.random.result).outcome);
  CHECK_FALSE(lm_induction_study(lm, std::vector<int>(23, 1), 8, 3, 1).text);  // 23 < 3 × 8: not measured
}
