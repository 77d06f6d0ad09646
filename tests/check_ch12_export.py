#!/usr/bin/python3
"""Recompute chapter 12's exported figures from its export alone, with numpy (no C++).

    build/bin/12_beyond_attention --quiet --export DIR
    /usr/bin/python3 tests/check_ch12_export.py DIR

Checks, each from the .npy files and manifest.json alone:
  - steps 1-2: the scan h_t = a_t·h_{t-1} + B_t x_tᵀ, y_t = C_tᵀ h_t in float64 from ssd_x, ssd_b,
    ssd_c and ssd_a; the mask L_ts = a_{s+1}…a_t (0 above the diagonal); the quadratic form
    (L ∘ C Bᵀ) X; the chunked output and the float64 reference against that scan, to 1e-5;
  - step 4: each mixer's read at every token from family_q, family_k, family_v: softmax over
    q·k/√N, linear attention φ(q)ᵀS / φ(q)ᵀz with φ = elu + 1, the decay S = 0.5·S + k vᵀ, the
    delta rule S += k (v − Sᵀk)ᵀ, to 1e-5;
  - step 6: mqar_accuracy is (archs, widths, pairs) within [0, 1]; mqar_state_bytes from the
    models' shapes (2 layers, SSM N = P = 16, window 16, a short convolution keeping 1 input per
    layer); the verdicts in manifest.json's "mqar" from the accuracies and their bounds.
Exit status: 0 ok, 1 a check failed, 77 numpy is missing (ctest: skipped).
"""
import json
import os
import sys

from export_check import check, failures, np, report


def near(a, b, tol, what):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    ok = a.shape == b.shape and bool(np.all(np.abs(a - b) <= tol))
    check(ok, f"{what}: max |difference| {np.max(np.abs(a - b)) if a.shape == b.shape else 'shapes differ'}")


def scan(x, b, c, a):
    h = np.zeros((b.shape[1], x.shape[1]))
    y = np.zeros_like(x)
    for t in range(x.shape[0]):
        h = a[t] * h + np.outer(b[t], x[t])
        y[t] = c[t] @ h
    return y


def mixers(q, k, v):
    """Every token's read, y_t = S_tᵀ q_t (softmax: the causal weighted sum), for each mixer."""
    n_dim = k.shape[1]
    phi = lambda z: np.where(z > 0, z + 1.0, np.exp(z))  # elu(z) + 1
    out = {name: np.zeros_like(v) for name in ("softmax", "linear", "decay", "delta")}
    s_lin, z_lin = np.zeros((n_dim, v.shape[1])), np.zeros(n_dim)
    s_dec, s_del = np.zeros_like(s_lin), np.zeros_like(s_lin)
    for t in range(k.shape[0]):
        scores = k[: t + 1] @ q[t] / np.sqrt(n_dim)
        w = np.exp(scores - scores.max())
        out["softmax"][t] = (w / w.sum()) @ v[: t + 1]
        s_lin += np.outer(phi(k[t]), v[t])
        z_lin += phi(k[t])
        out["linear"][t] = phi(q[t]) @ s_lin / (phi(q[t]) @ z_lin)
        s_dec = 0.5 * s_dec + np.outer(k[t], v[t])
        out["decay"][t] = s_dec.T @ q[t]
        s_del = s_del + np.outer(k[t], v[t] - s_del.T @ k[t])  # β = 1
        out["delta"][t] = s_del.T @ q[t]
    return out


def state_bytes(arch, d, pairs, layers=2, n_state=16, head=16, window=16, conv_keep=1):
    """What one sequence of T = 3·pairs tokens keeps at its end (float32): KV caches or states."""
    t = 3 * pairs
    heads = d // head
    kv = lambda length: 2 * length * d * 4
    ssm, linear = heads * n_state * head * 4, heads * (head * head + head) * 4
    per_layer = {"attention": [kv(t)] * layers, "window": [kv(min(t, window))] * layers,
                 "linear": [linear] * layers, "ssm": [ssm] * layers, "hybrid": [ssm, kv(t)]}[arch]
    return sum(per_layer) + layers * conv_keep * d * 4


def outcome_at_least(x, bound, partly=None):
    partly = bound if partly is None else partly
    return "inconclusive" if not np.isfinite(x) else "holds" if x >= bound else "partly" if x >= partly else "fails"


def main(d):
    manifest = json.load(open(os.path.join(d, "manifest.json")))
    files = {t["name"]: os.path.join(d, t["file"]) for t in manifest["tensors"]}
    load = lambda name: np.load(files[name]).astype(np.float64)
    check(manifest["chapter"] == "12", "manifest: chapter 12")

    # Steps 1-2: one map, three ways.
    x, b, c, a = load("ssd_x"), load("ssd_b"), load("ssd_c"), load("ssd_a")
    y = scan(x, b, c, a)
    near(load("ssd_y_scan"), y, 1e-5, "ssd_y_scan against the float64 scan")
    t_len = x.shape[0]
    mask = np.array([[np.prod(a[s + 1 : t + 1]) if s <= t else 0.0 for s in range(t_len)] for t in range(t_len)])
    near(load("ssd_mask"), mask, 1e-6, "ssd_mask L_ts = a_{s+1}…a_t")
    near(load("ssd_y_quadratic"), (mask * (c @ b.T)) @ x, 1e-5, "ssd_y_quadratic (L ∘ C Bᵀ) X")
    near(load("ssd_y_chunked"), y, 1e-5, "ssd_y_chunked against the scan")
    near(load("ssd_y_reference"), y, 1e-5, "ssd_y_reference against the scan")

    # Step 4: the family on one page.
    reads = mixers(load("family_q"), load("family_k"), load("family_v"))
    for name, want in reads.items():
        near(load("family_" + name), want, 1e-5, f"family_{name}: every token's read")

    # Step 6: the recall table.
    mq = manifest["mqar"]
    acc, size = load("mqar_accuracy"), load("mqar_state_bytes")
    shape = (len(mq["archs"]), len(mq["widths"]), len(mq["pairs"]))
    check(acc.shape == shape and size.shape == shape, f"mqar tensors {acc.shape}, {size.shape} against {shape}")
    check(bool(np.all((acc >= 0) & (acc <= 1))), "mqar_accuracy within [0, 1]")
    for i, arch in enumerate(mq["archs"]):
        for j, width in enumerate(mq["widths"]):
            for k, pairs in enumerate(mq["pairs"]):
                want = state_bytes(arch, width, pairs)
                check(size[i, j, k] == want, f"state bytes {arch} d={width} n={pairs}: {size[i, j, k]} vs {want}")
    at = {arch: acc[i] for i, arch in enumerate(mq["archs"])}
    check(mq["attention_high"] == outcome_at_least(at["attention"].min(), 0.9, 0.7), "verdict attention_high")
    wall = at["ssm"][-1, -1] - at["attention"][-1, -1]  # the widest model at the most pairs
    check(mq["ssm_wall"] == ("holds" if wall <= -0.1 else "fails"), "verdict ssm_wall")
    gap = at["attention"][-1, -1] - at["ssm"][-1, -1]
    share = (at["hybrid"][-1, -1] - at["ssm"][-1, -1]) / gap if gap > 0.05 else float("nan")
    check(mq["hybrid_closes_gap"] == outcome_at_least(share, 0.8, 0.4), "verdict hybrid_closes_gap")

    return report("12", d)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
