// GRU encoder–decoder translation models for chapters 00–02, with hand-written backward passes:
//   none      Cho et al. 2014 / Bahdanau et al.'s RNNenc: a GRU encoder; its last state c = h_S is
//             the decoder's first state and is fed to every decoder step:  s_i = GRU([E y_{i−1}; c], s_{i−1})
//   bahdanau  Bahdanau et al. 2014 (RNNsearch): a bidirectional GRU encoder h_j = [→h_j; ←h_j];
//             c_i = Σ_j α_ij h_j with α_i = softmax(v_aᵀ tanh(W_a s_{i−1} + U_a h_j));
//             s_i = GRU([E y_{i−1}; c_i], s_{i−1}); s_0 = tanh(W_s ←h_1)
//   luong     Luong et al. 2015: the same encoder; the decoder attends with its *new* state:
//             s_i = GRU([E y_{i−1}; h̃_{i−1}], s_{i−1})   (input feeding, §3.3)
//             c_i = attend(s_i, H) (dot / general / concat; global / local-m / local-p)
//             h̃_i = tanh([c_i; s_i]·W_c + b_c)          (eq. 5)
// Outputs: logits_i = o_i·W_o + b_o with o_i = [s_i; c_i] (none, bahdanau) or h̃_i (luong).
// Sizes: B batch, S source length, T target length (teacher forcing), E embedding, H encoder GRU
// (per direction), He = 2H encoder state (none: He = Hd), Hd decoder state, A attention size,
// V vocabularies. A batch holds sentences of one exact source length: no masks (attn/data/batching.hpp).
// Every kernel is a template compiled for float (training) and double (gradient checks).
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "attn/attention/additive_attention.hpp"
#include "attn/data/batching.hpp"
#include "attn/nn/gru.hpp"
#include "attn/nn/linear.hpp"
#include "attn/attention/luong_attention.hpp"
#include "attn/tensor/params.hpp"
#include "attn/tensor/rng.hpp"
#include "attn/tensor/tensor_t.hpp"

namespace attn {

enum class AttentionKind { None, Bahdanau, Luong };

struct Seq2SeqConfig {
  AttentionKind kind = AttentionKind::Bahdanau;
  LuongConfig luong;            // used when kind == Luong
  std::size_t src_vocab = 0, tgt_vocab = 0;
  std::size_t emb = 32;         // E
  std::size_t enc_hidden = 64;  // H per direction (bidirectional); none: unused, its GRU has Hd
  std::size_t dec_hidden = 128; // Hd (= 2H, so Luong's dot score applies)
  std::size_t attn = 64;        // A: Bahdanau's and concat's hidden size, local-p's W_p width
};

// "no_attention", "bahdanau", "luong_dot", "luong_general", "luong_concat", "luong_local_p", …
// (results.json keys and checkpoint metadata); a model's description for tables and headers.
std::string model_name(const Seq2SeqConfig& cfg);
std::string model_title(const Seq2SeqConfig& cfg);
// The inverse of model_name (throws std::invalid_argument on an unknown name). Luong local windows
// use half_width D = 5 unless given.
Seq2SeqConfig config_for(const std::string& name, std::size_t src_vocab, std::size_t tgt_vocab);

// Encoder state size He and context size (the same He) for a config.
std::size_t encoder_state_size(const Seq2SeqConfig& cfg);

// Each family's own weights (the embeddings, the decoder GRU and the output layer, which all three
// have, sit in Seq2SeqT). Checkpoint names in brackets.
template <class T>
struct NoAttentionT {  // Cho et al. 2014: c = h_S
  GruT<T> enc;         // [encoder.*] E -> Hd
};
template <class T>
struct BahdanauSeq2SeqT {  // Bahdanau et al. 2014
  BiGruT<T> enc;           // [encoder.fwd.*, encoder.bwd.*] E -> 2H
  LinearT<T> init;         // [init.*] ←h_1 (H) -> s_0 (Hd), then tanh
  BahdanauT<T> attention;  // [attention.*]
};
template <class T>
struct LuongSeq2SeqT {  // Luong et al. 2015
  BiGruT<T> enc;        // [encoder.*] E -> 2H
  LinearT<T> init;      // [init.*]
  LuongT<T> attention;  // [attention.*]
  LinearT<T> combine;   // [combine.*] [c; s] (He + Hd) -> h̃ (Hd)
};

template <class T>
struct Seq2SeqT {
  Seq2SeqConfig cfg;
  MatT<T> src_emb, tgt_emb;  // [src_emb, tgt_emb] (Vs, E), (Vt, E)
  // The family's weights: the alternative that cfg.kind names (seq2seq_init keeps them together).
  std::variant<NoAttentionT<T>, BahdanauSeq2SeqT<T>, LuongSeq2SeqT<T>> family;
  GruT<T> dec;               // [decoder.*] [E y; c or h̃] (E + He) -> Hd
  LinearT<T> out;            // [out.*] o -> logits (Vt)

  // The family's weights; std::bad_variant_access for a model of another family.
  const BahdanauSeq2SeqT<T>& bahdanau() const { return std::get<BahdanauSeq2SeqT<T>>(family); }
  const LuongSeq2SeqT<T>& luong() const { return std::get<LuongSeq2SeqT<T>>(family); }
};
using Seq2Seq = Seq2SeqT<float>;
using Seq2SeqD = Seq2SeqT<double>;

// The parameters by checkpoint name, in registry order (see attn/tensor/params.hpp): src_emb,
// tgt_emb, the family's (encoder, init, attention, combine), decoder, out. m may be const; float
// or double. parameter_count, register_params, save_seq2seq and load_seq2seq all walk this.
template <class P, class F, if_layer<P, NoAttentionT> = 0>
void visit_params(P& p, F&& f) {
  visit_params(p.enc, "encoder", f);
}
template <class P, class F, if_layer<P, BahdanauSeq2SeqT> = 0>
void visit_params(P& p, F&& f) {
  visit_params(p.enc, "encoder", f);
  visit_params(p.init, "init", f);
  visit_params(p.attention, "attention", f);
}
template <class P, class F, if_layer<P, LuongSeq2SeqT> = 0>
void visit_params(P& p, F&& f) {
  visit_params(p.enc, "encoder", f);
  visit_params(p.init, "init", f);
  visit_params(p.attention, "attention", f);
  visit_params(p.combine, "combine", f);
}
template <class P, class F, if_layer<P, Seq2SeqT> = 0>
void visit_params(P& m, F&& f) {
  f(std::string("src_emb"), m.src_emb);
  f(std::string("tgt_emb"), m.tgt_emb);
  std::visit([&](auto& family) { visit_params(family, f); }, m.family);
  visit_params(m.dec, "decoder", f);
  visit_params(m.out, "out", f);
}

// Fresh weights, deterministic by rng (PyTorch's defaults: embeddings N(0, 1), the rest U(±1/√fan)).
Seq2Seq seq2seq_init(const Seq2SeqConfig& cfg, Rng& rng);
template <class T> Seq2SeqT<T> zeros_like(const Seq2SeqT<T>& m);
Seq2SeqD to_double(const Seq2Seq& m);
// Every tensor by name ("src_emb", "encoder.fwd.wx", "attention.w_a", "decoder.wh", "out.w", …),
// as visit_params names it, with its gradient in grad (of the same family: zeros_like).
void register_params(ParamRegistry& reg, Seq2Seq& m, Seq2Seq& grad);
std::size_t parameter_count(const Seq2Seq& m);  // trainable floats (visit_params)

// ---- one decoder step --------------------------------------------------------------------------
template <class T>
struct DecoderStepT {
  MatT<T> s_prev;            // (B, Hd)  s_{i−1}
  MatT<T> x;                 // (B, E + He) GRU input [E y_{i−1}; c_i or h̃_{i−1}]
  GruStepCacheT<T> cell;
  MatT<T> s;                 // (B, Hd)  s_i
  MatT<T> context;           // (B, He)  c_i
  BahdanauStepT<T> bahdanau; // energies, alpha, …
  LuongStepT<T> luong;       // scores, alpha, p, …
  MatT<T> cat;               // luong: (B, He + Hd) [c_i; s_i]
  MatT<T> o;                 // (B, O) output features: [s_i; c_i] or h̃_i
  const MatT<T>& alpha() const;  // (B, S) the attention weights (empty for none)
};

// Everything one teacher-forced pass keeps for its backward.
template <class T>
struct Seq2SeqTapeT {
  std::size_t batch = 0, src_len = 0, tgt_len = 0;
  Tensor3T<T> xs;                 // (B, S, E) source embeddings
  Tensor3T<T> enc;                // (B, S, He) encoder states h_1 … h_S
  GruSeqCacheT<T> enc_cache;      // none
  BiGruCacheT<T> bienc_cache;     // attention models
  MatT<T> init_in, s0;            // (B, H) ←h_1 and (B, Hd) s_0 (none: s_0 = c = h_S)
  Tensor3T<T> keys;               // bahdanau: (B, S, A) H·U_a; luong concat: H·W_c[Hd:]; else empty
  std::vector<DecoderStepT<T>> steps;
  MatT<T> feats;                  // (B·T, O) o_i, row b·T + i
  MatT<T> probs;                  // (B·T, Vt)
};
using Seq2SeqTape = Seq2SeqTapeT<float>;

// Encoder: src ids (B·S, row-major) -> tape.xs, tape.enc, tape.s0 (and keys for bahdanau and concat).
template <class T>
void seq2seq_encode(Seq2SeqTapeT<T>& tape, const Seq2SeqT<T>& m, const std::vector<int>& src, std::size_t batch,
                    std::size_t src_len);
// One decoder step i: y_prev ids (B,), feed = h̃_{i−1} (luong) -> step (its s, context, o).
template <class T>
void seq2seq_decoder_step(DecoderStepT<T>& step, const Seq2SeqT<T>& m, const Seq2SeqTapeT<T>& tape,
                          const std::vector<int>& y_prev, const MatT<T>& s_prev, const MatT<T>& feed, std::size_t i);

// Teacher-forced mean cross-entropy over the batch's target tokens (<pad> ignored).
template <class T>
T seq2seq_forward(Seq2SeqTapeT<T>& tape, const Seq2SeqT<T>& m, const Batch& batch);
// Gradients of that mean loss, accumulated into grad (same shapes as m).
template <class T>
void seq2seq_backward(Seq2SeqT<T>& grad, const Seq2SeqTapeT<T>& tape, const Seq2SeqT<T>& m, const Batch& batch);

// ---- greedy decoding ---------------------------------------------------------------------------
struct Translation {
  std::vector<int> ids;  // the output without <eos>
  Mat alignment;         // (len(ids) + 1, S): α of every step, the <eos> step last (empty for none)
};
// src ids (B·S) of B sentences of length S -> one translation each; stops at <eos> or max_len.
std::vector<Translation> greedy_translate(const Seq2Seq& m, const std::vector<int>& src, std::size_t batch,
                                          std::size_t src_len, std::size_t max_len);

// One sentence decoded greedily with every intermediate kept (chapters narrate it).
struct DecodeTrace {
  Seq2SeqTapeT<float> tape;       // encoder side (B = 1) and one DecoderStep per output token
  std::vector<int> ids;           // output ids (without <eos>)
  std::vector<int> inputs;        // y_{i−1} fed at each step (<bos> first)
  Mat logits;                     // (steps, Vt)
  Mat alignment;                  // (steps, S): α of every step, the <eos> step last (empty for none)
};
DecodeTrace greedy_trace(const Seq2Seq& m, const std::vector<int>& src, std::size_t max_len);

}  // namespace attn
