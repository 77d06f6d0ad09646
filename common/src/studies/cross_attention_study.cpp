// Chapter 07's checks and measurements (see attn/studies/cross_attention_study.hpp).
#include "attn/studies/cross_attention_study.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "attn/attention/attention_stats.hpp"
#include "attn/attention/self_attention.hpp"
#include "attn/data/word_vectors.hpp"
#include "attn/models/transformer_decode.hpp"
#include "attn/studies/interpretability.hpp"
#include "attn/tensor/mask.hpp"
#include "attn/tensor/softmax.hpp"
#include "attn/tensor/tensor_ops.hpp"

namespace attn {

ReferenceCheck check_against_reference(const CrossAttentionTrace& t) {
  ReferenceCheck c;
  c.max_diff = max_abs_diff(t.attn.output, attention_reference(t.q, t.k, t.v));
  c.matches = judge_at_most(c.max_diff, kFloatCheckTol);
  return c;
}

SelfCaseCheck judge_self_case(const CrossAttentionTrace& cross, const SelfAttentionTrace& self) {
  SelfCaseCheck c;
  c.n = cross.attn.weights.shape(0);
  c.d_v = cross.attn.output.shape(1);
  c.weights_diff = max_abs_diff(cross.attn.weights, self.attn.weights);
  c.output_diff = max_abs_diff(cross.attn.output, self.attn.output);
  c.same = judge_at_most(std::max(c.weights_diff, c.output_diff), kFloatCheckTol);
  return c;
}

SelfCaseCheck self_case_check(const Mat& y, const CrossAttentionWeights& w) {
  return judge_self_case(cross_attention(y, y, w), self_attention(y, SelfAttentionWeights{w.w_q, w.w_k, w.w_v}));
}

SourceLengthStudy judge_source_lengths(std::vector<SourceLengthRow> rows, std::size_t parameters) {
  SourceLengthStudy s;
  s.rows = std::move(rows);
  s.parameters = parameters;
  if (s.rows.empty()) return s;  // every verdict inconclusive
  double other_shapes = 0.0, worst_sum = 0.0;
  for (const auto& r : s.rows) {
    other_shapes += r.output_shape != s.rows.front().output_shape;
    worst_sum = std::max({worst_sum, std::abs(r.sums.min_sum - 1.0), std::abs(r.sums.max_sum - 1.0)});
  }
  s.one_output_shape = judge_at_most(other_shapes, 0.0);
  s.rows_sum_to_one = judge_at_most(worst_sum, kFloatCheckTol);
  s.weight_spreads = judge_greater(s.rows.front().largest, s.rows.back().largest, 0.0);
  double rises = 0.0;
  for (std::size_t i = 1; i < s.rows.size(); ++i)
    if (s.rows[i].largest > s.rows[i - 1].largest) {
      if (rises == 0.0) s.first_rise = i;
      rises += 1.0;
    }
  s.falls_each_step = judge_at_most(rises, 0.0);
  return s;
}

SourceLengthStudy source_length_study(const Mat& y, const CrossAttentionWeights& w,
                                      const std::vector<std::size_t>& lengths, std::size_t d_x, std::uint64_t seed) {
  std::vector<SourceLengthRow> rows;
  const std::size_t longest = lengths.empty() ? 4 : *std::max_element(lengths.begin(), lengths.end());
  const SentencePair p = toy_sentence(seed, std::max<std::size_t>(longest, 4));
  for (std::size_t s : lengths) {
    SourceLengthRow r;
    r.s = s;
    r.words.assign(p.src.begin(), p.src.begin() + std::ptrdiff_t(std::min(s, p.src.size())));
    const CrossAttentionTrace t = cross_attention(y, word_vectors(r.words, d_x, seed), w);
    r.weights = t.attn.weights;
    r.output_shape = shape_of(t.attn.output);
    r.sums = check_row_sums(t.attn.weights);
    r.largest = double(xt::amax(t.attn.weights)());
    rows.push_back(std::move(r));
  }
  return judge_source_lengths(std::move(rows), w.w_q.size() + w.w_k.size() + w.w_v.size());
}

PaddingStudy padding_study(const Mat& y, const Mat& x_padded, std::size_t valid, const CrossAttentionWeights& w) {
  const std::size_t s = x_padded.shape(0), t = y.shape(0);
  if (valid == 0 || valid > s)
    throw std::invalid_argument("padding_study: valid = " + std::to_string(valid) + " must be 1 to S = " +
                                std::to_string(s));
  PaddingStudy p;
  p.valid = valid, p.padded = s;
  std::vector<bool> keep(s, false);
  std::fill(keep.begin(), keep.begin() + std::ptrdiff_t(valid), true);
  p.mask = padding_mask(t, keep);
  p.masked = cross_attention(y, x_padded, w, p.mask);
  p.unmasked = cross_attention(y, x_padded, w);
  const Mat real = xt::view(x_padded, xt::range(0, valid), xt::all());
  p.unpadded_output = cross_attention(y, real, w).attn.output;
  for (std::size_t i = 0; i < t; ++i) {
    double share = 0.0;
    for (std::size_t j = valid; j < s; ++j) {
      p.masked_pad_weight = std::max(p.masked_pad_weight, double(p.masked.attn.weights(i, j)));
      share += double(p.unmasked.attn.weights(i, j));
    }
    p.unmasked_pad_share = std::max(p.unmasked_pad_share, share);
    p.unmasked_row_pad_share.push_back(share);
  }
  p.masked_vs_unpadded = max_abs_diff(p.masked.attn.output, p.unpadded_output);
  p.unmasked_vs_unpadded = max_abs_diff(p.unmasked.attn.output, p.unpadded_output);
  p.pads_ignored = judge_at_most(p.masked_pad_weight, 0.0);
  p.same_as_unpadded = judge_at_most(p.masked_vs_unpadded, kFloatCheckTol);
  p.unmasked_leaks = judge_greater(p.unmasked_vs_unpadded, 0.0, kFloatCheckTol);
  return p;
}

ImageStudy judge_image(ImageConditioning im, const ImageConditioningConfig& cfg) {
  ImageStudy s;
  // A clean region's scaled scores: gain on its own word, 0 on the others; its weight is their softmax.
  std::vector<double> scores(im.words.size(), 0.0), weights(im.words.size(), 0.0);
  if (!scores.empty()) scores[0] = double(cfg.gain);
  if (!scores.empty()) softmax_row(weights.data(), scores.data(), nullptr, scores.size());
  s.clean_own_weight = scores.empty() ? NAN : weights[0];
  const std::size_t n = im.side * im.side;
  s.reads_painted = judge_at_least(n == 0 ? NAN : double(im.hits) / double(n), kImageReadsBound);
  s.signal = region_signal(im, 0);
  s.im = std::move(im);
  return s;
}

RegionSignal region_signal(const ImageConditioning& im, std::size_t word) {
  RegionSignal r;
  r.word = word;
  if (word >= im.regions.shape(0) || im.regions.shape(1) == 0) return r;
  for (std::size_t ch = 1; ch < im.regions.shape(1); ++ch)
    if (std::abs(im.regions(word, ch)) > std::abs(im.regions(word, r.channel))) r.channel = ch;
  r.region = im.regions(word, r.channel);
  double sum = 0.0;
  for (std::size_t p = 0; p < im.layout.size() && p < im.latent.shape(0); ++p)
    if (im.layout[p] == int(word)) sum += im.latent(p, r.channel), ++r.positions;
  r.mean = r.positions ? sum / double(r.positions) : NAN;
  return r;
}

ImageStudy image_study(std::uint64_t seed, const ImageConditioningConfig& cfg) {
  return judge_image(image_conditioning_example(seed, cfg), cfg);
}

std::vector<ImageStudy> image_noise_sweep(std::uint64_t seed, const ImageConditioningConfig& cfg,
                                          const std::vector<float>& noises) {
  std::vector<ImageStudy> out;
  for (float sigma : noises) {
    ImageConditioningConfig c = cfg;
    c.noise = sigma;
    out.push_back(image_study(seed, c));
  }
  return out;
}

std::vector<ImageStudy> image_noise_sweep(std::uint64_t seed, const ImageConditioningConfig& cfg) {
  return image_noise_sweep(seed, cfg, cfg.noise_sweep);
}

DiagonalReading diagonal_reading(const SentencePair& p) {
  DiagonalReading r;
  const std::vector<int>& a = p.alignment;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] < 0) continue;
    DiagonalWord w;
    w.target = i, w.source = a[i];
    w.word_class = std::size_t(a[i]) < p.src.size() ? toy_word_class(p.src[std::size_t(a[i])]) : ToyWordClass::unknown;
    for (std::size_t k = 0; k < a.size(); ++k) {
      if (k == i || a[k] < 0) continue;
      w.passed_ahead += a[k] > a[i] && k < i ? 1 : 0;
      w.passed_behind += a[k] < a[i] && k > i ? 1 : 0;
    }
    if (a[i] != int(i))
      r.off.push_back(w);
    else if (w.passed_ahead + w.passed_behind > 0)
      r.kept.push_back(w);
  }
  return r;
}

const SentencePair& reordered_test_pair(const std::vector<SentencePair>& test, std::size_t min_words,
                                        std::size_t max_words) {
  for (const auto& p : test) {
    if (p.src.size() < min_words || p.src.size() > max_words) continue;
    bool adjective = false, verb_moved = false;
    for (const auto& w : p.src) adjective = adjective || toy_word_class(w) == ToyWordClass::adjective;
    for (std::size_t i = 0; i < p.alignment.size(); ++i) verb_moved = verb_moved || int(i) - p.alignment[i] >= 2;
    if (adjective && verb_moved) return p;
  }
  throw std::runtime_error("no test sentence of " + std::to_string(min_words) + " to " + std::to_string(max_words) +
                           " words with an adjective and a moved verb");
}

std::vector<AlignmentMiss> alignment_misses(const Mat& weights, const std::vector<int>& truth) {
  const std::vector<int> argmax = argmax_alignment(weights);
  std::vector<AlignmentMiss> out;
  for (std::size_t i = 0; i < truth.size() && i < argmax.size(); ++i) {
    if (truth[i] < 0 || argmax[i] == truth[i]) continue;
    AlignmentMiss m;
    m.target = i, m.read = argmax[i], m.truth = truth[i];
    m.weight_read = double(weights(i, std::size_t(m.read)));
    m.weight_truth = double(weights(i, std::size_t(m.truth)));
    m.neighbour = std::abs(m.read - m.truth) == 1;
    m.truth_unread = std::find(argmax.begin(), argmax.end(), m.truth) == argmax.end();
    const auto at = std::find(truth.begin(), truth.end(), m.read);
    m.read_written_at = at == truth.end() ? -1 : int(at - truth.begin());
    out.push_back(m);
  }
  return out;
}

ModelAlignment judge_alignment(Mat weights, const std::vector<int>& truth) {
  ModelAlignment a;
  a.argmax = argmax_alignment(weights);
  a.score = alignment_hits(a.argmax, truth);
  std::vector<int> off(truth.size(), kNoSource);
  for (std::size_t i = 0; i < truth.size(); ++i)
    if (truth[i] >= 0 && truth[i] != int(i)) off[i] = truth[i];
  a.off_diagonal = alignment_hits(a.argmax, off);
  a.misses = alignment_misses(weights, truth);
  a.follows_truth = judge_at_least(a.score.total == 0 ? NAN : a.score.share(), kAlignmentBound, kAlignmentPartly);
  a.weights = std::move(weights);
  return a;
}

ModelAlignment bahdanau_alignment(const Seq2Seq& m, const SentencePair& p, const Vocab& sv, const Vocab& tv) {
  return judge_alignment(seq2seq_teacher_alignment(m, p, sv, tv), p.alignment);
}

LayerSimilarity layer_similarity(const Tensor3& heads, std::size_t layer) {
  LayerSimilarity s;
  s.layer = layer;
  const std::size_t h = heads.shape(0);
  double sum = 0.0;
  std::size_t pairs = 0;
  for (std::size_t a = 0; a < h; ++a)
    for (std::size_t b = a + 1; b < h; ++b) {
      const Mat pa = xt::view(heads, a), pb = xt::view(heads, b);
      const double tvd = mean_total_variation(pa, pb);
      sum += tvd, s.max_tvd = std::max(s.max_tvd, tvd), ++pairs;
    }
  s.mean_tvd = pairs == 0 ? NAN : sum / double(pairs);
  s.redundant = judge_at_most(s.mean_tvd, kRedundantHeadsTvd);
  return s;
}

Mat head_map(const Tensor4& w, std::size_t layer, std::size_t head) {
  return xt::view(w, layer, head, xt::all(), xt::all());
}

TransformerHeads judge_heads(Tensor4 weights, const std::vector<int>& truth, const ModelAlignment& bahdanau) {
  TransformerHeads t;
  const std::size_t L = weights.shape(0), H = weights.shape(1);
  std::size_t best_hits = 0;
  bool any = false;
  for (std::size_t l = 0; l < L; ++l) {
    Mat mean = xt::zeros<float>({weights.shape(2), weights.shape(3)});
    std::size_t perfect = 0;
    for (std::size_t h = 0; h < H; ++h) {
      const Mat m = head_map(weights, l, h);
      mean += m / float(H);
      const std::vector<int> a = argmax_alignment(m);
      HeadAgreement row{l, h, false, alignment_hits(a, bahdanau.argmax), alignment_hits(a, truth)};
      if (!any || row.with_truth.hits > best_hits) t.best_layer = l, t.best_head = h, t.best = row.with_truth;
      best_hits = t.best.hits, any = true;
      perfect += row.with_truth.hits == row.with_truth.total;
      t.rows.push_back(row);
    }
    const std::vector<int> am = argmax_alignment(mean);
    t.rows.push_back({l, 0, true, alignment_hits(am, bahdanau.argmax), alignment_hits(am, truth)});
    t.perfect.push_back(perfect);
    t.similarity.push_back(layer_similarity(xt::view(weights, l), l));
  }
  t.matches_bahdanau = judge_at_least(any ? t.best.share() - bahdanau.score.share() : NAN, 0.0);
  for (const HeadAgreement& r : t.rows)
    if (!r.mean && any && r.with_truth.hits == t.best.hits) t.best_heads.push_back({r.layer, r.head});
  t.weights = std::move(weights);
  return t;
}

namespace {
// The cross-attention of every layer and head, teacher-forced on p: (layers, heads, T, S); the map's
// last row, the step that writes <eos>, is dropped, so row i writes target word i.
Tensor4 cross_maps(const Transformer& m, const SentencePair& p, const Vocab& sv, const Vocab& tv) {
  const Tensor4 all = transformer_attention(m, sv.encode(p.src), tv.encode(p.tgt)).cross;
  return xt::view(all, xt::all(), xt::all(), xt::range(0, p.tgt.size()), xt::range(0, p.src.size()));
}
void add_score(AlignmentScore& sum, const AlignmentScore& s) {
  sum.hits += s.hits, sum.total += s.total, sum.missing += s.missing;
}
}  // namespace

Verdict judge_better_alignment(const AlignmentScore& a, const AlignmentScore& b) {
  if (a.total == 0 || b.total == 0) return judge_greater(NAN, NAN, 0.0);
  const double p = a.share(), q = b.share();
  const double se = std::sqrt(p * (1 - p) / double(a.total) + q * (1 - q) / double(b.total));
  return judge_greater(p, q, 2.0 * se);
}

CorpusAlignment corpus_alignment(const Seq2Seq& bahdanau, const Transformer& m, const std::vector<SentencePair>& pairs,
                                 const Vocab& sv, const Vocab& tv, std::size_t min_words, std::size_t max_words,
                                 std::size_t max_pairs) {
  CorpusAlignment c;
  c.min_words = min_words, c.max_words = max_words;
  for (const SentencePair& p : pairs) {
    if (c.sentences == max_pairs) break;
    if (p.src.size() < min_words || p.src.size() > max_words) continue;
    ++c.sentences;
    add_score(c.bahdanau, alignment_hits(seq2seq_teacher_alignment(bahdanau, p, sv, tv), p.alignment));
    const Tensor4 w = cross_maps(m, p, sv, tv);
    const std::size_t L = w.shape(0), H = w.shape(1);
    c.heads.resize(L, std::vector<AlignmentScore>(H));
    c.layer = L - 1;
    Mat mean = xt::zeros<float>({w.shape(2), w.shape(3)});
    for (std::size_t l = 0; l < L; ++l)
      for (std::size_t h = 0; h < H; ++h) {
        const Mat one = head_map(w, l, h);
        add_score(c.heads[l][h], alignment_hits(one, p.alignment));
        if (l == c.layer) mean += one / float(H);
      }
    add_score(c.last_layer_mean, alignment_hits(mean, p.alignment));
  }
  for (std::size_t l = 0; l < c.heads.size(); ++l)
    for (std::size_t h = 0; h < c.heads[l].size(); ++h)
      if (c.heads[l][h].hits > c.heads[c.best_layer][c.best_head].hits) c.best_layer = l, c.best_head = h;
  c.transformer_better = judge_better_alignment(c.last_layer_mean, c.bahdanau);
  c.transformer_params = parameter_count(m);
  c.bahdanau_params = parameter_count(bahdanau);
  return c;
}

AlignmentAndBleu judge_alignment_and_bleu(const Verdict& transformer_better, double transformer_bleu,
                                          double bahdanau_bleu) {
  AlignmentAndBleu a = judge_alignment_and_bleu(transformer_better, RecordedBleu{transformer_bleu, 1, 1},
                                                RecordedBleu{bahdanau_bleu, 1, 1});
  a.at_last_step = judge_at_most(NAN, 0.0);  // the steps are not known
  return a;
}

AlignmentAndBleu judge_alignment_and_bleu(const Verdict& transformer_better, const RecordedBleu& transformer,
                                          const RecordedBleu& bahdanau) {
  AlignmentAndBleu a;
  a.transformer = transformer, a.bahdanau = bahdanau;
  const double transformer_bleu = a.transformer_bleu = transformer.bleu;
  const double bahdanau_bleu = a.bahdanau_bleu = bahdanau.bleu;
  const Outcome o = transformer_better.outcome;
  const RecordedBleu* more = o == Outcome::holds ? &transformer : o == Outcome::fails ? &bahdanau : nullptr;
  a.at_last_step = judge_at_most(more != nullptr && more->step > 0 && more->steps >= more->step
                                     ? double(more->steps - more->step) : NAN, 0.0);
  // Neither aligns more (nothing to set BLEU against), or a figure not known to be its run's best.
  if ((o != Outcome::holds && o != Outcome::fails) || transformer.step == 0 || bahdanau.step == 0) {
    a.same_order = judge_at_least(NAN, 0.0);
    return a;
  }
  const double better_minus_other =
      o == Outcome::holds ? transformer_bleu - bahdanau_bleu : bahdanau_bleu - transformer_bleu;
  a.same_order = judge_at_least(better_minus_other, 0.0);
  return a;
}

double recorded_bleu(const std::map<std::string, std::string>& metadata) {
  const auto it = metadata.find("valid_bleu");
  if (it == metadata.end()) return NAN;
  try {
    std::size_t used = 0;
    const double v = std::stod(it->second, &used);
    return used == it->second.size() && std::isfinite(v) ? v : NAN;
  } catch (const std::exception&) {
    return NAN;
  }
}

RecordedBleu recorded_validation(const std::map<std::string, std::string>& metadata) {
  RecordedBleu r;
  r.bleu = recorded_bleu(metadata);
  auto whole = [&](const char* key) -> std::size_t {
    const auto it = metadata.find(key);
    if (it == metadata.end() || it->second.empty() ||
        it->second.find_first_not_of("0123456789") != std::string::npos || it->second.size() > 9)
      return 0;
    return std::stoul(it->second);
  };
  r.step = whole("best_step"), r.steps = whole("steps");
  return r;
}

TransformerHeads transformer_heads(const Transformer& m, const Seq2Seq& bahdanau_model, const SentencePair& p,
                                   const ToyCorpus& corpus, const ModelAlignment& bahdanau,
                                   const std::map<std::string, std::string>& transformer_metadata,
                                   const std::map<std::string, std::string>& bahdanau_metadata) {
  const Vocab &sv = corpus.source_vocab, &tv = corpus.target_vocab;
  TransformerHeads t = judge_heads(cross_maps(m, p, sv, tv), p.alignment, bahdanau);
  t.many = corpus_alignment(bahdanau_model, m, corpus.test, sv, tv);
  t.bleu = judge_alignment_and_bleu(t.many.transformer_better, recorded_validation(transformer_metadata),
                                    recorded_validation(bahdanau_metadata));
  return t;
}

}  // namespace attn
