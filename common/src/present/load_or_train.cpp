// One model, trained now or loaded (see attn/present/load_or_train.hpp).
#include "attn/present/load_or_train.hpp"

#include <sys/stat.h>

#include "attn/data/output_file.hpp"
#include "attn/data/safetensors.hpp"
#include "attn/present/progress.hpp"
#include "attn/present/i18n.hpp"  // last of ours: it defines the _ macro

namespace attn {

bool load_or_train(const LoadOrTrain& how, const std::function<void(const std::string& path)>& load,
                   const std::function<void(const StepCallback& on_step)>& train,
                   const std::function<void(const std::string& path)>& save) {
  if (!how.train) {
    load(how.path);
    return false;
  }
  check_output_file(how.path, "--train", /*new_folder=*/true);  // before training, not after
  // Only a checkpoint is replaced: a text file named by mistake (or through a link) stays.
  const std::string target = output_target(how.path);
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && !looks_like_safetensors(target))
    throw OutputFileError(_f("--train: {} exists and is not a checkpoint (a safetensors file); it is left as it is: "
                             "name another file, or remove this one first", how.path));
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
