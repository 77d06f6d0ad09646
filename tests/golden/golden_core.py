"""Goldens for the core: softmax (masks, large logits), scaled dot-product attention, batched gemm.

Convention difference, on purpose: for a row whose entries are all -inf, torch.softmax returns
NaN; our softmax returns zeros (nothing to attend to). The expected value stores zeros there.
"""
import math

import numpy as np
import torch


def generate(save):
    rng = np.random.default_rng(20261130)
    f32 = lambda *shape, s=1.0: (rng.standard_normal(shape) * s).astype(np.float32)
    d64 = lambda a: torch.from_numpy(np.asarray(a, dtype=np.float64))

    # softmax over rows: random, causal-masked, large logits, one fully masked row
    x = f32(7, 33, s=3.0)
    save("core", "softmax_x", x)
    save("core", "softmax_y", torch.softmax(d64(x), dim=-1))
    mask = np.triu(np.full((7, 33), -np.inf, dtype=np.float32), k=1)
    mask[3, :] = -np.inf  # fully masked row
    save("core", "softmax_mask", mask)
    y = torch.softmax(d64(x) + d64(mask), dim=-1)
    y = torch.nan_to_num(y, nan=0.0)  # our convention: zeros, not NaN
    save("core", "softmax_masked_y", y)
    big = np.array([[1e4, -1e4, 0.0, 9999.0], [-1e4, -1e4 + 1, -1e4 + 2, -1e4]], dtype=np.float32)
    save("core", "softmax_big_x", big)
    save("core", "softmax_big_y", torch.softmax(d64(big), dim=-1))

    # attention: T=5 queries, S=9 keys, d_k=8, d_v=3; plain and with a cache-style causal mask
    q, k, v = f32(5, 8), f32(9, 8), f32(9, 3)
    for name, a in (("q", q), ("k", k), ("v", v)):
        save("core", f"attn_{name}", a)
    s = d64(q) @ d64(k).T / math.sqrt(8)
    save("core", "attn_out", torch.softmax(s, dim=-1) @ d64(v))
    causal = np.zeros((5, 9), dtype=np.float32)
    for i in range(5):
        causal[i, i + 9 - 5 + 1:] = -np.inf
    save("core", "attn_causal_mask", causal)
    save("core", "attn_causal_out", torch.softmax(s + d64(causal), dim=-1) @ d64(v))

    # batched gemm with a transposed B: (H, M, K) x (H, N, K)^T
    a, b = f32(3, 7, 33), f32(3, 5, 33)
    save("core", "bgemm_a", a)
    save("core", "bgemm_b", b)
    save("core", "bgemm_c", torch.bmm(d64(a), d64(b).transpose(1, 2)))
