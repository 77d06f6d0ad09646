// The training-loop kit (see attn/nn/train_loop.hpp).
#include "attn/nn/train_loop.hpp"

namespace attn {

void run_train_loop(const TrainLoop& loop, ParamRegistry& reg, const std::vector<Adam*>& optimisers) {
  if (!loop.forward_backward) throw std::invalid_argument("run_train_loop: no forward_backward");
  if (optimisers.empty()) throw std::invalid_argument("run_train_loop: no optimiser");
  for (std::size_t step = 1; step <= loop.steps; ++step) {
    reg.zero_grad();
    TrainStep s;
    s.step = step;
    s.loss = loop.forward_backward(step);
    s.grad_norm = loop.clip > 0 ? clip_grad_norm(reg, loop.clip) : grad_norm(reg);
    if (loop.lr) {
      s.lr = loop.lr(step);
      for (Adam* opt : optimisers) opt->step(float(s.lr));
    } else {
      for (Adam* opt : optimisers) opt->step();
      s.lr = optimisers.front()->rate();
    }
    if (loop.after_step) loop.after_step(s);
    if (loop.validate && is_validation_step(step, loop.valid_every, loop.steps)) loop.validate(step);
  }
}

}  // namespace attn
