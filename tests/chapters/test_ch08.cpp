// Chapter 08 end to end, from the shipped checkpoints data/ch08/transformer_{post,pre}.safetensors
// (and the RNN models of chapters 00–02): every step runs; the exported decoder layer 0 is
// recomputed here, independently, in double, from its .npy files alone (input, memory, parameters,
// the manifest's config) and matches dec0_output to 1e-4, for Post-Norm and Pre-Norm; the
// exported attention weights have their documented shapes; the shipped Post-Norm model's BLEU is at
// least 90 in every length bucket (results.json, the figures as printed); bad flags and files fail.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "attn/data/npy.hpp"
#include "run_program.hpp"

using namespace attn;
namespace fs = std::filesystem;

namespace {

const char* kProgram08 = "08_transformer";

using MatD = std::vector<std::vector<double>>;

nlohmann::json read_json(const fs::path& p) {
  std::ifstream f(p);
  return nlohmann::json::parse(f);
}

struct Export {
  fs::path dir;
  MatD mat(const std::string& n) const {
    const Mat m = npy_to_mat(read_npy((dir / (n + ".npy")).string()), n);
    MatD out(m.shape(0), std::vector<double>(m.shape(1)));
    for (std::size_t i = 0; i < m.shape(0); ++i)
      for (std::size_t j = 0; j < m.shape(1); ++j) out[i][j] = m(i, j);
    return out;
  }
  std::vector<double> vec(const std::string& n) const {
    const Vec v = npy_to_vec(read_npy((dir / (n + ".npy")).string()), n);
    return std::vector<double>(v.begin(), v.end());
  }
};

MatD affine(const MatD& x, const MatD& w, const std::vector<double>& b) {  // x·W + b
  MatD y(x.size(), std::vector<double>(w[0].size()));
  for (std::size_t i = 0; i < x.size(); ++i)
    for (std::size_t j = 0; j < w[0].size(); ++j) {
      double s = b[j];
      for (std::size_t k = 0; k < w.size(); ++k) s += x[i][k] * w[k][j];
      y[i][j] = s;
    }
  return y;
}
MatD add(const MatD& a, const MatD& b) {
  MatD c = a;
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = 0; j < a[i].size(); ++j) c[i][j] += b[i][j];
  return c;
}
MatD layer_norm(const MatD& x, const std::vector<double>& g, const std::vector<double>& b) {
  MatD y = x;
  for (std::size_t i = 0; i < x.size(); ++i) {
    double mean = 0, var = 0;
    for (double v : x[i]) mean += v;
    mean /= double(x[i].size());
    for (double v : x[i]) var += (v - mean) * (v - mean);
    var /= double(x[i].size());
    for (std::size_t j = 0; j < x[i].size(); ++j) y[i][j] = (x[i][j] - mean) / std::sqrt(var + 1e-5) * g[j] + b[j];
  }
  return y;
}
// Multi-head attention with right-multiplied projections; causal: query i sees keys j ≤ i.
MatD mha(const Export& e, const std::string& pre, const MatD& xq, const MatD& xkv, std::size_t heads, bool causal) {
  const MatD q = affine(xq, e.mat(pre + "W_Q"), e.vec(pre + "b_Q")), k = affine(xkv, e.mat(pre + "W_K"), e.vec(pre + "b_K")),
             v = affine(xkv, e.mat(pre + "W_V"), e.vec(pre + "b_V"));
  const std::size_t d = q[0].size(), dh = d / heads;
  MatD concat(xq.size(), std::vector<double>(d, 0.0));
  for (std::size_t h = 0; h < heads; ++h)
    for (std::size_t i = 0; i < xq.size(); ++i) {
      const std::size_t visible = causal ? i + 1 : xkv.size();
      std::vector<double> w(visible);
      double mx = -1e300, sum = 0;
      for (std::size_t j = 0; j < visible; ++j) {
        for (std::size_t c = 0; c < dh; ++c) w[j] += q[i][h * dh + c] * k[j][h * dh + c];
        w[j] /= std::sqrt(double(dh));
        mx = std::max(mx, w[j]);
      }
      for (double& x : w) sum += (x = std::exp(x - mx));
      for (std::size_t j = 0; j < visible; ++j)
        for (std::size_t c = 0; c < dh; ++c) concat[i][h * dh + c] += w[j] / sum * v[j][h * dh + c];
    }
  return affine(concat, e.mat(pre + "W_O"), e.vec(pre + "b_O"));
}
MatD ffn(const Export& e, const MatD& x) {
  MatD h = affine(x, e.mat("dec0_ffn_W1"), e.vec("dec0_ffn_b1"));
  for (auto& r : h)
    for (double& v : r) v = std::max(v, 0.0);
  return affine(h, e.mat("dec0_ffn_W2"), e.vec("dec0_ffn_b2"));
}

void check_decoder_layer0(const std::string& norm) {
  const fs::path dir = fs::temp_directory_path() / ("attn-ch08-export-" + norm);
  fs::remove_all(dir);
  const RunResult r = run_program(kProgram08, {"--quiet", "--norm", norm, "--export", dir.string()});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto manifest = read_json(dir / "manifest.json");
  REQUIRE(manifest.contains("config"));
  const auto& cfg = manifest["config"];
  CHECK(cfg["norm"] == norm);
  const std::size_t heads = cfg["heads"], d = cfg["d_model"], L = cfg["dec_layers"];
  std::map<std::string, std::vector<std::size_t>> shapes;
  for (const auto& t : manifest["tensors"]) shapes[t["name"]] = t["shape"].get<std::vector<std::size_t>>();
  const std::size_t S = shapes.at("memory")[0], T = shapes.at("dec0_input")[0];
  CHECK(shapes.at("enc_self_weights") == std::vector<std::size_t>{cfg["enc_layers"], heads, S, S});
  CHECK(shapes.at("dec_self_weights") == std::vector<std::size_t>{L, heads, T, T});
  CHECK(shapes.at("cross_weights") == std::vector<std::size_t>{L, heads, T, S});
  CHECK(shapes.at("dec0_ffn_W1") == std::vector<std::size_t>{d, cfg["d_ff"]});
  for (const char* n : {"dec0_self_W_Q", "dec0_cross_W_O"}) CHECK(shapes.at(n) == std::vector<std::size_t>{d, d});
  for (const char* n : {"dec0_ln1_gamma", "dec0_ln2_beta", "dec0_ln3_gamma", "dec0_cross_b_K"}) CHECK(shapes.at(n) == std::vector<std::size_t>{d});

  const Export e{dir};
  const MatD x = e.mat("dec0_input"), mem = e.mat("memory"), want = e.mat("dec0_output");
  auto ln = [&](const MatD& m, int i) {
    const std::string p = "dec0_ln" + std::to_string(i) + "_";
    return layer_norm(m, e.vec(p + "gamma"), e.vec(p + "beta"));
  };
  MatD y;
  if (norm == "post") {
    const MatD h1 = ln(add(x, mha(e, "dec0_self_", x, x, heads, true)), 1);
    const MatD h2 = ln(add(h1, mha(e, "dec0_cross_", h1, mem, heads, false)), 2);
    y = ln(add(h2, ffn(e, h2)), 3);
  } else {
    const MatD n1 = ln(x, 1);
    const MatD h1 = add(x, mha(e, "dec0_self_", n1, n1, heads, true));
    const MatD h2 = add(h1, mha(e, "dec0_cross_", ln(h1, 2), mem, heads, false));
    y = add(h2, ffn(e, ln(h2, 3)));
  }
  double worst = 0;
  for (std::size_t i = 0; i < T; ++i)
    for (std::size_t j = 0; j < d; ++j) worst = std::max(worst, std::abs(y[i][j] - want[i][j]));
  INFO(norm << ": worst |recomputed − dec0_output| = " << worst);
  CHECK(worst < 1e-4);
  if (norm == "post") {
    const auto res = read_json(dir / "results.json");
    for (const auto& [bucket, bleu] : res["bleu_by_length"]["transformer_post_greedy"].items()) {
      INFO("bucket " << bucket);
      CHECK(bleu.get<double>() >= 90.0);
    }
    CHECK(res["bleu_by_length"]["transformer_post_greedy"].size() == 6);
    CHECK(res["train_ms_per_step"]["batch"] == 64);
    CHECK(res["train_ms_per_step"]["src_len"] == 30);
    CHECK(res["train_ms_per_step"]["tgt_len"] == 31);
    CHECK(res["parameters"]["transformer_post"].get<long>() > 100000);
  }
  fs::remove_all(dir);
}

}  // namespace

TEST_CASE("chapter 08 runs every step from the shipped checkpoints") {
  const RunResult r = run_program(kProgram08, {"--no-color"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  for (int s = 1; s <= 9; ++s) CHECK(r.has("Step " + std::to_string(s) + "/9"));
  CHECK(r.has("Chapter 08 · The Transformer"));
  CHECK(r.has("Post-Norm Transformer: loaded"));
  CHECK(r.has("total weight above the diagonal, all layers and heads: 0"));
  CHECK(r.has("Dropout is not needed at this scale"));
  CHECK(r.has("train_ms_per_step"));
  CHECK(r.has("Takeaway"));
}

TEST_CASE("chapter 08 --export: decoder layer 0 recomputed from the .npy files, Post-Norm (and the BLEU goal)") {
  check_decoder_layer0("post");
}

TEST_CASE("chapter 08 --export: decoder layer 0 recomputed from the .npy files, Pre-Norm") {
  check_decoder_layer0("pre");
}

TEST_CASE("chapter 08: bad flags exit 2, a missing or corrupt checkpoint exits 1 naming the file") {
  CHECK(run_program(kProgram08, {"--norm", "middle"}).status == 2);
  CHECK(run_program(kProgram08, {"--threads", "9"}).status == 2);
  const RunResult missing = run_program(kProgram08, {"--checkpoint", "/nonexistent/t.safetensors"});
  CHECK(missing.status == 1);
  CHECK(missing.err_has("/nonexistent/t.safetensors"));
  const fs::path bad = fs::temp_directory_path() / "attn-ch08-corrupt.safetensors";
  std::ofstream(bad) << "not a checkpoint";
  const RunResult corrupt = run_program(kProgram08, {"--checkpoint", bad.string()});
  CHECK(corrupt.status == 1);
  CHECK(corrupt.err_has("attn-ch08-corrupt.safetensors"));
  fs::remove(bad);
}
