// The recall wall (chapter 12): small 2-layer models trained on MQAR (attn/data/mqar.hpp), then
// accuracy against the bytes of state each model keeps (Arora et al. 2023, "Zoology", Fig. 2;
// Arora et al. 2024, "Based", Fig. 2). Training is one thread, Adam with warm-up and cosine decay,
// batches drawn fresh each step from a mix of pair counts, stopped early once a held-out set is
// recalled at every pair count; the checkpoints live in data/ch12/.
#pragma once

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
  double lr = 3e-3;
  std::size_t warmup = 100;
  std::size_t eval_every = 100;    // check the held-out set this often …
  std::size_t eval_seqs = 64;      // … of this many sequences per pair count
  double stop_accuracy = 0.99;     // … and stop once every pair count reaches it
  std::uint64_t seed = 12;
  std::function<void(std::size_t step, double loss)> on_step;
};
struct RecallTrainReport {
  std::size_t steps = 0;
  double seconds = 0.0;
  double last_loss = 0.0;
  bool stopped_early = false;
};
RecallTrainReport train_recall_model(RecallModel& m, const RecallTrainConfig& cfg);

// Accuracy over `seqs` sequences of `pairs` pairs drawn from `seed` (the same sequences for every model).
double recall_accuracy(const RecallModel& m, std::size_t pairs, std::size_t seqs, std::uint64_t seed);

// The checkpoint name of a model: "ch12/recall_<arch>_d<width>.safetensors".
std::string recall_checkpoint_name(RecallArch arch, std::size_t d_model);
void save_recall_model(const std::string& path, const RecallModel& m, RecallArch arch, const RecallTrainReport& r);
RecallModel load_recall_model(const std::string& path, RecallArch arch, std::size_t d_model);

// ------------------------------------------------------------------ the table and its verdicts
struct RecallCell {
  RecallArch arch{};
  std::size_t d_model = 0, pairs = 0;
  double accuracy = 0.0;
  std::size_t state_bytes = 0;  // at the end of the sequence (context 3·pairs)
};
struct RecallTable {
  std::vector<std::size_t> widths, pairs;
  std::size_t eval_seqs = 0;
  std::vector<RecallCell> cells;  // every arch × width × pairs
  const RecallCell& at(RecallArch a, std::size_t d, std::size_t n) const;
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
  // (≥ 0.9); if not, its low row says more about training than about memory.
  Verdict ssm_fewest;
  // The window falls once the pairs leave it: window accuracy at the most pairs, widest width.
  Verdict window_falls;
  double gap_attention = 0, gap_ssm = 0, gap_hybrid = 0;
};
RecallVerdicts judge_recall(const RecallTable& t);

// ------------------------------------------------------------------ the whole suite
struct RecallSuite {
  std::vector<std::size_t> widths{16, 32, 64};
  std::vector<std::size_t> pairs{4, 8, 16, 32};
  std::size_t eval_seqs = 128;
  std::uint64_t eval_seed = 2024;  // held out: training draws from other streams
};
struct RecallTrained {
  RecallArch arch{};
  std::size_t d_model = 0;
  RecallTrainReport report;
};
// Trains every arch × width from seed cfg.seed and writes each checkpoint into dir (data/ch12).
std::vector<RecallTrained> train_recall_suite(const RecallSuite& suite, const RecallTrainConfig& cfg,
                                              const std::string& dir,
                                              const std::function<void(const RecallTrained&)>& done = {});
// Loads every checkpoint (from dir, or data/ch12 when dir is empty) and measures the table.
RecallTable evaluate_recall_suite(const RecallSuite& suite, const std::string& dir = "");

}  // namespace attn
