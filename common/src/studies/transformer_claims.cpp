// Chapter 08's measurements and verdicts (see attn/studies/transformer_claims.hpp).
#include "attn/studies/transformer_claims.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <future>
#include <limits>
#include <stdexcept>
#include <tuple>

#include <xtensor/xview.hpp>

#include "attn/studies/interpretability_claims.hpp"
#include "attn/tensor/tensor_ops.hpp"

namespace attn {

namespace {
bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }
Mat head_map(const Tensor4& t, std::size_t l, std::size_t h) { return Mat(xt::view(t, l, h)); }
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}
double ratio_or_nan(double a, double b) { return b > 0.0 ? a / b : std::numeric_limits<double>::quiet_NaN(); }
}  // namespace

// ---- step 1 -------------------------------------------------------------------------------------
ParameterParts parameter_parts(const Transformer& m) {
  ParameterParts p;
  for_each_param(
      [&](const std::string& n, const auto& x) {
        (starts_with(n, "src_emb") || starts_with(n, "tgt_emb") ? p.embeddings
         : starts_with(n, "enc.")                               ? p.encoder
         : starts_with(n, "dec.")                               ? p.decoder
         : starts_with(n, "enc_norm") || starts_with(n, "dec_norm") ? p.final_norms
                                                                : p.output_bias) += x.size();
      },
      m);
  p.rest = p.output_bias + p.final_norms;
  p.total = p.embeddings + p.encoder + p.decoder + p.rest;
  return p;
}

// ---- step 2 -------------------------------------------------------------------------------------
const SentencePair& lesson_example(const std::vector<SentencePair>& pairs, std::size_t length, std::size_t moved) {
  if (pairs.empty()) throw std::invalid_argument("lesson_example: no sentence pairs");
  for (const auto& p : pairs) {
    std::size_t off = 0;
    for (std::size_t i = 0; i < p.alignment.size(); ++i) off += std::size_t(p.alignment[i]) != i;
    if (p.src.size() == length && off >= moved) return p;
  }
  return pairs.front();
}

ExampleRun run_example(const Transformer& m, const SentencePair& pair, const Vocab& src_vocab) {
  ExampleRun r;
  r.src = src_vocab.encode(pair.src);
  r.out = transformer_greedy(m, r.src, 1, r.src.size(), r.src.size() + 10).front();
  r.att = transformer_attention(m, r.src, r.out);
  r.tape = transformer_teacher_forced(m, r.src, r.out);
  return r;
}

Verdict judge_mostly_broad(std::size_t broad, std::size_t heads) {
  return judge_at_least(heads ? double(broad) / double(heads) : std::numeric_limits<double>::quiet_NaN(), 0.5);
}

EncoderSharpness encoder_sharpness(const Tensor4& enc_self) {
  EncoderSharpness s;
  s.uniform = enc_self.shape(3) ? 1.0 / double(enc_self.shape(3)) : 0.0;
  s.uniform_entropy = enc_self.shape(3) ? std::log(double(enc_self.shape(3))) : 0.0;
  for (std::size_t l = 0; l < enc_self.shape(0); ++l)
    for (std::size_t h = 0; h < enc_self.shape(1); ++h) {
      const Mat w = head_map(enc_self, l, h);
      double sum = 0.0, entropy = 0.0;
      for (std::size_t i = 0; i < w.shape(0); ++i) {
        sum += double(xt::amax(xt::view(w, i, xt::all()))());
        for (std::size_t j = 0; j < w.shape(1); ++j)
          if (w(i, j) > 0.0f) entropy -= double(w(i, j)) * std::log(double(w(i, j)));
      }
      const double v = w.shape(0) ? sum / double(w.shape(0)) : 0.0;
      const double e = w.shape(0) ? entropy / double(w.shape(0)) : 0.0;
      if (s.heads.empty() || v > s.heads[s.sharpest].mean_max) s.sharpest = s.heads.size();
      s.heads.push_back({l, h, v, e});
      s.broad += v < kBroadHead;
    }
  s.mostly_broad = judge_mostly_broad(s.broad, s.heads.size());
  if (s.heads.empty()) return s;
  const HeadSharpness& top = s.heads[s.sharpest];
  std::vector<std::size_t> rows_reading(enc_self.shape(3), 0);
  for (int j : argmax_alignment(head_map(enc_self, top.layer, top.head))) ++rows_reading[std::size_t(j)];
  s.most_read = std::size_t(std::max_element(rows_reading.begin(), rows_reading.end()) - rows_reading.begin());
  s.most_read_rows = rows_reading[s.most_read];
  s.row_argmax = argmax_alignment(head_map(enc_self, top.layer, top.head));
  for (std::size_t i = 0; i < s.row_argmax.size(); ++i)
    s.row_max.push_back(double(enc_self(top.layer, top.head, i, std::size_t(s.row_argmax[i]))));
  return s;
}

// ---- step 3 -------------------------------------------------------------------------------------
Verdict judge_masked(double above) { return judge_at_most(above, 0.0); }
Verdict judge_parks_on_bos(std::size_t bos_rows, std::size_t rows) {
  return judge_at_least(rows ? double(bos_rows) / double(rows) : std::numeric_limits<double>::quiet_NaN(), 0.5);
}

DecoderMaskCheck decoder_mask_check(const Tensor4& w) {
  DecoderMaskCheck c;
  for (std::size_t l = 0; l < w.shape(0); ++l)
    for (std::size_t h = 0; h < w.shape(1); ++h)
      for (std::size_t i = 0; i < w.shape(2); ++i)
        for (std::size_t j = i + 1; j < w.shape(3); ++j) c.above += double(w(l, h, i, j));
  c.masked = judge_masked(c.above);
  if (w.shape(0) && w.shape(1) && w.shape(2) > 1) {
    const std::vector<int> argmax = argmax_alignment(head_map(w, 0, 0));
    c.rows = argmax.size() - 1;
    c.bos_rows = std::size_t(std::count(argmax.begin() + 1, argmax.end(), 0));
    c.row_argmax = argmax;
    for (std::size_t i = 0; i < argmax.size(); ++i) c.row_max.push_back(double(w(0, 0, i, std::size_t(argmax[i]))));
  }
  c.parks_on_bos = judge_parks_on_bos(c.bos_rows, c.rows);
  return c;
}

// ---- step 4 -------------------------------------------------------------------------------------
CrossHeads cross_head_alignment(const Tensor4& cross, const std::vector<int>& reference) {
  CrossHeads c;
  for (std::size_t l = 0; l < cross.shape(0); ++l)
    for (std::size_t h = 0; h < cross.shape(1); ++h) {
      const AlignmentScore s = alignment_hits(head_map(cross, l, h), reference);
      if (!c.heads.empty() && s.hits > c.heads[c.best].score.hits) c.best = c.heads.size();
      c.heads.push_back({l, h, s});
    }
  c.best_aligns = c.heads.empty() ? Verdict{} : judge_alignment(c.heads[c.best].score.share());
  return c;
}

CrossHeads cross_head_alignment(const Transformer& m, const std::vector<SentencePair>& pairs, const Vocab& sv,
                                const Vocab& tv) {
  CrossHeads c;
  for (const SentencePair& p : pairs) {
    const CrossHeads one = cross_head_alignment(transformer_attention(m, sv.encode(p.src), tv.encode(p.tgt)).cross,
                                                p.alignment);
    if (c.heads.empty()) c.heads = one.heads;
    else
      for (std::size_t k = 0; k < c.heads.size() && k < one.heads.size(); ++k) {
        c.heads[k].score.hits += one.heads[k].score.hits;
        c.heads[k].score.total += one.heads[k].score.total;
        c.heads[k].score.missing += one.heads[k].score.missing;
      }
  }
  for (std::size_t k = 1; k < c.heads.size(); ++k)
    if (c.heads[k].score.hits > c.heads[c.best].score.hits) c.best = k;
  c.best_aligns = c.heads.empty() ? Verdict{} : judge_alignment(c.heads[c.best].score.share());
  return c;
}

// ---- step 5 -------------------------------------------------------------------------------------
RowMoments row_moments(const Mat& x) {
  RowMoments r;
  const std::size_t d = x.shape(1);
  for (std::size_t i = 0; i < x.shape(0); ++i) {
    double mean = 0.0, var = 0.0;
    for (std::size_t j = 0; j < d; ++j) mean += double(x(i, j));
    mean /= double(std::max<std::size_t>(d, 1));
    for (std::size_t j = 0; j < d; ++j) var += (double(x(i, j)) - mean) * (double(x(i, j)) - mean);
    r.mean.push_back(mean);
    r.std.push_back(std::sqrt(var / double(std::max<std::size_t>(d, 1))));
  }
  return r;
}

// ---- step 6 -------------------------------------------------------------------------------------
double label_smoothing_floor(double eps, std::size_t vocab) {
  if (vocab < 2 || !(eps >= 0.0 && eps < 1.0)) throw std::invalid_argument("label_smoothing_floor: need V ≥ 2, 0 ≤ ε < 1");
  const double v = double(vocab), right = 1.0 - eps + eps / v, other = eps / v;
  return -right * std::log(right) - (eps > 0.0 ? (v - 1.0) * other * std::log(other) : 0.0);
}

Verdict judge_near_floor(double loss, double floor) { return judge_at_most(loss - floor, kNearFloor, 0.5); }

double metadata_number(const Metadata& md, const std::string& key) {
  const auto it = md.find(key);
  if (it == md.end()) return 0.0;
  try {
    return std::stod(it->second);
  } catch (const std::exception&) {
    return 0.0;
  }
}

TrainingSummary training_summary(const Metadata& md, const TrainingCurves& curves, std::size_t train_pairs,
                                 std::size_t d_model, std::size_t vocab, double smoothing) {
  TrainingSummary s;
  s.steps = std::size_t(metadata_number(md, "steps"));
  s.batch = std::size_t(metadata_number(md, "batch"));
  s.warmup = std::int64_t(metadata_number(md, "warmup"));
  s.lr_factor = metadata_number(md, "lr_factor");
  s.best_step = std::size_t(metadata_number(md, "best_step"));
  s.train_pairs = train_pairs;
  s.d_model = d_model;
  s.vocab = vocab;
  s.passes = train_pairs ? double(s.steps) * double(s.batch) / double(train_pairs) : 0.0;
  TransformerTrainConfig tc;
  tc.lr_factor = s.lr_factor;
  tc.warmup = std::max<std::int64_t>(s.warmup, 1);
  s.peak_lr = transformer_learning_rate(tc, d_model, tc.warmup);
  s.smoothing = smoothing;
  s.floor = label_smoothing_floor(smoothing, vocab);
  if (!curves.train_loss.empty()) {
    s.loss_first = curves.train_loss.front();
    s.loss_last = curves.train_loss.back();
    s.near_floor = judge_near_floor(s.loss_last, s.floor);
  }
  s.uniform_loss = vocab ? std::log(double(vocab)) : 0.0;
  s.above_uniform = curves.train_loss.empty() ? Verdict{} : judge_greater(s.loss_first, s.uniform_loss, 0.0);
  s.grad = grad_norm_reading(curves.grad_norm, s.warmup, kCurveCells);
  return s;
}

void explain_first_loss(TrainingSummary& s, const InitialPredictions& start, std::uint64_t seed, std::size_t batch) {
  s.start = start;
  s.start_seed = seed;
  s.start_batch = batch;
  s.start_explains = start.rows ? judge_greater(start.unrelated_loss, s.uniform_loss, 0.0) : Verdict{};
}

GradNormReading grad_norm_reading(const std::vector<float>& g, std::int64_t warmup, std::size_t cells, double clip) {
  GradNormReading r;
  r.steps = g.size();
  r.warmup = warmup;
  r.clip = clip;
  if (clip > 0.0) r.clipped = std::size_t(std::count_if(g.begin(), g.end(), [clip](float v) { return double(v) > clip; }));
  r.cells = std::min(cells, g.size());
  if (r.cells == 0) return r;
  std::vector<double> cell(r.cells, 0.0);
  for (std::size_t c = 0; c < r.cells; ++c) {  // the sparkline's cells: [c·N/n, (c+1)·N/n)
    const std::size_t a = c * g.size() / r.cells, b = (c + 1) * g.size() / r.cells;
    for (std::size_t i = a; i < b; ++i) cell[c] += double(g[i]);
    cell[c] /= double(b - a);
  }
  const std::size_t w = std::size_t(std::clamp<std::int64_t>(warmup, 1, std::int64_t(g.size())));
  while (r.warmup_cell + 1 < r.cells && (r.warmup_cell + 1) * g.size() / r.cells < w) ++r.warmup_cell;
  r.dip_cell = std::size_t(std::min_element(cell.begin(), cell.begin() + std::ptrdiff_t(r.warmup_cell) + 1) - cell.begin());
  r.peak_cell = std::size_t(std::max_element(cell.begin() + std::ptrdiff_t(r.dip_cell), cell.end()) - cell.begin());
  r.first = g.front();
  r.last = g.back();
  r.dip = cell[r.dip_cell];
  r.peak = cell[r.peak_cell];
  r.first_cell = cell.front();
  r.last_cell = cell.back();
  const double apart = std::abs(double(r.peak_cell) - double(r.warmup_cell)) / double(r.cells);
  r.peak_at_warmup = judge_at_most(apart, kPeakNearWarmup);
  return r;
}

Verdict judge_still_improving(double last_rise) { return judge_at_least(last_rise, kStillImproving); }

// ---- step 7 -------------------------------------------------------------------------------------
std::vector<ModelEval> run_evaluations(const std::vector<TranslatorJob>& jobs,
                                       const std::function<void(std::size_t, std::size_t)>& on_done) {
  std::vector<std::future<ModelEval>> running;
  for (const TranslatorJob& j : jobs)
    running.push_back(std::async(std::launch::async, [&j] {
      const double t0 = thread_cpu_seconds();
      ModelEval e{j.name, j.run(), 0.0, j.checkpoint, j.curves, j.parameters};
      e.cpu_seconds = thread_cpu_seconds() - t0;
      return e;
    }));
  std::vector<bool> seen(running.size(), false);
  for (std::size_t done = 0; done < running.size();) {
    for (std::size_t i = 0; i < running.size(); ++i)
      if (!seen[i] && running[i].wait_for(std::chrono::milliseconds(50)) == std::future_status::ready) {
        seen[i] = true;
        if (on_done) on_done(++done, running.size());
        else ++done;
      }
  }
  std::vector<ModelEval> out;
  for (auto& f : running) out.push_back(f.get());
  return out;
}

const ModelEval& eval_named(const std::vector<ModelEval>& evals, const std::string& name) {
  for (const ModelEval& e : evals)
    if (e.name == name) return e;
  throw std::invalid_argument("eval_named: no evaluation named " + name);
}

std::vector<SentencePair> training_sample(const ToyCorpus& corpus, std::size_t n) {
  return {corpus.train.begin(), corpus.train.begin() + std::ptrdiff_t(std::min(n, corpus.train.size()))};
}

LengthCounts length_counts(const EvalResult& r) {
  LengthCounts c;
  for (std::size_t i = 0; i < r.hyps.size() && i < r.refs.size(); ++i) {
    const std::size_t h = r.hyps[i].size(), ref = r.refs[i].size();
    (h < ref ? c.shorter : h > ref ? c.longer : c.same) += 1;
    c.hyp_words += h;
    c.ref_words += ref;
  }
  return c;
}

BucketComparison compare_buckets(const EvalResult& a, const EvalResult& b) {
  BucketComparison c;
  c.buckets = std::min(a.buckets.size(), b.buckets.size());
  c.lowest = a.buckets.empty() ? 0.0 : 100.0;
  for (const BucketMetrics& m : a.buckets) c.lowest = std::min(c.lowest, m.bleu);
  for (std::size_t k = 0; k < c.buckets; ++k) c.at_least += a.buckets[k].bleu >= b.buckets[k].bleu;
  return c;
}

namespace {
std::size_t wrong_words(const Tokens& hyp, const Tokens& ref) {
  std::size_t n = 0;
  for (std::size_t j = 0; j < ref.size(); ++j) n += j >= hyp.size() || hyp[j] != ref[j];
  return n;
}
// Every failure's wrong_words against the example's.
void place_failure(FailureExample& f, const std::vector<SentencePair>& pairs, const EvalResult& r,
                   const LengthBucket& bucket) {
  std::vector<std::size_t> wrong;
  for (std::size_t i = 0; i < pairs.size() && i < r.hyps.size(); ++i) {
    const std::size_t len = pairs[i].src.size();
    if (len < bucket.lo || len > bucket.hi || r.hyps[i] == pairs[i].tgt) continue;
    wrong.push_back(wrong_words(r.hyps[i], pairs[i].tgt));
    const bool same_length = r.hyps[i].size() == pairs[i].tgt.size();
    f.length_only += wrong.back() == 0;
    f.wrong_same_length += wrong.back() > 0 && same_length;
    f.wrong_other_length += wrong.back() > 0 && !same_length;
    f.milder += wrong.back() < f.wrong_words;
    f.worse += wrong.back() > f.wrong_words;
  }
  f.failures = wrong.size();
  std::sort(wrong.begin(), wrong.end());
  const std::size_t n = wrong.size();
  f.median_wrong = n == 0 ? 0.0 : n % 2 ? double(wrong[n / 2]) : 0.5 * double(wrong[n / 2 - 1] + wrong[n / 2]);
  f.typical = judge_typical_failure(f.milder, f.worse, f.failures);
}
}  // namespace

Verdict judge_typical_failure(std::size_t milder, std::size_t worse, std::size_t failures) {
  return judge_at_most(failures ? double(std::max(milder, worse)) / double(failures)
                                : std::numeric_limits<double>::quiet_NaN(),
                       kTypicalShare);
}

FailureExample first_failure(const std::vector<SentencePair>& pairs, const EvalResult& r, const LengthBucket& bucket) {
  FailureExample f;
  for (std::size_t i = 0; i < pairs.size() && i < r.hyps.size(); ++i) {
    const std::size_t len = pairs[i].src.size();
    if (len < bucket.lo || len > bucket.hi || r.hyps[i] == pairs[i].tgt) continue;
    f.found = true;
    f.index = i;
    f.hyp = r.hyps[i];
    const Tokens& ref = pairs[i].tgt;
    while (f.first_wrong < ref.size() && f.first_wrong < f.hyp.size() && f.hyp[f.first_wrong] == ref[f.first_wrong])
      ++f.first_wrong;
    f.wrong_words = wrong_words(f.hyp, ref);
    if (f.first_wrong < f.hyp.size())
      for (std::size_t j = 0; j < f.first_wrong && j < ref.size(); ++j)
        if (ref[j] == f.hyp[f.first_wrong]) f.copied_from = int(j);
    const std::vector<int>& a = pairs[i].alignment;
    if (f.copied_from >= 0 && std::size_t(f.copied_from) < a.size()) f.copied_source = a[std::size_t(f.copied_from)];
    if (f.first_wrong < a.size()) f.wanted_source = a[f.first_wrong];
    place_failure(f, pairs, r, bucket);
    return f;
  }
  return f;
}

double beam_score(const Transformer& m, const std::vector<int>& src, const std::vector<int>& out, double alpha) {
  std::vector<int> tgt = {Vocab::bos};
  tgt.insert(tgt.end(), out.begin(), out.end());
  const Mat logp = transformer_step_log_probs(m, src, tgt);
  double sum = 0.0;
  for (std::size_t i = 0; i < tgt.size(); ++i) sum += double(logp(i, std::size_t(i + 1 < tgt.size() ? tgt[i + 1] : Vocab::eos)));
  return sum / gnmt_length_penalty(out.size() + 1, alpha);
}

Verdict judge_metrics_agree(double bleu_diff, double exact_diff) {
  Verdict v;
  v.measured = bleu_diff * exact_diff;
  if (!std::isfinite(v.measured)) return v;
  v.outcome = v.measured > 0.0 ? Outcome::holds : v.measured < 0.0 ? Outcome::fails : Outcome::inconclusive;
  return v;
}

Verdict judge_length_explains(double beam_bp, double greedy_bp, double beam_bleu, double greedy_bleu) {
  Verdict v{std::numeric_limits<double>::quiet_NaN(), kLengthShare, kLengthShare, Outcome::inconclusive};
  if (!(beam_bp > 0.0 && greedy_bp > 0.0 && beam_bleu > 0.0 && greedy_bleu > 0.0)) return v;
  if (100.0 * std::abs(beam_bleu - greedy_bleu) < kBleuTie) return v;  // BLEU 0–1, the tie in points
  v.measured = std::log(beam_bp / greedy_bp) / std::log(beam_bleu / greedy_bleu);
  if (!std::isfinite(v.measured)) return v;
  v.outcome = v.measured >= kLengthShare ? Outcome::holds : Outcome::fails;
  return v;
}

Verdict judge_search_works(std::size_t beam_higher, std::size_t differ) {
  return judge_at_least(differ ? double(beam_higher) / double(differ) : std::numeric_limits<double>::quiet_NaN(), 0.9);
}
Verdict judge_model_error(std::size_t reference_lower, std::size_t beam_wrong) {
  return judge_at_least(beam_wrong ? double(reference_lower) / double(beam_wrong) : std::numeric_limits<double>::quiet_NaN(),
                        0.5);
}

namespace {
// Is a source of `len` words in one of r's length buckets (the sentences its BLEU covers)?
bool in_a_bucket(const EvalResult& r, std::size_t len) {
  for (const BucketMetrics& b : r.buckets)
    if (len >= b.bucket.lo && len <= b.bucket.hi) return true;
  return false;
}
}  // namespace

BeamDiagnosis diagnose_beam(const Transformer& m, const std::vector<SentencePair>& all_pairs, const EvalResult& all_greedy,
                            const EvalResult& all_beam, const Vocab& sv, const Vocab& tv, double alpha) {
  // Only the sentences in a bucket, the ones the two BLEU scores cover, so that every count below
  // is over the same sentences as the BLEU beside it.
  std::vector<SentencePair> pairs;
  EvalResult greedy, beam;
  greedy.overall = all_greedy.overall;
  beam.overall = all_beam.overall;
  for (std::size_t i = 0; i < all_pairs.size() && i < all_greedy.hyps.size() && i < all_beam.hyps.size(); ++i) {
    if (!in_a_bucket(all_greedy, all_pairs[i].src.size())) continue;
    pairs.push_back(all_pairs[i]);
    greedy.hyps.push_back(all_greedy.hyps[i]);
    beam.hyps.push_back(all_beam.hyps[i]);
    greedy.refs.push_back(all_greedy.refs.at(i));
    beam.refs.push_back(all_beam.refs.at(i));
  }
  BeamDiagnosis d;
  d.alpha = alpha;
  d.greedy = length_counts(greedy);
  d.beam = length_counts(beam);
  d.greedy_bleu = greedy.overall.bleu;
  d.beam_bleu = beam.overall.bleu;
  for (std::size_t i = 0; i < pairs.size() && i < greedy.hyps.size() && i < beam.hyps.size(); ++i) {
    ++d.sentences;
    d.greedy_exact_all += greedy.hyps[i] == pairs[i].tgt;
    d.beam_exact_all += beam.hyps[i] == pairs[i].tgt;
  }
  d.metrics_agree = judge_metrics_agree(d.beam_bleu - d.greedy_bleu, double(d.beam_exact_all) - double(d.greedy_exact_all));
  d.beam_parts = corpus_bleu(beam.hyps, beam.refs);
  d.greedy_parts = corpus_bleu(greedy.hyps, greedy.refs);
  const auto precision = [](const BleuScore& s) { return s.brevity_penalty > 0.0 ? s.bleu / s.brevity_penalty : 0.0; };
  d.beam_precision = precision(d.beam_parts);
  d.greedy_precision = precision(d.greedy_parts);
  d.length_explains = judge_length_explains(d.beam_parts.brevity_penalty, d.greedy_parts.brevity_penalty,
                                            d.beam_parts.bleu, d.greedy_parts.bleu);
  for (std::size_t i = 0; i < pairs.size() && i < greedy.hyps.size() && i < beam.hyps.size(); ++i) {
    if (greedy.hyps[i] == beam.hyps[i]) continue;
    ++d.differ;
    const std::vector<int> src = sv.encode(pairs[i].src);
    const double sb = beam_score(m, src, tv.encode(beam.hyps[i]), alpha);
    const double sg = beam_score(m, src, tv.encode(greedy.hyps[i]), alpha);
    d.beam_higher += sb >= sg;
    d.beam_shorter += beam.hyps[i].size() < greedy.hyps[i].size();
    d.greedy_exact += greedy.hyps[i] == pairs[i].tgt;
    if (beam.hyps[i] == pairs[i].tgt) {
      ++d.beam_exact;
      continue;
    }
    ++d.beam_wrong;
    d.reference_lower += beam_score(m, src, tv.encode(pairs[i].tgt), alpha) < sb;
  }
  d.search_works = judge_search_works(d.beam_higher, d.differ);
  d.ends_early = judge_greater(double(d.beam.shorter), double(d.greedy.shorter), 0.0);
  d.model_error = judge_model_error(d.reference_lower, d.beam_wrong);
  return d;
}

Verdict judge_generalises(double train_bleu, double test_bleu) {
  return judge_at_most(train_bleu - test_bleu, kOverfitGap, 5.0);
}

Verdict judge_pre_better(double pre_bleu, double post_bleu) { return judge_greater(pre_bleu, post_bleu, 1.0); }

std::string transformer_model_name(const std::string& norm) { return "transformer_" + norm; }
std::string other_norm(const std::string& norm) { return norm == "post" ? "pre" : "post"; }

CheckpointNote checkpoint_note(const Metadata& md, const TrainingCurves& curves) {
  CheckpointNote n;
  n.steps = std::size_t(metadata_number(md, "steps"));
  n.best_step = std::size_t(metadata_number(md, "best_step"));
  n.valid_bleu = metadata_number(md, "valid_bleu");
  const auto seed = md.find("seed");
  n.seed = seed == md.end() ? "" : seed->second;
  const std::vector<float>& b = curves.valid_bleu;
  if (b.size() >= 2 && curves.valid_step.size() == b.size()) {
    n.previous_step = curves.valid_step[b.size() - 2];
    n.last_step = curves.valid_step.back();
    n.previous_bleu = b[b.size() - 2];
    n.last_bleu = b.back();
    n.still_improving = judge_still_improving(n.last_bleu - n.previous_bleu);
  }
  return n;
}

TranslationFindings translation_findings(const std::vector<ModelEval>& evals, const std::string& norm,
                                         const Transformer& m, const ToyCorpus& corpus, const Metadata& own,
                                         const TrainingCurves& own_curves) {
  TranslationFindings t;
  t.own = checkpoint_note(own, own_curves);
  const double valid_bleu = t.own.valid_bleu;
  t.model = transformer_model_name(norm);
  t.other = transformer_model_name(other_norm(norm));
  const EvalResult& greedy = eval_named(evals, t.model + "_greedy").result;
  const EvalResult& beam = eval_named(evals, t.model + "_beam4").result;
  const EvalResult& train = eval_named(evals, t.model + "_train").result;
  t.vs_bahdanau = compare_buckets(greedy, eval_named(evals, "bahdanau").result);
  t.beam = diagnose_beam(m, corpus.test, greedy, beam, corpus.source_vocab, corpus.target_vocab);
  t.test_bleu = greedy.overall.bleu;
  t.beam_bleu = beam.overall.bleu;
  t.train_bleu = train.overall.bleu;
  t.train_sentences = train.hyps.size();
  t.valid_bleu = valid_bleu;
  t.generalises = judge_generalises(t.train_bleu, t.test_bleu);
  const EvalResult& bahdanau = eval_named(evals, "bahdanau").result;
  t.test_exact = greedy.overall.exact;
  t.bahdanau_bleu = bahdanau.overall.bleu;
  t.bahdanau_exact = bahdanau.overall.exact;
  if (!greedy.buckets.empty() && train.buckets.size() == greedy.buckets.size()) {
    t.train_long = train.buckets.back().bleu;
    t.test_long = greedy.buckets.back().bleu;
    t.train_long_sentences = train.buckets.back().sentences;
    t.test_long_sentences = greedy.buckets.back().sentences;
    t.generalises_long = t.train_long_sentences ? judge_generalises(t.train_long, t.test_long) : Verdict{};
  }
  for (const ModelEval& e : evals) t.other_present = t.other_present || e.name == t.other + "_greedy";
  if (t.other_present) {
    const ModelEval& o = eval_named(evals, t.other + "_greedy");
    t.other_checkpoint = checkpoint_note(o.checkpoint, o.curves);
  }
  if (!greedy.buckets.empty()) {
    t.long_bucket = greedy.buckets.back().bucket.label();
    const double mine = greedy.buckets.back().bleu;
    const double theirs = t.other_present ? eval_named(evals, t.other + "_greedy").result.buckets.back().bleu
                                          : std::numeric_limits<double>::quiet_NaN();
    t.post_long = norm == "post" ? mine : theirs;
    t.pre_long = norm == "post" ? theirs : mine;
    t.pre_better_long = judge_pre_better(t.pre_long, t.post_long);
    t.failure = first_failure(corpus.test, greedy, greedy.buckets.back().bucket);
  }
  return t;
}

// ---- step 8 -------------------------------------------------------------------------------------
Verdict judge_grows(double r) { return judge_at_least(r, 1.25, 1.1); }
Verdict judge_level(double r) { return judge_at_most(std::abs(r - 1.0), 0.1, 0.25); }

std::pair<std::size_t, double> farthest_from_first(const std::vector<double>& v) {
  std::pair<std::size_t, double> far{0, std::numeric_limits<double>::quiet_NaN()};
  for (std::size_t l = 1; l < v.size(); ++l) {
    const double r = ratio_or_nan(v[l], v.front());
    if (l == 1 || std::abs(r - 1.0) > std::abs(far.second - 1.0)) far = {l, r};
  }
  return far;
}

NormPlacementStudy norm_placement_study(const TransformerModelConfig& cfg, const ToyCorpus& corpus,
                                        std::size_t layers, std::size_t batch, std::uint64_t seed) {
  NormPlacementStudy s;
  s.layers = layers;
  s.batch = batch;
  TransformerModelConfig deep = cfg;
  deep.enc_layers = deep.dec_layers = layers;
  deep.norm = NormPlacement::Post;
  s.post = ffn_w2_grad_norms(deep, corpus, batch, seed);
  deep.norm = NormPlacement::Pre;
  s.pre = ffn_w2_grad_norms(deep, corpus, batch, seed);
  auto growth = [](const std::vector<double>& v) { return v.empty() ? 0.0 : ratio_or_nan(v.back(), v.front()); };
  s.post_enc = growth(s.post.encoder);
  s.post_dec = growth(s.post.decoder);
  s.pre_enc = growth(s.pre.encoder);
  s.pre_dec = growth(s.pre.decoder);
  s.post_grows_enc = judge_grows(s.post_enc);
  s.post_grows_dec = judge_grows(s.post_dec);
  std::tie(s.pre_enc_far_layer, s.pre_enc_far) = farthest_from_first(s.pre.encoder);
  std::tie(s.pre_dec_far_layer, s.pre_dec_far) = farthest_from_first(s.pre.decoder);
  s.pre_level_enc = judge_level(s.pre_enc_far);
  s.pre_level_dec = judge_level(s.pre_dec_far);
  return s;
}

namespace {
WarmupArm warmup_arm(const std::vector<WarmupRun>& runs, NormPlacement norm, const bool* warm) {
  WarmupArm a;
  std::vector<double> v;
  for (const WarmupRun& r : runs) {
    if (r.norm != norm || (warm != nullptr && r.warmup != *warm)) continue;
    ++a.runs;
    if (std::isfinite(r.final_loss)) v.push_back(r.final_loss);
    else ++a.diverged;
  }
  if (v.empty()) {
    a.mean = std::numeric_limits<double>::quiet_NaN();
    return a;
  }
  for (double x : v) a.mean += x / double(v.size());
  double ss = 0.0;
  for (double x : v) ss += (x - a.mean) * (x - a.mean);
  a.sd = v.size() > 1 ? std::sqrt(ss / double(v.size() - 1)) : std::numeric_limits<double>::quiet_NaN();
  return a;
}
// Two standard errors of the difference of two means (NaN when either has under 2 finite runs).
double two_standard_errors(const WarmupArm& a, const WarmupArm& b) {
  const double na = double(a.runs - a.diverged), nb = double(b.runs - b.diverged);
  if (na < 2 || nb < 2) return std::numeric_limits<double>::quiet_NaN();
  return 2.0 * std::sqrt(a.sd * a.sd / na + b.sd * b.sd / nb);
}
WarmupEffect warmup_effect(const std::vector<WarmupRun>& runs, NormPlacement norm) {
  WarmupEffect e;
  const bool yes = true, no = false;
  e.with = warmup_arm(runs, norm, &yes);
  e.without = warmup_arm(runs, norm, &no);
  e.noise = two_standard_errors(e.without, e.with);
  if (e.without.diverged != e.with.diverged) {
    const double more = double(e.without.diverged) - double(e.with.diverged);
    e.helps = {more, 0.0, 0.0, more > 0 ? Outcome::holds : Outcome::fails};
  } else {
    e.helps = judge_greater(e.without.mean, e.with.mean, e.noise);
  }
  return e;
}
}  // namespace

WarmupFindings warmup_findings(std::vector<WarmupRun> runs, std::size_t steps) {
  WarmupFindings f;
  f.steps = steps;
  std::vector<std::uint64_t> seeds;
  for (const WarmupRun& r : runs)
    if (std::find(seeds.begin(), seeds.end(), r.seed) == seeds.end()) seeds.push_back(r.seed);
  f.seeds = seeds.size();
  f.post = warmup_effect(runs, NormPlacement::Post);
  f.pre = warmup_effect(runs, NormPlacement::Pre);
  f.post_all = warmup_arm(runs, NormPlacement::Post, nullptr);
  f.pre_all = warmup_arm(runs, NormPlacement::Pre, nullptr);
  f.noise = two_standard_errors(f.post_all, f.pre_all);
  f.pre_lower = judge_greater(f.post_all.mean, f.pre_all.mean, f.noise);
  f.runs = std::move(runs);
  return f;
}

// ---- step 9 -------------------------------------------------------------------------------------
CostRow cost_row(const TransformerConfig& c) {
  CostRow r;
  r.params = transformer_params(c).total();
  for (std::size_t k = 0; k < std::size(kCostLengths); ++k) {
    const std::size_t t = kCostLengths[k];
    const LayerCost e = encoder_layer_cost(c, t), d = decoder_layer_cost(c, t, t);
    const double all = double(c.n_encoder) * e.flops() + double(c.n_decoder) * d.flops();
    const double scores = double(c.n_encoder) * e.score_flops + double(c.n_decoder) * d.score_flops;
    const double projections = double(c.n_encoder) * e.projection_flops + double(c.n_decoder) * d.projection_flops;
    if (k == 0) r.flops_per_token = all / double(t);
    r.share[k] = (projections + scores) / all;
    r.score_share[k] = scores / all;
  }
  return r;
}

CostStudy cost_study(const Transformer& m) {
  const TransformerModelConfig& mc = m.cfg;
  TransformerConfig ours;
  ours.d_model = mc.d_model;
  ours.n_heads = mc.n_heads;
  ours.d_ff = mc.d_ff;
  ours.n_encoder = mc.enc_layers;
  ours.n_decoder = mc.dec_layers;
  ours.vocab = mc.tgt_vocab;
  CostStudy s;
  s.base = cost_row(TransformerConfig{});
  s.ours = cost_row(ours);
  s.built = parameter_count(m);
  s.source_table = mc.src_vocab * mc.d_model;
  s.source_words = mc.src_vocab;
  s.d_model = mc.d_model;
  s.d_ff = mc.d_ff;
  s.output_bias = mc.tgt_vocab;
  s.final_norms = parameter_parts(m).final_norms;
  return s;
}

Verdict judge_accounted(double r) { return judge_at_most(r, 1.5); }
Verdict judge_recorded_waited(double r) { return judge_at_least(r, kRecordedWaited); }
Verdict judge_in_spread(double x, double lo, double hi) {
  Verdict v{x, lo, hi, Outcome::inconclusive};
  if (std::isfinite(x) && std::isfinite(lo) && std::isfinite(hi) && lo <= hi)
    v.outcome = x >= lo && x <= hi ? Outcome::holds : Outcome::fails;
  return v;
}

double retrained_alone_seconds(const std::string& norm) {
  return norm == "post" ? 125.2 : norm == "pre" ? 114.4 : 0.0;  // README.md, chapter 08's training times
}

TrainingTimeAccount account_training_time(double recorded_s, std::size_t steps, std::size_t validations,
                                          const StepTiming& step, double test_greedy_cpu_s,
                                          const ToyCorpus& corpus, double alone_s, double load_now) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  TrainingTimeAccount a;
  a.recorded_s = recorded_s;
  a.steps = steps;
  a.validations = validations;
  a.valid_sentences = corpus.valid.size();
  a.test_cpu_s = test_greedy_cpu_s;
  a.test_sentences = corpus.test.size();
  a.step_cpu_ms = step.median_cpu_ms;
  a.step_wall_ms = step.median_ms;
  a.step_min_cpu_ms = step.min_cpu_ms;
  a.step_max_cpu_ms = step.max_cpu_ms;
  a.load_now = load_now;
  a.step_wall_ratio = ratio_or_nan(step.median_ms, step.median_cpu_ms);
  a.step_waited = judge_at_least(a.step_wall_ratio, kStepWaited);
  a.valid_cpu_s = corpus.test.empty() ? 0.0 : test_greedy_cpu_s * double(corpus.valid.size()) / double(corpus.test.size());
  a.estimate_s = double(steps) * step.median_cpu_ms / 1000.0 + double(validations) * a.valid_cpu_s;
  a.ratio = ratio_or_nan(recorded_s, a.estimate_s);
  double words = 0.0;
  for (const auto& p : corpus.train) words += double(p.src.size());
  a.mean_train_length = corpus.train.empty() ? 0.0 : words / double(corpus.train.size());
  a.accounted = judge_accounted(a.ratio);
  a.alone_s = alone_s;
  a.recorded_over_alone = alone_s > 0.0 ? ratio_or_nan(recorded_s, alone_s) : nan;
  a.recorded_waited = judge_recorded_waited(a.recorded_over_alone);
  a.alone_step_ms = alone_s > 0.0 && steps > 0 ? 1000.0 * alone_s / double(steps) : nan;
  a.alone_step_in_spread = judge_in_spread(a.alone_step_ms, step.min_cpu_ms, step.max_cpu_ms);
  a.median_vs_alone = a.alone_step_ms > 0.0 ? (step.median_cpu_ms - a.alone_step_ms) / a.alone_step_ms : nan;
  return a;
}

}  // namespace attn
