// Checkpoints in the safetensors format (https://github.com/huggingface/safetensors), so Python's
// safetensors, or a few lines of numpy (tests/read_safetensors.py), can read our models:
//   [8 bytes: N, little-endian u64][N bytes: JSON header, space-padded][raw little-endian data]
//   header = {"__metadata__": {"k": "v"}, "name": {"dtype": "F32", "shape": [2, 3],
//             "data_offsets": [begin, end]}, …}   offsets relative to the start of the data
// Writes are atomic (a temporary file renamed over the target). Reads validate everything first
// — truncation, header length, JSON, dtype, offsets in range, no overlap, no holes, byte count vs
// shape — and throw SafetensorsError naming the file and the tensor. load_checkpoint changes no
// parameter unless every one of them can be loaded, and refuses non-finite values.
//
// Checksums: write_safetensors records two 64-bit FNV-1a fingerprints in __metadata__:
//   "checksum_data":   "fnv1a64:<16 hex digits>"  of the data section, every byte after the header
//   "checksum_header": "fnv1a64:<16 hex digits>"  of the header without these two entries, as
//                      compact JSON with sorted keys (so spacing and key order do not matter)
// The reader takes the header and the data in one pass and compares both before any tensor is
// used: a flipped byte, or a file another program rewrote in place while it was read (the first half
// of one file and the second of another), is refused, "PATH: changed or is corrupt: checksum … of its
// data, expected …". A file without these entries (an older checkpoint of ours, or one written by
// Python's safetensors library) is still accepted, unchecked; the two entries never reach the
// metadata a caller reads, and a caller cannot set them.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "attn/tensor/params.hpp"

namespace attn {

class SafetensorsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct TensorF32 {
  Shape shape;
  std::vector<float> data;  // row-major, product(shape) values
};
using TensorMap = std::map<std::string, TensorF32>;  // sorted by name: deterministic files
using Metadata = std::map<std::string, std::string>;

// The __metadata__ keys of the checksums, and how their values start (see above).
inline constexpr const char* kChecksumDataKey = "checksum_data";
inline constexpr const char* kChecksumHeaderKey = "checksum_header";
inline constexpr const char* kChecksumScheme = "fnv1a64:";
// "fnv1a64:" + the 16 hex digits of data's 64-bit FNV-1a: the value checksum_data records.
std::string safetensors_data_checksum(std::string_view data);

// Writes every tensor as F32. Throws SafetensorsError when a tensor's data does not match its shape
// or the file cannot be written (the target is then untouched).
void write_safetensors(const std::string& path, const TensorMap& tensors, const Metadata& metadata = {});
// The bytes write_safetensors would write (path only names the file in an error), for a file that is
// written as one of a set (attn/data/output_file.hpp: OutputSet).
std::string safetensors_bytes(const TensorMap& tensors, const Metadata& metadata, const std::string& path);
// Reads and validates the whole file; only F32 tensors are accepted.
TensorMap read_safetensors(const std::string& path, Metadata* metadata = nullptr);
// Before a checkpoint is read: throws SafetensorsError naming path when it is missing
// ("PATH: checkpoint not found" + hint), a folder, not a regular file (a device, a FIFO), or cannot
// be looked at (a loop of symbolic links, a name too long): never a bare std::filesystem error.
void require_checkpoint_file(const std::string& path, const std::string& hint = "");
// Whether path is a file that starts like a safetensors file (an 8-byte header length that fits
// the file, then '{'): what --train may replace. A text file or a picture given by mistake is not.
bool looks_like_safetensors(const std::string& path);

// A place to load one named tensor into: a model's parameter, as its visit_params names it.
struct TensorSlot {
  std::string name;
  Shape shape;
  float* data;  // product(shape) floats
};
// Loads every slot by name, all or nothing: a missing tensor, a shape mismatch, (unless
// allow_extra) a tensor no slot asks for, a NaN or ±inf value, or a metadata entry in expect that
// is missing or different throws SafetensorsError before anything is copied. load_checkpoint is
// this with a registry's entries as the slots.
void load_tensors(const std::string& path, const std::vector<TensorSlot>& slots, bool allow_extra = false,
                  Metadata* metadata = nullptr, const Metadata& expect = {});

// Every registered parameter by name, copied (what save_checkpoint writes).
TensorMap checkpoint_tensors(const ParamRegistry& reg);
// Every registered parameter by name.
void save_checkpoint(const std::string& path, const ParamRegistry& reg, const Metadata& metadata = {});
// Loads every registered parameter by name, all or nothing: a missing tensor, a shape mismatch,
// (unless allow_extra) a tensor the model does not have, a NaN or ±inf value, or a metadata entry
// in expect that is missing or different (e.g. {{"model", "bahdanau"}}) throws before anything
// is copied.
void load_checkpoint(const std::string& path, ParamRegistry& reg, bool allow_extra = false,
                     Metadata* metadata = nullptr, const Metadata& expect = {});

}  // namespace attn
