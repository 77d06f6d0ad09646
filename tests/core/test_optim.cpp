// Parameter registry, optimisers (SGD, Adam, AdamW), gradient clipping and learning-rate
// schedules: hand-computed single steps, and Adam fitting a tiny linear regression.
#include <doctest/doctest.h>

#include <cmath>

#include "attn/nn/linear.hpp"
#include "attn/nn/optim.hpp"
#include "attn/tensor/params.hpp"
#include "attn/nn/schedule.hpp"

using namespace attn;

TEST_CASE("registry: names, sizes, duplicates, empty tensors skipped, zero_grad") {
  Rng rng(1);
  Linear a = linear_init(3, 5, rng), da = zeros_like(a);
  Linear b = linear_init(5, 2, rng, false), db = zeros_like(b);
  ParamRegistry reg;
  register_params(reg, "enc", a, da);
  register_params(reg, "out", b, db);
  REQUIRE(reg.entries().size() == 3);  // out.b is empty: not registered
  CHECK(reg.entries()[0].name == "enc.w");
  CHECK(reg.entries()[1].shape == Shape{5});
  CHECK(reg.total_size() == 3 * 5 + 5 + 5 * 2);
  CHECK(reg.find("out.w") != nullptr);
  CHECK(reg.find("out.b") == nullptr);
  CHECK_THROWS_WITH_AS(register_params(reg, "enc", a, da), doctest::Contains("duplicate parameter name 'enc.w'"),
                       std::invalid_argument);
  Mat bad = xt::zeros<float>({2, 2});
  CHECK_THROWS_AS(reg.add("bad", a.w, bad), ShapeError);
  da.w(1, 1) = 3.0f;
  reg.zero_grad();
  CHECK(da.w(1, 1) == 0.0f);
}

TEST_CASE("sgd and momentum: one step by hand; clipping by global norm") {
  Vec w{1.0f, 2.0f}, g{0.5f, -1.0f};
  ParamRegistry reg;
  reg.add("w", w, g);
  Sgd sgd(reg, SgdConfig{0.1f, 0.9f, 0.0f});
  sgd.step();  // v = g; w -= 0.1 g
  CHECK(w(0) == doctest::Approx(0.95f));
  sgd.step();  // v = 0.9 g + g = 1.9 g
  CHECK(w(0) == doctest::Approx(0.95f - 0.1f * 1.9f * 0.5f));
  // ‖(3, 4)‖ = 5 > 1: scaled to (0.6, 0.8)
  g(0) = 3.0f;  // assign in place: the registry holds pointers into g
  g(1) = 4.0f;
  CHECK(clip_grad_norm(reg, 1.0) == doctest::Approx(5.0));
  CHECK(g(0) == doctest::Approx(0.6f));
  CHECK(grad_norm(reg) == doctest::Approx(1.0));
  CHECK(clip_grad_norm(reg, 10.0) == doctest::Approx(1.0));  // below the limit: untouched
  CHECK(g(1) == doctest::Approx(0.8f));
}

TEST_CASE("adam: the first step moves each weight by about lr·sign(g); AdamW also decays") {
  Vec w{1.0f, -2.0f}, g{0.3f, -4.0f};
  ParamRegistry reg;
  reg.add("w", w, g);
  Adam adam(reg, AdamConfig{0.01f});
  adam.step();  // m̂ = g, v̂ = g²  ->  Δ = lr·g/(|g| + ε)
  CHECK(w(0) == doctest::Approx(1.0f - 0.01f).epsilon(1e-6));
  CHECK(w(1) == doctest::Approx(-2.0f + 0.01f).epsilon(1e-6));
  CHECK(adam.steps_taken() == 1);
  Vec w2{1.0f}, g2{0.0f};
  ParamRegistry reg2;
  reg2.add("w", w2, g2);
  Adam adamw(reg2, AdamConfig{0.1f, 0.9f, 0.999f, 1e-8f, 0.5f});
  adamw.step();  // zero gradient: only the decoupled decay w ← w − lr·λ·w
  CHECK(w2(0) == doctest::Approx(1.0f - 0.1f * 0.5f));
}

TEST_CASE("adam fits a tiny linear regression (final loss asserted)") {
  // y = x·W* + b* with W*: (3, 2); a fresh Linear learns it with MSE and Adam.
  Rng rng(42);
  Mat x = rng.normal_mat(32, 3);
  Linear truth = linear_init(3, 2, rng);
  Mat y;
  linear_forward(y, x, truth);
  Linear model = linear_init(3, 2, rng), grad = zeros_like(model);
  ParamRegistry reg;
  register_params(reg, "fit", model, grad);
  Adam adam(reg, AdamConfig{0.05f});
  double loss = 0.0, first = 0.0;
  Mat pred, dpred, no_dx;
  for (int step = 1; step <= 300; ++step) {
    linear_forward(pred, x, model);
    dpred = pred - y;
    loss = 0.0;
    for (float d : dpred) loss += double(d) * d;
    loss /= double(dpred.size());  // mean squared error
    if (step == 1) first = loss;
    dpred *= 2.0f / float(dpred.size());  // dL/dpred
    reg.zero_grad();
    linear_backward(no_dx, grad, dpred, x, model);
    adam.step();
  }
  MESSAGE("adam regression: MSE " << first << " -> " << loss);
  CHECK(first > 0.1);
  CHECK(loss < 1e-6);
}

TEST_CASE("schedules: warm-up, linear and cosine decay, inverse square root, step decay") {
  auto c = Schedule::constant(0.3);
  CHECK(learning_rate(c, 1) == 0.3);
  auto lin = Schedule::warmup_linear(1.0, 10, 110, 0.0);
  CHECK(learning_rate(lin, 5) == doctest::Approx(0.5));
  CHECK(learning_rate(lin, 10) == doctest::Approx(1.0));
  CHECK(learning_rate(lin, 60) == doctest::Approx(0.5));
  CHECK(learning_rate(lin, 200) == 0.0);
  auto cosd = Schedule::warmup_cosine(1.0, 0, 100, 0.1);
  CHECK(learning_rate(cosd, 50) == doctest::Approx(0.55));  // half-way: min + (base − min)/2
  CHECK(learning_rate(cosd, 100) == doctest::Approx(0.1));
  // Vaswani et al.: d_model 512, warm-up 4000 -> peak 512^−½ · 4000^−½ = 6.9877e-4 at step 4000.
  auto noam = Schedule::inverse_sqrt(512, 4000);
  CHECK(learning_rate(noam, 4000) == doctest::Approx(6.987712429686844e-4).epsilon(1e-9));
  CHECK(learning_rate(noam, 2000) == doctest::Approx(learning_rate(noam, 4000) / 2).epsilon(1e-9));
  CHECK(learning_rate(noam, 16000) == doctest::Approx(learning_rate(noam, 4000) / 2).epsilon(1e-9));
  auto st = Schedule::step_decay(1.0, 100, 0.5);
  CHECK(learning_rate(st, 99) == 1.0);
  CHECK(learning_rate(st, 250) == 0.25);
}
