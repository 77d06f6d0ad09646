// Chapter 10's measurements and verdicts (see attn/studies/interpretability_claims.hpp).
#include "attn/studies/interpretability_claims.hpp"

#include <algorithm>
#include <cmath>

#include "attn/attention/attention_stats.hpp"
#include "attn/tensor/tensor_ops.hpp"

namespace attn {

InductionBatch evaluation_set(const InductionTask& task, std::size_t n, std::uint64_t seed) {
  Rng rng(seed);
  return induction_batch(rng, task, n);
}

InductionBatch drawn_sequence(const InductionTask& task) {
  Rng rng(7);
  constexpr std::size_t period = 6;  // short enough to repeat almost three times in the map
  return induction_batch(rng, {task.vocab, task.max_period + 1, period, period}, 1);
}

std::size_t metadata_count(const Metadata& md, const std::string& key) {
  const auto it = md.find(key);
  if (it == md.end() || it->second.empty() || it->second.size() > 18 ||
      it->second.find_first_not_of("0123456789") != std::string::npos)
    return 0;
  return std::size_t(std::stoull(it->second));
}

std::size_t induction_tokens_seen(const Metadata& md) {
  return metadata_count(md, "steps") * metadata_count(md, "batch") * metadata_count(md, "length");
}

namespace {
template <class Score>
std::size_t argmax_head(std::size_t heads, Score score) {
  std::size_t best = 0;
  for (std::size_t h = 1; h < heads; ++h)
    if (score(h) > score(best)) best = h;
  return best;
}
std::vector<std::vector<Tensor3>> weights_of(const AttnOnly& m, const InductionBatch& b,
                                             const std::vector<HeadEditSpec>& edits = {}) {
  std::vector<std::vector<Tensor3>> out;
  for (std::size_t s = 0; s < b.batch; ++s) out.push_back(attn_only_weights(m, b.sequence(s), edits));
  return out;
}
std::vector<std::vector<int>> sequences_of(const InductionBatch& b) {
  std::vector<std::vector<int>> out;
  for (std::size_t s = 0; s < b.batch; ++s) out.push_back(b.sequence(s));
  return out;
}
}  // namespace

CurveShape loss_curve_shape(const std::vector<float>& curve, std::size_t every, std::size_t marks) {
  CurveShape c;
  c.points = curve.size();
  c.marks = std::min(c.points, marks);
  if (c.marks) c.per_mark_lo = c.points / c.marks, c.per_mark_hi = (c.points + c.marks - 1) / c.marks;
  if (c.points < 2 || !(curve.front() > curve.back())) return c;
  const double first = curve.front(), last = curve.back();
  auto first_below = [&](double share) {  // the first point at or below last + share · (first − last)
    for (std::size_t k = 0; k < curve.size(); ++k)
      if (double(curve[k]) <= last + share * (first - last)) return k;
    return curve.size() - 1;
  };
  const std::size_t k90 = first_below(0.9), k10 = first_below(0.1);
  c.plateau_until = k90 * every, c.fallen_by = (k10 + 1) * every, c.found = true;
  return c;
}

Verdict judge_pattern(std::size_t on_copy, std::size_t rows) {
  return judge_at_least(rows == 0 ? NAN : double(on_copy) / double(rows), 0.75, 0.5);
}

DrawnPattern drawn_pattern(const Mat& p, const std::vector<int>& tokens) {
  DrawnPattern d;
  for (std::size_t i = 0; i < p.shape(0) && i < tokens.size(); ++i) {
    std::vector<std::size_t> successors;  // of each earlier copy of token i, the first copy's first
    for (std::size_t j = 0; j < i; ++j)
      if (tokens[j] == tokens[i]) successors.push_back(j + 1);
    if (successors.empty()) continue;
    const auto row = xt::view(p, i, xt::range(0, i + 1));
    const std::size_t top = std::size_t(std::max_element(row.begin(), row.end()) - row.begin());
    ++d.rows;
    if (top == successors.front()) ++d.first_copy;
    else if (std::find(successors.begin() + 1, successors.end(), top) != successors.end()) ++d.later_copy;
    else if (top == i) ++d.self_token;  // the query's own position: the diagonal
    else if (tokens[top] == tokens[i]) ++d.same_token;  // on an earlier copy itself, token 0 included
    else if (top == 0) ++d.first_token;
  }
  d.follows = judge_pattern(d.on_copy(), d.rows);
  return d;
}

Verdict judge_self_head(double self_weight) { return judge_at_least(self_weight, kSelfHeadAt); }

Verdict judge_bets_on_seen(double model, double uniform) {
  return judge_at_least(uniform > 0.0 ? model / uniform : NAN, 2.0);
}

SeenMass first_period_seen_mass(const AttnOnly& m, const InductionBatch& b) {
  AttnOnlyCache cache;
  const std::vector<int> targets = repeat_targets(b, 1);
  attn_only_forward(cache, m, b.tokens, targets, b.batch);
  SeenMass r;
  std::size_t rows = 0;
  for (std::size_t s = 0; s < b.batch; ++s)
    for (std::size_t i = 0; i < b.len; ++i) {
      const std::size_t row = s * b.len + i;
      if (targets[row] < 0) continue;
      std::vector<int> seen(b.tokens.begin() + std::ptrdiff_t(s * b.len), b.tokens.begin() + std::ptrdiff_t(row + 1));
      std::sort(seen.begin(), seen.end());
      seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
      for (int t : seen) r.model += double(cache.probs(row, std::size_t(t)));
      for (std::size_t v = 0; v < m.cfg.vocab; ++v) {
        const double p = double(cache.probs(row, v));
        if (p > 0.0) r.entropy -= p * std::log(p);
      }
      r.uniform += double(seen.size()) / double(m.cfg.vocab);
      ++rows;
    }
  if (rows) r.model /= double(rows), r.uniform /= double(rows), r.entropy /= double(rows);
  r.bets = judge_bets_on_seen(r.model, r.uniform);
  return r;
}

InductionCircuit find_induction_heads(const AttnOnly& m, const InductionTask& task, const InductionBatch& eval,
                                      const InductionBatch& drawn) {
  InductionCircuit c;
  const std::size_t L = m.cfg.layers, H = m.cfg.heads;
  c.eval_sequences = eval.batch;
  c.eval_length = eval.len;
  c.min_period = task.min_period;
  c.max_period = task.max_period;
  c.last_layer = L - 1;
  const auto ex = weights_of(m, eval);
  const auto tokens = sequences_of(eval);
  c.eval_stats = head_stats(ex, tokens, true);
  const std::vector<Tensor3> drawn_w = attn_only_weights(m, drawn.sequence(0));
  c.drawn_stats = head_stats({drawn_w}, {drawn.sequence(0)}, true);
  c.uniform_prefix = uniform_prefix_matching(tokens);
  std::vector<std::size_t> lengths;
  for (const auto& t : tokens) lengths.push_back(t.size());
  c.uniform_previous = uniform_previous_token(lengths);
  for (std::size_t h = 0; h < H; ++h) {
    c.drawn_patterns.push_back(drawn_pattern(slice_of(drawn_w[L - 1], h), drawn.sequence(0)));
    c.drawn_patterns.back().layer = L - 1, c.drawn_patterns.back().head = h;
  }
  c.base = repeat_losses(m, eval);
  c.first_seen = first_period_seen_mass(m, eval);
  for (std::size_t l = 0; l < L; ++l)
    for (std::size_t h = 0; h < H; ++h) {
      const HeadStat& e = c.eval_stats[l * H + h];
      const HeadStat& d = c.drawn_stats[l * H + h];
      double self = 0.0;  // the diagonal of the drawn map, rows 1 … T − 1 (row 0 sees only itself)
      for (std::size_t i = 1; i < drawn_w[l].shape(1); ++i) self += drawn_w[l](h, i, i);
      self /= double(std::max<std::size_t>(drawn_w[l].shape(1), 2) - 1);
      c.heads.push_back({l, h, d.previous_token, e.previous_token, d.prefix_matching, e.prefix_matching,
                         copying_score(ov_circuit(m, l, h)),
                         repeat_losses(m, eval, {{l, h, HeadEdit::zero, 1}}).second, self,
                         judge_self_head(self)});
    }
  const auto row = [&](std::size_t l, std::size_t h) -> const InductionHeadRow& { return c.heads[l * H + h]; };
  c.previous_head = argmax_head(H, [&](std::size_t h) { return row(0, h).previous_eval; });
  c.induction_head = argmax_head(H, [&](std::size_t h) { return row(c.last_layer, h).prefix_eval; });
  c.most_needed = argmax_head(H, [&](std::size_t h) { return row(c.last_layer, h).second_if_zeroed; });
  // The previous-token head by key position, over the evaluation set.
  double early = 0.0, late = 0.0, late_self = 0.0, late_first = 0.0;
  std::size_t n_early = 0, n_late = 0;
  for (const auto& layers : ex) {
    const Tensor3& w = layers[0];
    for (std::size_t i = 1; i < w.shape(1); ++i) {
      const double p = w(c.previous_head, i, i - 1);
      if (i <= task.max_period) early += p, ++n_early;
      else late += p, late_self += w(c.previous_head, i, i), late_first += w(c.previous_head, i, 0), ++n_late;
    }
  }
  c.previous_early = n_early ? early / double(n_early) : 0.0;
  c.previous_late = n_late ? late / double(n_late) : 0.0;
  c.previous_late_self = n_late ? late_self / double(n_late) : 0.0;
  c.previous_late_first = n_late ? late_first / double(n_late) : 0.0;
  for (std::size_t k = 0; k < c.heads.size(); ++k)
    if (c.heads[k].second_if_zeroed < c.base.second) c.zeroing_helps.push_back(k);
  c.second_without_previous = row(0, c.previous_head).second_if_zeroed;
  c.second_without_induction = row(c.last_layer, c.induction_head).second_if_zeroed;
  std::vector<HeadEditSpec> last_layer;
  for (std::size_t h = 0; h < H; ++h) last_layer.push_back({c.last_layer, h, HeadEdit::zero, 1});
  c.second_without_last_layer = repeat_losses(m, eval, last_layer).second;
  // Composition: the induction head's prefix matching when the previous-token head is zeroed.
  const auto cut = weights_of(m, eval, {{0, c.previous_head, HeadEdit::zero, 1}});
  c.induction_prefix_without_previous = head_stats(cut, tokens, true)[c.last_layer * H + c.induction_head].prefix_matching;
  c.composes = judge_composition(row(c.last_layer, c.induction_head).prefix_eval, c.induction_prefix_without_previous);
  c.redundant = judge_redundancy(c.base.second, row(c.last_layer, c.most_needed).second_if_zeroed,
                                 c.second_without_last_layer);
  return c;
}

Verdict judge_composition(double prefix_with, double prefix_without) {
  return judge_at_most(prefix_without / prefix_with, 0.5);
}

Verdict judge_redundancy(double base_loss, double worst_single_loss, double whole_layer_loss) {
  return judge_at_most((worst_single_loss - base_loss) / (whole_layer_loss - base_loss), 0.25);
}

Verdict judge_copying(const LmInduction& r) {
  return judge_greater(r.first, r.second, std::max(2.0 * r.difference_se, 0.1));
}

LmRepeatProbe lm_repeat_probe(const DecoderLM& m, const std::vector<std::vector<int>>& passages) {
  LmRepeatProbe p;
  p.result = decoder_lm_repeats(m, passages);
  p.best = p.result.heads;
  std::sort(p.best.begin(), p.best.end(),
            [](const HeadStat& x, const HeadStat& y) { return x.prefix_matching > y.prefix_matching; });
  p.best.resize(std::min<std::size_t>(3, p.best.size()));
  for (const HeadStat& h : p.result.heads) p.strong += h.prefix_matching > 0.4;
  p.copies = judge_copying(p.result);
  p.above_chance = std::min(p.result.first, p.result.second) > std::log(double(m.cfg.vocab));
  return p;
}

LmInductionStudy lm_induction_study(const DecoderLM& m, const std::vector<int>& held_out, std::size_t period,
                                    std::size_t sequences, std::uint64_t seed) {
  LmInductionStudy s;
  const std::vector<std::vector<int>> ids = random_passages(m.cfg.vocab, period, sequences, seed);
  s.random = lm_repeat_probe(m, ids);
  if (held_out.size() >= sequences * period) s.text = lm_repeat_probe(m, text_passages(held_out, period, sequences));
  s.vocab = m.cfg.vocab;
  s.chance = std::log(double(m.cfg.vocab));
  std::vector<bool> seen(m.cfg.vocab, false);
  for (int id : held_out)
    if (id >= 0 && std::size_t(id) < seen.size()) seen[std::size_t(id)] = true;
  s.held_out_tokens = held_out.size();
  s.unseen_ids = std::size_t(std::count(seen.begin(), seen.end(), false));
  for (const std::vector<int>& p : ids)
    for (int id : p) s.drawn_unseen += !seen[std::size_t(id)], ++s.drawn;
  return s;
}

Verdict judge_depth_trend(const std::vector<LayerStat>& layers) {
  const double ratio = layers.empty() ? NAN : layers.back().distance / layers.front().distance;
  return judge_at_least(ratio, 1.1, 1.0 / 1.1);
}

DistanceClaim distance_claim(const std::vector<HeadStat>& heads, const std::vector<std::size_t>& lengths,
                             bool causal) {
  DistanceClaim c;
  c.layers = layer_means(heads);
  c.uniform = uniform_distance(lengths, causal);
  c.grows = judge_depth_trend(c.layers);
  return c;
}

Verdict judge_alignment(double accuracy) { return judge_at_least(accuracy, kAlignsHolds, kAlignsPartly); }

ExampleChoice pick_alignment_example(const std::vector<SentencePair>& pairs, std::size_t max_words,
                                     std::size_t min_reordered) {
  ExampleChoice c;
  c.max_words = max_words, c.min_reordered = min_reordered;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const std::size_t reordered = reordered_rows(pairs[i].alignment).size();
    if (pairs[i].src.size() <= max_words && reordered >= min_reordered) {
      c.index = i, c.words = pairs[i].src.size(), c.reordered = reordered, c.found = true;
      return c;
    }
  }
  if (!pairs.empty()) c.words = pairs[0].src.size(), c.reordered = reordered_rows(pairs[0].alignment).size();
  return c;
}

std::vector<std::size_t> reordered_rows(const std::vector<int>& alignment) {
  std::vector<std::size_t> rows;
  for (std::size_t i = 1; i < alignment.size(); ++i)
    if (alignment[i] >= 0 && alignment[i - 1] >= 0 && alignment[i] < alignment[i - 1]) rows.push_back(i);
  return rows;
}

std::vector<RowMiss> row_misses(const Mat& weights, const std::vector<int>& alignment) {
  std::vector<RowMiss> misses;
  for (std::size_t i = 0; i < weights.shape(0) && i < alignment.size(); ++i) {
    if (alignment[i] < 0) continue;
    const auto row = xt::view(weights, i, xt::all());
    const std::size_t read = std::size_t(std::max_element(row.begin(), row.end()) - row.begin());
    if (read != std::size_t(alignment[i])) misses.push_back({i, read, std::size_t(alignment[i])});
  }
  return misses;
}

AlignmentStudy alignment_study(const Seq2Seq& bahdanau, const Transformer* transformer,
                               const std::vector<SentencePair>& pairs, const SentencePair& example,
                               const Vocab& src_vocab, const Vocab& tgt_vocab) {
  AlignmentStudy a;
  a.bahdanau = seq2seq_alignment_accuracy(bahdanau, pairs, src_vocab, tgt_vocab);
  for (const SentencePair& p : pairs) a.words += p.tgt.size();
  a.sentences = pairs.size();
  a.bahdanau_aligns = judge_alignment(a.bahdanau);
  a.example = seq2seq_teacher_alignment(bahdanau, example, src_vocab, tgt_vocab);
  a.truth = xt::zeros<float>(a.example.shape());
  for (std::size_t i = 0; i < example.alignment.size() && i < a.truth.shape(0); ++i)
    if (example.alignment[i] >= 0) a.truth(i, std::size_t(example.alignment[i])) = 1.0f;
  a.example_misses = row_misses(a.example, example.alignment);
  a.reordered = reordered_rows(example.alignment);
  if (!transformer) return a;
  a.cross = transformer_alignment(*transformer, pairs, src_vocab, tgt_vocab);
  const Mat& acc = a.cross->accuracy;
  for (std::size_t l = 0; l < acc.shape(0); ++l)
    for (std::size_t h = 0; h < acc.shape(1); ++h)
      if (acc(l, h) > acc(a.best_layer, a.best_head)) a.best_layer = l, a.best_head = h;
  a.best = acc(a.best_layer, a.best_head);
  a.best_aligns = judge_alignment(a.best);
  a.layers = layer_alignment(acc);
  bool have_runner = false;
  for (std::size_t l = 0; l < acc.shape(0); ++l)
    for (std::size_t h = 0; h < acc.shape(1); ++h)
      if ((l != a.best_layer || h != a.best_head) && (!have_runner || acc(l, h) > acc(a.runner_layer, a.runner_head)))
        a.runner_layer = l, a.runner_head = h, have_runner = true;
  if (have_runner) {
    const std::size_t H = acc.shape(1);
    a.runner_up = acc(a.runner_layer, a.runner_head);
    a.best_gap = head_gap(a.cross->hits_by_sentence[a.best_layer * H + a.best_head],
                          a.cross->hits_by_sentence[a.runner_layer * H + a.runner_head], a.cross->words_by_sentence);
  }
  const PairAttention pa = transformer_attention(*transformer, example, src_vocab, tgt_vocab);
  const Mat full = slice_of(pa.cross[a.best_layer], a.best_head);  // (len(tgt) + 1, S): the <eos> row last
  a.best_example = xt::view(full, xt::range(0, example.tgt.size()), xt::all());
  a.best_misses = row_misses(a.best_example, example.alignment);
  return a;
}

std::vector<LayerAlignment> layer_alignment(const Mat& accuracy) {
  std::vector<LayerAlignment> out;
  for (std::size_t l = 0; l < accuracy.shape(0); ++l) {
    LayerAlignment la;
    la.layer = l, la.heads = accuracy.shape(1), la.lo = 1.0, la.hi = 0.0;
    for (std::size_t h = 0; h < la.heads; ++h) {
      const double v = accuracy(l, h);
      la.mean += v / double(la.heads), la.lo = std::min(la.lo, v), la.hi = std::max(la.hi, v);
      la.aligned += v >= kAlignsHolds;
    }
    la.aligns = la.heads ? judge_alignment(la.mean) : Verdict{};
    out.push_back(la);
  }
  return out;
}

HeadGap head_gap(const std::vector<std::size_t>& hits_a, const std::vector<std::size_t>& hits_b,
                 const std::vector<std::size_t>& words) {
  HeadGap g;
  const std::size_t n = std::min({hits_a.size(), hits_b.size(), words.size()});
  double total = 0.0, diff = 0.0;
  for (std::size_t s = 0; s < n; ++s) total += double(words[s]), diff += double(hits_a[s]) - double(hits_b[s]);
  if (n < 2 || total <= 0.0) return g;  // clear stays inconclusive
  g.gap = diff / total;
  double ss = 0.0;
  for (std::size_t s = 0; s < n; ++s) {
    const double r = double(hits_a[s]) - double(hits_b[s]) - g.gap * double(words[s]);
    ss += r * r;
  }
  g.se = std::sqrt(double(n) / double(n - 1) * ss) / total;
  g.clear = judge_greater(g.gap, 0.0, 2.0 * g.se);
  return g;
}

UniformClaim uniform_heads(const std::vector<HeadStat>& heads) {
  UniformClaim u;
  u.heads = heads.size();
  for (const HeadStat& h : heads)
    (h.uniformity >= kUniformAt ? u.flat : u.rest).push_back(h);
  u.exist = judge_at_least(double(u.flat.size()), 1.0);
  return u;
}

UniformClaim uniform_heads(const AttnOnly& m, const InductionBatch& eval, const std::vector<HeadStat>& heads) {
  UniformClaim u = uniform_heads(heads);
  if (u.flat.empty()) return u;
  std::vector<HeadEditSpec> zero;
  for (const HeadStat& h : u.flat) zero.push_back({h.layer, h.head, HeadEdit::zero, 1});
  u.ablated = true;
  u.removal = edit_effect(m, eval.tokens, repeat_targets(eval, 0), eval.batch, zero);
  u.harmless = judge_harmless(u.removal);
  return u;
}

Verdict judge_harmless(const OutputChange& removal) { return judge_at_most(std::abs(removal.loss_change), 0.05); }

Verdict judge_perturbation(std::size_t below_seed, std::size_t edits) {
  return judge_at_least(edits == 0 ? NAN : double(below_seed) / double(edits), 0.75, 0.25);
}

PerturbationSweep perturbation_sweep(const AttnOnly& m, const AttnOnly& other_seed, const InductionBatch& eval,
                                     std::uint64_t seed) {
  PerturbationSweep p;
  const std::vector<int> targets = repeat_targets(eval, 0);
  p.seeds = model_difference(m, other_seed, eval.tokens, targets, eval.batch);
  for (std::size_t l = 0; l < m.cfg.layers; ++l)
    for (std::size_t h = 0; h < m.cfg.heads; ++h)
      for (HeadEdit e : {HeadEdit::permute, HeadEdit::uniform, HeadEdit::zero}) {
        PerturbationRow r{l, h, e, edit_effect(m, eval.tokens, targets, eval.batch, {{l, h, e, seed}}), false};
        r.below_seed = r.change.tvd <= p.seeds.tvd;
        p.below += r.below_seed;
        p.rows.push_back(r);
      }
  p.little_change = judge_perturbation(p.below, p.rows.size());
  return p;
}

Verdict judge_informative(const std::vector<Verdict>& attn_vs_random, const Verdict& grad_vs_random) {
  double above = grad_vs_random.holds();
  for (const Verdict& v : attn_vs_random) above += v.holds();
  return judge_at_least(above, 1.0);
}

ImportanceClaim judge_importance(const ImportanceAgreement& a) {
  ImportanceClaim c;
  c.agreement = a;
  c.grad_se = standard_error(a.grad_taus);
  c.random_se = standard_error(a.random_taus);
  auto above_random = [&](double tau, double se) {
    return judge_greater(tau, a.random_vs_loo, 2.0 * std::sqrt(se * se + c.random_se * c.random_se));
  };
  for (std::size_t l = 0; l < a.attn_vs_loo.size(); ++l) {
    c.attn_se.push_back(l < a.attn_taus.size() ? standard_error(a.attn_taus[l]) : 0.0);
    c.attn_vs_random.push_back(above_random(a.attn_vs_loo[l], c.attn_se.back()));
    if (a.attn_vs_loo[l] > a.attn_vs_loo[c.best_layer]) c.best_layer = l;
    if (l < a.attn_top1.size() && a.attn_top1[l] > a.attn_top1[c.best_top1_layer]) c.best_top1_layer = l;
  }
  c.grad_vs_random = above_random(a.grad_vs_loo, c.grad_se);
  c.informative = judge_informative(c.attn_vs_random, c.grad_vs_random);
  c.too_few = a.sequences < kMinImportanceSequences;
  auto finish = [&c]() {  // the measurements stay; from too few sequences no outcome is drawn
    if (!c.too_few) return c;
    for (Verdict& v : c.attn_vs_random) v.outcome = Outcome::inconclusive;
    for (Verdict* v : {&c.grad_vs_random, &c.informative, &c.gradients_win}) v->outcome = Outcome::inconclusive;
    return c;
  };
  if (a.attn_vs_loo.empty() || c.best_layer >= a.attn_taus.size()) return finish();
  std::vector<double> diff;
  for (std::size_t s = 0; s < a.grad_taus.size() && s < a.attn_taus[c.best_layer].size(); ++s)
    diff.push_back(a.grad_taus[s] - a.attn_taus[c.best_layer][s]);
  c.difference_se = standard_error(diff);
  c.gradients_win = judge_greater(a.grad_vs_loo, a.attn_vs_loo[c.best_layer], 2.0 * c.difference_se);
  return finish();
}

ImportanceClaim importance_claim(const AttnOnly& m, const InductionBatch& eval, std::size_t sequences,
                                 std::uint64_t seed) {
  // Query: the last token of the second repeat, whose one earlier copy's successor is the answer.
  std::vector<std::vector<int>> seqs;
  std::vector<std::size_t> queries;
  for (std::size_t s = 0; s < std::min(sequences, eval.batch); ++s) {
    seqs.push_back(eval.sequence(s));
    queries.push_back(2 * eval.periods[s] - 2);
  }
  return judge_importance(importance_agreement(m, seqs, queries, seed));
}

}  // namespace attn
