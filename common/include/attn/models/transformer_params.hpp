// The one list of the Transformer's parameters (attn/models/transformer.hpp), as a visitor over
// one or more models of the same structure: f(name, m1.x, m2.x, …). Included by transformer.hpp.
#pragma once

#include <string>
#include <tuple>

namespace attn {

namespace transformer_detail {

template <class F, class... P>
void visit_mha(F& f, const std::string& pre, P&... ps) {
  f(pre + ".w_q", ps.w_q...);
  f(pre + ".w_k", ps.w_k...);
  f(pre + ".w_v", ps.w_v...);
  f(pre + ".w_o", ps.w_o...);
  f(pre + ".b_q", ps.b_q...);
  f(pre + ".b_k", ps.b_k...);
  f(pre + ".b_v", ps.b_v...);
  f(pre + ".b_o", ps.b_o...);
}
template <class F, class... P>
void visit_norm(F& f, const std::string& pre, P&... ps) {
  f(pre + ".gamma", ps.gamma...);
  f(pre + ".beta", ps.beta...);
}
template <class F, class... P>
void visit_linear(F& f, const std::string& pre, P&... ps) {
  f(pre + ".w", ps.w...);
  f(pre + ".b", ps.b...);
}

template <class M>
std::size_t n_enc(M& m) { return m.enc.size(); }
template <class M>
std::size_t n_dec(M& m) { return m.dec.size(); }

}  // namespace transformer_detail

template <class F, class... M>
void for_each_param(F&& f, M&... ms) {
  using namespace transformer_detail;
  f(std::string("src_emb"), ms.src_emb...);
  f(std::string("tgt_emb"), ms.tgt_emb...);
  const std::size_t ne = n_enc(std::get<0>(std::tie(ms...)));
  for (std::size_t l = 0; l < ne; ++l) {
    const std::string pre = "enc." + std::to_string(l);
    visit_mha(f, pre + ".self", ms.enc[l].self...);
    visit_norm(f, pre + ".ln1", ms.enc[l].ln1...);
    visit_linear(f, pre + ".ff1", ms.enc[l].ff1...);
    visit_linear(f, pre + ".ff2", ms.enc[l].ff2...);
    visit_norm(f, pre + ".ln2", ms.enc[l].ln2...);
  }
  const std::size_t nd = n_dec(std::get<0>(std::tie(ms...)));
  for (std::size_t l = 0; l < nd; ++l) {
    const std::string pre = "dec." + std::to_string(l);
    visit_mha(f, pre + ".self", ms.dec[l].self...);
    visit_norm(f, pre + ".ln1", ms.dec[l].ln1...);
    visit_mha(f, pre + ".cross", ms.dec[l].cross...);
    visit_norm(f, pre + ".ln2", ms.dec[l].ln2...);
    visit_linear(f, pre + ".ff1", ms.dec[l].ff1...);
    visit_linear(f, pre + ".ff2", ms.dec[l].ff2...);
    visit_norm(f, pre + ".ln3", ms.dec[l].ln3...);
  }
  visit_norm(f, "enc_norm", ms.enc_norm...);
  visit_norm(f, "dec_norm", ms.dec_norm...);
  visit_linear(f, "out", ms.out...);
}

}  // namespace attn
