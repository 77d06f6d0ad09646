// Optimisers over a ParamRegistry, and gradient clipping by global norm.
//   SGD (+ momentum):  m ← μ·m + g;  θ ← θ − lr·m                       (PyTorch's form)
//   Adam (Kingma & Ba 2015): m ← β1·m + (1−β1)·g;  v ← β2·v + (1−β2)·g²
//        θ ← θ − lr · m̂ / (√v̂ + ε),   m̂ = m/(1−β1^t), v̂ = v/(1−β2^t)
//   AdamW (Loshchilov & Hutter 2019): Adam + decoupled decay θ ← θ − lr·λ·θ before the update.
//   clip_grad_norm: if ‖g‖₂ (over every parameter) > max_norm, scale all g by max_norm/‖g‖₂.
// Updates run in a fixed order over the registry: same seed → same bits.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "attn/tensor/params.hpp"

namespace attn {

// Thrown by Sgd::step and Adam::step when the learning rate, a gradient or an updated weight is
// NaN or ±inf (a loss that overflowed, a learning rate far too large): training stops there,
// naming the step and the parameter, before a broken model can be saved over a good one.
class TrainingDivergedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// ‖g‖₂ over every gradient in the registry (accumulated in double).
double grad_norm(const ParamRegistry& reg);
// Scales every gradient so that ‖g‖₂ ≤ max_norm; returns the norm before clipping.
double clip_grad_norm(ParamRegistry& reg, double max_norm);

struct SgdConfig {
  float lr = 0.1f;
  float momentum = 0.0f;      // μ; 0 = plain SGD
  float weight_decay = 0.0f;  // L2 added to the gradient: g ← g + λ·θ
};

class Sgd {
 public:
  Sgd(ParamRegistry& reg, SgdConfig cfg);
  void step() { step(cfg_.lr); }
  void step(float lr);  // lr from a schedule; throws TrainingDivergedError (above)
  std::int64_t steps_taken() const { return t_; }
 private:
  ParamRegistry& reg_;
  SgdConfig cfg_;
  std::int64_t t_ = 0;
  std::vector<std::vector<float>> velocity_;
};

struct AdamConfig {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;  // AdamW's decoupled λ (0 = Adam)
};

class Adam {
 public:
  Adam(ParamRegistry& reg, AdamConfig cfg);
  void step() { step(cfg_.lr); }
  void step(float lr);  // throws TrainingDivergedError (above)
  float rate() const { return cfg_.lr; }  // the configured rate, what step() uses
  std::int64_t steps_taken() const { return t_; }

 private:
  ParamRegistry& reg_;
  AdamConfig cfg_;
  std::int64_t t_ = 0;
  std::vector<std::vector<float>> m_, v_;
};

}  // namespace attn
