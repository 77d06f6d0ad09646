// Training loop and checkpoints of the Transformer (see attn/models/transformer_train.hpp).
#include "attn/models/transformer_train.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "attn/data/batching.hpp"
#include "attn/data/bleu.hpp"
#include "attn/models/transformer_decode.hpp"
#include "attn/nn/loss.hpp"
#include "attn/nn/optim.hpp"
#include "attn/nn/schedule.hpp"
#include "attn/nn/train_loop.hpp"
#include "attn/tensor/memory.hpp"
#include "pair_training.hpp"

namespace attn {

double transformer_learning_rate(const TransformerTrainConfig& tc, std::size_t d_model, std::int64_t step) {
  const Schedule s = Schedule::inverse_sqrt(double(d_model), std::max<std::int64_t>(tc.warmup, 1), tc.lr_factor);
  if (tc.use_warmup || step >= tc.warmup) return learning_rate(s, step);
  return learning_rate(s, std::max<std::int64_t>(tc.warmup, 1));  // the peak, held until the decay
}

double transformer_bleu(const Transformer& m, const std::vector<SentencePair>& pairs, const Vocab& src_vocab,
                        const Vocab& tgt_vocab) {
  const std::vector<Tokens> hyps = transformer_translate_pairs(m, pairs, src_vocab, tgt_vocab);
  std::vector<Tokens> refs;
  for (const auto& p : pairs) refs.push_back(p.tgt);
  return 100.0 * corpus_bleu(hyps, refs).bleu;
}

TransformerTrainResult train_transformer(const TransformerModelConfig& cfg, const ToyCorpus& corpus,
                                         const TransformerTrainConfig& tc) {
  const RetainFreedMemory keep_pages;  // each step reuses the last one's memory (attn/tensor/memory.hpp)
  const auto t0 = std::chrono::steady_clock::now();
  Rng init_rng(tc.seed);
  Transformer m = transformer_init(cfg, init_rng), g = zeros_like(m);
  ParamRegistry reg;
  register_params(reg, m, g);
  AdamConfig ac;
  ac.beta1 = kTransformerAdamBeta1;
  ac.beta2 = kTransformerAdamBeta2;
  ac.eps = kTransformerAdamEps;
  Adam adam(reg, ac);
  PairTraining<Transformer, TransformerTape> pairs(corpus, tc.batch, tc.seed, m);
  TransformerTrainResult res;
  TrainLoop loop(tc.steps, tc.clip, tc.valid_every);
  loop.lr = [&](std::size_t step) { return transformer_learning_rate(tc, cfg.d_model, std::int64_t(step)); };
  loop.forward_backward = [&](std::size_t) {
    return pairs.step([&](TransformerTape& tape, const Batch& b) { return transformer_forward(tape, m, b); },
                      [&](const TransformerTape& tape, const Batch& b) { transformer_backward(g, tape, m, b); });
  };
  loop.after_step = [&](const TrainStep& s) {
    res.train_losses.push_back(float(s.loss));
    res.grad_norms.push_back(float(s.grad_norm));
    if (tc.on_step) tc.on_step(s.step, s.loss, pairs.tokens());
  };
  if (tc.validate)
    loop.validate = [&](std::size_t step) {
      res.valid.push_back({step, transformer_bleu(m, corpus.valid, corpus.source_vocab, corpus.target_vocab)});
      pairs.best.offer(res.valid.back().bleu, step, m);
    };
  run_train_loop(loop, reg, {&adam});
  if (tc.validate) {
    res.best_bleu = pairs.best.score();
    res.best_step = pairs.best.step();
    res.best = pairs.best.take();
  } else {  // no validation: the last model
    res.best_bleu = -1.0;
    res.best_step = tc.steps;
    res.best = m;
  }
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

TrainingCurves curves_of(const TransformerTrainResult& r) {
  TrainingCurves c;
  c.train_loss = r.train_losses;
  c.grad_norm = r.grad_norms;
  for (const auto& v : r.valid) {
    c.valid_step.push_back(float(v.step));
    c.valid_bleu.push_back(float(v.bleu));
  }
  return c;
}

namespace {

const char* const kCurveNames[] = {"curve.train_loss", "curve.grad_norm", "curve.valid_step", "curve.valid_bleu"};

std::vector<float>* curve_slot(TrainingCurves& c, const std::string& name) {
  if (name == kCurveNames[0]) return &c.train_loss;
  if (name == kCurveNames[1]) return &c.grad_norm;
  if (name == kCurveNames[2]) return &c.valid_step;
  if (name == kCurveNames[3]) return &c.valid_bleu;
  return nullptr;
}

std::size_t meta_size(const std::string& path, const Metadata& meta, const std::string& key) {
  const auto it = meta.find(key);
  if (it == meta.end()) throw SafetensorsError(path + ": metadata lacks '" + key + "'");
  try {
    std::size_t used = 0;
    const long v = std::stol(it->second, &used);
    if (used != it->second.size() || v <= 0 || v > 1000000) throw std::invalid_argument("range");
    return std::size_t(v);
  } catch (const std::exception&) {
    throw SafetensorsError(path + ": metadata '" + key + "' = '" + it->second + "' is not a positive size");
  }
}

}  // namespace

void save_transformer(const std::string& path, const Transformer& m, const TrainingCurves& curves,
                      const Metadata& metadata) {
  TensorMap tensors;
  for_each_param(
      [&](const std::string& name, const auto& x) {
        if (x.size() == 0) return;
        TensorF32 t;
        t.shape = shape_of(x);
        t.data.assign(x.begin(), x.end());
        tensors[name] = std::move(t);
      },
      m);
  TrainingCurves c = curves;
  for (const char* name : kCurveNames) {
    const std::vector<float>& v = *curve_slot(c, name);
    if (!v.empty()) tensors[name] = TensorF32{Shape{v.size()}, v};
  }
  Metadata meta = metadata;
  const TransformerModelConfig& cfg = m.cfg;
  meta["model"] = "transformer";
  meta["d_model"] = std::to_string(cfg.d_model);
  meta["heads"] = std::to_string(cfg.n_heads);
  meta["d_ff"] = std::to_string(cfg.d_ff);
  meta["enc_layers"] = std::to_string(cfg.enc_layers);
  meta["dec_layers"] = std::to_string(cfg.dec_layers);
  meta["norm"] = norm_name(cfg.norm);
  meta["tie_output"] = cfg.tie_output ? "1" : "0";
  meta["src_vocab"] = std::to_string(cfg.src_vocab);
  meta["tgt_vocab"] = std::to_string(cfg.tgt_vocab);
  write_safetensors(path, tensors, meta);
}

Transformer load_transformer(const std::string& path, TrainingCurves* curves, Metadata* metadata) {
  // The hint on a line of its own: with the path twice, one line would run past 100 columns.
  require_checkpoint_file(path, "\n  chapter 08 makes one: 08_transformer --train --checkpoint " + path);
  Metadata meta;
  TensorMap tensors = read_safetensors(path, &meta);
  if (!meta.count("model") || meta.at("model") != "transformer")
    throw SafetensorsError(path + ": holds model '" + (meta.count("model") ? meta.at("model") : "") +
                           "', expected 'transformer'");
  TransformerModelConfig cfg;
  cfg.d_model = meta_size(path, meta, "d_model");
  cfg.n_heads = meta_size(path, meta, "heads");
  cfg.d_ff = meta_size(path, meta, "d_ff");
  cfg.enc_layers = meta_size(path, meta, "enc_layers");
  cfg.dec_layers = meta_size(path, meta, "dec_layers");
  cfg.src_vocab = meta_size(path, meta, "src_vocab");
  cfg.tgt_vocab = meta_size(path, meta, "tgt_vocab");
  try {
    cfg.norm = norm_from_name(meta.count("norm") ? meta.at("norm") : "");
  } catch (const std::invalid_argument& e) {
    throw SafetensorsError(path + ": " + e.what());
  }
  cfg.tie_output = !meta.count("tie_output") || meta.at("tie_output") != "0";
  Rng rng(0);
  Transformer m;
  try {
    m = transformer_init(cfg, rng);
  } catch (const std::invalid_argument& e) {
    throw SafetensorsError(path + ": " + e.what());
  }
  // Check everything first, then copy: nothing half-loaded.
  std::size_t used = 0;
  for_each_param(
      [&](const std::string& name, const auto& x) {
        if (x.size() == 0) return;
        const auto it = tensors.find(name);
        if (it == tensors.end()) throw SafetensorsError(path + ": tensor '" + name + "' is missing");
        if (it->second.shape != shape_of(x))
          throw SafetensorsError(path + ": tensor '" + name + "' has shape " + shape_str(it->second.shape) +
                                 ", the model needs " + shape_str(shape_of(x)));
        ++used;
      },
      m);
  TrainingCurves c;
  for (const auto& [name, t] : tensors) {
    if (std::vector<float>* slot = curve_slot(c, name)) {
      *slot = t.data;
      ++used;
    }
  }
  if (used != tensors.size()) throw SafetensorsError(path + ": holds tensors this Transformer does not have");
  for_each_param(
      [&](const std::string& name, auto& x) {
        if (x.size() == 0) return;
        const auto& src = tensors.at(name).data;
        std::copy(src.begin(), src.end(), x.begin());
      },
      m);
  if (curves) *curves = std::move(c);
  if (metadata) *metadata = meta;
  return m;
}

}  // namespace attn
