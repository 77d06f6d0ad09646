"""Goldens for positional encodings (chapter 05). PyTorch has no module for these, so each expected
value is an independent float64 torch implementation of the published formula:

- sinusoidal: Vaswani et al. 2017 §3.5, PE(pos, 2i) = sin(pos/10000^(2i/d)), PE(pos, 2i+1) = cos(…).
- RoPE: Meta's LLaMA reference code (precompute_freqs_cis + apply_rotary_emb): torch.polar angles,
  x viewed as complex numbers over ADJACENT pairs (2i, 2i+1) — the RoFormer paper's pairing, and ours.
- ALiBi: the authors' get_slopes (ofirpress/attention_with_linear_biases), including the rule for a
  head count that is not a power of 2, and bias(h, i, j) = −m_h·|i − j|.
"""
import math

import numpy as np
import torch


def get_slopes(n):  # as in the ALiBi authors' code
    def power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start ** i for i in range(n)]

    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + get_slopes(2 * closest)[0::2][: n - closest]


def precompute_freqs_cis(dim, end, theta=10000.0):  # LLaMA, float64 here
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.float64)[: dim // 2] / dim))
    t = torch.arange(end, dtype=torch.float64)
    return torch.polar(torch.ones(end, dim // 2, dtype=torch.float64), torch.outer(t, freqs))


def apply_rotary(x, freqs_cis):  # LLaMA's apply_rotary_emb for one (T, d) matrix
    xc = torch.view_as_complex(x.reshape(x.shape[0], -1, 2).contiguous())
    return torch.view_as_real(xc * freqs_cis).flatten(1)


def generate(save):
    rng = np.random.default_rng(20261205)
    T, d = 50, 16
    pos = torch.arange(T, dtype=torch.float64)[:, None]
    div = torch.pow(10000.0, torch.arange(0, d, 2, dtype=torch.float64) / d)
    pe = torch.zeros(T, d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos / div)
    pe[:, 1::2] = torch.cos(pos / div)
    save("positional", "sinusoidal_pe", pe)

    # RoPE: 7 rows of d_head = 16 at positions 0…6 and at 13…19 (start offset 13).
    x = (rng.standard_normal((7, 16))).astype(np.float32)
    save("positional", "rope_x", x)
    fc = precompute_freqs_cis(16, 32)
    save("positional", "rope_cos", fc.real[:32])
    save("positional", "rope_sin", fc.imag[:32])
    xd = torch.from_numpy(x.astype(np.float64))
    save("positional", "rope_x_rot", apply_rotary(xd, fc[0:7]))
    save("positional", "rope_x_rot_start13", apply_rotary(xd, fc[13:20]))

    for h in (8, 12, 1):
        slopes = torch.tensor(get_slopes(h), dtype=torch.float64)
        save("positional", f"alibi_slopes_{h}", slopes)
    slopes = torch.tensor(get_slopes(8), dtype=torch.float64)
    i = torch.arange(6, dtype=torch.float64)
    dist = (i[:, None] - i[None, :]).abs()
    save("positional", "alibi_bias_8x6", -slopes[:, None, None] * dist[None])
