// Writing only what is ours: every file a program writes (--html, --checkpoint, --train's models,
// chapter 09's tokenizer and curve) goes through here.
//   - A target that exists and is not a regular file (a folder, a device such as /dev/null, a
//     FIFO, a socket) is refused before any work, and checked again just before it is replaced:
//     nothing is ever renamed over it, whoever runs the program (root included).
//   - A symbolic link is followed: the file it names is replaced, the link stays.
//   - The bytes go to a temporary file beside the target, PATH.tmp.PID (created exclusively, so a
//     planted file or link of that name is never written through), then renamed over PATH in one
//     step: a reader sees the old file or the new one, never half of one. A temporary file of an
//     earlier run that was killed (PATH.tmp.PID whose process is gone) is removed by the next write.
//   - The folder holding the target must exist already: the program creates the file you name,
//     never the folders above it (the same rule as --export, attn/present/export.hpp).
//
//   check_output_file(path, "--checkpoint");      // before training: throws OutputFileError
//   write_file_atomically(path, bytes);            // after: the whole file or nothing
//   OutputSet set; set.add(a, bytes_a); set.add(b, bytes_b); set.commit();  // several files, see below
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attn {

class OutputFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Why path cannot be written as a file of ours ("" when it can): an empty name; an existing path
// (links followed) that is not a regular file; a folder above it that is missing, is not a folder
// or is not writable. new_folder: the folder holding path may be missing as well, when the one above
// it exists (a chapter's data/chNN/, a --checkpoint-dir; prepare_output_folder makes it).
std::string output_file_problem(const std::string& path, bool new_folder = false);
// The same, thrown as OutputFileError("<what>: <problem>") when there is one.
void check_output_file(const std::string& path, const std::string& what, bool new_folder = false);
// Makes the folder holding path when it is missing (one level, as output_file_problem allows).
void prepare_output_folder(const std::string& path);

// The file a write to path replaces: path itself, or the file a symbolic link at path names.
std::string output_target(const std::string& path);

// True when no process pid runs (kill(pid, 0) says ESRCH): its leftovers (a temporary file, an export's
// staging folder) are no one's and may go. A process of another user (EPERM) counts as running.
bool process_gone(long pid);

// Removes PATH.tmp.PID files (beside path) whose process no longer runs; returns how many.
int remove_stale_temporaries(const std::string& path);

// bytes written to path all or nothing (see above). Throws OutputFileError naming path and why.
void write_file_atomically(const std::string& path, std::string_view bytes);

// Several files committed as one set: add() writes each one's temporary file at once (all are
// checked first), commit() renames them into place in the order added. A kill during commit()
// can leave the set mixed, so the file added first must let a reader tell (chapter 09's model
// records a hash of the others). Temporaries not committed are removed by the destructor.
class OutputSet {
 public:
  OutputSet() = default;
  OutputSet(const OutputSet&) = delete;
  OutputSet& operator=(const OutputSet&) = delete;
  ~OutputSet();
  void add(const std::string& path, std::string_view bytes);
  void commit();

 private:
  std::vector<std::pair<std::string, std::string>> staged_;  // target, temporary
};

// FNV-1a, 64 bits, as 16 hex digits: a fingerprint that ties the files of one set together.
std::string fnv1a64_hex(std::string_view bytes);

}  // namespace attn
