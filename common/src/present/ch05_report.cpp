// Chapter 05's reports (see attn/present/ch05_report.hpp).
#include "attn/present/ch05_report.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "attn/data/data_files.hpp"
#include "attn/data/safetensors.hpp"
#include "attn/position/alibi.hpp"
#include "attn/position/learned_position.hpp"
#include "attn/position/rope.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "attn/present/chapters.hpp"
#include "attn/present/load_or_train.hpp"
#include "attn/present/terminal.hpp"
#include "attn/present/verdict_words.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

namespace attn {

namespace {
// How position enters the model, one line per encoding (the table of step 2).
const char* how_position_enters(PositionEncoding e) {
  switch (e) {
    case PositionEncoding::None: return "—";
    case PositionEncoding::Sinusoidal: return _("X + PE (fixed table)");
    case PositionEncoding::Learned: return _("X + P[pos] (learned table)");
    case PositionEncoding::Rope: return _("rotate Q, K by pos·θ");
    case PositionEncoding::Alibi: return _("scores − m·|i − j|");
  }
  return "?";
}

std::string row_label(const ReversalRow& r) {
  return r.causal ? _f("{} + causal mask", position_encoding_name(r.encoding)) : position_encoding_name(r.encoding);
}

std::string percent(double x) { return fmt::format("{:.1f}%", 100.0 * x); }
}  // namespace

Labels index_labels(std::size_t n) {
  Labels l;
  for (std::size_t p = 0; p < n; ++p) l.push_back(std::to_string(p));
  return l;
}

void report_learned_limit(Narrator& nar, const Mat& table) {
  const std::size_t len = table.shape(0) + 1;
  try {
    Mat y;
    learned_position_forward(y, Mat(xt::zeros<float>({len, table.shape(1)})), table);
    nar.result(_f("a sequence of {} tokens: accepted", len));
  } catch (const PositionLimitError&) {  // its message is the library's, in English: say it in the lesson's words
    nar.result(_f("a sequence of {} tokens: refused — position {} has no learned row; the table has rows for "
                  "positions 0 … {} (max_len {})", len, len - 1, len - 2, table.shape(0)));
  }
}

void report_rope_pair(Narrator& nar, const Labels& words, const Mat& q, const Mat& q_rot) {
  const std::size_t t = q.shape(0) - 1;  // the last word: the largest angle shown
  nar.say(_f("one pair by hand: word '{}' (position {}), pair 0, θ_0 = 1, angle {} rad", words[t], t, t));
  nar.say(_f("  (x0, x1) = ({:+.4f}, {:+.4f}) → (x0·cos − x1·sin, x0·sin + x1·cos) = ({:+.4f}, {:+.4f})",
             q(t, 0), q(t, 1), q_rot(t, 0), q_rot(t, 1)));
}

std::string alibi_formula(const AlibiSlopeShape& s) {
  if (s.power_of_two())
    return _("scores_h(i, j) = q_i·k_j/√d_k − m_h·(i − j), j ≤ i;  m_h = 2^(−8(h+1)/H), head h = 0 … H − 1");
  return _f("scores_h(i, j) = q_i·k_j/√d_k − m_h·(i − j), j ≤ i;  m_h = 2^(−8(h+1)/{0}) for h < {0}, "
            "2^(−8(2(h − {0}) + 1)/{1}) for h = {0} … H − 1", s.base_heads, 2 * s.base_heads);
}

void show_alibi_bias(Narrator& nar, const AlibiSlopeShape& shape, std::size_t positions) {
  nar.say(_f("here h is a head's index and H = {} (--heads) the number of heads (chapter 04 wrote h for the "
             "number)", shape.heads));
  nar.say(_("the paper's form is causal (a query sees only earlier keys, i − j ≥ 0); the heatmap and step 2 also use "
            "the symmetric −m_h·|i − j|, which is the same where j ≤ i."));
  Vec slopes = xt::zeros<float>({shape.heads});
  for (std::size_t h = 0; h < shape.heads; ++h) slopes(h) = float(shape.slopes[h]);
  const std::size_t heads = shape.heads;
  if (heads == 1)
    nar.show("alibi_slopes", slopes, {}, _f("H = 1: one head, slope {:.4g}", slopes(0)));
  else if (shape.geometric.holds())
    nar.show("alibi_slopes", slopes, {}, _f("H = {}: a geometric sequence (ratio {:.4g}), head {} the steepest", heads,
                                            shape.ratio, shape.steepest));
  else {
    nar.show("alibi_slopes", slopes, {},
             _f("H = {}: not one geometric sequence; head {} the steepest", heads, shape.steepest));
    nar.say(_f("H = {} is not a power of 2: the slopes are those of {} heads, then every other slope of {} heads "
               "(the authors' code, get_slopes; §3 gives only the power-of-2 sequence)", heads, shape.base_heads,
               2 * shape.base_heads));
  }
  const Tensor3 bias = alibi_bias(slopes, positions);
  nar.record("alibi_bias", bias);
  const Labels pos = index_labels(positions);
  nar.heatmap("alibi_bias_head0", slice_of(bias, 0), pos, pos, _f("head 0, slope {:.4g}", slopes(0)));
  if (heads < 2) return;
  // The steepest and the flattest head, on the training length of step 7.
  const std::size_t flattest = std::size_t(std::min_element(shape.slopes.begin(), shape.slopes.end()) - shape.slopes.begin());
  const std::size_t L = ExtrapolationConfig{}.train_len;
  Table t({_("head"), _("slope m"), _("weight on itself"), _("weight on key 0"), _("ratio")},
          _f("equal raw scores, causal: the weights of the last query of {} tokens", L));
  for (std::size_t h : {shape.steepest, flattest}) {
    const AlibiReach r = alibi_equal_score_reach(shape.slopes[h], L);
    t.add({std::to_string(h), fmt::format("{:.4g}", r.slope), fmt::format("{:.3f}", r.nearest),
           fmt::format("{:.3f}", r.farthest), fmt::format("{:.3g}×", r.ratio)});
  }
  nar.table(t, /*as_result=*/true);
  const AlibiReach flat = alibi_equal_score_reach(shape.slopes[flattest], L);
  nar.say(flat.nearly_blind.holds()
              ? _f("look: head {}'s slope moves the weights only between {:.3f} and {:.3f} around the uniform 1/{} = "
                   "{:.3f} (ratio {:.3g}×, within the course's 1.25× for 'nearly blind'): over {} tokens a flat head "
                   "is nearly blind to position; its bias tells near from far only in much longer sequences.",
                   flattest, flat.farthest, flat.nearest, L, flat.uniform, flat.ratio, L)
              : _f("look: even the flattest head, {}, favours its own key {:.3g}× over key 0 across {} tokens (more "
                   "than the course's 1.25× for 'nearly blind').", flattest, flat.ratio, L));
}

void report_order_blind(Narrator& nar, const PermutationCheck& c) {
  nar.say(_("Π: a permutation matrix, here the one that reverses the rows (the sentence read backwards)"));
  nar.result(c.equivariant.holds()
                 ? _f("max |output_swapped − reversed(output)| = {:.1e}: the same set of rows, only reordered",
                      c.equivariance_err)
                 : _f("max |output_swapped − reversed(output)| = {:.1e}: the rows themselves changed",
                      c.equivariance_err));
}

void report_reversal(Narrator& nar, const ReversalStudy& s) {
  nar.say(_("RoPE: Rotary Position Embedding (step 5; θ: its rotation frequencies); ALiBi: Attention with Linear "
            "Biases (step 6; m: a head's slope)"));
  Table t({_("encoding"), _("how position enters"), _("max |Δ|, reversed order")});
  std::vector<std::string> apart, blind;
  for (const ReversalRow& r : s.rows) {
    const char* how = !r.causal ? how_position_enters(r.encoding)
                      : r.encoding == PositionEncoding::Alibi ? _("the paper's (decoder) form")
                                                              : _("word t sees words 0 … t");
    t.add({row_label(r), how, fmt::format("{:.3e}", r.gap)});
    (r.tells_apart.holds() ? apart : blind).push_back(row_label(r));
  }
  nar.table(t, /*as_result=*/true);
  nar.result(_f("tell the reversed sentence apart (max |Δ| ≥ 1e-3): {}; blind to the reversal: {}",
                apart.empty() ? "—" : fmt::format("{}", fmt::join(apart, ", ")),
                blind.empty() ? "—" : fmt::format("{}", fmt::join(blind, ", "))));
  nar.say(_("(learned: an untrained N(0, 1) table, larger than step 4's N(0, 0.02²) so that it is visible; ALiBi: "
            "one head, slope 1/4)"));
  nar.say(_("the size of max |Δ| is not a quality score (it grows with the table's scale, as the learned row "
            "shows); only the line between ≥ 1e-3 and float rounding (~1e-7) matters here"));
}

void explain_reversal(Narrator& nar, const ReversalStudy& s) {
  const bool alibi_blind = !s.at(PositionEncoding::Alibi).tells_apart.holds();
  const bool mask_breaks = s.at(PositionEncoding::None, true).tells_apart.holds();
  if (alibi_blind && mask_breaks)
    nar.why(_("symmetric ALiBi keeps every distance |i − j| when a sentence is read backwards, so it cannot tell a "
              "sentence from its reverse; ALiBi is used with a causal mask, and "
              "the mask alone already breaks the symmetry."));
  else
    nar.why(_("an encoding that depends only on |i − j| cannot see a reversal; here the table shows which did."));
}

void report_shift(Narrator& nar, const ShiftCheck& c) {
  nar.result(c.independent_of_pos.holds()
                 ? _f("PE(pos + {0}) = M_{0}·PE(pos) for every pos in 0 … {1} (checked on a longer table of {2} rows, "
                      "not only the rows shown): "
                      "max error {3:.1e} — M_k does not depend on pos", c.k, c.last_pos, c.last_pos + c.k + 1,
                      c.max_error)
                 : _f("PE(pos + {0}) vs M_{0}·PE(pos) for pos in 0 … {1} (checked on a longer table of {2} rows, "
                      "not only the rows shown): max "
                      "error {3:.1e}, more than float rounding", c.k, c.last_pos, c.last_pos + c.k + 1, c.max_error));
}

void report_similarity(Narrator& nar, const SimilarityCheck& c) {
  MatrixStyle cited;  // the two columns the "look at" line below names stay in view
  if (c.dip_k > 0) cited.keep_cols = {c.dip_k, c.rise_k};
  nar.show("pe_similarity", c.rows, {_f("pos {}", c.pos_a), _f("pos {}", c.pos_b)}, {},
           _f("PE(pos)·PE(pos + k), k = 0, 1, …, pos = {} and {} (from a longer table)", c.pos_a,
              c.pos_b), cited);
  nar.result(_f("the two rows and Σ_i cos(k·ω_i) agree within {:.1e}: {}", c.max_diff,
                c.of_k_only.holds() ? _("a function of k only, not of pos") : _("they differ: pos leaks in")));
  if (c.dip_k > 0)
    nar.say(_f("look at: it is not a distance — it falls to {:.3f} at k = {}, then rises again to {:.3f} at k = {} "
               "(the fastest pair, ω_0 = 1, comes round every 2π ≈ 6.3 positions)", c.dip, c.dip_k, c.rise, c.rise_k));
}

void report_rope_relative(Narrator& nar, const RelativeCheck& c) {
  nar.result(_f("scores q_m·k_n vs q_(m+s)·k_(n+s) for s = {}: max difference {:.1e} — {}",
                fmt::join(c.shifts, ", "), c.max_diff,
                c.relative_only.holds() ? _("only m − n matters") : _("more than float rounding: position leaks in")));
}

void report_rope_bound(Narrator& nar, std::size_t d, std::size_t big_d, std::size_t max_distance) {
  const Vec small = rope_distance_bound(d, max_distance), big = rope_distance_bound(big_d, max_distance);
  Table bt({_("distance m − n"), _f("bound, d = {}", d), _f("bound, d = {}", big_d)},
           _("RoFormer §3.4.3: relative upper bound of |q_m·k_n| as the distance grows"));
  for (std::size_t r : {0u, 1u, 4u, 16u, 64u, 128u, 256u})
    if (r <= max_distance) bt.add({std::to_string(r), fmt::format("{:.2f}", small(r)), fmt::format("{:.2f}", big(r))});
  nar.say(_("bound(r) = (2/d)·Σ_{j=1…d/2} |S_j(r)|, S_j(r) = Σ_{l<j} e^(√−1·r·θ_l), the curve "
            "RoFormer plots (Su et al. 2021, §3.4.3, Fig. 2); its eq. 35–37 show |q_m·k_n| ≤ "
            "max_l |h_(l+1) − h_l| · Σ_j |S_j(m − n)| = max_l |h_(l+1) − h_l| · (d/2)·bound(m − n), "
            "h_l = (q_(2l) + √−1·q_(2l+1))·conj(k_(2l) + √−1·k_(2l+1)): pair l of q (before rotation) as one "
            "complex number, times the complex conjugate of k's pair l; l: the pair index, j: how many pairs are "
            "summed; at r = 0 every |S_j| = j, so bound(0) = (d/2 + 1)/2"));
  nar.table(bt);
  const BoundRebound s = rope_bound_rebound(d, 16, max_distance), b = rope_bound_rebound(big_d, 16, max_distance);
  nar.result(_f("largest bound at distances 16 … {}, as a fraction of distance 0: d = {}: {:.0f}% (at distance {}); "
                "d = {}: {:.0f}% (at distance {})", max_distance, d, 100.0 * s.fraction, s.at, big_d,
                100.0 * b.fraction, b.at));
  if (judge_rebound(s, b).holds())
    nar.say(_f("the decay is an average over the d/2 frequencies falling out of phase: with d = {} there are only "
               "{} of them, too few to average out; d = {} has {}, and from distance 16 to {} its bound stays at or "
               "below {:.0f}% of its start.", d, d / 2, big_d, big_d / 2, max_distance, 100.0 * b.fraction));
  else
    nar.say(_("the decay is an average over the d/2 frequencies falling out of phase; here the two widths climb back "
              "about as far."));
}

void report_zero_slope(Narrator& nar, const ZeroSlopeCheck& c) {
  nar.result(c.same_as_none.holds()
                 ? _f("slope 0: max |ALiBi − no positions| = {:.1e} (no positional information at all)", c.max_diff)
                 : _f("slope 0: max |ALiBi − no positions| = {:.1e}: the zero bias changed the output", c.max_diff));
}

std::vector<std::string> position_checkpoint_names() {
  std::vector<std::string> names;
  for (PositionEncoding e : all_position_encodings())
    names.push_back(fmt::format("ch05/{}.safetensors", position_encoding_name(e)));
  return names;
}

std::unique_ptr<PositionModel> position_model(Narrator& nar, PositionEncoding e, CheckpointSet& files, bool train,
                                              const ExtrapolationConfig& cfg) {
  Rng init(cfg.seed + std::uint64_t(e));
  auto model = std::make_unique<PositionModel>(e, cfg, init);
  const std::string file = fmt::format("ch05/{}.safetensors", position_encoding_name(e));
  double final_loss = 0.0;
  Metadata recorded;  // what a loaded file says of its training
  const bool trained = load_or_train(
      {files.path(file), train, cfg.steps, /*progress=*/false},
      [&](const std::string& path) {
        load_checkpoint(path, model->registry(), false, &recorded, {{"encoding", position_encoding_name(e)}});
      },
      [&](const StepCallback&) { final_loss = train_extrapolation(*model, cfg); },
      [&](const std::string& path) {  // staged: the five are written together by files.commit()
        files.save(path, model->registry(),
                   {{"encoding", position_encoding_name(e)}, {"steps", std::to_string(cfg.steps)},
                    {"seed", std::to_string(cfg.seed)},
                    {"final_train_loss", fmt::format("{:.4f}", final_loss)}});
      });
  if (trained) {
    nar.say(_f("trained {:<10} {} steps, final training loss {:.3f} → {}", position_encoding_name(e), cfg.steps,
               final_loss, file));
  } else {
    const auto md = [&](const char* key) {  // "?" when the file does not record it
      const auto it = recorded.find(key);
      return it == recorded.end() ? std::string("?") : escape_control(it->second, false);
    };
    if (recorded.count("seed"))
      nar.say(_f("{:<10}  {} steps, training seed {}, final training loss {} (as its file records)",
                 position_encoding_name(e), md("steps"), md("seed"), md("final_train_loss")));
    else
      nar.say(_f("{:<10}  {} steps, final training loss {} (as its file records)", position_encoding_name(e),
                 md("steps"), md("final_train_loss")));
  }
  return model;
}

void report_extrapolation_seeds(Narrator& nar, std::uint64_t run_seed, std::uint64_t train_seed, bool train) {
  nar.say(train
              ? _f("this step does not use --seed ({}): --train starts every model from the fixed training seed "
                   "{}, and the test sequences come from the fixed seeds 2024 + T (T: the test length).",
                   run_seed, train_seed)
              : _f("this step does not use --seed ({}): the models are read from their files, and the test "
                   "sequences come from the fixed seeds 2024 + T (T: the test length); --train retrains the models "
                   "from the fixed training seed {}. Below, each model's line shows what its file records (not the "
                   "machine or threads it was trained on).", run_seed, train_seed));
}

void describe_recall_task(Narrator& nar, const ExtrapolationConfig& cfg) {
  nar.say(_f("task: each token is a (key, value) pair, {} keys × {} values; predict the value of the latest earlier "
             "token with the same key. One attention layer, {} heads × d_k = {}, strict causal mask (token t sees "
             "0 … t − 1, not itself); chance = 1/{} = {:.1f}%.", cfg.keys, cfg.values, cfg.heads,
             cfg.d_model / cfg.heads, cfg.values, 100.0 / double(cfg.values)));
}

void report_none_vs_vote(Narrator& nar, const ExtrapolationStudy& s) {
  using P = PositionEncoding;
  const Verdict& v = s.none_sees_order;
  nar.result(_f("an order-blind vote (no model: of the earlier tokens with the query's key, the most frequent "
                "value, ties shared) scores {} at L, {} at 2L, {} at 4L; a reader that sees those values only as a "
                "set can expect no more: without their order, each earlier value of the key is as likely as any other "
                "to be the latest, so the most frequent one is the best guess", percent(s.order_blind[0].accuracy), percent(s.order_blind[1].accuracy),
                percent(s.order_blind[2].accuracy)));
  const std::string none = percent(s.at(P::None, 1).accuracy), vote = percent(s.order_blind[0].accuracy);
  nar.say(_f("noise ±: two standard errors of the difference of two accuracies p, 2·√(Σ p(1 − p)/N), N = {} scored "
             "tokens at L", s.at(P::None, 1).scored));
  if (v.holds())
    nar.result(_f("none: {} at L against the vote's {} (+{:.1f} points, noise ±{:.1f}): the causal mask alone gives "
                  "it some order", none, vote, 100.0 * v.measured, 100.0 * v.bound));
  else if (v.outcome == Outcome::fails)
    nar.result(_f("none: {} at L against the vote's {} ({:+.1f} points, noise ±{:.1f}): below even the order-blind "
                  "vote", none, vote, 100.0 * v.measured, 100.0 * v.bound));
  else
    nar.result(_f("none: {} at L against the vote's {} ({:+.1f} points, noise ±{:.1f}): the same within noise — "
                  "the causal mask tells it which tokens came before, not in what order (one layer: each output "
                  "is a softmax over the set of earlier tokens)", none, vote, 100.0 * v.measured, 100.0 * v.bound));
}

void report_extrapolation(Narrator& nar, const ExtrapolationStudy& s) {
  nar.say(_f("CE: the mean cross-entropy of the value predicted at each scored token, in nats (natural-log units); "
             "acc: the share predicted right; @L, @2L, @4L: test sequences of {}, {} and {} tokens",
             s.at(PositionEncoding::None, 1).length, s.at(PositionEncoding::None, 2).length,
             s.at(PositionEncoding::None, 4).length));
  nar.say(_f("chance: a uniform guess over the {} values has acc 1/{} = {:.1f}% and CE ln {} = {:.3f}", s.values,
             s.values, 100.0 / double(s.values), s.values, uniform_guess_loss(s.values)));
  Table t({_("encoding"), _("CE @L"), _("acc @L"), _("CE @2L"), _("acc @2L"), _("CE @4L"), _("acc @4L")});
  Mat m = xt::zeros<float>({s.results.size(), std::size_t(6)});
  std::vector<std::string> names;
  for (PositionEncoding e : all_position_encodings()) {
    const auto it = s.results.find(e);
    if (it == s.results.end()) continue;
    std::vector<std::string> row = {position_encoding_name(e)};
    for (std::size_t c = 0; c < it->second.size() && c < 3; ++c) {
      const ExtrapolationResult& r = it->second[c];
      row.push_back(r.available ? fmt::format("{:.3f}", r.loss) : "—");
      row.push_back(r.available ? percent(r.accuracy) : "—");  // no row past L: said below the table
      m(names.size(), 2 * c) = r.available ? float(r.loss) : NAN;
      m(names.size(), 2 * c + 1) = r.available ? float(r.accuracy) : NAN;
    }
    t.add(row);
    names.push_back(fmt::format("\"{}\"", position_encoding_name(e)));
  }
  nar.table(t, /*as_result=*/true);
  nar.record("extrapolation", m);
  const std::vector<ConfidentlyWrong> wrong = confidently_wrong(s);
  std::vector<std::string> cells;
  for (const ConfidentlyWrong& w : wrong)
    cells.push_back(_f("{} at {}L (CE {:.3f}, acc {})", position_encoding_name(w.encoding), w.times_l, w.loss,
                       percent(w.accuracy)));
  if (!wrong.empty())
    nar.say(_f("look: {}: CE above the uniform guess's {:.3f}, yet acc above chance. There the model is confidently "
               "wrong when it is wrong, which CE punishes far more than accuracy shows.",
               fmt::format("{}", fmt::join(cells, ", ")), wrong.front().chance_loss));
  nar.manifest_field("extrapolation_rows", fmt::format("[{}]", fmt::join(names, ", ")));
  nar.manifest_field("extrapolation_columns", "[\"loss L\", \"acc L\", \"loss 2L\", \"acc 2L\", \"loss 4L\", \"acc 4L\"]");
  nar.manifest_field("extrapolation_data", "\"make_recall_data(Rng(2024 + T), 200, T, 4 keys, 8 values) for T = 16, 32, "
                                           "64; models data/ch05/<encoding>.safetensors\"");
  using P = PositionEncoding;
  const bool learned_stops = s.results.count(P::Learned) && !s.at(P::Learned, 2).available;
  nar.result(_f("RoPE: {} at L → {} at 4L; ALiBi: {} → {}; sinusoidal: {} → {}{}", percent(s.at(P::Rope, 1).accuracy),
                percent(s.at(P::Rope, 4).accuracy), percent(s.at(P::Alibi, 1).accuracy), percent(s.at(P::Alibi, 4).accuracy),
                percent(s.at(P::Sinusoidal, 1).accuracy), percent(s.at(P::Sinusoidal, 4).accuracy),
                learned_stops ? _("; learned: no rows past L.") : "."));
  if (s.results.count(P::None) && s.order_blind.size() == 3) report_none_vs_vote(nar, s);
  nar.result(_f("claim of the source article {}, RoPE extrapolates 'naturally' (the course's criterion for "
                "'naturally': loses at most 2 points from L to 4L): it lost {:.0f} — {}", source_article(), 100.0 * s.drop(P::Rope),
                s.rope_natural.holds() ? _("held") : _("did NOT hold")));
  const RopeReach reach = rope_reach(s.d_k, s.at(P::Rope, 1).length, s.at(P::Rope, 4).length);
  const BoundRebound back = rope_bound_rebound(reach.d_k, 16, reach.test_len - 1);
  std::vector<std::string> angles;
  for (std::size_t i = 0; i < reach.theta.size(); ++i)
    angles.push_back(_f("pair {}: {:.3g} → {:.3g}", i, reach.train_angle[i], reach.test_angle[i]));
  nar.say(_f("a likely reason RoPE falls (not measured): with d_k = {} it rotates {} pairs; the largest query–key "
             "angle (n − 1)·θ_i in rad, training length {} → test length {}: {}. {} of the {} pairs never complete a "
             "turn in training, so at 4L they meet angles the model never saw. Nor does a d_k = {} head get much "
             "decay with distance: step 5's bound, for d = {}, climbs back to {:.0f}% of its start at distance {} "
             "(its largest between distances 16 and {}, all met at 4L).",
             reach.d_k, reach.theta.size(), reach.train_len, reach.test_len, fmt::join(angles, ", "),
             reach.unseen_pairs, reach.theta.size(), reach.d_k, reach.d_k, 100.0 * back.fraction, back.at,
             reach.test_len - 1));
  nar.result(_f("claim of Press et al. 2021, ALiBi extrapolates better than sinusoidal: drops {:.1f} vs {:.1f} points "
                "(noise ±{:.1f}: 2·√(Σ p(1 − p)/N) over the four accuracies at L and 4L; N = the scored tokens, those "
                "with an earlier token of the same key, over {} test sequences: {} at L, {} at 4L) — {}",
                100.0 * s.drop(P::Alibi), 100.0 * s.drop(P::Sinusoidal), 100.0 * s.alibi_over_sinusoidal.bound,
                kExtrapolationTestSequences, s.at(P::Alibi, 1).scored, s.at(P::Alibi, 4).scored,
                s.alibi_over_sinusoidal.holds() ? _("held") : outcome_word(s.alibi_over_sinusoidal.outcome)));
  nar.say(_("each encoding is one trained model (one training seed): the ± is the test's sampling noise only, not the "
            "spread between training runs, which can be larger"));
  nar.say(_("note: the answer is always the most recent earlier token with the query's key, so this task rewards "
            "recency by construction — exactly what ALiBi's distance penalty encodes; it favours ALiBi."));
}

std::vector<std::string> ch05_takeaway(const PermutationCheck& order, const ShiftCheck& shift,
                                       const RelativeCheck& rope, const ZeroSlopeCheck& alibi,
                                       const ExtrapolationStudy& x, const std::string& sentence,
                                       const std::string& reversed) {
  using P = PositionEncoding;
  std::vector<std::string> lines;
  lines.push_back(order.equivariant.holds()
                      ? _f("Without positions self-attention is permutation-equivariant: \"{}\" and \"{}\" give the "
                           "same rows, reordered.", sentence, reversed)
                      : _("Without positions the reversed sentence did not give the same rows reordered (step 1)."));
  lines.push_back(shift.independent_of_pos.holds()
                      ? _("Sinusoidal: PE(pos+k) = M_k·PE(pos) with M_k independent of pos; learned tables stop at "
                          "their trained length.")
                      : _("Sinusoidal: M_k·PE(pos) missed PE(pos+k) here (step 3); learned tables stop at their "
                          "trained length."));
  lines.push_back(rope.relative_only.holds() && alibi.same_as_none.holds()
                      ? _("RoPE makes q·k depend on m − n only (checked to float precision); ALiBi penalises distance, "
                          "slope 0 = no positions.")
                      : _("RoPE's relative-only check or ALiBi's slope-0 check failed here (steps 5–6)."));
  lines.push_back(_f("Measured here (train L = 16): at 4L ALiBi keeps {:.0f}% accuracy, RoPE {:.0f}%, sinusoidal "
                     "{:.0f}%, on a task that rewards recency (ALiBi's bias); plain RoPE {} 'naturally' here.",
                     100 * x.at(P::Alibi, 4).accuracy, 100 * x.at(P::Rope, 4).accuracy,
                     100 * x.at(P::Sinusoidal, 4).accuracy,
                     x.rope_natural.holds() ? _("extrapolated") : _("did not extrapolate")));
  return lines;
}

}  // namespace attn
