// The claims about attention weights, measured (see attn/studies/interpretability.hpp).
#include "attn/studies/interpretability.hpp"

#include <cmath>
#include <limits>

#include "attn/attention/alignment.hpp"
#include "attn/data/batching.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "attn/tensor/mask.hpp"
#include "attn/tensor/softmax.hpp"

namespace attn {

std::vector<HeadStat> head_stats(const std::vector<std::vector<Tensor3>>& examples,
                                 const std::vector<std::vector<int>>& tokens, bool causal) {
  std::vector<HeadStat> out;
  if (examples.empty()) return out;
  for (std::size_t l = 0; l < examples[0].size(); ++l)
    for (std::size_t h = 0; h < examples[0][l].shape(0); ++h) {
      HeadStat s;
      s.layer = l;
      s.head = h;
      for (std::size_t e = 0; e < examples.size(); ++e) {
        const Mat p = xt::view(examples[e].at(l), h, xt::all(), xt::all());
        s.entropy += mean_entropy(p);
        s.uniformity += uniformity(p, causal);
        s.distance += mean_attention_distance(p);
        s.previous_token += previous_token_score(p);
        if (e < tokens.size() && !tokens[e].empty()) s.prefix_matching += prefix_matching_score(p, tokens[e]);
      }
      const double n = double(examples.size());
      s.entropy /= n;
      s.uniformity /= n;
      s.distance /= n;
      s.previous_token /= n;
      s.prefix_matching /= n;
      out.push_back(s);
    }
  return out;
}

namespace {
// (n, n) weights uniform over the keys each row may see: 1/(i + 1) on 0 … i when causal, else 1/n.
Mat uniform_weights(std::size_t n, bool causal) {
  Mat p = xt::zeros<float>({n, n});
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n && (!causal || j <= i); ++j) p(i, j) = float(1.0 / double(causal ? i + 1 : n));
  return p;
}
}  // namespace

double uniform_distance(const std::vector<std::size_t>& lengths, bool causal) {
  double s = 0.0;
  for (std::size_t n : lengths) s += mean_attention_distance(uniform_weights(n, causal));
  return lengths.empty() ? 0.0 : s / double(lengths.size());
}

double uniform_prefix_matching(const std::vector<std::vector<int>>& tokens) {
  double s = 0.0;
  for (const std::vector<int>& t : tokens) s += prefix_matching_score(uniform_weights(t.size(), true), t);
  return tokens.empty() ? 0.0 : s / double(tokens.size());
}

double uniform_previous_token(const std::vector<std::size_t>& lengths) {
  double s = 0.0;
  for (std::size_t n : lengths) s += previous_token_score(uniform_weights(n, true));
  return lengths.empty() ? 0.0 : s / double(lengths.size());
}

std::vector<LayerStat> layer_means(const std::vector<HeadStat>& heads) {
  std::vector<LayerStat> out;
  std::vector<std::size_t> count;
  for (const HeadStat& h : heads) {
    if (h.layer >= out.size()) {
      out.resize(h.layer + 1);
      count.resize(h.layer + 1, 0);
    }
    LayerStat& l = out[h.layer];
    l.layer = h.layer;
    l.entropy += h.entropy;
    l.uniformity += h.uniformity;
    l.distance += h.distance;
    ++count[h.layer];
  }
  for (std::size_t l = 0; l < out.size(); ++l)
    if (count[l]) {
      out[l].entropy /= double(count[l]);
      out[l].uniformity /= double(count[l]);
      out[l].distance /= double(count[l]);
    }
  return out;
}

Mat seq2seq_teacher_alignment(const Seq2Seq& m, const SentencePair& pair, const Vocab& src_vocab,
                              const Vocab& tgt_vocab) {
  const std::vector<Batch> batches = make_batches({pair}, src_vocab, tgt_vocab, 1);
  Seq2SeqTape tape;
  seq2seq_forward(tape, m, batches.at(0));
  const std::size_t rows = pair.tgt.size(), s = pair.src.size();
  Mat a = xt::zeros<float>({rows, s});
  for (std::size_t i = 0; i < rows && i < tape.steps.size(); ++i) {
    const Mat& alpha = tape.steps[i].alpha();
    if (alpha.size() == 0) throw std::invalid_argument("seq2seq_teacher_alignment: the model has no attention");
    for (std::size_t j = 0; j < s; ++j) a(i, j) = alpha(0, j);
  }
  return a;
}

double seq2seq_alignment_accuracy(const Seq2Seq& m, const std::vector<SentencePair>& pairs, const Vocab& src_vocab,
                                  const Vocab& tgt_vocab) {
  AlignmentScore total;
  for (const SentencePair& p : pairs) {
    const AlignmentScore s = alignment_hits(seq2seq_teacher_alignment(m, p, src_vocab, tgt_vocab), p.alignment);
    total.hits += s.hits;
    total.total += s.total;
  }
  return total.share();
}

namespace {
OutputChange compare_probs(const AttnOnlyCache& a, double loss_a, const AttnOnlyCache& b, double loss_b,
                           const std::vector<int>& targets) {
  OutputChange c;
  std::size_t rows = 0;
  for (std::size_t n = 0; n < targets.size(); ++n) {
    if (targets[n] < 0) continue;
    double s = 0.0;
    for (std::size_t v = 0; v < a.probs.shape(1); ++v) s += std::abs(double(a.probs(n, v)) - double(b.probs(n, v)));
    c.tvd += 0.5 * s;
    ++rows;
  }
  c.tvd = rows ? c.tvd / double(rows) : 0.0;
  c.loss = loss_b;
  c.loss_change = loss_b - loss_a;
  return c;
}
}  // namespace

OutputChange edit_effect(const AttnOnly& m, const std::vector<int>& tokens, const std::vector<int>& targets,
                         std::size_t batch, const std::vector<HeadEditSpec>& edits) {
  AttnOnlyCache base, edited;
  const double l0 = attn_only_forward(base, m, tokens, targets, batch);
  const double l1 = attn_only_forward(edited, m, tokens, targets, batch, edits);
  return compare_probs(base, l0, edited, l1, targets);
}

OutputChange model_difference(const AttnOnly& a, const AttnOnly& b, const std::vector<int>& tokens,
                              const std::vector<int>& targets, std::size_t batch) {
  AttnOnlyCache ca, cb;
  const double la = attn_only_forward(ca, a, tokens, targets, batch);
  const double lb = attn_only_forward(cb, b, tokens, targets, batch);
  return compare_probs(ca, la, cb, lb, targets);
}

TokenImportance token_importance(const AttnOnly& m, const std::vector<int>& tokens, std::size_t query, int target) {
  if (query >= tokens.size()) throw std::out_of_range("token_importance: query position past the sequence");
  std::vector<int> targets(tokens.size(), -1);
  targets[query] = target;
  AttnOnlyCache cache;
  const double base = attn_only_forward(cache, m, tokens, targets, 1);
  TokenImportance r;
  for (const auto& a : cache.attn) {
    std::vector<double> row(query + 1, 0.0);
    const std::size_t heads = a.weights.shape(1);
    for (std::size_t h = 0; h < heads; ++h)
      for (std::size_t j = 0; j <= query; ++j) row[j] += double(a.weights(0, h, query, j)) / double(heads);
    r.attention.push_back(row);
  }
  // gradient × input: ∂loss/∂x_0 from the backward pass, dotted with x_0 row by row
  AttnOnly grad = zeros_like(m);
  Tensor3 dx0;
  attn_only_backward(grad, cache, m, targets, &dx0);
  for (std::size_t j = 0; j <= query; ++j) {
    double s = 0.0;
    for (std::size_t c = 0; c < dx0.shape(2); ++c) s += double(dx0(0, j, c)) * double(cache.resid[0](0, j, c));
    r.grad_input.push_back(std::abs(s));
  }
  // leave-one-out: key j hidden from every query but its own (its row keeps one key)
  const std::size_t t = tokens.size();
  for (std::size_t j = 0; j <= query; ++j) {
    Mat mask = causal_mask(t);
    for (std::size_t i = 0; i < t; ++i)
      if (i != j) mask(i, j) = -std::numeric_limits<float>::infinity();
    AttnOnlyCache c2;
    r.leave_one_out.push_back(attn_only_forward(c2, m, tokens, targets, 1, {}, mask) - base);
  }
  return r;
}

namespace {
std::size_t argmax(const std::vector<double>& v) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < v.size(); ++i)
    if (v[i] > v[best]) best = i;
  return best;
}
}  // namespace

ImportanceAgreement importance_agreement(const AttnOnly& m, const std::vector<std::vector<int>>& sequences,
                                         const std::vector<std::size_t>& queries, std::uint64_t seed) {
  if (queries.size() != sequences.size())
    throw std::invalid_argument("importance_agreement: one query position per sequence");
  ImportanceAgreement a;
  a.attn_vs_loo.assign(m.cfg.layers, 0.0);
  a.attn_vs_grad.assign(m.cfg.layers, 0.0);
  a.attn_top1.assign(m.cfg.layers, 0.0);
  a.attn_taus.assign(m.cfg.layers, {});
  Rng rng(seed);
  std::vector<double>& random_taus = a.random_taus;
  for (std::size_t s = 0; s < sequences.size(); ++s) {
    const auto& seq = sequences[s];
    const std::size_t q = queries[s];
    if (q < 1 || q + 1 >= seq.size()) continue;  // a query needs a past and a next token
    const TokenImportance ti = token_importance(m, seq, q, seq[q + 1]);
    const std::size_t top = argmax(ti.leave_one_out);
    for (std::size_t l = 0; l < m.cfg.layers; ++l) {
      a.attn_taus[l].push_back(kendall_tau(ti.attention[l], ti.leave_one_out));
      a.attn_vs_loo[l] += a.attn_taus[l].back();
      a.attn_vs_grad[l] += kendall_tau(ti.attention[l], ti.grad_input);
      a.attn_top1[l] += argmax(ti.attention[l]) == top;
    }
    a.grad_top1 += argmax(ti.grad_input) == top;
    a.grad_taus.push_back(kendall_tau(ti.grad_input, ti.leave_one_out));
    a.grad_vs_loo += a.grad_taus.back();
    a.uniform_vs_loo += kendall_tau(std::vector<double>(q + 1, 1.0 / double(q + 1)), ti.leave_one_out);
    std::vector<double> noise(q + 1);
    for (double& x : noise) x = rng.uniform();
    random_taus.push_back(kendall_tau(noise, ti.leave_one_out));
    a.random_top1 += argmax(noise) == top;
    a.chance_top1 += 1.0 / double(q + 1);
    ++a.sequences;
  }
  if (a.sequences == 0) return a;
  const double n = double(a.sequences);
  for (auto& x : a.attn_vs_loo) x /= n;
  for (auto& x : a.attn_vs_grad) x /= n;
  for (auto& x : a.attn_top1) x /= n;
  a.grad_top1 /= n;
  a.random_top1 /= n;
  a.chance_top1 /= n;
  a.grad_vs_loo /= n;
  a.uniform_vs_loo /= n;
  double mean = 0.0;
  for (double x : random_taus) mean += x / n;
  a.random_vs_loo = mean;
  a.random_spread = standard_error(random_taus);
  return a;
}

double standard_error(const std::vector<double>& xs) {
  if (xs.size() < 2) return 0.0;
  const double n = double(xs.size());
  double mean = 0.0, ss = 0.0;
  for (double x : xs) mean += x / n;
  for (double x : xs) ss += (x - mean) * (x - mean);
  return std::sqrt(ss / (n - 1.0) / n);
}

namespace {
std::vector<Tensor3> split_layers(const Tensor4& w) {
  std::vector<Tensor3> out;
  for (std::size_t l = 0; l < w.shape(0); ++l) out.push_back(xt::view(w, l, xt::all(), xt::all(), xt::all()));
  return out;
}
// −log softmax(logits_t)[target] in double.
double token_loss(const Mat& logits, std::size_t t, int target) {
  const std::size_t vocab = logits.shape(1);
  return logsumexp_row_in_double(logits.data() + t * vocab, vocab) - double(logits(t, std::size_t(target)));
}
}  // namespace

LmInduction decoder_lm_repeats(const DecoderLM& m, const std::vector<std::vector<int>>& passages) {
  LmInduction r;
  std::vector<std::vector<Tensor3>> examples;
  std::vector<std::vector<int>> tokens;
  std::vector<double> differences;  // first − second, per sequence
  for (const std::vector<int>& passage : passages) {
    const std::size_t period = passage.size();
    if (period < 2 || 2 * period > m.cfg.context || (r.period != 0 && period != r.period))
      throw std::invalid_argument("decoder_lm_repeats: passage of " + std::to_string(period) +
                                  " tokens must be ≥ 2, as long as the others, and fit twice in " +
                                  std::to_string(m.cfg.context) + " positions");
    r.period = period;
    std::vector<int> seq(passage);
    seq.insert(seq.end(), passage.begin(), passage.end());
    const DecoderLMTrace tr = decoder_lm_trace(m, seq);
    examples.push_back(split_layers(tr.attn_weights));
    tokens.push_back(seq);
    // Position t predicts token t + 1. Each copy scores the passage's tokens 1 … period − 1, the same
    // targets; the junction (token `period`, the passage's start after its end) is left out: no
    // earlier copy shows what follows the passage's last token, so it would only add noise.
    double first = 0.0, second = 0.0;
    for (std::size_t t = 0; t + 1 < seq.size(); ++t)
      if (t + 1 != period) (t + 1 < period ? first : second) += token_loss(tr.logits, t, seq[t + 1]);
    r.first += first / double(period - 1);
    r.second += second / double(period - 1);
    differences.push_back(first / double(period - 1) - second / double(period - 1));
    ++r.sequences;
  }
  if (r.sequences == 0) throw std::invalid_argument("decoder_lm_repeats: no passage");
  r.first /= double(r.sequences);
  r.second /= double(r.sequences);
  r.difference_se = standard_error(differences);
  r.heads = head_stats(examples, tokens, true);
  r.uniform_prefix = uniform_prefix_matching(tokens);
  return r;
}

LmInduction decoder_lm_induction(const DecoderLM& m, std::size_t period, std::size_t n, std::uint64_t seed) {
  if (period < 2 || 2 * period > m.cfg.context)
    throw std::invalid_argument("decoder_lm_induction: period " + std::to_string(period) + " must be ≥ 2 and fit twice in " +
                                std::to_string(m.cfg.context) + " positions");
  return decoder_lm_repeats(m, random_passages(m.cfg.vocab, period, n, seed));
}

std::vector<std::vector<int>> random_passages(std::size_t vocab, std::size_t period, std::size_t n,
                                              std::uint64_t seed) {
  Rng rng(seed);
  std::vector<std::vector<int>> passages(n, std::vector<int>(period));
  for (std::vector<int>& p : passages)
    for (int& id : p) id = int(rng.below(std::uint32_t(vocab)));
  return passages;
}

std::vector<std::vector<int>> text_passages(const std::vector<int>& tokens, std::size_t period, std::size_t n) {
  if (period == 0 || n == 0 || tokens.size() < n * period)
    throw std::invalid_argument("text_passages: " + std::to_string(tokens.size()) + " tokens hold no " +
                                std::to_string(n) + " passages of " + std::to_string(period));
  const std::size_t apart = tokens.size() / n;  // spread over the whole text, not its first pages
  std::vector<std::vector<int>> out;
  for (std::size_t i = 0; i < n; ++i) {
    const auto from = tokens.begin() + std::ptrdiff_t(i * apart);
    out.emplace_back(from, from + std::ptrdiff_t(period));
  }
  return out;
}

std::vector<HeadStat> decoder_lm_text_stats(const DecoderLM& m, const std::vector<int>& tokens, std::size_t windows,
                                            std::size_t time) {
  std::vector<std::vector<Tensor3>> examples;
  for (std::size_t w = 0; w < windows && (w + 1) * time <= tokens.size(); ++w) {
    const std::vector<int> win(tokens.begin() + std::ptrdiff_t(w * time), tokens.begin() + std::ptrdiff_t((w + 1) * time));
    examples.push_back(split_layers(decoder_lm_trace(m, win).attn_weights));
  }
  if (examples.empty())
    throw std::invalid_argument("decoder_lm_text_stats: " + std::to_string(tokens.size()) + " tokens hold no window of " +
                                std::to_string(time));
  return head_stats(examples, {}, true);
}

PairAttention transformer_attention(const Transformer& m, const SentencePair& pair, const Vocab& src_vocab,
                                           const Vocab& tgt_vocab) {
  const std::vector<Batch> batches = make_batches({pair}, src_vocab, tgt_vocab, 1);
  TransformerTape tape;
  transformer_forward(tape, m, batches.at(0));
  PairAttention a;
  auto first = [](const Tensor4& w) { return Tensor3(xt::view(w, 0, xt::all(), xt::all(), xt::all())); };
  for (const auto& e : tape.enc) a.enc_self.push_back(first(e.att.weights));
  for (const auto& d : tape.dec) {
    a.dec_self.push_back(first(d.self_att.weights));
    a.cross.push_back(first(d.cross_att.weights));
  }
  return a;
}

CrossAlignment transformer_alignment(const Transformer& m, const std::vector<SentencePair>& pairs,
                                     const Vocab& src_vocab, const Vocab& tgt_vocab) {
  CrossAlignment r;
  const std::size_t layers = m.cfg.dec_layers, heads = m.cfg.n_heads;
  std::vector<AlignmentScore> scores(layers * heads);
  std::vector<std::vector<Tensor3>> enc_examples;
  r.hits_by_sentence.assign(layers * heads, {});
  for (const SentencePair& p : pairs) {
    const PairAttention a = transformer_attention(m, p, src_vocab, tgt_vocab);
    for (std::size_t l = 0; l < layers; ++l)
      for (std::size_t h = 0; h < heads; ++h) {
        const AlignmentScore s = alignment_hits(slice_of(a.cross[l], h), p.alignment);  // the <eos> row is not scored
        scores[l * heads + h].hits += s.hits;
        scores[l * heads + h].total += s.total;
        r.hits_by_sentence[l * heads + h].push_back(s.hits);
        if (l == 0 && h == 0) r.words_by_sentence.push_back(s.total);
      }
    if (!a.enc_self.empty()) r.enc_lengths.push_back(a.enc_self[0].shape(1));
    enc_examples.push_back(a.enc_self);
  }
  r.words = scores.empty() ? 0 : scores[0].total;  // every head scores the same target words
  r.accuracy = xt::zeros<float>({layers, heads});
  for (std::size_t l = 0; l < layers; ++l)
    for (std::size_t h = 0; h < heads; ++h) r.accuracy(l, h) = float(scores[l * heads + h].share());
  r.enc = head_stats(enc_examples, {}, false);
  return r;
}

}  // namespace attn
