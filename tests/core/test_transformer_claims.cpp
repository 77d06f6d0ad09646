// Chapter 08's studies and verdicts (attn/studies/transformer_claims.hpp): every verdict driven
// both ways; each measurement checked against a naive count on inputs whose answer is known; the
// block diagram (attn/present/transformer_report.hpp) within 100 columns with every part named.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "attn/present/terminal.hpp"
#include "attn/present/transformer_report.hpp"
#include "attn/studies/interpretability_claims.hpp"
#include "attn/studies/transformer_claims.hpp"
#include "tiny_transformer.hpp"

using namespace attn;

namespace {
ToyCorpus claims_corpus(std::size_t min_len = 4, std::size_t max_len = 8) { return tiny_toy_corpus(min_len, max_len, 12); }
EvalResult claims_eval(const std::vector<Tokens>& hyps, const std::vector<SentencePair>& pairs) {
  return evaluate_translations(hyps, pairs, default_length_buckets());
}
constexpr double kClaimsNaN = std::numeric_limits<double>::quiet_NaN();
// A step timing of `cpu_ms` CPU and `wall_ms` wall clock, every timed step alike.
StepTiming claims_step(double cpu_ms, double wall_ms) {
  StepTiming s;
  s.median_cpu_ms = s.min_cpu_ms = s.max_cpu_ms = cpu_ms;
  s.median_ms = wall_ms;
  return s;
}
}  // namespace

TEST_CASE("chapter 08 verdicts, each both ways") {
  CHECK(judge_mostly_broad(7, 8).holds());
  CHECK(judge_mostly_broad(2, 8).outcome == Outcome::fails);
  CHECK(judge_mostly_broad(0, 0).outcome == Outcome::inconclusive);
  CHECK(judge_masked(0.0).holds());
  CHECK(judge_masked(1e-7).outcome == Outcome::fails);
  CHECK(judge_parks_on_bos(6, 10).holds());
  CHECK(judge_parks_on_bos(2, 10).outcome == Outcome::fails);
  CHECK(judge_parks_on_bos(0, 0).outcome == Outcome::inconclusive);
  CHECK(judge_near_floor(0.783, 0.726).holds());
  CHECK(judge_near_floor(1.0, 0.726).outcome == Outcome::partly);
  CHECK(judge_near_floor(3.0, 0.726).outcome == Outcome::fails);
  CHECK(judge_search_works(129, 130).holds());
  CHECK(judge_search_works(60, 130).outcome == Outcome::fails);
  CHECK(judge_search_works(0, 0).outcome == Outcome::inconclusive);
  CHECK(judge_model_error(106, 109).holds());
  CHECK(judge_model_error(10, 109).outcome == Outcome::fails);
  CHECK(judge_generalises(96.0, 96.2).holds());
  CHECK(judge_generalises(99.0, 95.5).outcome == Outcome::partly);
  CHECK(judge_generalises(99.9, 80.0).outcome == Outcome::fails);
  CHECK(judge_pre_better(98.0, 92.8).holds());
  CHECK(judge_pre_better(92.0, 98.0).outcome == Outcome::fails);
  CHECK(judge_pre_better(93.0, 92.8).outcome == Outcome::inconclusive);
  CHECK(judge_pre_better(kClaimsNaN, 92.8).outcome == Outcome::inconclusive);
  CHECK(judge_grows(1.6).holds());
  CHECK(judge_grows(1.15).outcome == Outcome::partly);
  CHECK(judge_grows(0.92).outcome == Outcome::fails);
  CHECK(judge_level(0.95).holds());
  CHECK(judge_level(1.2).outcome == Outcome::partly);
  CHECK(judge_level(0.5).outcome == Outcome::fails);
  CHECK(judge_accounted(1.1).holds());
  CHECK(judge_accounted(15.5).outcome == Outcome::fails);
  CHECK(judge_accounted(kClaimsNaN).outcome == Outcome::inconclusive);
  CHECK(judge_recorded_waited(15.3).holds());  // 1919.7 s recorded against 125.2 s alone
  CHECK(judge_recorded_waited(1.2).outcome == Outcome::fails);
  CHECK(judge_recorded_waited(kClaimsNaN).outcome == Outcome::inconclusive);
  CHECK(judge_in_spread(83.5, 74.6, 89.1).holds());
  CHECK(judge_in_spread(83.5, 90.0, 140.0).outcome == Outcome::fails);  // every step now slower
  CHECK(judge_in_spread(83.5, 60.0, 70.0).outcome == Outcome::fails);   // every step now faster
  CHECK(judge_in_spread(kClaimsNaN, 60.0, 70.0).outcome == Outcome::inconclusive);
  CHECK(judge_metrics_agree(+1.1, +12.0).holds());          // both prefer beam
  CHECK(judge_metrics_agree(-1.1, -3.0).holds());           // both prefer greedy
  CHECK(judge_metrics_agree(-1.1, +12.0).outcome == Outcome::fails);  // BLEU prefers greedy, exact beam
  CHECK(judge_metrics_agree(0.0, 5.0).outcome == Outcome::inconclusive);
  CHECK(judge_metrics_agree(kClaimsNaN, 5.0).outcome == Outcome::inconclusive);
}

TEST_CASE("judge_length_explains: the brevity penalty's share of the BLEU gap, both ways, and no gap") {
  // BLEU = BP · P: beam's BP 0.95 against greedy's 1, precisions equal: length is the whole gap.
  const Verdict all_length = judge_length_explains(0.95, 1.0, 0.95 * 0.9, 1.0 * 0.9);
  CHECK(all_length.holds());
  CHECK(all_length.measured == doctest::Approx(1.0));
  // Both BPs 1 (the outputs no shorter in total than the references): length explains none of it.
  const Verdict no_length = judge_length_explains(1.0, 1.0, 0.951, 0.962);
  CHECK(no_length.outcome == Outcome::fails);
  CHECK(no_length.measured == doctest::Approx(0.0));
  // A BP ratio of 0.99 against a BLEU ratio of 0.95: ln 0.99 / ln 0.95 ≈ 0.196, under the cut-off.
  const Verdict some = judge_length_explains(0.99, 1.0, 0.95 * 0.8, 0.8);
  CHECK(some.outcome == Outcome::fails);
  CHECK(some.measured == doctest::Approx(std::log(0.99) / std::log(0.95)));
  CHECK(judge_length_explains(0.97, 1.0, 0.95 * 0.8, 0.8).holds());  // ln 0.97 / ln 0.95 ≈ 0.59
  CHECK(judge_length_explains(1.0, 0.98, 0.90, 0.95).outcome == Outcome::fails);  // BP favours the loser
  CHECK(judge_length_explains(1.0, 0.98, 0.90, 0.95).measured < 0.0);
  CHECK(judge_length_explains(0.9, 1.0, 0.9500, 0.9501).outcome == Outcome::inconclusive);  // a tie
  CHECK(judge_length_explains(0.0, 1.0, 0.0, 0.9).outcome == Outcome::inconclusive);        // empty output
}

TEST_CASE("label_smoothing_floor: the smoothed target's entropy, summed term by term; 0 without smoothing") {
  for (const auto& [eps, v] : {std::pair<double, std::size_t>{0.1, 62}, {0.2, 5}, {0.05, 1000}}) {
    double h = 0.0;
    for (std::size_t k = 0; k < v; ++k) {
      const double q = (k == 0 ? 1.0 - eps : 0.0) + eps / double(v);
      h -= q * std::log(q);
    }
    CHECK(label_smoothing_floor(eps, v) == doctest::Approx(h).epsilon(1e-12));
  }
  CHECK(label_smoothing_floor(0.1, 62) == doctest::Approx(0.726).epsilon(1e-3));
  CHECK(label_smoothing_floor(0.0, 62) == 0.0);
  CHECK_THROWS_AS(label_smoothing_floor(0.1, 1), std::invalid_argument);
  CHECK_THROWS_AS(label_smoothing_floor(1.0, 62), std::invalid_argument);
}

TEST_CASE("encoder_sharpness, decoder_mask_check, cross_head_alignment on hand-made weights") {
  Tensor4 w = xt::zeros<float>({std::size_t(1), std::size_t(2), std::size_t(3), std::size_t(3)});
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 3; ++j) w(0, 0, i, j) = 1.0f / 3.0f, w(0, 1, i, j) = i == j ? 1.0f : 0.0f;
  const EncoderSharpness s = encoder_sharpness(w);
  REQUIRE(s.heads.size() == 2);
  CHECK(s.heads[0].mean_max == doctest::Approx(1.0 / 3.0));
  CHECK(s.heads[1].mean_max == doctest::Approx(1.0));
  CHECK(s.heads[0].mean_entropy == doctest::Approx(std::log(3.0)));  // uniform rows: ln S
  CHECK(s.heads[1].mean_entropy == doctest::Approx(0.0));            // one word per row
  CHECK(s.uniform_entropy == doctest::Approx(std::log(3.0)));
  CHECK(s.sharpest == 1);
  CHECK(s.broad == 0);  // 1/3 is above kBroadHead
  CHECK(s.uniform == doctest::Approx(1.0 / 3.0));
  CHECK(s.mostly_broad.outcome == Outcome::fails);
  CHECK(s.most_read_rows == 1);  // the identity: every column read by one row; the first on ties
  CHECK(s.most_read == 0);
  CHECK(s.row_argmax == std::vector<int>{0, 1, 2});  // the sharpest head: the identity
  REQUIRE(s.row_max.size() == 3);
  CHECK(s.row_max[2] == doctest::Approx(1.0));
  Tensor4 one_column = w;
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 3; ++j) one_column(0, 1, i, j) = j == 2 ? 1.0f : 0.0f;
  CHECK(encoder_sharpness(one_column).most_read == 2);
  CHECK(encoder_sharpness(one_column).most_read_rows == 3);

  CHECK(decoder_mask_check(w).above > 0.0);                       // head 0 reads the future
  CHECK(decoder_mask_check(w).masked.outcome == Outcome::fails);
  Tensor4 lower = w;
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = i + 1; j < 3; ++j) lower(0, 0, i, j) = 0.0f;
  CHECK(decoder_mask_check(lower).above == 0.0);
  CHECK(decoder_mask_check(lower).masked.holds());
  // Head 0 of layer 0, lower-triangular and uniform: rows 1 and 2 tie, and a tie goes to <bos>.
  CHECK(decoder_mask_check(lower).rows == 2);
  CHECK(decoder_mask_check(lower).bos_rows == 2);
  CHECK(decoder_mask_check(lower).parks_on_bos.holds());
  Tensor4 diagonal = lower;
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j <= i; ++j) diagonal(0, 0, i, j) = i == j ? 1.0f : 0.0f;
  CHECK(decoder_mask_check(diagonal).bos_rows == 0);
  CHECK(decoder_mask_check(diagonal).parks_on_bos.outcome == Outcome::fails);
  CHECK(decoder_mask_check(diagonal).row_argmax == std::vector<int>{0, 1, 2});
  CHECK(decoder_mask_check(lower).row_max[2] == doctest::Approx(1.0 / 3.0));

  // Head 1 (the identity) points at the aligned word for an identity alignment; head 0's ties go to
  // column 0, one hit of three.
  const CrossHeads c = cross_head_alignment(w, {0, 1, 2});
  REQUIRE(c.heads.size() == 2);
  CHECK(c.heads[0].score.hits == 1);
  CHECK(c.heads[1].score.hits == 3);
  CHECK(c.best == 1);
  CHECK(c.best_aligns.holds());
  const CrossHeads none = cross_head_alignment(w, {2, 0, 1});
  CHECK(none.heads[1].score.hits == 0);
  CHECK(none.best_aligns.outcome == Outcome::fails);
}

TEST_CASE("cross_head_alignment over pairs: every pair's hits summed per head, the verdict from the sum") {
  const ToyCorpus corpus = claims_corpus();
  Rng rng(3);
  const Transformer m = transformer_init(tiny_transformer_config(corpus, 1), rng);
  const Vocab &sv = corpus.source_vocab, &tv = corpus.target_vocab;
  const CrossHeads all = cross_head_alignment(m, corpus.test, sv, tv);
  REQUIRE(all.heads.size() == 2);
  std::size_t hits0 = 0, total0 = 0;
  for (const SentencePair& p : corpus.test) {  // one pair at a time, teacher-forced on the reference
    const CrossHeads one = cross_head_alignment(transformer_attention(m, sv.encode(p.src), tv.encode(p.tgt)).cross,
                                                p.alignment);
    hits0 += one.heads[0].score.hits;
    total0 += one.heads[0].score.total;
  }
  CHECK(all.heads[0].score.hits == hits0);
  CHECK(all.heads[0].score.total == total0);
  CHECK(total0 > corpus.test.size());  // many words per pair, not one sentence's
  const double best = all.heads[all.best].score.share();
  for (const CrossHeadScore& h : all.heads) CHECK(h.score.share() <= best);
  CHECK(all.best_aligns.measured == doctest::Approx(best));
  CHECK(all.best_aligns.outcome == judge_alignment(best).outcome);
  CHECK(cross_head_alignment(m, {}, sv, tv).best_aligns.outcome == Outcome::inconclusive);
}

TEST_CASE("row_moments: mean and population std of each row") {
  Mat x = xt::zeros<float>({std::size_t(2), std::size_t(4)});
  x(0, 0) = 1; x(0, 1) = 2; x(0, 2) = 3; x(0, 3) = 4;
  const RowMoments r = row_moments(x);
  CHECK(r.mean[0] == doctest::Approx(2.5));
  CHECK(r.std[0] == doctest::Approx(std::sqrt(1.25)));
  CHECK(r.mean[1] == 0.0);
  CHECK(r.std[1] == 0.0);
}

TEST_CASE("length_counts, compare_buckets, first_failure on known outputs") {
  const ToyCorpus corpus = claims_corpus();
  std::vector<Tokens> perfect, damaged;
  for (const auto& p : corpus.test) perfect.push_back(p.tgt);
  damaged = perfect;
  damaged[0].pop_back();                 // shorter
  damaged[1].push_back("x");             // longer
  damaged[2][1] = "wrong";               // same length, one word wrong
  const EvalResult a = claims_eval(perfect, corpus.test), b = claims_eval(damaged, corpus.test);
  const LengthCounts lc = length_counts(b);
  CHECK(lc.shorter == 1);
  CHECK(lc.longer == 1);
  CHECK(lc.same == corpus.test.size() - 2);
  CHECK(lc.hyp_words == length_counts(a).hyp_words);  // one word fewer, one more
  const BucketComparison ab = compare_buckets(a, b), ba = compare_buckets(b, a);
  CHECK(ab.at_least == ab.buckets);
  CHECK(ba.at_least < ba.buckets);
  CHECK(ba.lowest < 100.0);
  const FailureExample f = first_failure(corpus.test, b, LengthBucket{1, 100});
  REQUIRE(f.found);
  CHECK(f.index == 0);
  CHECK(f.first_wrong == corpus.test[0].tgt.size() - 1);
  CHECK(f.wrong_words == 1);
  // the three failures by cause: [1] longer with every reference word right, [2] a wrong word at the
  // reference's length, [0] shorter (its missing last word is wrong)
  CHECK(f.failures == 3);
  CHECK(f.length_only == 1);
  CHECK(f.wrong_same_length == 1);
  CHECK(f.wrong_other_length == 1);
  const FailureExample g = first_failure(corpus.test, b, LengthBucket{1, 100});
  CHECK(g.hyp == damaged[0]);
  CHECK_FALSE(first_failure(corpus.test, a, LengthBucket{1, 100}).found);
  CHECK(f.copied_from == -1);  // the shorter output writes no wrong word

  // An output that repeats its first word where the reference's second belongs.
  std::vector<Tokens> repeated = perfect;
  const SentencePair& p0 = corpus.test[0];
  repeated[0][1] = p0.tgt[0];
  const FailureExample r = first_failure(corpus.test, claims_eval(repeated, corpus.test), LengthBucket{1, 100});
  REQUIRE(r.found);
  CHECK(r.first_wrong == 1);
  if (p0.tgt[1] != p0.tgt[0]) {
    CHECK(r.copied_from == 0);
    CHECK(r.copied_source == p0.alignment[0]);
    CHECK(r.wanted_source == p0.alignment[1]);
  }
}

TEST_CASE("beam_score is Σ log p / lp from the teacher-forced log-probabilities; diagnose_beam counts") {
  const ToyCorpus corpus = claims_corpus();
  TransformerModelConfig cfg = tiny_transformer_config(corpus, 1);
  Rng rng(5);
  const Transformer m = transformer_init(cfg, rng);
  const SentencePair& p = corpus.test[0];
  const std::vector<int> src = corpus.source_vocab.encode(p.src), out = corpus.target_vocab.encode(p.tgt);
  std::vector<int> tgt = {Vocab::bos};
  tgt.insert(tgt.end(), out.begin(), out.end());
  const Mat logp = transformer_step_log_probs(m, src, tgt);
  double sum = 0.0;
  for (std::size_t i = 0; i < out.size(); ++i) sum += logp(i, std::size_t(out[i]));
  sum += logp(out.size(), std::size_t(Vocab::eos));
  CHECK(beam_score(m, src, out, 0.6) == doctest::Approx(sum / gnmt_length_penalty(out.size() + 1, 0.6)).epsilon(1e-6));
  CHECK(beam_score(m, src, out, 0.0) == doctest::Approx(sum).epsilon(1e-6));

  // Greedy and beam outputs of the untrained model: where they differ, beam's score is computed
  // for each, and the counts add up.
  const EvalResult g = evaluate_translator([&](const std::vector<SentencePair>& ps) {
    return transformer_translate_pairs(m, ps, corpus.source_vocab, corpus.target_vocab, 1); }, corpus.test);
  const EvalResult b = evaluate_translator([&](const std::vector<SentencePair>& ps) {
    return transformer_translate_pairs(m, ps, corpus.source_vocab, corpus.target_vocab, 4); }, corpus.test);
  const BeamDiagnosis d = diagnose_beam(m, corpus.test, g, b, corpus.source_vocab, corpus.target_vocab);
  // Only the pairs in a bucket (5 words or more), the ones BLEU covers, are counted.
  std::size_t differ = 0, bucketed = 0;
  for (std::size_t i = 0; i < g.hyps.size(); ++i)
    if (corpus.test[i].src.size() >= 5) {
      differ += g.hyps[i] != b.hyps[i];
      ++bucketed;
    }
  REQUIRE(bucketed < corpus.test.size());  // the corpus holds 4-word pairs, in no bucket
  CHECK(d.differ == differ);
  CHECK(d.beam_higher <= d.differ);
  CHECK(d.beam_exact + d.beam_wrong == d.differ);
  CHECK(d.reference_lower <= d.beam_wrong);
  CHECK(d.sentences == bucketed);
  CHECK(d.beam_bleu == b.overall.bleu);
  CHECK(d.greedy_bleu == g.overall.bleu);
  const BeamDiagnosis same = diagnose_beam(m, corpus.test, g, g, corpus.source_vocab, corpus.target_vocab);
  CHECK(same.differ == 0);
  CHECK(same.search_works.outcome == Outcome::inconclusive);
  CHECK(same.ends_early.outcome == Outcome::inconclusive);  // the same outputs: as often
  CHECK(d.ends_early.outcome == judge_greater(double(d.beam.shorter), double(d.greedy.shorter), 0.0).outcome);
  // ends_early both ways: beam's outputs cut short against greedy's perfect ones, and the reverse.
  std::vector<Tokens> perfect, cut;
  for (const auto& pr : corpus.test) perfect.push_back(pr.tgt), cut.push_back(Tokens(pr.tgt.begin(), pr.tgt.end() - 1));
  const EvalResult full = claims_eval(perfect, corpus.test), shorter = claims_eval(cut, corpus.test);
  CHECK(diagnose_beam(m, corpus.test, full, shorter, corpus.source_vocab, corpus.target_vocab).ends_early.holds());
  CHECK(diagnose_beam(m, corpus.test, shorter, full, corpus.source_vocab, corpus.target_vocab).ends_early.outcome ==
        Outcome::fails);
  // exact matches over every sentence, and whether BLEU agrees with them: perfect beam against cut greedy
  // agrees (beam better by both)
  const BeamDiagnosis fb = diagnose_beam(m, corpus.test, shorter, full, corpus.source_vocab, corpus.target_vocab);
  CHECK(fb.beam_exact_all == bucketed);
  CHECK(fb.greedy_exact_all == 0);
  CHECK(fb.metrics_agree.holds());
}

TEST_CASE("run_evaluations: job order kept, every job reported done, CPU time counted") {
  const ToyCorpus corpus = claims_corpus();
  std::vector<Tokens> perfect;
  for (const auto& p : corpus.test) perfect.push_back(p.tgt);
  std::vector<TranslatorJob> jobs;
  for (const char* n : {"a", "b", "c"})
    jobs.push_back({n, [&] { return claims_eval(perfect, corpus.test); }});
  std::size_t calls = 0, last = 0;
  const std::vector<ModelEval> e = run_evaluations(jobs, [&](std::size_t done, std::size_t total) {
    ++calls;
    last = done;
    CHECK(total == 3);
  });
  REQUIRE(e.size() == 3);
  CHECK(e[0].name == "a");
  CHECK(e[2].name == "c");
  CHECK(calls == 3);
  CHECK(last == 3);
  CHECK(e[1].cpu_seconds >= 0.0);
  CHECK(eval_named(e, "b").result.overall.bleu == doctest::Approx(100.0));
  CHECK_THROWS_AS(eval_named(e, "z"), std::invalid_argument);
  CHECK(training_sample(corpus, 5).size() == 5);
  CHECK(training_sample(corpus, 5)[0].src == corpus.train[0].src);

  // A job's checkpoint metadata travels with its result; checkpoint_note reads it.
  std::vector<TranslatorJob> with_md = {{"m", [&] { return claims_eval(perfect, corpus.test); },
                                         {{"steps", "1500"}, {"best_step", "1000"}, {"valid_bleu", "99.13"}, {"seed", "1"}}}};
  const CheckpointNote n = checkpoint_note(run_evaluations(with_md).front().checkpoint);
  CHECK(n.steps == 1500);
  CHECK(n.best_step == 1000);
  CHECK(n.valid_bleu == doctest::Approx(99.13));
  CHECK(n.seed == "1");
  CHECK(checkpoint_note({}).seed.empty());
}

TEST_CASE("translation_findings: Bahdanau's overall figures, and training against test on the longest bucket") {
  const ToyCorpus corpus = claims_corpus();
  Rng rng(3);
  const Transformer m = transformer_init(tiny_transformer_config(corpus, 1), rng);
  std::vector<Tokens> perfect, damaged;
  for (const auto& p : corpus.test) perfect.push_back(p.tgt);
  for (const auto& p : corpus.test) damaged.push_back(Tokens(p.tgt.begin(), p.tgt.end() - 1));
  std::vector<Tokens> train_perfect;
  const std::vector<SentencePair> sample = training_sample(corpus, corpus.test.size());
  for (const auto& p : sample) train_perfect.push_back(p.tgt);
  auto evals = [&](const std::vector<Tokens>& test_out) {
    return std::vector<ModelEval>{{"bahdanau", claims_eval(perfect, corpus.test)},
                                  {"transformer_post_greedy", claims_eval(test_out, corpus.test)},
                                  {"transformer_post_beam4", claims_eval(test_out, corpus.test)},
                                  {"transformer_post_train", claims_eval(train_perfect, sample)}};
  };
  const TranslationFindings same = translation_findings(evals(perfect), "post", m, corpus, {{"valid_bleu", "95.5"}});
  CHECK(same.bahdanau_bleu == doctest::Approx(100.0));
  CHECK(same.test_exact == doctest::Approx(100.0));
  CHECK(same.own.valid_bleu == doctest::Approx(95.5));
  CHECK_FALSE(same.other_present);
  if (same.train_long_sentences > 0) CHECK(same.generalises_long.holds());  // 100 against 100
  const TranslationFindings worse = translation_findings(evals(damaged), "post", m, corpus, {});
  CHECK(worse.test_exact == 0.0);
  CHECK(worse.vs_bahdanau.at_least < worse.vs_bahdanau.buckets);
  if (worse.train_long_sentences > 0 && worse.test_long_sentences > 0)
    CHECK(worse.generalises_long.outcome == judge_generalises(worse.train_long, worse.test_long).outcome);
}

TEST_CASE("ffn_w2_grad_norms and norm_placement_study: one finite norm per layer, the ratios they print") {
  const ToyCorpus corpus = claims_corpus(20, 20);
  const TransformerModelConfig cfg = tiny_transformer_config(corpus, 1);
  const NormPlacementStudy s = norm_placement_study(cfg, corpus, 3, 8, 2);
  REQUIRE(s.post.encoder.size() == 3);
  REQUIRE(s.pre.decoder.size() == 3);
  for (double v : s.post.decoder) CHECK((std::isfinite(v) && v > 0.0));
  CHECK(s.post_dec == doctest::Approx(s.post.decoder.back() / s.post.decoder.front()));
  CHECK(s.pre_enc == doctest::Approx(s.pre.encoder.back() / s.pre.encoder.front()));
  CHECK(s.post_grows_dec.outcome == judge_grows(s.post_dec).outcome);
  CHECK(s.pre_enc_far == doctest::Approx(farthest_from_first(s.pre.encoder).second));
  CHECK(s.pre_level_enc.outcome == judge_level(s.pre_enc_far).outcome);
  CHECK(s.post.decoder != s.pre.decoder);  // the two placements differ
}

TEST_CASE("training_summary, cost_study and account_training_time: the figures they are built from") {
  const ToyCorpus corpus = claims_corpus();
  TrainingCurves cv;
  cv.train_loss = {4.0f, 1.0f};
  const Metadata md = {{"steps", "100"}, {"batch", "8"}, {"warmup", "10"}, {"lr_factor", "0.5"}};
  const TrainingSummary s = training_summary(md, cv, 200, 64, 62);
  CHECK(s.passes == doctest::Approx(4.0));
  TransformerTrainConfig tc;
  tc.lr_factor = 0.5;
  tc.warmup = 10;
  CHECK(s.peak_lr == doctest::Approx(transformer_learning_rate(tc, 64, 10)));
  CHECK(s.peak_lr == doctest::Approx(0.5 / std::sqrt(64.0) / std::sqrt(10.0)));
  CHECK(s.floor == doctest::Approx(label_smoothing_floor(0.1, 62)));
  CHECK(s.near_floor.outcome == Outcome::partly);  // 1.0 − 0.726
  CHECK(metadata_number(md, "steps") == 100.0);
  CHECK(metadata_number(md, "absent") == 0.0);
  CHECK(metadata_number({{"x", "abc"}}, "x") == 0.0);

  TransformerModelConfig cfg = tiny_transformer_config(corpus, 1);
  Rng rng(1);
  const Transformer m = transformer_init(cfg, rng);
  const CostStudy c = cost_study(m);
  CHECK(c.built == parameter_count(m));
  CHECK(c.source_table == cfg.src_vocab * cfg.d_model);
  CHECK(c.base.params == doctest::Approx(transformer_params(TransformerConfig{}).total()));
  CHECK(c.ours.share[0] < c.ours.share[2]);
  CHECK(c.ours.score_share[0] < c.ours.score_share[2]);
  for (std::size_t k = 0; k < 3; ++k) CHECK(c.base.score_share[k] < c.base.share[k]);
  // The score terms alone, by hand for base (d 512, d_ff 2048, 6 + 6 layers) at T = S = 512: an encoder
  // layer's 2·2·T²·d, a decoder layer's 2·2·T²·d + 2·2·T·S·d, over all FLOPs.
  {
    const double d = 512, f = 2048, t = 512;
    const double enc = 4 * 2 * t * d * d + 2 * 2 * t * t * d + 2 * 2 * t * d * f;
    const double dec = 6 * 2 * t * d * d + 2 * 2 * t * d * d + 2 * 2 * (t * t + t * t) * d + 2 * 2 * t * d * f;
    const double scores = 6 * (2 * 2 * t * t * d) + 6 * (2 * 2 * 2 * t * t * d);
    CHECK(c.base.score_share[1] == doctest::Approx(scores / (6 * enc + 6 * dec)));
  }

  const TrainingTimeAccount a = account_training_time(1000.0, 100, 2, claims_step(50.0, 80.0), 3.0, corpus);
  CHECK(a.valid_cpu_s == doctest::Approx(3.0 * 10.0 / 12.0));
  CHECK(a.estimate_s == doctest::Approx(100 * 0.05 + 2 * a.valid_cpu_s));
  CHECK(a.ratio == doctest::Approx(1000.0 / a.estimate_s));
  CHECK(a.accounted.outcome == Outcome::fails);
  CHECK(account_training_time(a.estimate_s, 100, 2, claims_step(50.0, 80.0), 3.0, corpus).accounted.holds());
}

TEST_CASE("parameter_parts add up to parameter_count; lesson_example finds a reordered sentence") {
  const ToyCorpus corpus = claims_corpus();
  Rng rng(1);
  const Transformer m = transformer_init(tiny_transformer_config(corpus, 2), rng);
  const ParameterParts p = parameter_parts(m);
  CHECK(p.total == parameter_count(m));
  CHECK(p.embeddings == (corpus.source_vocab.size() + corpus.target_vocab.size()) * 16);
  CHECK(p.encoder > 0);
  CHECK(p.decoder > p.encoder);  // cross-attention
  CHECK(p.output_bias == corpus.target_vocab.size());
  CHECK(p.rest == p.output_bias + p.final_norms);
  CHECK(p.final_norms == (m.cfg.norm == NormPlacement::Pre ? 2 * 2 * 16 : 0));
  TransformerModelConfig pre_cfg = tiny_transformer_config(corpus, 2);
  pre_cfg.norm = NormPlacement::Pre;
  Rng pre_rng(1);
  const Transformer pre = transformer_init(pre_cfg, pre_rng);
  const ParameterParts pp = parameter_parts(pre);
  CHECK(pp.final_norms == 2 * 2 * 16);  // enc_norm and dec_norm, γ and β of d_model each
  CHECK(pp.total == parameter_count(pre));
  const SentencePair& ex = lesson_example(corpus.test, 6, 1);
  if (&ex != &corpus.test.front()) CHECK(ex.src.size() == 6);
  CHECK_THROWS_AS(lesson_example({}), std::invalid_argument);
}

TEST_CASE("block_diagram: under 100 columns, both norm placements, every part named") {
  for (NormPlacement n : {NormPlacement::Post, NormPlacement::Pre}) {
    TransformerModelConfig cfg;
    cfg.norm = n;
    std::string all;
    for (const std::string& l : block_diagram(cfg)) {
      CHECK_MESSAGE(display_width(l) < 100, l);
      all += l + "\n";
    }
    for (const char* part : {"masked self-attention", "cross-attention", "FFN", "LayerNorm", "residual", "memory",
                             "encoder layer", "decoder layer", "softmax"})
      CHECK_MESSAGE(all.find(part) != std::string::npos, part);
    CHECK((all.find("final LayerNorm") != std::string::npos) == (n == NormPlacement::Pre));
    // Post-Norm: the sum comes before the LayerNorm; Pre-Norm: the LayerNorm before the sub-layer.
    const std::size_t sum = all.find("(+)"), ln = all.find("LayerNorm ─▶");
    CHECK((n == NormPlacement::Post ? sum < ln : ln < sum));
  }
}

TEST_CASE("warmup_findings: warm-up's effect and Pre against Post, from synthetic runs, both ways") {
  auto runs_of = [](std::vector<double> post_with, std::vector<double> post_without, std::vector<double> pre_with,
                    std::vector<double> pre_without) {
    std::vector<WarmupRun> runs;
    auto add = [&](NormPlacement n, bool w, const std::vector<double>& v) {
      for (std::size_t i = 0; i < v.size(); ++i) runs.push_back({n, w, std::uint64_t(i + 1), v[i]});
    };
    add(NormPlacement::Post, true, post_with);
    add(NormPlacement::Post, false, post_without);
    add(NormPlacement::Pre, true, pre_with);
    add(NormPlacement::Pre, false, pre_without);
    return runs;
  };
  // The shipped study's figures (a --norm-study run): warm-up within the seeds' spread for both, Pre lower.
  const WarmupFindings seen = warmup_findings(
      runs_of({3.926, 3.923, 3.889}, {3.923, 3.923, 3.934}, {2.974, 3.010, 3.026}, {3.010, 3.043, 3.032}), 300);
  CHECK(seen.steps == 300);
  CHECK(seen.seeds == 3);
  CHECK(seen.runs.size() == 12);
  CHECK(seen.post.with.mean == doctest::Approx((3.926 + 3.923 + 3.889) / 3));
  CHECK(seen.post.with.runs == 3);
  // two standard errors by hand: sample variances over 3 seeds each
  auto var = [](std::vector<double> v) {
    double m = 0, s = 0;
    for (double x : v) m += x / double(v.size());
    for (double x : v) s += (x - m) * (x - m);
    return s / double(v.size() - 1);
  };
  CHECK(seen.post.noise ==
        doctest::Approx(2.0 * std::sqrt(var({3.926, 3.923, 3.889}) / 3 + var({3.923, 3.923, 3.934}) / 3)));
  CHECK(seen.post.helps.outcome == Outcome::inconclusive);
  CHECK(seen.pre.helps.outcome == Outcome::inconclusive);
  CHECK(seen.pre_lower.holds());
  CHECK(seen.post_all.mean - seen.pre_all.mean == doctest::Approx(0.9).epsilon(0.05));
  // Warm-up clearly lower for Post-Norm, and Post below Pre: the other outcomes.
  const WarmupFindings helps = warmup_findings(
      runs_of({2.0, 2.01, 1.99}, {3.0, 3.01, 2.99}, {3.5, 3.51, 3.49}, {3.2, 3.21, 3.19}), 300);
  CHECK(helps.post.helps.holds());
  CHECK(helps.pre.helps.outcome == Outcome::fails);
  CHECK(helps.pre_lower.outcome == Outcome::fails);
  // Diverged runs (NaN) count, and decide when they differ.
  const WarmupFindings diverged = warmup_findings(
      runs_of({3.0, 3.0, 3.0}, {kClaimsNaN, kClaimsNaN, 3.0}, {3.0, 3.1, 3.2}, {3.0, 3.1, 3.2}), 300);
  CHECK(diverged.post.without.diverged == 2);
  CHECK(diverged.post.without.mean == doctest::Approx(3.0));
  CHECK(diverged.post.helps.holds());
  CHECK(diverged.pre.helps.outcome == Outcome::inconclusive);
  // One run per arm: no spread, so no verdict.
  CHECK(warmup_findings(runs_of({3.0}, {4.0}, {2.0}, {2.5}), 300).post.helps.outcome == Outcome::inconclusive);
}

TEST_CASE("farthest_from_first: level is judged on every layer, not on the end layers alone") {
  // The end layers agree (last / first 1.0), a middle layer sits 20% low: level is only partly.
  const std::vector<double> mid_low = {1.0, 1.02, 0.8, 0.97, 1.0};
  const auto [layer, ratio] = farthest_from_first(mid_low);
  CHECK(layer == 2);
  CHECK(ratio == doctest::Approx(0.8));
  CHECK(judge_level(mid_low.back() / mid_low.front()).holds());  // the endpoints alone would say holds
  CHECK(judge_level(ratio).outcome == Outcome::partly);
  // Every layer within 10%: holds; the farthest is the largest |ratio − 1|, above or below.
  const auto close = farthest_from_first({2.0, 2.1, 1.9, 2.16});
  CHECK(close.first == 3);
  CHECK(judge_level(close.second).holds());
  CHECK(judge_level(farthest_from_first({1.0, 0.5}).second).outcome == Outcome::fails);
  CHECK(std::isnan(farthest_from_first({1.0}).second));
}

TEST_CASE("grad_norm_reading: the sparkline's cells, the warm-up cell, the dip and the peak, both ways") {
  // 100 steps in 10 cells of 10: high at step 1, a dip in cell 1, the peak in cell 3 (warm-up 35: cell 3).
  std::vector<float> g(100, 1.0f);
  g[0] = 20.0f;  // cell 0 averages (20 + 9·1)/10 = 2.9
  for (std::size_t i = 10; i < 20; ++i) g[i] = 0.5f;
  for (std::size_t i = 30; i < 40; ++i) g[i] = 4.0f;
  const GradNormReading r = grad_norm_reading(g, 35, 10);
  CHECK(r.cells == 10);
  CHECK(r.warmup_cell == 3);
  CHECK(r.dip_cell == 1);
  CHECK(r.dip == doctest::Approx(0.5));
  CHECK(r.peak_cell == 3);
  CHECK(r.peak == doctest::Approx(4.0));
  CHECK(r.first == 20.0f);
  CHECK(r.last == 1.0f);
  CHECK(r.first_cell == doctest::Approx(2.9));
  CHECK(r.last_cell == doctest::Approx(1.0));
  // Clipped steps: norm above the clip (default 1): step 1 and cell 3's ten steps; none at clip 20.
  CHECK(r.clip == doctest::Approx(1.0));
  CHECK(r.clipped == 11);
  CHECK(grad_norm_reading(g, 35, 10, 20.0).clipped == 0);
  CHECK(grad_norm_reading(g, 35, 10, 0.9).clipped == 90);
  CHECK(r.peak_at_warmup.holds());
  CHECK(grad_norm_reading(g, 30, 10).warmup_cell == 2);  // step 30 is the last of cell 2
  CHECK(grad_norm_reading(g, 31, 10).warmup_cell == 3);
  // The peak far from warm-up's end.
  std::vector<float> late = g;
  for (std::size_t i = 80; i < 90; ++i) late[i] = 9.0f;
  const GradNormReading l = grad_norm_reading(late, 35, 10);
  CHECK(l.peak_cell == 8);
  CHECK(l.peak_at_warmup.outcome == Outcome::fails);
  CHECK(grad_norm_reading({}, 35, 10).cells == 0);
  CHECK(grad_norm_reading({}, 35, 10).peak_at_warmup.outcome == Outcome::inconclusive);
}

TEST_CASE("explain_first_loss: an unrelated target's cost against ln V, both ways") {
  TrainingSummary s;
  s.uniform_loss = std::log(62.0);
  CHECK(s.start_explains.outcome == Outcome::inconclusive);  // not measured yet
  InitialPredictions p;
  p.rows = 10;
  p.entropy = 3.0;
  p.unrelated_loss = 6.0;
  explain_first_loss(s, p, 1, 32);
  CHECK(s.start_explains.holds());
  CHECK(s.start_seed == 1);
  CHECK(s.start_batch == 32);
  p.unrelated_loss = 4.0;  // below ln 62 = 4.127: it would not explain a first loss above ln V
  explain_first_loss(s, p, 1, 32);
  CHECK(s.start_explains.outcome == Outcome::fails);
  p.rows = 0;
  explain_first_loss(s, p, 1, 32);
  CHECK(s.start_explains.outcome == Outcome::inconclusive);
}

TEST_CASE("training_summary: the uniform guess's ln V against the first loss, both ways") {
  TrainingCurves cv;
  cv.train_loss = {6.2f, 1.0f};
  const Metadata md = {{"steps", "2"}, {"batch", "8"}, {"warmup", "1"}, {"lr_factor", "0.5"}};
  const TrainingSummary above = training_summary(md, cv, 200, 64, 62);
  CHECK(above.uniform_loss == doctest::Approx(std::log(62.0)));
  CHECK(above.above_uniform.holds());
  cv.train_loss = {3.0f, 1.0f};
  CHECK(training_summary(md, cv, 200, 64, 62).above_uniform.outcome == Outcome::fails);
  CHECK(training_summary(md, TrainingCurves{}, 200, 64, 62).above_uniform.outcome == Outcome::inconclusive);
}

TEST_CASE("checkpoint_note: still improving from the validation curve's last two points, both ways") {
  TrainingCurves cv;
  cv.valid_step = {250, 500, 750};
  cv.valid_bleu = {10.0f, 82.0f, 95.9f};
  const Metadata md = {{"steps", "750"}, {"best_step", "750"}, {"valid_bleu", "95.90"}, {"seed", "1"}};
  const CheckpointNote rising = checkpoint_note(md, cv);
  CHECK(rising.previous_step == 500.0);
  CHECK(rising.last_step == 750.0);
  CHECK(rising.last_bleu - rising.previous_bleu == doctest::Approx(13.9).epsilon(1e-4));
  CHECK(rising.still_improving.holds());
  cv.valid_bleu = {10.0f, 95.7f, 95.9f};
  CHECK(checkpoint_note(md, cv).still_improving.outcome == Outcome::fails);
  CHECK(checkpoint_note(md).still_improving.outcome == Outcome::inconclusive);
  CHECK(judge_still_improving(0.5).holds());
  CHECK(judge_still_improving(0.4).outcome == Outcome::fails);
}

TEST_CASE("first_failure places its example among the bucket's failures; judge_typical_failure both ways") {
  const ToyCorpus corpus = claims_corpus();
  REQUIRE(corpus.test.size() >= 6);
  std::vector<Tokens> hyps;
  for (const auto& p : corpus.test) hyps.push_back(p.tgt);
  hyps[0][0] = "wrong";  // the first failure: one word wrong
  for (std::size_t k = 1; k < 5; ++k)
    for (std::size_t j = 0; j < 3 && j < hyps[k].size(); ++j) hyps[k][j] = "wrong";  // four worse ones
  const FailureExample f = first_failure(corpus.test, claims_eval(hyps, corpus.test), LengthBucket{1, 100});
  REQUIRE(f.found);
  CHECK(f.index == 0);
  CHECK(f.wrong_words == 1);
  CHECK(f.failures == 5);
  CHECK(f.milder == 0);
  CHECK(f.worse == 4);
  CHECK(f.median_wrong == doctest::Approx(3.0));
  CHECK(f.typical.outcome == Outcome::fails);  // 4 of 5 worse: milder than most
  CHECK(judge_typical_failure(1, 1, 4).holds());
  CHECK(judge_typical_failure(4, 0, 5).outcome == Outcome::fails);
  CHECK(judge_typical_failure(0, 0, 0).outcome == Outcome::inconclusive);
}

TEST_CASE("retrained_alone_seconds: README's figures; account_training_time judges like with like") {
  CHECK(retrained_alone_seconds("post") == 125.2);
  CHECK(retrained_alone_seconds("pre") == 114.4);
  CHECK(retrained_alone_seconds("x") == 0.0);
  const ToyCorpus corpus = claims_corpus();
  // The stored pair decides the recorded time's verdict, whatever the step timed now took: a loaded
  // run (step 3× slower) and an idle one give the same verdict.
  for (const double cpu : {50.0, 150.0}) {
    const TrainingTimeAccount a = account_training_time(1000.0, 100, 2, claims_step(cpu, 80.0), 3.0, corpus, 8.0);
    CHECK(a.recorded_over_alone == doctest::Approx(125.0));
    CHECK(a.recorded_waited.holds());
  }
  CHECK(account_training_time(9.0, 100, 2, claims_step(50.0, 80.0), 3.0, corpus, 8.0).recorded_waited.outcome ==
        Outcome::fails);  // recorded close to the idle run: no waiting
  // The idle run's time per step (8 s / 100 = 80 ms) against the spread of the steps timed now.
  StepTiming st = claims_step(78.0, 80.0);
  st.min_cpu_ms = 70.0;
  st.max_cpu_ms = 90.0;
  const TrainingTimeAccount in = account_training_time(1000.0, 100, 2, st, 3.0, corpus, 8.0, 3.5);
  CHECK(in.alone_step_ms == doctest::Approx(80.0));
  CHECK(in.alone_step_in_spread.holds());
  CHECK(in.load_now == 3.5);
  CHECK(in.median_vs_alone == doctest::Approx((78.0 - 80.0) / 80.0));  // the median, 2.5% below the idle figure
  CHECK(std::isnan(account_training_time(1000.0, 100, 2, st, 3.0, corpus).median_vs_alone));  // no idle figure
  st.min_cpu_ms = 95.0;  // a loaded run: every step slower than the idle average
  st.max_cpu_ms = 140.0;
  CHECK(account_training_time(1000.0, 100, 2, st, 3.0, corpus, 8.0).alone_step_in_spread.outcome == Outcome::fails);
  const TrainingTimeAccount a = account_training_time(1000.0, 100, 2, claims_step(50.0, 80.0), 3.0, corpus);
  CHECK(a.alone_s == 0.0);
  CHECK(a.recorded_waited.outcome == Outcome::inconclusive);  // no idle figure: not judged
  CHECK(a.alone_step_in_spread.outcome == Outcome::inconclusive);
  CHECK(a.step_wall_ratio == doctest::Approx(80.0 / 50.0));
  CHECK(a.step_waited.holds());  // 80 ms wall for 50 ms CPU
  CHECK(account_training_time(1000.0, 100, 2, claims_step(50.0, 51.0), 3.0, corpus).step_waited.outcome ==
        Outcome::fails);
}
