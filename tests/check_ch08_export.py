#!/usr/bin/python3
"""Recompute chapter 08's exported figures from its export alone, with numpy (no torch, no C++).

    build/bin/08_transformer --export DIR
    /usr/bin/python3 tests/check_ch08_export.py DIR

Checks, each against DIR/results.json (every figure the lesson prints is there):
  - decoder layer 0 (dec0_output) from dec0_input, memory and the layer's parameters, Post- or
    Pre-Norm as manifest.json's "config" says (right-multiplied: Q = X·W_Q), to 1e-4;
  - step 2-4: each encoder head's mean largest weight, the weight above the causal diagonal, each
    cross-attention head's argmax hits against example_alignment;
  - step 6: the label-smoothing floor from V and ε, the passes, the peak learning rate;
  - step 7: BLEU-4 (corpus, no smoothing), exact match and token accuracy by source-length bucket
    for every model, from translations.json; the lowest bucket, the buckets at least Bahdanau's,
    training and test BLEU, outputs shorter / longer than their reference; beam's and greedy's total
    words, brevity penalties and the share of the BLEU gap the penalty explains;
  - step 8: last / first layer of the exported FFN-gradient norms, the Pre-Norm layer farthest from
    layer 0, and their verdicts;
  - step 9: the training-time account (work = steps · step + validations · pass, ratio);
  - every verdict's outcome from its measured value and bounds.
What cannot come from the export is named in manifest.json's "regenerate" (fresh-weight gradients,
the model's beam scores). Exit status: 0 ok, 1 a check failed, 77 numpy is missing (ctest: skipped).
"""
import json
import math
import os
import struct
import sys
from collections import Counter

from export_check import check, failures, np, report


def close(a, b, tol, what):
    check(a is not None and b is not None and abs(a - b) <= tol, f"{what}: {a} vs {b}")


def read_npy(path):
    with open(path, "rb") as f:
        if f.read(6) != b"\x93NUMPY":
            raise ValueError(path + ": not a .npy file")
        major = f.read(2)[0]
        n = struct.unpack("<H" if major == 1 else "<I", f.read(2 if major == 1 else 4))[0]
        header = eval(f.read(n).decode("latin1"))  # the format's own dict literal
        data = np.frombuffer(f.read(), dtype=np.dtype(header["descr"]))
        return data.reshape(header["shape"]).astype(np.float64)


def layer_norm(x, g, b):
    mu = x.mean(axis=1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * g + b


def mha(t, pre, xq, xkv, heads, causal):
    q = xq @ t[pre + "W_Q"] + t[pre + "b_Q"]
    k = xkv @ t[pre + "W_K"] + t[pre + "b_K"]
    v = xkv @ t[pre + "W_V"] + t[pre + "b_V"]
    dk = q.shape[1] // heads
    out = np.zeros_like(q)
    for h in range(heads):
        s = slice(h * dk, (h + 1) * dk)
        z = q[:, s] @ k[:, s].T / math.sqrt(dk)
        if causal:
            z = z + np.triu(np.full(z.shape, -np.inf), 1)
        z = np.exp(z - z.max(axis=1, keepdims=True))
        out[:, s] = (z / z.sum(axis=1, keepdims=True)) @ v[:, s]
    return out @ t[pre + "W_O"] + t[pre + "b_O"]


def ngrams(words, n):
    return Counter(tuple(words[i:i + n]) for i in range(len(words) - n + 1))


def corpus_bleu(hyps, refs):
    matches, totals, c, r = [0] * 4, [0] * 4, 0, 0
    for h, ref in zip(hyps, refs):
        c += len(h)
        r += len(ref)
        for n in range(1, 5):
            hn, rn = ngrams(h, n), ngrams(ref, n)
            matches[n - 1] += sum(min(k, rn[g]) for g, k in hn.items())
            totals[n - 1] += max(len(h) - n + 1, 0)
    if c == 0 or any(m == 0 for m in matches):
        return 0.0
    bp = 1.0 if c > r else math.exp(1 - r / c)
    return 100.0 * bp * math.exp(sum(math.log(m / t) for m, t in zip(matches, totals)) / 4)


def by_bucket(buckets, sources, refs, hyps):
    """{label: (bleu, exact %, token %)} and the overall figures, as attn/models/seq2seq_eval.cpp scores them."""
    out, all_h, all_r = {}, [], []
    for label, (lo, hi) in buckets.items():
        idx = [i for i, s in enumerate(sources) if lo <= len(s) <= hi]
        h, rf = [hyps[i] for i in idx], [refs[i] for i in idx]
        exact = 100.0 * sum(a == b for a, b in zip(h, rf)) / len(idx) if idx else 0.0
        tokens = sum(len(b) for b in rf)
        hits = sum(sum(1 for j in range(min(len(a), len(b))) if a[j] == b[j]) for a, b in zip(h, rf))
        out[label] = (corpus_bleu(h, rf), exact, 100.0 * hits / tokens if tokens else 0.0)
        all_h += h
        all_r += rf
    return out, corpus_bleu(all_h, all_r)


def outcome_at_least(m, bound, partly):
    return "inconclusive" if m is None else "holds" if m >= bound else "partly" if m >= partly else "fails"


def outcome_at_most(m, bound, partly):
    return "inconclusive" if m is None else "holds" if m <= bound else "partly" if m <= partly else "fails"


def verdict(v, measured, kind, what, tol=1e-9):
    close(v["measured"], measured, tol, what + ": measured")
    want = (outcome_at_least if kind == "at_least" else outcome_at_most)(v["measured"], v["bound"], v["partly"])
    check(v["outcome"] == want, f"{what}: outcome {v['outcome']}, the bounds give {want}")


def main(d):
    manifest = json.load(open(os.path.join(d, "manifest.json")))
    res = json.load(open(os.path.join(d, "results.json")))
    trans = json.load(open(os.path.join(d, "translations.json")))
    cfg = manifest["config"]
    t = {e["name"]: read_npy(os.path.join(d, e["name"] + ".npy")) for e in manifest["tensors"]}

    # Decoder layer 0.
    x, mem, heads = t["dec0_input"], t["memory"], cfg["heads"]
    ln = lambda m, i: layer_norm(m, t[f"dec0_ln{i}_gamma"], t[f"dec0_ln{i}_beta"])
    ffn = lambda m: np.maximum(m @ t["dec0_ffn_W1"] + t["dec0_ffn_b1"], 0) @ t["dec0_ffn_W2"] + t["dec0_ffn_b2"]
    if cfg["norm"] == "post":
        h1 = ln(x + mha(t, "dec0_self_", x, x, heads, True), 1)
        h2 = ln(h1 + mha(t, "dec0_cross_", h1, mem, heads, False), 2)
        y = ln(h2 + ffn(h2), 3)
    else:
        n1 = ln(x, 1)
        h1 = x + mha(t, "dec0_self_", n1, n1, heads, True)
        h2 = h1 + mha(t, "dec0_cross_", ln(h1, 2), mem, heads, False)
        y = h2 + ffn(ln(h2, 3))
    close(float(np.abs(y - t["dec0_output"]).max()), 0.0, 1e-4, "dec0_output recomputed")

    # Steps 2-4, the example sentence.
    ex = res["example"]
    enc = t["enc_self_weights"]
    mean_max = [float(enc[l, h].max(axis=1).mean()) for l in range(enc.shape[0]) for h in range(enc.shape[1])]
    for i, (a, b) in enumerate(zip(mean_max, ex["encoder_mean_max"])):
        close(a, b, 1e-6, f"encoder head {i} mean largest weight")
    check(sum(v < 0.25 for v in mean_max) == ex["broad_heads"], "broad encoder heads")
    dec = t["dec_self_weights"]
    above = float(sum(np.triu(dec[l, h], 1).sum() for l in range(dec.shape[0]) for h in range(dec.shape[1])))
    close(above, ex["above_diagonal"], 1e-9, "weight above the diagonal")
    verdict(ex["masked"], above, "at_most", "mask")
    cross, align = t["cross_weights"], t["example_alignment"].astype(int)
    hits = [int(sum(int(np.argmax(cross[l, h, i])) == align[i] for i in range(len(align))))
            for l in range(cross.shape[0]) for h in range(cross.shape[1])]
    check(hits == ex["cross_hits"], f"cross-attention hits {hits} vs {ex['cross_hits']}")
    verdict(ex["cross_best_aligns"], max(hits) / len(align), "at_least", "cross-attention alignment")

    # Step 6.
    tr = res["training"]
    V, eps = tr["vocab"], tr["label_smoothing"]
    right, other = 1 - eps + eps / V, eps / V
    floor = -right * math.log(right) - (V - 1) * other * math.log(other)
    close(floor, tr["label_smoothing_floor"], 1e-12, "label-smoothing floor")
    check(V == cfg["tgt_vocab"], "the floor's V is the target vocabulary")
    close(tr["steps"] * tr["batch"] / tr["train_pairs"], tr["passes"], 1e-12, "passes")
    close(tr["lr_factor"] / math.sqrt(tr["d_model"]) / math.sqrt(tr["warmup"]), tr["peak_lr"], 1e-12, "peak lr")
    verdict(tr["near_floor"], tr["loss_last"] - floor, "at_most", "near the floor", 1e-6)

    # Step 7: every model's figures from its outputs.
    buckets = {k: tuple(map(int, k.split("-"))) for k in next(iter(res["bleu_by_length"].values()))}
    overall = {}
    in_bucket = lambda n: any(lo <= n <= hi for lo, hi in buckets.values())
    for split in ("test", "train_sample"):
        s = trans[split]
        sources = [x.split() for x in s["sources"]]
        refs = [x.split() for x in s["references"]]
        for name, outs in s["outputs"].items():
            hyps = [x.split() for x in outs]
            table, overall[name] = by_bucket(buckets, sources, refs, hyps)
            if name not in res["bleu_by_length"]:
                failures.append(f"{name}: no figures in results.json")
                continue
            for label, (b, e, tok) in table.items():
                close(b, res["bleu_by_length"][name][label], 0.051, f"{name} {label} BLEU")
                close(e, res["exact_match_by_length"][name][label], 0.051, f"{name} {label} exact")
                close(tok, res["token_accuracy_by_length"][name][label], 0.051, f"{name} {label} token")
            if split == "test":  # over the sentences in a bucket, the ones BLEU covers (as diagnose_beam counts)
                kept = [(h, r) for src, h, r in zip(sources, hyps, refs) if in_bucket(len(src))]
                shorter = sum(len(h) < len(r) for h, r in kept)
                longer = sum(len(h) > len(r) for h, r in kept)
                overall[name + "/lengths"] = (shorter, longer)
    tl = res["translation"]
    model = tl["model"]
    close(overall[model + "_greedy"], tl["test_bleu"], 1e-6, "test BLEU")
    close(overall[model + "_beam4"], tl["beam_bleu"], 1e-6, "beam BLEU")
    close(overall[model + "_train"], tl["train_bleu"], 1e-6, "training BLEU")
    verdict(tl["generalises"], tl["train_bleu"] - tl["test_bleu"], "at_most", "no overfitting", 1e-6)
    mine = [res["bleu_by_length"][model + "_greedy"][k] for k in buckets]
    bah = [res["bleu_by_length"]["bahdanau"][k] for k in buckets]
    close(min(mine), tl["lowest_bucket_bleu"], 0.051, "lowest bucket")
    check(sum(a >= b for a, b in zip(mine, bah)) == tl["bahdanau_buckets_at_least"], "buckets at least Bahdanau's")
    b = res["beam"]
    check(list(overall[model + "_beam4/lengths"]) == [b["shorter"][0], b["longer"][0]], "beam output lengths")
    check(list(overall[model + "_greedy/lengths"]) == [b["shorter"][1], b["longer"][1]], "greedy output lengths")
    greedy_out, beam_out = trans["test"]["outputs"][model + "_greedy"], trans["test"]["outputs"][model + "_beam4"]
    test_sources = [x.split() for x in trans["test"]["sources"]]
    check(sum(g != q for src, g, q in zip(test_sources, greedy_out, beam_out) if in_bucket(len(src))) == b["differ"],
          "outputs that differ")
    check(b["sentences"] == sum(in_bucket(len(src)) for src in test_sources), "sentences in a bucket")
    verdict(b["search_works"], b["beam_higher"] / b["differ"] if b["differ"] else None, "at_least", "search works")
    verdict(b["model_error"], b["reference_lower"] / b["beam_wrong"] if b["beam_wrong"] else None, "at_least",
            "model error")
    # Beam against greedy by length: total words, the brevity penalty, and the share of the BLEU gap it explains.
    kept_refs = [r.split() for src, r in zip(test_sources, trans["test"]["references"]) if in_bucket(len(src))]
    words = [sum(len(h.split()) for src, h in zip(test_sources, outs) if in_bucket(len(src)))
             for outs in (beam_out, greedy_out)]
    ref_words = sum(len(r) for r in kept_refs)
    check(b["words"] == words and b["reference_words"] == ref_words, f"total words {b['words']} vs {words}")
    bps = [1.0 if c > ref_words else math.exp(1 - ref_words / c) for c in words]
    for got, want, what in zip(b["brevity_penalty"], bps, ("beam", "greedy")):
        close(got, want, 1e-12, what + " brevity penalty")
    close(b["precision"][0], tl["beam_bleu"] / 100 / bps[0], 1e-9, "beam precision")
    close(b["precision"][1], tl["test_bleu"] / 100 / bps[1], 1e-9, "greedy precision")
    if abs(tl["beam_bleu"] - tl["test_bleu"]) >= 0.05:
        verdict(b["length_explains"], math.log(bps[0] / bps[1]) / math.log(tl["beam_bleu"] / tl["test_bleu"]),
                "at_least", "length explains the gap")
    else:
        check(b["length_explains"]["outcome"] == "inconclusive", "no gap: length explains nothing")

    # Step 8.
    n = res["norm_placement"]
    for key, kind in (("post_grows_encoder", "post_encoder"), ("post_grows_decoder", "post_decoder")):
        verdict(n[key], n[kind][-1] / n[kind][0], "at_least", key)
    for key, kind in (("pre_level_encoder", "pre_encoder"), ("pre_level_decoder", "pre_decoder")):
        # every layer against layer 0: judged on the one farthest from it
        verdict(n[key], max(abs(v / n[kind][0] - 1) for v in n[kind][1:]), "at_most", key)

    # Step 9.
    tt = res["training_time"]
    test_n = len(trans["test"]["sources"])
    close(res["eval_cpu_seconds"][model + "_greedy"] * tt["valid_sentences"] / test_n, tt["valid_cpu_s"], 1e-9,
          "one validation pass")
    work = tt["steps"] * tt["step_cpu_ms"] / 1000 + tt["validations"] * tt["valid_cpu_s"]
    close(work, tt["estimate_s"], 1e-9, "training work")
    close(tt["recorded_s"] / work, tt["ratio"], 1e-9, "recorded / work")
    verdict(tt["accounted"], tt["ratio"], "at_most", "training time accounted")
    if tt["alone_s"] > 0:  # the two stored wall clocks of one training, judged against each other
        close(tt["recorded_s"] / tt["alone_s"], tt["recorded_over_alone"], 1e-9, "recorded / alone")
        verdict(tt["recorded_waited"], tt["recorded_over_alone"], "at_least", "recorded time is waiting")
        close(1000 * tt["alone_s"] / tt["steps"], tt["alone_step_ms"], 1e-9, "idle time per step")
        inside = tt["step_min_cpu_ms"] <= tt["alone_step_ms"] <= tt["step_max_cpu_ms"]
        check(tt["alone_step_in_spread"]["outcome"] == ("holds" if inside else "fails"), "idle step in the spread")
        close((tt["step_cpu_ms"] - tt["alone_step_ms"]) / tt["alone_step_ms"], tt["median_vs_alone"], 1e-9,
              "median step against the idle figure")
    c = res["cost"]
    check(c["source_table"] == cfg["src_vocab"] * cfg["d_model"], "source table")
    check(c["built"] == round(c["ours_formula_params"]) + c["source_table"] + cfg["tgt_vocab"], "parameters as built")

    return report("08", d)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
