#!/usr/bin/python3
"""Times one training step of chapter 08's Transformer in PyTorch (CPU), for the speed comparison.

The same model as data/ch08/transformer_post.safetensors: d_model 64, 4 heads, d_ff 256, 2 + 2
Post-Norm layers, ReLU, no dropout, sinusoidal positions, embeddings x sqrt(d), output tied to the
target embedding; label smoothing 0.1; Adam (0.9, 0.98, 1e-9); global-norm clipping at 1. The batch
has the shape chapter 08 times: 64 sentences, source 30, target 31 tokens. Median of 21 steps after 2
warm-up steps, with the thread count given (default 1, as the chapter's default --threads).
Both the wall-clock and the CPU time of each step are recorded: chapter 08 compares CPU times,
which a busy machine inflates far less than wall time. Chapter 08 reads the JSON from data/ch08/.
Run:  /usr/bin/python3 chapters/08_transformer/pytorch_step_time.py [threads]  > data/ch08/pytorch_step_time.json
"""
import json
import math
import os
import statistics
import sys
import time

threads = int(sys.argv[1]) if len(sys.argv) > 1 else 1
# Debian's torch hands matrix products to the system OpenBLAS, whose own thread pool ignores
# torch.set_num_threads: pin every pool before torch loads, or "1 thread" runs on all cores.
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(threads)

import torch  # noqa: E402  (after the thread pools are pinned)

torch.set_num_threads(threads)
torch.manual_seed(1)
D, H, FF, L, B, S, T = 64, 4, 256, 2, 64, 30, 31
SV, TV = 51, 62  # the toy corpus's source and target vocabularies, special tokens included


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.src = torch.nn.Embedding(SV, D)
        self.tgt = torch.nn.Embedding(TV, D)
        self.core = torch.nn.Transformer(D, H, L, L, FF, dropout=0.0, batch_first=True)
        # Post-Norm already ends every layer with a LayerNorm: no extra final norms (chapter 08 has none).
        self.core.encoder.norm = None
        self.core.decoder.norm = None
        self.bias = torch.nn.Parameter(torch.zeros(TV))
        pos = torch.arange(64).unsqueeze(1)
        freq = torch.exp(-math.log(10000.0) * torch.arange(0, D, 2) / D)
        pe = torch.zeros(64, D)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * freq), torch.cos(pos * freq)
        self.register_buffer("pe", pe)
        self.register_buffer("mask", torch.nn.Transformer.generate_square_subsequent_mask(T))

    def forward(self, src, tgt):
        x = self.src(src) * math.sqrt(D) + self.pe[: src.shape[1]]
        y = self.tgt(tgt) * math.sqrt(D) + self.pe[: tgt.shape[1]]
        h = self.core(x, y, tgt_mask=self.mask)
        return h @ self.tgt.weight.t() + self.bias


model = Model()
opt = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=0.1)
src = torch.randint(4, SV, (B, S))
tgt_in = torch.randint(4, TV, (B, T))
tgt_out = torch.randint(4, TV, (B, T))
STEPS = 21
times, cpu_times = [], []
for i in range(STEPS + 2):
    t0, c0 = time.perf_counter(), time.process_time()
    opt.zero_grad()
    loss = loss_fn(model(src, tgt_in).reshape(-1, TV), tgt_out.reshape(-1))
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    if i >= 2:
        times.append((time.perf_counter() - t0) * 1000.0)
        cpu_times.append((time.process_time() - c0) * 1000.0)
# With one thread, CPU time can only exceed wall time if more threads ran than were asked for.
if statistics.median(cpu_times) > threads * statistics.median(times) * 1.15:
    sys.exit(f"pytorch_step_time.py: CPU time {statistics.median(cpu_times):.1f} ms > {threads} x wall "
             f"{statistics.median(times):.1f} ms per step: torch ran more than {threads} thread(s); not written")
def cpu_model():
    """The CPU's name from /proc/cpuinfo ("" when it cannot be read): chapter 08 prints it."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


print(json.dumps({"pytorch_ms_per_step": round(statistics.median(times), 1),
                  "pytorch_cpu_ms_per_step": round(statistics.median(cpu_times), 1), "batch": B, "src_len": S,
                  "tgt_len": T, "threads": threads, "steps": len(times), "torch": torch.__version__,
                  "parameters": sum(p.numel() for p in model.parameters()),
                  "load_average_1min": os.getloadavg()[0],
                  "measured_on": time.strftime("%Y-%m-%d", time.gmtime()), "machine": cpu_model()}))
