// Finding the project's shipped data (data/: goldens, checkpoints) from a chapter program, wherever
// it was built: $ATTN_DATA_DIR if set, else ./data, else data/ beside the build folder that holds the
// program (build*/bin/<program> -> <repo>/data).
#pragma once

#include <optional>
#include <string>

namespace attn {

// relative: e.g. "ch05/rope.safetensors" -> the first existing candidate, or nullopt.
std::optional<std::string> find_data_file(const std::string& relative);
// The directory find_data_file would search first that exists (for writing with --train), or "data".
std::string data_dir();

}  // namespace attn
