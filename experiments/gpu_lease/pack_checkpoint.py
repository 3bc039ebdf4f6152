"""Move an fp32 safetensors checkpoint through channels of limited size: a bf16 copy, packed.

``pack`` rounds every float tensor to bf16 (round to nearest even) and writes the high bytes
(sign and exponent, few distinct values) xz-compressed and the low bytes raw, about 35 % of the
fp32 file; ``unpack`` widens the bf16 values back to an fp32 safetensors file. Other tensors
(integer position ids) travel unchanged.

    python -m experiments.gpu_lease.pack_checkpoint pack MODEL.safetensors PACK_DIR
    python -m experiments.gpu_lease.pack_checkpoint unpack PACK_DIR OUT.safetensors LOW_PART...
"""

from __future__ import annotations

import argparse
import json
import lzma
import pathlib

import numpy as np
import torch
from safetensors.numpy import load_file
from safetensors.torch import save_file


def pack(source: pathlib.Path, out: pathlib.Path) -> dict[str, int]:
    out.mkdir(parents=True, exist_ok=True)
    meta, high, low, raw = [], [], [], {}
    for name, value in load_file(str(source)).items():
        if value.dtype == np.float32:
            bf16 = torch.from_numpy(value.ravel().copy()).to(torch.bfloat16).view(torch.int16).numpy()
            pairs = bf16.view(np.uint8).reshape(-1, 2)  # little-endian: low byte first
            low.append(pairs[:, 0].copy())
            high.append(pairs[:, 1].copy())
            meta.append({"name": name, "shape": list(value.shape), "kind": "bf16"})
        else:
            raw[name] = value
            meta.append({"name": name, "shape": list(value.shape), "kind": "raw"})
    (out / "hi.xz").write_bytes(lzma.compress(np.concatenate(high).tobytes(), preset=1))
    (out / "lo.bin").write_bytes(np.concatenate(low).tobytes())
    np.savez(out / "raw.npz", **raw)
    (out / "meta.json").write_text(json.dumps(meta))
    return {p.name: p.stat().st_size for p in out.iterdir()}


def unpack(pack_dir: pathlib.Path, target: pathlib.Path, low_parts: list[pathlib.Path]) -> int:
    meta = json.loads((pack_dir / "meta.json").read_text())
    high = np.frombuffer(lzma.decompress((pack_dir / "hi.xz").read_bytes()), np.uint8)
    low = np.frombuffer(b"".join(p.read_bytes() for p in low_parts), np.uint8)
    if high.size != low.size:
        raise SystemExit(f"{high.size} high bytes but {low.size} low bytes: a part is missing or cut.")
    floats = ((high.astype(np.uint32) << 24) | (low.astype(np.uint32) << 16)).view(np.float32)
    raw = np.load(pack_dir / "raw.npz")
    tensors, at = {}, 0
    for entry in meta:
        if entry["kind"] == "bf16":
            n = int(np.prod(entry["shape"]))
            tensors[entry["name"]] = torch.from_numpy(floats[at : at + n].reshape(entry["shape"]).copy())
            at += n
        else:
            tensors[entry["name"]] = torch.from_numpy(raw[entry["name"]])
    if at != floats.size:
        raise SystemExit(f"meta.json describes {at} floats, the parts hold {floats.size}.")
    save_file(tensors, str(target), metadata={"format": "pt"})
    return at


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pack")
    p.add_argument("source", type=pathlib.Path)
    p.add_argument("out", type=pathlib.Path)
    u = sub.add_parser("unpack")
    u.add_argument("pack_dir", type=pathlib.Path)
    u.add_argument("target", type=pathlib.Path)
    u.add_argument("low_parts", type=pathlib.Path, nargs="+")
    args = parser.parse_args()
    if args.command == "pack":
        print(pack(args.source, args.out))
    else:
        print(f"unpacked {unpack(args.pack_dir, args.target, args.low_parts)} floats")


if __name__ == "__main__":
    main()
