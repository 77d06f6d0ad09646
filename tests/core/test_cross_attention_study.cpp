// Chapter 07's verdicts (attn/studies/cross_attention_study.hpp), each driven both ways: an input
// where the claim holds and one where it fails; the padding study against attention over the real
// words; the misses explained by position; the heads' similarity on maps built to be alike or not;
// and the one rounding rule of the printed shares.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

#include "attn/attention/self_attention.hpp"
#include "attn/data/data_files.hpp"
#include "attn/data/word_vectors.hpp"
#include "attn/models/seq2seq.hpp"
#include "attn/present/ch07_report.hpp"
#include "attn/studies/cross_attention_study.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "tiny_transformer.hpp"

using namespace attn;

TEST_CASE("check_against_reference: the computed output holds, a changed output fails") {
  Rng rng(1);
  const CrossAttentionWeights w = init_cross_attention(rng, 6, 10, 4, 3);
  CrossAttentionTrace t = cross_attention(rng.normal_mat(3, 6), rng.normal_mat(5, 10), w);
  const ReferenceCheck ok = check_against_reference(t);
  CHECK(ok.matches.holds());
  CHECK(ok.max_diff < 1e-5);
  t.attn.output(1, 2) += 0.01f;
  const ReferenceCheck bad = check_against_reference(t);
  CHECK(bad.matches.outcome == Outcome::fails);
  CHECK(bad.max_diff == doctest::Approx(0.01).epsilon(1e-3));
}

TEST_CASE("self_case_check: X = Y with one set of weights holds; a trace from other weights fails") {
  Rng rng(2);
  const CrossAttentionWeights w = init_cross_attention(rng, 6, 6, 4, 4);
  const Mat y = rng.normal_mat(4, 6);
  const SelfCaseCheck ok = self_case_check(y, w);
  CHECK(ok.same.holds());
  CHECK(ok.n == 4);
  CrossAttentionWeights other = w;
  other.w_k(0, 0) += 1.0f;  // what a cross-attention that read the wrong weights would give
  const SelfAttentionTrace self = self_attention(y, SelfAttentionWeights{w.w_q, w.w_k, w.w_v});
  const SelfCaseCheck bad = judge_self_case(cross_attention(y, y, other), self);
  CHECK(bad.same.outcome == Outcome::fails);
  CHECK(bad.weights_diff > 1e-3);
  CHECK(judge_self_case(cross_attention(y, y, w), self).same.holds());
  CHECK_THROWS_AS(self_case_check(y, init_cross_attention(rng, 6, 9, 4, 4)), ShapeError);
}

TEST_CASE("judge_source_lengths: the measured sweep holds; a changed shape, a bad row or a flat weight fails") {
  Rng rng(3);
  const CrossAttentionWeights w = init_cross_attention(rng, 8, 8, 4, 4);
  const Mat y = rng.normal_mat(3, 8);
  const SourceLengthStudy s = source_length_study(y, w, {2, 8, 60}, 8, 7);
  REQUIRE(s.rows.size() == 3);
  CHECK(s.rows[2].words.size() == 60);
  CHECK(shape_of(s.rows[2].weights) == Shape{3, 60});
  CHECK(s.parameters == 96);
  CHECK(s.one_output_shape.holds());
  CHECK(s.rows_sum_to_one.holds());
  CHECK(s.weight_spreads.holds());
  // Each source extends the shorter one: the first S words of one sentence.
  for (std::size_t i = 1; i < s.rows.size(); ++i)
    CHECK(std::equal(s.rows[i - 1].words.begin(), s.rows[i - 1].words.end(), s.rows[i].words.begin()));
  std::vector<SourceLengthRow> rows = s.rows;
  rows[0].largest = 0.9, rows[1].largest = 0.5, rows[2].largest = 0.2;
  CHECK(judge_source_lengths(rows, 96).falls_each_step.holds());
  CHECK(judge_source_lengths(rows, 96).first_rise == 0);  // none
  rows[1].largest = 0.95;  // a rise on the way down
  CHECK(judge_source_lengths(rows, 96).falls_each_step.outcome == Outcome::fails);
  CHECK(judge_source_lengths(rows, 96).first_rise == 1);
  CHECK(judge_source_lengths(rows, 96).weight_spreads.holds());
  rows = s.rows;
  rows[1].output_shape = Shape{3, 5};
  CHECK(judge_source_lengths(rows, 96).one_output_shape.outcome == Outcome::fails);
  rows = s.rows;
  rows[2].sums.max_sum = 1.01;
  CHECK(judge_source_lengths(rows, 96).rows_sum_to_one.outcome == Outcome::fails);
  rows = s.rows;
  rows[2].largest = rows[0].largest + 0.1;
  CHECK(judge_source_lengths(rows, 96).weight_spreads.outcome == Outcome::fails);
  CHECK(judge_source_lengths({}, 0).one_output_shape.outcome == Outcome::inconclusive);
}

TEST_CASE("padding_study: the mask reads like the unpadded source; without it the pads leak") {
  Rng rng(4);
  const CrossAttentionWeights w = init_cross_attention(rng, 8, 8, 4, 4);
  const Mat y = word_vectors({"le", "chat"}, 8, 7);
  const Mat x = word_vectors({"the", "cat", "sleeps", "<pad>", "<pad>"}, 8, 7);
  const PaddingStudy p = padding_study(y, x, 3, w);
  CHECK(p.valid == 3);
  CHECK(p.padded == 5);
  CHECK(shape_of(p.mask) == Shape{2, 5});
  CHECK(std::isinf(p.mask(1, 4)));
  CHECK(p.mask(1, 2) == 0.0f);
  CHECK(p.masked.attn.weights(0, 3) == 0.0f);
  CHECK(p.pads_ignored.holds());
  CHECK(p.same_as_unpadded.holds());
  CHECK(p.unmasked_leaks.holds());
  CHECK(p.unmasked_pad_share > 0.0);
  // Nothing padded (valid = S): the mask hides nothing and nothing leaks — the leak verdict fails.
  const PaddingStudy none = padding_study(y, x, 5, w);
  CHECK(none.pads_ignored.holds());
  CHECK(none.unmasked_leaks.outcome != Outcome::holds);
  CHECK(none.unmasked_vs_unpadded <= kFloatCheckTol);
  CHECK_THROWS_AS(padding_study(y, x, 0, w), std::invalid_argument);
  CHECK_THROWS_AS(padding_study(y, x, 6, w), std::invalid_argument);
}

TEST_CASE("judge_image: the built example holds; a grid that reads the wrong words fails") {
  const ImageStudy s = image_study(7);
  CHECK(s.reads_painted.holds());
  CHECK(s.clean_own_weight == doctest::Approx(std::exp(4.0) / (std::exp(4.0) + 4.0)));
  ImageConditioning wrong = s.im;
  wrong.hits = wrong.side * wrong.side / 2;
  CHECK(judge_image(wrong, {}).reads_painted.outcome == Outcome::fails);
}

TEST_CASE("judge_alignment: a diagonal read holds, a shifted one fails; misses name their neighbour") {
  const std::vector<int> truth = {0, 1, 3, 2};
  Mat good = xt::zeros<float>({4, 4}), shifted = xt::zeros<float>({4, 4});
  for (std::size_t i = 0; i < 4; ++i) good(i, std::size_t(truth[i])) = 0.9f, shifted(i, (i + 1) % 4) = 0.9f;
  const ModelAlignment a = judge_alignment(good, truth);
  CHECK(a.follows_truth.holds());
  CHECK(a.score.hits == 4);
  CHECK(a.off_diagonal.total == 2);  // rows 2 and 3 translate words that stand elsewhere
  CHECK(a.off_diagonal.hits == 2);
  CHECK(a.misses.empty());
  const ModelAlignment b = judge_alignment(shifted, truth);
  CHECK(b.follows_truth.outcome == Outcome::fails);
  // Row 1 reads 2 instead of 1 (neighbours); word 1 is read by no row's argmax.
  Mat one_miss = good;
  one_miss(1, 1) = 0.1f, one_miss(1, 2) = 0.8f;
  const ModelAlignment c = judge_alignment(one_miss, truth);
  CHECK(c.follows_truth.holds());  // 3 of 4 = 75%: the bound
  REQUIRE(c.misses.size() == 1);
  CHECK(c.misses[0].target == 1);
  CHECK(c.misses[0].read == 2);
  CHECK(c.misses[0].truth == 1);
  CHECK(c.misses[0].neighbour);
  CHECK(c.misses[0].truth_unread);
  CHECK(c.misses[0].weight_read == doctest::Approx(0.8));
  Mat two = one_miss;
  two(0, 0) = 0.1f, two(0, 3) = 0.8f;  // row 0 reads 3: two rows away, and 0 is unread
  const ModelAlignment d = judge_alignment(two, truth);
  CHECK(d.follows_truth.outcome == Outcome::partly);
  REQUIRE(d.misses.size() == 2);
  CHECK_FALSE(d.misses[0].neighbour);
}

TEST_CASE("layer_similarity: identical heads are redundant, heads on different words are not") {
  Tensor3 same = xt::zeros<float>({3, 2, 4}), apart = xt::zeros<float>({3, 2, 4});
  for (std::size_t h = 0; h < 3; ++h)
    for (std::size_t i = 0; i < 2; ++i) {
      same(h, i, i) = 1.0f;
      apart(h, i, (i + h) % 4) = 1.0f;
    }
  const LayerSimilarity r = layer_similarity(same, 1);
  CHECK(r.layer == 1);
  CHECK(r.mean_tvd == doctest::Approx(0.0));
  CHECK(r.redundant.holds());
  const LayerSimilarity d = layer_similarity(apart, 0);
  CHECK(d.mean_tvd == doctest::Approx(1.0));
  CHECK(d.max_tvd == doctest::Approx(1.0));
  CHECK(d.redundant.outcome == Outcome::fails);
  const Tensor3 one = xt::view(same, xt::range(0, 1), xt::all(), xt::all());
  CHECK(layer_similarity(one, 0).redundant.outcome == Outcome::inconclusive);
}

TEST_CASE("judge_heads: the best head, the perfect heads per layer, and the verdict against Bahdanau") {
  const std::vector<int> truth = {0, 2, 1};
  Mat b = xt::zeros<float>({3, 3});
  b(0, 0) = b(1, 1) = b(2, 1) = 1.0f;  // Bahdanau: 2 of 3
  const ModelAlignment bahdanau = judge_alignment(b, truth);
  Tensor4 w = xt::zeros<float>({2, 2, 3, 3});
  for (std::size_t i = 0; i < 3; ++i) {
    w(0, 0, i, 0) = w(0, 1, i, 0) = 1.0f;                 // layer 0: both heads on word 0 (1 of 3)
    w(1, 0, i, std::size_t(truth[i])) = 1.0f;             // layer 1 head 0: perfect
    w(1, 1, i, 2) = 1.0f;                                  // layer 1 head 1: 1 of 3
  }
  const TransformerHeads t = judge_heads(w, truth, bahdanau);
  CHECK(t.best_layer == 1);
  CHECK(t.best_head == 0);
  CHECK(t.best.hits == 3);
  CHECK(t.perfect == std::vector<std::size_t>{0, 1});
  CHECK(t.rows.size() == 6);  // 2 heads + the mean, per layer
  CHECK(t.rows[2].mean);
  CHECK(t.similarity[0].redundant.holds());
  CHECK(t.similarity[1].redundant.outcome == Outcome::fails);
  CHECK(t.matches_bahdanau.holds());
  using HeadIndex = std::pair<std::size_t, std::size_t>;
  CHECK(t.best_heads == std::vector<HeadIndex>{{1, 0}});  // one best head: no tie
  Tensor4 tie = w;
  xt::view(tie, 1, 1) = xt::view(w, 1, 0);  // layer 1's two heads both perfect
  const TransformerHeads tied = judge_heads(tie, truth, bahdanau);
  CHECK(tied.best_heads == std::vector<HeadIndex>{{1, 0}, {1, 1}});
  CHECK(tied.best_head == 0);  // the first of the tie
  Tensor4 weak = w;
  xt::view(weak, 1, 0) = xt::view(w, 0, 0);  // no head better than 1 of 3
  CHECK(judge_heads(weak, truth, bahdanau).matches_bahdanau.outcome == Outcome::fails);
  CHECK(max_abs_diff(head_map(w, 1, 1), Mat(xt::view(w, 1, 1))) == 0.0);
}

TEST_CASE("judge_better_alignment: beyond two standard errors holds, below fails, close is within noise") {
  CHECK(judge_better_alignment({957, 970, 0}, {864, 970, 0}).holds());
  CHECK(judge_better_alignment({864, 970, 0}, {957, 970, 0}).outcome == Outcome::fails);
  CHECK(judge_better_alignment({7, 8, 0}, {8, 8, 0}).outcome == Outcome::inconclusive);  // one word of eight
  CHECK(judge_better_alignment({0, 0, 0}, {8, 8, 0}).outcome == Outcome::inconclusive);
}

TEST_CASE("corpus_alignment: the sentences in range, their words, every head, the last layer's mean") {
  const ToyCorpus corpus = tiny_toy_corpus(4, 8, 12);
  Rng rng(2);
  TransformerModelConfig cfg = tiny_transformer_config(corpus, 2);
  const Transformer m = transformer_init(cfg, rng);
  const Seq2Seq b = seq2seq_init(config_for("bahdanau", corpus.source_vocab.size(), corpus.target_vocab.size()), rng);
  const CorpusAlignment c = corpus_alignment(b, m, corpus.test, corpus.source_vocab, corpus.target_vocab, 5, 7, 3);
  std::size_t sentences = 0, words = 0;
  for (const auto& p : corpus.test)
    if (sentences < 3 && p.src.size() >= 5 && p.src.size() <= 7) ++sentences, words += p.tgt.size();
  CHECK(c.sentences == sentences);
  CHECK(c.bahdanau.total == words);
  CHECK(c.last_layer_mean.total == words);
  REQUIRE(c.heads.size() == 2);
  REQUIRE(c.heads[1].size() == cfg.n_heads);
  CHECK(c.layer == 1);
  for (const auto& layer : c.heads)
    for (const AlignmentScore& h : layer) CHECK(h.hits <= c.heads[c.best_layer][c.best_head].hits);
  CHECK(c.transformer_better.outcome == judge_better_alignment(c.last_layer_mean, c.bahdanau).outcome);
  CHECK(corpus_alignment(b, m, corpus.test, corpus.source_vocab, corpus.target_vocab, 50, 60).sentences == 0);
}

TEST_CASE("reordered_test_pair finds a pair with an adjective and a moved verb; none in range throws") {
  const SentencePair plain = toy_translate({"the", "cat", "sleeps"});
  const SentencePair moved = toy_translate({"this", "teacher", "finds", "the", "green", "young", "house", "today"});
  const std::vector<SentencePair> test = {plain, moved};
  CHECK(&reordered_test_pair(test) == &test[1]);
  CHECK_THROWS_AS(reordered_test_pair(test, 3, 3), std::runtime_error);  // 3 words, but nothing moves
}

TEST_CASE("shown_model_path: relative under the working folder, else the full path and where it was found") {
  namespace fs = std::filesystem;
  const fs::path before = fs::current_path();
  const fs::path tmp = fs::temp_directory_path() / "attn-shown-model-path";
  fs::create_directories(tmp / "data");
  fs::current_path(tmp);
  CHECK(shown_model_path((tmp / "data" / "m.safetensors").string()) == "data/m.safetensors");
  CHECK(shown_model_path("data/m.safetensors") == "data/m.safetensors");
  CHECK(shown_model_path("/nonexistent-place/m.safetensors") == "/nonexistent-place/m.safetensors");
  for (const DataPlace& p : data_places()) {  // a data place outside the working folder is named
    const fs::path f = fs::path(p.dir).lexically_normal() / "ch01" / "m.safetensors";
    const std::string shown = shown_model_path(f.string());
    CAPTURE(shown);
    CHECK(shown.rfind(f.string(), 0) == 0);
    CHECK(shown.find("(from ") != std::string::npos);
  }
  fs::current_path(before);
  fs::remove_all(tmp);
}

TEST_CASE("format_share: one decimal for every share, so 5/8 and 3/8 round alike") {
  CHECK(format_share({5, 8, 0}) == "5/8 (62.5%)");
  CHECK(format_share({3, 8, 0}) == "3/8 (37.5%)");
  CHECK(format_share({8, 8, 0}) == "8/8 (100.0%)");
  CHECK(format_share({0, 0, 0}) == "0/0 (0.0%)");
}

TEST_CASE("toy_word_class names each source word's class; a word outside the lexicon is unknown") {
  CHECK(toy_word_class("the") == ToyWordClass::determiner);
  CHECK(toy_word_class("green") == ToyWordClass::adjective);
  CHECK(toy_word_class("house") == ToyWordClass::noun);
  CHECK(toy_word_class("finds") == ToyWordClass::verb);
  CHECK(toy_word_class("sleeps") == ToyWordClass::verb);
  CHECK(toy_word_class("today") == ToyWordClass::adverb);
  CHECK(toy_word_class("and") == ToyWordClass::connective);
  CHECK(toy_word_class("zebra") == ToyWordClass::unknown);
}

TEST_CASE("diagonal_reading: the words off the diagonal, and those the moves pass on both sides") {
  // esti meso lo domo verda jova hodi trov-a: the verb goes to the end, the adjectives after 'house'.
  const SentencePair p = toy_translate({"this", "teacher", "finds", "the", "green", "young", "house", "today"});
  const DiagonalReading d = diagonal_reading(p);
  std::vector<std::string> off, kept;
  for (const DiagonalWord& w : d.off) {
    CHECK(int(w.target) != w.source);
    CHECK(int(w.target) - w.source == int(w.passed_ahead) - int(w.passed_behind));
    off.push_back(p.src[std::size_t(w.source)]);
  }
  for (const DiagonalWord& w : d.kept) {
    CHECK(int(w.target) == w.source);
    CHECK(w.passed_ahead == w.passed_behind);
    CHECK(w.passed_ahead > 0);
    kept.push_back(p.src[std::size_t(w.source)]);
  }
  // not the adjectives: they follow their noun, but the verb's move gives the place back
  CHECK(off == std::vector<std::string>{"the", "house", "today", "finds"});
  CHECK(kept == std::vector<std::string>{"green", "young"});
  REQUIRE(d.off.size() == 4u);
  CHECK(d.off[1].word_class == ToyWordClass::noun);
  CHECK(d.off[3].word_class == ToyWordClass::verb);
  CHECK(d.kept[0].word_class == ToyWordClass::adjective);
  // the adjective leaves the diagonal where nothing gives its place back: lo mau gran dorm-a
  const DiagonalReading small = diagonal_reading(toy_translate({"the", "big", "cat", "sleeps"}));
  REQUIRE(small.off.size() == 2u);
  CHECK(small.off[0].word_class == ToyWordClass::noun);
  CHECK(small.off[1].word_class == ToyWordClass::adjective);
  CHECK(small.kept.empty());
  // nothing moves: nothing off, nothing kept
  const DiagonalReading plain = diagonal_reading(toy_translate({"the", "cat", "sleeps"}));
  CHECK(plain.off.empty());
  CHECK(plain.kept.empty());
}

TEST_CASE("padding_study: each row's pad share without the mask, their largest the reported maximum") {
  Rng rng(3);
  const Mat y = rng.normal_mat(3, 8), xp = rng.normal_mat(6, 8);
  const CrossAttentionWeights w = init_cross_attention(rng, 8, 8, 4, 4);
  const PaddingStudy p = padding_study(y, xp, 4, w);
  REQUIRE(p.unmasked_row_pad_share.size() == 3u);
  double most = 0.0;
  for (std::size_t i = 0; i < 3; ++i) {
    const double share = double(p.unmasked.attn.weights(i, 4) + p.unmasked.attn.weights(i, 5));
    CHECK(p.unmasked_row_pad_share[i] == doctest::Approx(share));
    most = std::max(most, share);
  }
  CHECK(p.unmasked_pad_share == doctest::Approx(most));
}

TEST_CASE("region_signal: the first word's largest region channel, and its mean over the positions painted with it") {
  const ImageStudy s = image_study(7);
  const ImageConditioning& im = s.im;
  const RegionSignal& r = s.signal;
  CHECK(r.word == 0);
  for (std::size_t ch = 0; ch < im.regions.shape(1); ++ch) CHECK(std::abs(im.regions(0, ch)) <= std::abs(r.region));
  CHECK(r.region == doctest::Approx(im.regions(0, r.channel)));
  double sum = 0.0;
  std::size_t n = 0;
  for (std::size_t p = 0; p < im.layout.size(); ++p)
    if (im.layout[p] == 0) sum += im.latent(p, r.channel), ++n;
  CHECK(r.positions == n);
  CHECK(r.mean == doctest::Approx(sum / double(n)));
  // with noise σ = 0.3 over n positions, the mean stays near the region's value
  CHECK(std::abs(r.mean - r.region) < 4.0 * 0.3 / std::sqrt(double(n)));
  CHECK(region_signal(im, 99).positions == 0);  // no such word
}

TEST_CASE("image_noise_sweep: the built-in margin holds at the chapter's noise and fails once the noise is large") {
  const ImageConditioningConfig cfg;
  const std::vector<ImageStudy> s = image_noise_sweep(7, cfg, {cfg.noise, 4.0f});
  REQUIRE(s.size() == 2u);
  CHECK(s[0].im.hits == image_study(7, cfg).im.hits);  // the same grid and W_Q as the chapter's
  CHECK(s[0].reads_painted.outcome == Outcome::holds);
  CHECK(s[1].reads_painted.outcome == Outcome::fails);
  CHECK(s[1].im.hits < s[0].im.hits);
}

TEST_CASE("judge_alignment_and_bleu: the better aligner's BLEU against the other's, both ways; no verdict without one") {
  const Verdict transformer_more = judge_better_alignment({957, 970, 0}, {864, 970, 0});
  const Verdict bahdanau_more = judge_better_alignment({864, 970, 0}, {957, 970, 0});
  const Verdict same = judge_better_alignment({900, 970, 0}, {901, 970, 0});
  CHECK(judge_alignment_and_bleu(transformer_more, 99.0, 95.0).same_order.holds());
  CHECK(judge_alignment_and_bleu(transformer_more, 95.89, 99.82).same_order.outcome == Outcome::fails);
  CHECK(judge_alignment_and_bleu(bahdanau_more, 95.89, 99.82).same_order.holds());
  CHECK(judge_alignment_and_bleu(bahdanau_more, 99.82, 95.89).same_order.outcome == Outcome::fails);
  CHECK(judge_alignment_and_bleu(same, 95.89, 99.82).same_order.outcome == Outcome::inconclusive);
  CHECK(judge_alignment_and_bleu(transformer_more, NAN, 99.82).same_order.outcome == Outcome::inconclusive);
  // like with like: both kept at their run's best validation step; a file that does not say which
  // step it kept gives no verdict
  const RecordedBleu t{95.89, 1500, 1500}, b{99.82, 1200, 1500}, unknown{99.82, 0, 0};
  CHECK(judge_alignment_and_bleu(transformer_more, t, b).same_order.outcome == Outcome::fails);
  CHECK(judge_alignment_and_bleu(bahdanau_more, t, b).same_order.holds());
  CHECK(judge_alignment_and_bleu(transformer_more, t, unknown).same_order.outcome == Outcome::inconclusive);
  // the better aligner kept its last step (it may still have been improving) or an earlier one
  const AlignmentAndBleu last = judge_alignment_and_bleu(transformer_more, t, b);
  CHECK(last.at_last_step.holds());
  CHECK(last.at_last_step.measured == 0.0);
  const AlignmentAndBleu earlier = judge_alignment_and_bleu(transformer_more, RecordedBleu{95.89, 1200, 1500}, b);
  CHECK(earlier.at_last_step.outcome == Outcome::fails);
  CHECK(earlier.at_last_step.measured == 300.0);
  CHECK(judge_alignment_and_bleu(bahdanau_more, t, b).at_last_step.outcome == Outcome::fails);  // Bahdanau: 1200 of 1500
  CHECK(judge_alignment_and_bleu(same, t, b).at_last_step.outcome == Outcome::inconclusive);
  CHECK(judge_alignment_and_bleu(transformer_more, RecordedBleu{95.89, 0, 0}, b).at_last_step.outcome ==
        Outcome::inconclusive);
  const RecordedBleu r = recorded_validation({{"valid_bleu", "99.82"}, {"best_step", "1200"}, {"steps", "1500"}});
  CHECK(r.bleu == doctest::Approx(99.82));
  CHECK(r.step == 1200);
  CHECK(r.steps == 1500);
  CHECK(recorded_validation({{"valid_bleu", "99.82"}, {"best_step", "x"}}).step == 0);
  CHECK(recorded_bleu({{"valid_bleu", "95.89"}}) == doctest::Approx(95.89));
  CHECK(std::isnan(recorded_bleu({})));
  CHECK(std::isnan(recorded_bleu({{"valid_bleu", "high"}})));
}

TEST_CASE("source_words and target_words: one word, many words") {
  CHECK(source_words(1) == "source word");
  CHECK(source_words(4) == "source words");
  CHECK(target_words(1) == "target word");
  CHECK(target_words(3) == "target words");
}

TEST_CASE("image_noise_sweep without levels uses the config's noise_sweep") {
  ImageConditioningConfig cfg;
  cfg.noise_sweep = {cfg.noise, 4.0f};
  const std::vector<ImageStudy> s = image_noise_sweep(7, cfg);
  REQUIRE(s.size() == 2u);
  CHECK(s[0].im.hits == image_study(7, cfg).im.hits);
  CHECK(s[1].reads_painted.outcome == Outcome::fails);
}
