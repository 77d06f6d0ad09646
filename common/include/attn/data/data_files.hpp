// Finding the project's shipped data (data/: goldens, checkpoints) from a program, wherever it was
// built or installed. The places searched, in order:
//   1. $ATTN_DATA_DIR, when set;
//   2. next to the program: <program's folder>/../share/attention_step_by_step/data (an installed
//      copy, wherever `cmake --install build --prefix DIR` put it);
//   3. the source tree's data/ as recorded when the build was configured (any build folder);
//   4. <install prefix recorded at configure time>/share/attention_step_by_step/data.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace attn {

class DataFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct DataPlace {
  std::string dir;   // a folder that may hold data/'s contents
  std::string why;   // "$ATTN_DATA_DIR", "next to the program", "source tree", "install prefix"
};

// A path as a message shows it: control characters (a newline or escape in $ATTN_DATA_DIR) written
// as \n, \t, \r or \xNN, so that a path cannot add lines or terminal codes to a message.
std::string shown_path(const std::string& path);

// Every place searched, in order (existing or not).
std::vector<DataPlace> data_places();

// Throws DataFileError when $ATTN_DATA_DIR is set but names no data folder: a missing path, a file,
// or a folder one level too deep (ATTN_DATA_DIR=data/ch05). An empty folder is fine. Every lookup
// below and data_dir() check it first.
void check_data_dir_variable();
// relative: e.g. "ch05/rope.safetensors" -> the first existing candidate, or nullopt.
std::optional<std::string> find_data_file(const std::string& relative);
// The same, but a missing file throws DataFileError with missing_data_file_message().
std::string require_data_file(const std::string& relative);
// "shipped data file ch05/rope.safetensors not found; looked in:\n  /a (…)\n  /b (…)\nSet
// ATTN_DATA_DIR …": one place per line. Never suggests retraining: the file ships.
std::string missing_data_file_message(const std::string& relative, const std::vector<DataPlace>& places);
// The place whose folder holds path (path itself included; links followed as far as they exist),
// or nullopt. The shipped data is never the target of --html or --export; only --train writes there.
std::optional<DataPlace> data_place_holding(const std::string& path);
// The folder --train writes into: $ATTN_DATA_DIR when set (DataFileError when it is not a folder),
// else the first place that exists, or "data". Reading falls back file by file; writing never does.
std::string data_dir();

}  // namespace attn
