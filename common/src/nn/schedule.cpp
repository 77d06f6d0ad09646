// Learning-rate schedules (see attn/nn/schedule.hpp).
#include "attn/nn/schedule.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace attn {

Schedule Schedule::constant(double lr) {
  Schedule s;
  s.base_lr = lr;
  return s;
}

Schedule Schedule::warmup_linear(double lr, std::int64_t warmup, std::int64_t total, double min_lr) {
  Schedule s;
  s.kind = ScheduleKind::WarmupLinear;
  std::tie(s.base_lr, s.warmup, s.total, s.min_lr) = std::tie(lr, warmup, total, min_lr);
  return s;
}

Schedule Schedule::warmup_cosine(double lr, std::int64_t warmup, std::int64_t total, double min_lr) {
  Schedule s = warmup_linear(lr, warmup, total, min_lr);
  s.kind = ScheduleKind::WarmupCosine;
  return s;
}

Schedule Schedule::inverse_sqrt(double d_model, std::int64_t warmup, double factor) {
  Schedule s;
  s.kind = ScheduleKind::InverseSqrt;
  std::tie(s.d_model, s.warmup, s.factor) = std::tie(d_model, warmup, factor);
  return s;
}

Schedule Schedule::step_decay(double lr, std::int64_t every, double gamma) {
  Schedule s;
  s.kind = ScheduleKind::StepDecay;
  std::tie(s.base_lr, s.every, s.gamma) = std::tie(lr, every, gamma);
  return s;
}

double learning_rate(const Schedule& s, std::int64_t step) {
  step = std::max<std::int64_t>(step, 1);
  const double pi = 3.14159265358979323846;
  switch (s.kind) {
    case ScheduleKind::Constant:
      return s.base_lr;
    case ScheduleKind::WarmupLinear:
    case ScheduleKind::WarmupCosine: {
      if (step <= s.warmup) return s.base_lr * double(step) / double(s.warmup);
      if (step >= s.total) return s.min_lr;
      const double progress = double(step - s.warmup) / double(std::max<std::int64_t>(s.total - s.warmup, 1));
      const double shape = s.kind == ScheduleKind::WarmupLinear ? 1.0 - progress : 0.5 * (1.0 + std::cos(pi * progress));
      return s.min_lr + (s.base_lr - s.min_lr) * shape;
    }
    case ScheduleKind::InverseSqrt: {
      const double st = double(step), w = double(std::max<std::int64_t>(s.warmup, 1));
      return s.factor / std::sqrt(s.d_model) * std::min(1.0 / std::sqrt(st), st * std::pow(w, -1.5));
    }
    case ScheduleKind::StepDecay:
      return s.base_lr * std::pow(s.gamma, double(step / std::max<std::int64_t>(s.every, 1)));
  }
  return s.base_lr;
}

}  // namespace attn
