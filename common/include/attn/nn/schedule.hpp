// Learning-rate schedules, as a function of the step number (counted from 1).
//   constant       lr = base
//   warmup_linear  lr rises linearly to base over `warmup` steps, then falls linearly to min_lr at `total`
//   warmup_cosine  the same rise, then base→min_lr along half a cosine (Loshchilov & Hutter 2017)
//   inverse_sqrt   lr = factor · d_model^−½ · min(step^−½, step · warmup^−³ᐟ²)  (Vaswani et al. 2017, eq. 3)
//   step_decay     lr = base · gamma^⌊step / every⌋
#pragma once

#include <cstdint>

namespace attn {

enum class ScheduleKind { Constant, WarmupLinear, WarmupCosine, InverseSqrt, StepDecay };

struct Schedule {
  ScheduleKind kind = ScheduleKind::Constant;
  double base_lr = 1e-3;
  std::int64_t warmup = 0;    // warm-up steps (linear rise from 0)
  std::int64_t total = 0;     // last step of the decay (WarmupLinear, WarmupCosine)
  double min_lr = 0.0;        // floor at the end of the decay
  double d_model = 512;       // InverseSqrt
  double factor = 1.0;        // InverseSqrt
  std::int64_t every = 1000;  // StepDecay
  double gamma = 0.5;         // StepDecay

  static Schedule constant(double lr);
  static Schedule warmup_linear(double lr, std::int64_t warmup, std::int64_t total, double min_lr = 0.0);
  static Schedule warmup_cosine(double lr, std::int64_t warmup, std::int64_t total, double min_lr = 0.0);
  static Schedule inverse_sqrt(double d_model, std::int64_t warmup, double factor = 1.0);  // "Noam"
  static Schedule step_decay(double lr, std::int64_t every, double gamma);
};

// The learning rate at `step` (≥ 1; step 0 is treated as 1).
double learning_rate(const Schedule& s, std::int64_t step);

}  // namespace attn
