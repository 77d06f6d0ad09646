// SGD, Adam/AdamW and global-norm clipping (see attn/nn/optim.hpp).
#include "attn/nn/optim.hpp"

#include <cmath>

#include <fmt/format.h>

namespace attn {

namespace {
// Before an update: the learning rate and every gradient finite, so a refused step changes nothing
// (neither the weights, the moments nor the step count). step: the number the update would have.
void check_before_step(const char* optimiser, std::int64_t step, float lr, const ParamRegistry& reg) {
  if (!std::isfinite(lr))
    throw TrainingDivergedError(fmt::format("{} step {}: the learning rate is {}", optimiser, step, lr));
  for (const auto& e : reg.entries())
    for (std::size_t i = 0; i < e.size; ++i)
      if (!std::isfinite(e.grad[i]))
        throw TrainingDivergedError(fmt::format(
            "{} step {}: the gradient of '{}' is {} at index {}: the loss turned non-finite (weights or learning "
            "rate too large?); training stopped, nothing saved",
            optimiser, step, e.name, e.grad[i], i));
}
// After it: a weight that overflowed. The weights are already changed then; training stops and nothing
// is saved, so the changed weights are never used.
void check_after_step(const char* optimiser, std::int64_t step, const ParamRegistry& reg) {
  for (const auto& e : reg.entries())
    for (std::size_t i = 0; i < e.size; ++i)
      if (!std::isfinite(e.value[i]))
        throw TrainingDivergedError(fmt::format(
            "{} step {}: weight '{}' became {} at index {} (learning rate too large?); training stopped, nothing saved",
            optimiser, step, e.name, e.value[i], i));
}
}  // namespace

double grad_norm(const ParamRegistry& reg) {
  double s = 0.0;
  for (const auto& e : reg.entries())
    for (std::size_t i = 0; i < e.size; ++i) s += double(e.grad[i]) * e.grad[i];
  return std::sqrt(s);
}

double clip_grad_norm(ParamRegistry& reg, double max_norm) {
  const double norm = grad_norm(reg);
  if (norm > max_norm && norm > 0.0) {
    const float scale = float(max_norm / norm);
    for (const auto& e : reg.entries())
      for (std::size_t i = 0; i < e.size; ++i) e.grad[i] *= scale;
  }
  return norm;
}

Sgd::Sgd(ParamRegistry& reg, SgdConfig cfg) : reg_(reg), cfg_(cfg) {
  for (const auto& e : reg_.entries()) velocity_.emplace_back(cfg_.momentum != 0.0f ? e.size : 0, 0.0f);
}

void Sgd::step(float lr) {
  check_before_step("SGD", t_ + 1, lr, reg_);
  ++t_;
  const auto& entries = reg_.entries();
  for (std::size_t p = 0; p < entries.size(); ++p) {
    const ParamEntry& e = entries[p];
    for (std::size_t i = 0; i < e.size; ++i) {
      float g = e.grad[i] + cfg_.weight_decay * e.value[i];
      if (cfg_.momentum != 0.0f) g = velocity_[p][i] = cfg_.momentum * velocity_[p][i] + g;
      e.value[i] -= lr * g;
    }
  }
  check_after_step("SGD", t_, reg_);
}

Adam::Adam(ParamRegistry& reg, AdamConfig cfg) : reg_(reg), cfg_(cfg) {
  for (const auto& e : reg_.entries()) {
    m_.emplace_back(e.size, 0.0f);
    v_.emplace_back(e.size, 0.0f);
  }
}

void Adam::step(float lr) {
  check_before_step("Adam", t_ + 1, lr, reg_);
  ++t_;
  const double bc1 = 1.0 - std::pow(double(cfg_.beta1), double(t_));  // bias corrections
  const double bc2 = 1.0 - std::pow(double(cfg_.beta2), double(t_));
  const auto& entries = reg_.entries();
  for (std::size_t p = 0; p < entries.size(); ++p) {
    const ParamEntry& e = entries[p];
    float* m = m_[p].data();
    float* v = v_[p].data();
    for (std::size_t i = 0; i < e.size; ++i) {
      const float g = e.grad[i];
      m[i] = cfg_.beta1 * m[i] + (1.0f - cfg_.beta1) * g;
      v[i] = cfg_.beta2 * v[i] + (1.0f - cfg_.beta2) * g * g;
      const float m_hat = float(m[i] / bc1), v_hat = float(v[i] / bc2);
      e.value[i] -= lr * cfg_.weight_decay * e.value[i];  // AdamW: decay the weight itself
      e.value[i] -= lr * m_hat / (std::sqrt(v_hat) + cfg_.eps);
    }
  }
  check_after_step("Adam", t_, reg_);
}

}  // namespace attn
