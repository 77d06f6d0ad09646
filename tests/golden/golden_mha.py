"""Goldens for multi-head attention (chapter 04): torch.nn.MultiheadAttention with given weights.

Convention: our projections are RIGHT-multiplied (Q = X·W_Q, W_Q: (d_model, d_model)); PyTorch's
in_proj_weight is LEFT-multiplied (Q = X·in_proj_weight[:E].T). So the module gets
in_proj_weight = [W_Qᵀ; W_Kᵀ; W_Vᵀ] and out_proj.weight = W_Oᵀ, while the files keep our W_Q … W_O.
Expected values: the module in float64 on the same float32 inputs (per-head weights with
average_attn_weights=False, available since torch 1.11).
"""
import numpy as np
import torch


def generate(save):
    rng = np.random.default_rng(20261204)
    f32 = lambda *shape, s=1.0: (rng.standard_normal(shape) * s).astype(np.float32)
    E, H, T = 16, 4, 5
    x = f32(T, E)
    w = {n: f32(E, E, s=E ** -0.5) for n in ("W_Q", "W_K", "W_V", "W_O")}
    b = {n: f32(E, s=0.1) for n in ("b_Q", "b_K", "b_V", "b_O")}
    for n, a in list(w.items()) + list(b.items()):
        save("mha", n, a)
    save("mha", "X", x)

    mha = torch.nn.MultiheadAttention(E, H, bias=True, batch_first=True).double()
    d64 = lambda a: torch.from_numpy(np.asarray(a, dtype=np.float64))
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([d64(w["W_Q"]).T, d64(w["W_K"]).T, d64(w["W_V"]).T], dim=0))
        mha.in_proj_bias.copy_(torch.cat([d64(b["b_Q"]), d64(b["b_K"]), d64(b["b_V"])]))
        mha.out_proj.weight.copy_(d64(w["W_O"]).T)
        mha.out_proj.bias.copy_(d64(b["b_O"]))
        xd = d64(x).unsqueeze(0)
        out, weights = mha(xd, xd, xd, need_weights=True, average_attn_weights=False)
        save("mha", "output", out[0])
        save("mha", "weights", weights[0])  # (H, T, T)
        causal = torch.triu(torch.full((T, T), float("-inf"), dtype=torch.float64), diagonal=1)
        out_c, weights_c = mha(xd, xd, xd, attn_mask=causal, need_weights=True, average_attn_weights=False)
        save("mha", "causal_output", out_c[0])
        save("mha", "causal_weights", weights_c[0])
