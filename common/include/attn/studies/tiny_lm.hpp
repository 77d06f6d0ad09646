// Chapter 09's language model as shipped files, and the run that makes them (--train):
//   data/ch09/tokenizer.json          byte-level BPE, 512 tokens, learned from the training text
//   data/ch09/decoder_lm.safetensors  the model (config and training facts in its metadata)
//   data/ch09/training_curve.csv      step, mean training loss since the last point, validation loss
//   data/ch09/kjv_valid.txt           the held-out chapters (every 20th chapter of the Bible)
// The training text is the rest of the King James Bible, from Debian's bible-kjv
// (scripts/install-deps --corpus writes it to data/ch09/kjv_bible.txt); it is not shipped.
// The four files are one set, read from one folder and committed together: --train stages all
// four, then renames them into place, the model first; the model's metadata records an FNV-1a
// fingerprint of each of the other three (set_fnv1a64_<file>), and a reader refuses a file that
// does not match, so a tokenizer or text of another run (or a run killed between two renames) is
// never accepted beside the model. A model with no fingerprints is the legacy shipped set (made
// before they existed), accepted as it is.
#pragma once

#include <string>
#include <vector>

#include "attn/data/bpe.hpp"
#include "attn/models/decoder_lm_train.hpp"

namespace attn {

struct TinyLm {
  BpeTokenizer tokenizer;
  DecoderLM model;
  Metadata metadata;
  std::string valid_text;
  std::vector<int> valid_tokens;
  std::vector<LmCurvePoint> curve;
};

// Loads the four shipped files from dir ("" = the data folder, attn/data/data_files.hpp).
// std::runtime_error (or SafetensorsError / BpeError) naming the missing or broken file.
TinyLm load_tiny_lm(const std::string& dir = "");

struct TinyLmTrainSetup {
  std::string bible_dump;       // path of `bible -f Gen1:1-Rev22:21` output
  std::string out_dir;          // where the four files are written
  std::size_t vocab = 512;
  DecoderLMConfig model;
  LmTrainConfig train;
  int blas_threads = 0;         // OpenBLAS threads while training (0: as set), recorded in the metadata
};
struct TinyLmTrainReport {
  TinyLm lm;
  std::size_t train_bytes = 0, train_tokens = 0, valid_bytes = 0;
  std::size_t chapters_train = 0, chapters_valid = 0;
  double tokenizer_seconds = 0.0, train_seconds = 0.0;
};
// Splits the Bible, learns the tokenizer on the training text, encodes both parts, trains and
// writes the four files as one set (above); every target is checked before any work.
TinyLmTrainReport train_tiny_lm(const TinyLmTrainSetup& s);

void write_training_curve(const std::string& path, const std::vector<LmCurvePoint>& curve);
std::vector<LmCurvePoint> read_training_curve(const std::string& path);

}  // namespace attn
