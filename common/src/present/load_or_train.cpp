// One model, trained now or loaded (see attn/present/load_or_train.hpp).
#include "attn/present/load_or_train.hpp"

#include "attn/data/output_file.hpp"
#include "attn/present/progress.hpp"

namespace attn {

bool load_or_train(const LoadOrTrain& how, const std::function<void(const std::string& path)>& load,
                   const std::function<void(const StepCallback& on_step)>& train,
                   const std::function<void(const std::string& path)>& save) {
  if (!how.train) {
    load(how.path);
    return false;
  }
  check_output_file(how.path, "--train", /*new_folder=*/true);  // before training, not after
  {
    ProgressBar bar(std::int64_t(how.steps), how.progress);  // plain lines when stderr is not a terminal
    train(bar.callback());
    bar.finish();
  }
  prepare_output_folder(how.path);  // a chapter's data/chNN/: one level, as check_output_file allowed
  save(how.path);                   // the savers write through write_file_atomically: all or nothing
  return true;
}

}  // namespace attn
