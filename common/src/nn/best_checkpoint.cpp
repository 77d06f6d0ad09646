// Best-on-validation checkpoint keeping (see attn/nn/best_checkpoint.hpp).
#include "attn/nn/best_checkpoint.hpp"

#include <cmath>
#include <fmt/format.h>

namespace attn {

bool BestCheckpoint::offer(const ParamRegistry& reg, double valid_loss, std::int64_t step) {
  if (!std::isfinite(valid_loss) || !(valid_loss < best_)) return false;
  save_checkpoint(path_, reg, {{"step", std::to_string(step)}, {"valid_loss", fmt::format("{:.9g}", valid_loss)}});
  best_ = valid_loss;
  best_step_ = step;
  return true;
}

}  // namespace attn
