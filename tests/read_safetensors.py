#!/usr/bin/python3
"""Read a safetensors file with numpy alone (no safetensors package, no torch).

    /usr/bin/python3 tests/read_safetensors.py FILE            print every tensor's name, shape, values
    /usr/bin/python3 tests/read_safetensors.py --check FILE    verify the fixture written by test_core
                                                               ("safetensors: writes the fixture …")

The format: 8-byte little-endian header length N, N bytes of JSON
{"name": {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, "__metadata__": {...}},
then the raw little-endian data; offsets count from the first byte after the header.
Checksums: a file of ours records in __metadata__ "checksum_data" (64-bit FNV-1a of the data
section) and "checksum_header" (of the header without those two entries, as compact JSON with sorted
keys), each "fnv1a64:" + 16 hex digits; both are verified when present, a file without them is read
unchecked (common/include/attn/data/safetensors.hpp).
Exit status: 0 ok, 1 check failed, 77 numpy is missing (ctest reports the test as skipped).
"""
import json
import struct
import sys

try:
    import numpy as np
except ImportError:
    print("skipped: numpy is not installed for /usr/bin/python3 (apt-get install python3-numpy)")
    sys.exit(77)

DTYPES = {"F32": "<f4", "F64": "<f8", "F16": "<f2", "I64": "<i8", "I32": "<i4"}
SCHEME = "fnv1a64:"
CHECKSUM_KEYS = ("checksum_data", "checksum_header")


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return SCHEME + f"{h:016x}"


def canonical_header(header):
    header = dict(header)
    meta = {k: v for k, v in header.get("__metadata__", {}).items() if k not in CHECKSUM_KEYS}
    header.pop("__metadata__", None)
    if meta:
        header["__metadata__"] = meta
    return json.dumps(header, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def verify_checksums(path, header, data):
    meta = header.get("__metadata__", {})
    for key, have in (("checksum_header", lambda: fnv1a64(canonical_header(header))),
                      ("checksum_data", lambda: fnv1a64(data))):
        if key in meta and have() != meta[key]:
            raise ValueError(f"{path}: changed or is corrupt: checksum {have()} of its "
                             f"{key.split('_')[1]}, expected {meta[key]}")


def read_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    data = blob[8 + n:]
    verify_checksums(path, header, data)
    metadata = {k: v for k, v in header.pop("__metadata__", {}).items() if k not in CHECKSUM_KEYS}
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        arr = np.frombuffer(data[begin:end], dtype=DTYPES[info["dtype"]])
        tensors[name] = arr.reshape(info["shape"])
    return tensors, metadata


def check_fixture(path):
    with open(path, "rb") as f:
        stamped = b'"checksum_data":"fnv1a64:' in f.read()
    print(f"checksums  {'ok' if stamped else 'MISSING'}  (verified by read_safetensors)")
    tensors, metadata = read_safetensors(path)
    expected = {
        "alpha": np.array([[0.0, 0.5, 1.0], [1.5, 2.0, 2.5]], dtype=np.float32),
        "beta.bias": np.array([-1.5, 2.25, 1024.0], dtype=np.float32),
        "scalar": np.array(7.0, dtype=np.float32),
    }
    ok = sorted(tensors) == sorted(expected)
    for name, want in expected.items():
        got = tensors.get(name)
        good = got is not None and got.shape == want.shape and got.dtype == np.float32 and np.array_equal(got, want)
        print(f"{name:10s} {'ok' if good else 'MISMATCH'}  shape {None if got is None else got.shape}")
        ok = ok and good
    good_meta = metadata.get("written_by") == "attention-step-by-step"
    print(f"metadata   {'ok' if good_meta else 'MISMATCH'}  {metadata}")
    return ok and good_meta and stamped


def main(argv):
    if len(argv) == 3 and argv[1] == "--check":
        return 0 if check_fixture(argv[2]) else 1
    if len(argv) != 2:
        print(__doc__)
        return 2
    tensors, metadata = read_safetensors(argv[1])
    print("metadata:", metadata)
    for name, arr in tensors.items():
        print(f"{name} {arr.dtype} {arr.shape}\n{arr}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
