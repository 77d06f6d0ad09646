#!/usr/bin/env python3
"""Turn common/cuda/src/*.cu into host C++ for the emulator (see README.md).

  python3 gen.py SRC_DIR OUT_DIR     writes OUT_DIR/01_naive.emu.cpp, 02_…, 03_…, 04_…, 06_…,
                                   mma_bf16.emu.hpp

Each edit is a literal text replacement; if a pattern is no longer in the source (the kernel was
rewritten), this script stops with an error naming it rather than emulating stale code.
"""
import os
import sys


def replace(text, old, new, name):
    if old not in text:
        sys.exit(f"gen.py: {name}: pattern not found, update the emulator:\n  {old!r}")
    return text.replace(old, new)


def strip_launchers(text, name):
    # Everything from the first host launcher on is host-side CUDA (cudaFuncSetAttribute, <<<>>>);
    # the emulator's drivers (emu_fp32.cpp, emu_bf16.cpp) launch the kernels themselves.
    marker = "template <int D>\nvoid launch_"
    if marker not in text:
        sys.exit(f"gen.py: {name}: no launcher ('{marker!r}') found")
    return text[: text.index(marker)] + "}  // namespace\n}  // namespace attn::cuda\n"


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src_dir, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)

    # The tensor-core building blocks: the PTX wrappers give way to emu_ptx.hpp, the rest stays.
    s = open(os.path.join(src_dir, "mma_bf16.cuh")).read()
    a_mark = "// ---- thin wrappers over the PTX instructions (begin) ----"
    b_mark = "// ---- thin wrappers over the PTX instructions (end) ----"
    if a_mark not in s or b_mark not in s:
        sys.exit("gen.py: mma_bf16.cuh: PTX wrapper markers not found, update the emulator")
    a, b = s.index(a_mark), s.index(b_mark)
    s = (s[:a] + "__device__ __forceinline__ std::uint32_t smem_address(const void* p) { return emu_cvta(p); }\n"
         '#include "emu_ptx.hpp"\n' + s[b + len(b_mark):])
    with open(os.path.join(out_dir, "mma_bf16.emu.hpp"), "w") as f:
        f.write(s)

    for name in ["02_flash_fp32", "03_flash_bf16_mma", "04_flash_fp32_backward", "06_flash_bf16_backward"]:
        s = open(os.path.join(src_dir, f"{name}.cu")).read()
        bf16 = name.startswith("03") or name.startswith("06")
        # Dynamic shared memory becomes one static host array (poisoned before every block).
        if bf16:
            s = replace(s, "extern __shared__ uint4 smem_u4[];",
                        "uint4* smem_u4 = reinterpret_cast<uint4*>(g_smem);", name)
            s = replace(s, '#include "mma_bf16.cuh"\n', '#include "mma_bf16.emu.hpp"\n', name)
        else:
            s = replace(s, "extern __shared__ float4 smem_f4[];",
                        "float4* smem_f4 = reinterpret_cast<float4*>(g_smem);", name)
        s = replace(s, '#include "attn/cuda/attention.hpp"\n', "", name)
        s = strip_launchers(s, name)
        with open(os.path.join(out_dir, f"{name}.emu.cpp"), "w") as f:
            f.write(s)

    name = "01_naive_cublas"
    s = open(os.path.join(src_dir, f"{name}.cu")).read()
    s = replace(s, "softmax_rows_kernel<<<static_cast<unsigned>(rows), kSoftmaxThreads, 0, stream>>>(scores, n_q, n_k, causal);",
                "launch(dim3(static_cast<unsigned>(rows)), kSoftmaxThreads, [&] { softmax_rows_kernel(scores, n_q, n_k, causal); });",
                name)
    s = replace(s, 'ATTN_CUDA_CHECK_LAUNCH("softmax_rows_kernel");', "", name)
    # Blocks run one after another in the emulator, so one static array serves every block.
    s = replace(s, "__shared__ float scratch[kWarps];", "static float scratch[kWarps];", name)
    s = replace(s, "cublasSgemmStridedBatched(", "emu_sgemm_strided_batched(", name)
    s = replace(s, "cublasSetStream(cublas, stream)", "CUBLAS_STATUS_SUCCESS", name)
    with open(os.path.join(out_dir, "01_naive.emu.cpp"), "w") as f:
        f.write(s)


if __name__ == "__main__":
    main()
