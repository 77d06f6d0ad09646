// One model, trained now or loaded (see attn/present/load_or_train.hpp).
#include "attn/present/load_or_train.hpp"

#include <filesystem>

#include "attn/present/progress.hpp"

namespace attn {

bool load_or_train(const LoadOrTrain& how, const std::function<void(const std::string& path)>& load,
                   const std::function<void(const StepCallback& on_step)>& train,
                   const std::function<void(const std::string& path)>& save) {
  if (!how.train) {
    load(how.path);
    return false;
  }
  {
    ProgressBar bar(std::int64_t(how.steps), how.progress && stderr_is_terminal());
    train(bar.callback());
    bar.finish();
  }
  const std::filesystem::path parent = std::filesystem::path(how.path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  save(how.path);
  return true;
}

}  // namespace attn
