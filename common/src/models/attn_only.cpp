// The two-layer attention-only transformer (see attn/models/attn_only.hpp).
#include "attn/models/attn_only.hpp"

#include <stdexcept>

#include "attn/nn/embedding.hpp"
#include "attn/nn/loss.hpp"
#include "attn/tensor/mask.hpp"
#include "tensor/layer_kernels.hpp"

namespace attn {

using namespace detail;

AttnOnly attn_only_init(const AttnOnlyConfig& cfg, Rng& rng) {
  if (cfg.vocab == 0 || cfg.d_model == 0 || cfg.heads == 0 || cfg.layers == 0 || cfg.context == 0 ||
      cfg.d_model % cfg.heads != 0)
    throw std::invalid_argument("attn_only_init: need positive sizes and heads dividing d_model, got vocab " +
                                std::to_string(cfg.vocab) + ", d_model " + std::to_string(cfg.d_model) + ", heads " +
                                std::to_string(cfg.heads) + ", layers " + std::to_string(cfg.layers) +
                                ", context " + std::to_string(cfg.context));
  AttnOnly m;
  m.cfg = cfg;
  m.w_e = embedding_init(cfg.vocab, cfg.d_model, rng, 0.3f);  // embeddings ~N(0, 0.3²): attention not saturated
  m.w_pos = embedding_init(cfg.context, cfg.d_model, rng, 0.3f);
  for (std::size_t l = 0; l < cfg.layers; ++l) m.attn.push_back(multi_head_init(cfg.d_model, cfg.heads, cfg.heads, rng, false));
  const float bound = 1.0f / std::sqrt(float(cfg.d_model));
  m.w_u = rng.uniform_mat(cfg.d_model, cfg.vocab, -bound, bound);
  return m;
}

template <class T>
AttnOnlyT<T> zeros_like(const AttnOnlyT<T>& m) {
  AttnOnlyT<T> g = m;  // the config and every shape, then zeros
  for (auto* w : {&g.w_e, &g.w_pos, &g.w_u}) w->fill(T(0));
  for (auto& a : g.attn) a = zeros_like(a);
  return g;
}

AttnOnlyD to_double(const AttnOnly& m) {
  AttnOnlyD d;
  d.cfg = m.cfg;
  d.w_e = xt::cast<double>(m.w_e);
  d.w_pos = xt::cast<double>(m.w_pos);
  for (const auto& a : m.attn) d.attn.push_back(to_double(a));
  d.w_u = xt::cast<double>(m.w_u);
  return d;
}

void register_params(ParamRegistry& reg, AttnOnly& m, AttnOnly& grad) {
  reg.add("w_e", m.w_e, grad.w_e);
  reg.add("w_pos", m.w_pos, grad.w_pos);
  for (std::size_t l = 0; l < m.attn.size(); ++l) register_params(reg, "layer" + std::to_string(l), m.attn[l], grad.attn[l]);
  reg.add("w_u", m.w_u, grad.w_u);
}

std::size_t parameter_count(const AttnOnly& m) {
  std::size_t n = m.w_e.size() + m.w_pos.size() + m.w_u.size();
  for (const auto& a : m.attn) n += a.w_q.size() + a.w_k.size() + a.w_v.size() + a.w_o.size();
  return n;
}

template <class T>
T attn_only_forward(AttnOnlyCacheT<T>& cache, const AttnOnlyT<T>& m, const std::vector<int>& tokens,
                    const std::vector<int>& targets, std::size_t batch, const std::vector<HeadEditSpec>& edits,
                    const MatT<T>& mask) {
  const char* fn = "attn_only_forward";
  const std::size_t c = m.cfg.d_model;
  if (batch == 0 || tokens.size() % batch != 0 || targets.size() != tokens.size())
    throw ShapeError(std::string(fn) + ": " + std::to_string(tokens.size()) + " tokens and " +
                     std::to_string(targets.size()) + " targets do not make a batch of " + std::to_string(batch));
  const std::size_t t = tokens.size() / batch;
  if (t == 0 || t > m.cfg.context)
    throw ShapeError(std::string(fn) + ": sequence length " + std::to_string(t) + " outside 1.." +
                     std::to_string(m.cfg.context) + " (the model's context)");
  for (const auto& e : edits)
    if (e.layer >= m.cfg.layers || e.head >= m.cfg.heads)
      throw std::out_of_range(std::string(fn) + ": no head " + std::to_string(e.head) + " in layer " + std::to_string(e.layer));
  cache.batch = batch;
  cache.len = t;
  cache.tokens = tokens;
  if (mask.size() > 0) {
    expect_shape(fn, "mask", shape_of(mask), {t, t});
    cache.mask = mask;
  } else {
    cache.mask = xt::cast<T>(causal_mask(t));
  }
  // x_0 = W_E[tokens] + W_pos[0..T)
  MatT<T> emb;
  embedding_forward(emb, tokens, m.w_e);
  cache.resid.assign(m.cfg.layers + 1, Tensor3T<T>());
  cache.resid[0] = Tensor3T<T>::from_shape({batch, t, c});
  for (std::size_t b = 0; b < batch; ++b)
    for (std::size_t i = 0; i < t; ++i)
      for (std::size_t j = 0; j < c; ++j) cache.resid[0](b, i, j) = emb(b * t + i, j) + m.w_pos(i, j);
  cache.attn.resize(m.cfg.layers);
  Tensor3T<T> out;
  for (std::size_t l = 0; l < m.cfg.layers; ++l) {
    // x_{l+1} = x_l + MHA_l(x_l)
    multi_head_forward(out, cache.attn[l], cache.resid[l], cache.resid[l], m.attn[l], cache.mask);
    bool edited = false;
    for (const auto& e : edits) {
      if (e.layer != l) continue;
      Rng rng(e.seed);
      for (std::size_t b = 0; b < batch; ++b) {
        MatT<T> p = xt::view(cache.attn[l].weights, b, e.head, xt::all(), xt::all());
        edit_head_weights(p, e.edit, cache.mask, rng);
        xt::view(cache.attn[l].weights, b, e.head, xt::all(), xt::all()) = p;
      }
      edited = true;
    }
    if (edited) multi_head_recombine(out, cache.attn[l], m.attn[l]);
    cache.resid[l + 1] = cache.resid[l] + out;
  }
  // logits = x_L·W_U
  const std::size_t v = m.cfg.vocab;
  ensure_shape(cache.logits, {batch * t, v});
  gemm_raw(Op::N, Op::N, batch * t, v, c, T(1), cache.resid[m.cfg.layers].data(), c, m.w_u.data(), v, T(0),
           cache.logits.data(), v);
  return cross_entropy_forward(cache.probs, cache.logits, targets, -1);
}

template <class T>
void attn_only_backward(AttnOnlyT<T>& grad, const AttnOnlyCacheT<T>& cache, const AttnOnlyT<T>& m,
                        const std::vector<int>& targets, Tensor3T<T>* d_resid0) {
  const std::size_t b = cache.batch, t = cache.len, c = m.cfg.d_model, v = m.cfg.vocab, layers = m.cfg.layers;
  // forward: loss = CE(softmax(logits), targets)
  MatT<T> dlogits = xt::zeros<T>({b * t, v});
  cross_entropy_backward(dlogits, cache.probs, targets, -1);
  // forward: logits = x_L·W_U  ->  dx_L = dlogits·W_Uᵀ,  dW_U += x_Lᵀ·dlogits
  Tensor3T<T> dx = xt::zeros<T>({b, t, c});
  gemm_raw(Op::N, Op::T, b * t, c, v, T(1), dlogits.data(), v, m.w_u.data(), v, T(0), dx.data(), c);
  gemm_raw(Op::T, Op::N, c, v, b * t, T(1), cache.resid[layers].data(), c, dlogits.data(), v, T(1), grad.w_u.data(), v);
  for (std::size_t l = layers; l-- > 0;) {
    // forward: x_{l+1} = x_l + MHA_l(x_l)  ->  dx_l = dx_{l+1} + MHA_l'ᵀ·dx_{l+1} (xq = xkv = x_l)
    Tensor3T<T> dxl = dx;
    multi_head_backward(dxl, dxl, grad.attn[l], dx, cache.attn[l], cache.resid[l], cache.resid[l], m.attn[l]);
    dx = std::move(dxl);
  }
  // forward: x_0 = W_E[tokens] + W_pos[0..T)
  MatT<T> dflat = MatT<T>::from_shape({b * t, c});
  std::copy(dx.begin(), dx.end(), dflat.begin());
  embedding_backward(grad.w_e, dflat, cache.tokens);
  for (std::size_t bb = 0; bb < b; ++bb)
    for (std::size_t i = 0; i < t; ++i)
      for (std::size_t j = 0; j < c; ++j) grad.w_pos(i, j) += dx(bb, i, j);
  if (d_resid0) {
    if (d_resid0->size() == 0) *d_resid0 = xt::zeros<T>({b, t, c});
    *d_resid0 += dx;
  }
}

namespace {
const char* kConfigKeys[] = {"vocab", "d_model", "heads", "layers", "context"};
std::size_t* config_field(AttnOnlyConfig& cfg, const std::string& key) {
  if (key == "vocab") return &cfg.vocab;
  if (key == "d_model") return &cfg.d_model;
  if (key == "heads") return &cfg.heads;
  if (key == "layers") return &cfg.layers;
  return &cfg.context;
}
}  // namespace

void save_attn_only(const std::string& path, const AttnOnly& m, const TensorMap& extra, const Metadata& metadata) {
  AttnOnly copy = m, grad = zeros_like(m);
  ParamRegistry reg;
  register_params(reg, copy, grad);
  TensorMap tensors = extra;
  for (const ParamEntry& e : reg.entries())
    tensors[e.name] = TensorF32{e.shape, std::vector<float>(e.value, e.value + e.size)};
  Metadata md = metadata;
  md["model"] = "attn_only";
  AttnOnlyConfig cfg = m.cfg;
  for (const char* k : kConfigKeys) md[k] = std::to_string(*config_field(cfg, k));
  write_safetensors(path, tensors, md);
}

AttnOnly load_attn_only(const std::string& path, TensorMap* extra, Metadata* metadata) {
  Metadata md;
  TensorMap tensors = read_safetensors(path, &md);
  AttnOnlyConfig cfg;
  for (const char* k : kConfigKeys) {
    const auto it = md.find(k);
    if (it == md.end()) throw SafetensorsError(path + ": not an attention-only model (no '" + k + "' in its metadata)");
    try {
      *config_field(cfg, k) = std::stoul(it->second);
    } catch (const std::exception&) {
      throw SafetensorsError(path + ": metadata '" + k + "' is not a number: " + it->second);
    }
  }
  Rng rng(0);
  AttnOnly m;
  try {
    m = attn_only_init(cfg, rng);
  } catch (const std::invalid_argument& e) {
    throw SafetensorsError(path + ": " + e.what());
  }
  AttnOnly grad = zeros_like(m);
  ParamRegistry reg;
  register_params(reg, m, grad);
  for (const ParamEntry& e : reg.entries()) {
    const auto it = tensors.find(e.name);
    if (it == tensors.end()) throw SafetensorsError(path + ": tensor '" + e.name + "' is missing");
    if (it->second.shape != e.shape)
      throw SafetensorsError(path + ": tensor '" + e.name + "' has shape " + shape_str(it->second.shape) +
                             ", the config needs " + shape_str(e.shape));
    std::copy(it->second.data.begin(), it->second.data.end(), e.value);
    tensors.erase(it);
  }
  if (extra) *extra = std::move(tensors);
  if (metadata) *metadata = std::move(md);
  return m;
}

#define ATTN_INSTANTIATE_ATTN_ONLY(T)                                                                          \
  template AttnOnlyT<T> zeros_like(const AttnOnlyT<T>&);                                                       \
  template T attn_only_forward(AttnOnlyCacheT<T>&, const AttnOnlyT<T>&, const std::vector<int>&,               \
                               const std::vector<int>&, std::size_t, const std::vector<HeadEditSpec>&,          \
                               const MatT<T>&);                                                                \
  template void attn_only_backward(AttnOnlyT<T>&, const AttnOnlyCacheT<T>&, const AttnOnlyT<T>&,               \
                                   const std::vector<int>&, Tensor3T<T>*);
ATTN_INSTANTIATE_ATTN_ONLY(float)
ATTN_INSTANTIATE_ATTN_ONLY(double)

}  // namespace attn
