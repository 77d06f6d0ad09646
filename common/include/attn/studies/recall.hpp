// The recall wall (chapter 12): small 2-layer models trained on MQAR (attn/data/mqar.hpp), then
// accuracy against the bytes of state each model keeps (Arora et al. 2023, "Zoology", Fig. 2;
// Arora et al. 2024, "Based", Fig. 2). Training is one thread, Adam with warm-up and cosine decay,
// batches drawn fresh each step from a mix of pair counts, stopped early once a held-out set is
// recalled at every pair count; the checkpoints live in data/ch12/.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "attn/models/recall_model.hpp"
#include "attn/studies/verdict.hpp"

namespace attn {

// The five models of the table, each at a width: softmax attention ×2, sliding window ×2, linear
// attention ×2, selective SSM ×2, and the hybrid (SSM layer 0, attention layer 1).
enum class RecallArch { attention, sliding_window, linear_attention, ssm, hybrid };
const char* recall_arch_id(RecallArch a);  // "attention", "window", "linear", "ssm", "hybrid"
std::vector<RecallArch> recall_archs();    // the five, in table order
RecallModelConfig recall_model_config(RecallArch arch, std::size_t d_model);

struct RecallTrainConfig {
  std::vector<std::size_t> pairs{4, 8, 16, 32};  // a batch draws one of these (uniformly)
  std::size_t batch = 16;
  std::size_t max_steps = 1500;
  // The selective SSM learns the lookup several times slower than attention at this size (d = 32,
  // lr 1e-2, trained on 4 pairs alone: 0.24 after 600 steps, 0.69 after 1500, 0.86 after 3000), so
  // the suite gives it more steps; the hybrid, whose attention layer does the lookup, keeps max_steps.
  std::size_t ssm_max_steps = 4000;
  double lr = 3e-3;
  // The SSM from d = 64 up trains at this lower rate: on the mix of 4–32 pairs, 4000 steps at 1e-2
  // left d = 64 at 0.81 on 4 pairs and 0.25 on 32, where 5e-3 reached 0.94 and 0.55.
  double ssm_lr_from_64 = 5e-3;
  std::size_t warmup = 100;
  std::size_t eval_every = 100;    // check the held-out set this often …
  std::size_t eval_seqs = 64;      // … of this many sequences per pair count
  double stop_accuracy = 0.99;     // … and stop once every pair count reaches it
  std::uint64_t seed = 12;
  std::function<void(std::size_t step, double loss)> on_step;
};
// The recipe the shipped checkpoints were trained with (README's training notes): the defaults
// above at a peak rate of 1e-2. Chapter 12 binds its --train options to a copy of it and describes
// the shipped models from it (and from the checkpoints' metadata), never from those options.
RecallTrainConfig recall_shipped_recipe();
struct RecallTrainReport {
  std::size_t steps = 0;
  double seconds = 0.0;
  double last_loss = 0.0;
  bool stopped_early = false;
  // The training curve: held-out accuracy at the fewest pairs (curve_pairs), every eval_every steps.
  std::size_t curve_pairs = 0, curve_every = 0;
  std::vector<double> curve;
};
RecallTrainReport train_recall_model(RecallModel& m, const RecallTrainConfig& cfg);

// Accuracy over `seqs` sequences of `pairs` pairs drawn from `seed` (the same sequences for every model).
double recall_accuracy(const RecallModel& m, std::size_t pairs, std::size_t seqs, std::uint64_t seed);
// The window's ceiling on the same sequences as recall_accuracy: the share of their queries whose
// value lies among the `window` tokens a sliding-window query sees (itself included). One window
// reaches no further; two layers and the short convolutions could carry a little more.
double recall_window_ceiling(std::size_t pairs, std::size_t seqs, std::uint64_t seed, std::size_t window,
                             std::size_t vocab = RecallModelConfig{}.vocab);

// The checkpoint name of a model: "ch12/recall_<arch>_d<width>.safetensors".
std::string recall_checkpoint_name(RecallArch arch, std::size_t d_model);
void save_recall_model(const std::string& path, const RecallModel& m, RecallArch arch, const RecallTrainReport& r);
// Loads a checkpoint; steps, when given, receives the Adam steps it was trained for (its metadata).
RecallModel load_recall_model(const std::string& path, RecallArch arch, std::size_t d_model,
                              std::size_t* steps = nullptr);
// The training curve stored in a checkpoint's metadata (curve, curve_pairs, curve_every); an empty
// curve when the checkpoint has none. Throws for a malformed one.
struct RecallCurve {
  std::size_t pairs = 0, every = 0;
  std::vector<double> accuracy;  // after every, 2·every, … steps
};
RecallCurve read_recall_curve(const std::string& path);
// The curve of one model's checkpoint: the shipped one (dir empty) or dir's (after --train).
RecallCurve recall_curve_of(RecallArch arch, std::size_t d_model, const std::string& dir = "");
RecallCurve parse_recall_curve(const std::string& curve, const std::string& pairs, const std::string& every);

// How long a curve sat near 1/pairs, the accuracy of a model that picks one of the sequence's own
// values but not the right one (chance over the whole vocabulary is far lower): the longest run of
// evals with |accuracy − 1/pairs| ≤ kPlateauBand, then where the curve ended. The plateau verdict
// holds when that run lasted at least kPlateauSteps steps.
inline constexpr double kPlateauBand = 0.08;
inline constexpr std::size_t kPlateauSteps = 300;
struct RecallPlateau {
  double chance = 0.0;             // 1 / pairs
  std::size_t plateau_steps = 0;   // steps of the longest run within the band …
  std::size_t plateau_from = 0, plateau_to = 0;  // … from its first eval's step to its last's
  double plateau_mean = 0.0;       // its mean accuracy
  double plateau_min = 0.0, plateau_max = 0.0;      // its lowest and highest eval
  double plateau_first = 0.0, plateau_last = 0.0;   // its first and last eval: whether it drifts inside the band
  double final_accuracy = 0.0;     // the last eval
  std::size_t final_step = 0;
  Verdict long_plateau;            // plateau_steps ≥ kPlateauSteps
};
RecallPlateau judge_recall_plateau(const RecallCurve& c);
// The curve's accuracy at `step` (evals at every, 2·every, …); NaN when no eval falls on that step.
double recall_curve_at(const RecallCurve& c, std::size_t step);

// ------------------------------------------------------------------ the table and its verdicts
struct RecallCell {
  RecallArch arch{};
  std::size_t d_model = 0, pairs = 0;
  double accuracy = 0.0;
  std::size_t state_bytes = 0;  // at the end of the sequence (context 3·pairs)
};
struct RecallTrainedSteps {
  RecallArch arch{};
  std::size_t d_model = 0, steps = 0;  // from the checkpoint's metadata
};
struct RecallTable {
  std::vector<std::size_t> widths, pairs;
  std::size_t eval_seqs = 0;
  std::vector<RecallCell> cells;  // every arch × width × pairs
  std::vector<RecallTrainedSteps> steps;  // every arch × width
  std::vector<double> window_ceiling;     // per pair count (recall_window_ceiling); empty: not measured
  const RecallCell& at(RecallArch a, std::size_t d, std::size_t n) const;
  std::size_t steps_of(RecallArch a, std::size_t d) const;  // 0 when not recorded
};
struct RecallVerdicts {
  // Attention stays high: its lowest accuracy over every width and pair count (bound 0.9).
  Verdict attention_high;
  // The recurrent models fall as the pairs outgrow the state: SSM accuracy at the most pairs and the
  // widest model, minus softmax attention's there (a gap below −0.1 is the wall).
  Verdict ssm_wall;
  // Accuracy rises with state: the SSM's accuracy at the most pairs, widest minus narrowest width
  // (a rise beyond 0.05).
  Verdict ssm_rises_with_state;
  // The same for linear attention, whose state is P·P + P per head.
  Verdict linear_rises_with_state;
  // The hybrid closes the gap: (hybrid − SSM) / (attention − SSM) at the most pairs and widest width.
  Verdict hybrid_closes_gap;
  // Where the state is ample (fewest pairs, widest SSM) the SSM should still learn the lookup
  // (≥ 0.9 holds, ≥ 0.7 partly); if not, its low row says more about training than about memory.
  Verdict ssm_fewest;
  // The window falls once the pairs leave it: window accuracy at the most pairs, widest width.
  Verdict window_falls;
  // Where the whole sequence fits the window (the most pairs n with 3n ≤ w) the window model
  // computes exactly full attention, so any gap to attention there is training: attention minus
  // window at that n, at the width where it is largest, within 0.05 (0 pairs: no such n).
  std::size_t window_full_pairs = 0, window_gap_width = 0;
  Verdict window_matches_attention;
  // The window sits at its ceiling: over the pair counts whose ceiling is below 1, the largest
  // |best window accuracy over the widths − ceiling| (at n = window_ceiling_pairs), within 0.05
  // holds, 0.1 partly (inconclusive without ceilings). blind_share: the mean of 1 − ceiling over
  // the pair counts, the share of the training mix's queries (pair counts drawn alike) whose value
  // lies beyond one window.
  Verdict window_at_ceiling;
  std::size_t window_ceiling_pairs = 0;
  double blind_share = NAN;
  // Bytes alone do not set the accuracy: at the most pairs and the widest width the SSM and linear
  // attention keep states within a factor 1.5 of each other; linear minus SSM beyond 0.1 holds.
  Verdict same_bytes_differ;
  double bytes_ssm = 0, bytes_linear = 0, acc_linear = 0;
  double gap_attention = 0, gap_ssm = 0, gap_hybrid = 0;
};
// window: w of the sliding-window model (RecallModelConfig::window); t.window_ceiling, when given,
// holds one ceiling per pair count.
RecallVerdicts judge_recall(const RecallTable& t, std::size_t window = RecallModelConfig{}.window);

// ------------------------------------------------------------------ the whole suite
struct RecallSuite {
  std::vector<std::size_t> widths{16, 32, 64};
  std::vector<std::size_t> pairs{4, 8, 16, 32};
  std::size_t eval_seqs = 64;    // × n queries each: 256 at n = 4, 2048 at n = 32
  std::uint64_t eval_seed = 2024;  // held out: training draws from other streams
};
struct RecallTrained {
  RecallArch arch{};
  std::size_t d_model = 0;
  RecallTrainReport report;
};
// Trains every arch × width (or only the archs in `only`, when it is not empty) from seed cfg.seed
// and writes each checkpoint into dir (data/ch12). The SSM runs cfg.ssm_max_steps (at
// cfg.ssm_lr_from_64 from d = 64 up), the rest cfg.max_steps at cfg.lr. A model's weights depend only on its arch, width and cfg: training a subset gives
// the same checkpoints as training them all. Every target is checked before the first model trains
// (attn/data/output_file.hpp: OutputFileError for a device, a folder, a missing folder above dir).
std::vector<RecallTrained> train_recall_suite(const RecallSuite& suite, const RecallTrainConfig& cfg,
                                              const std::string& dir,
                                              const std::function<void(const RecallTrained&)>& done = {},
                                              const std::vector<RecallArch>& only = {});
// "attention", "window", "linear", "ssm" or "hybrid" -> the arch; throws std::invalid_argument
// naming the choices otherwise.
RecallArch parse_recall_arch(const std::string& id);
// Loads every checkpoint (from dir, or data/ch12 when dir is empty) and measures the table, with
// the window's ceiling on the same sequences.
RecallTable evaluate_recall_suite(const RecallSuite& suite, const std::string& dir = "");

}  // namespace attn
