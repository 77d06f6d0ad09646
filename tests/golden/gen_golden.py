#!/usr/bin/python3
"""Regenerates the PyTorch golden values in data/golden/ (CI never runs this; it reads the files).

    /usr/bin/python3 tests/golden/gen_golden.py      # Debian's python3 with python3-torch, python3-numpy

Every module tests/golden/golden_*.py defines generate(save) and calls save(group, name, array)
for each input and expected output. Inputs are float32 (what our code computes with); expected
values are computed by PyTorch in float64 from those same float32 inputs and stored as float64.
"""
import importlib.util
import pathlib
import sys

import numpy as np
import torch

HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE.parent.parent / "data" / "golden"


def main() -> int:
    torch.set_num_threads(1)
    written = []

    def save(group: str, name: str, array) -> None:
        if isinstance(array, torch.Tensor):
            array = array.detach().cpu().numpy()
        array = np.ascontiguousarray(array)
        if array.dtype not in (np.float32, np.float64):
            raise TypeError(f"{group}/{name}: dtype {array.dtype} (float32 or float64 only)")
        path = OUT / group / f"{name}.npy"
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, array)
        written.append(path)

    modules = sorted(HERE.glob("golden_*.py"))
    for path in modules:
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module.generate(save)
        print(f"{path.name}: done")
    print(f"wrote {len(written)} files under {OUT} (torch {torch.__version__}, numpy {np.__version__})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
