"""Look a kernel config up the way vLLM and SGLang do (their loaders as they stand,
2026-11-28), with nothing of pragma-ncu imported, written from their rules:

- the file name: the fixed dims in order, `device_name=` and the device's name with spaces
  replaced by underscores (vLLM: any name with an `H200` token becomes `NVIDIA_H200`), then
  `,dtype=D` and `,block_shape=[N,K]` (SGLang prints the list as Python does: `[N, K]`);
- the folder: vLLM's `VLLM_TUNED_CONFIG_FOLDER` (the folder given); SGLang's
  `SGLANG_MOE_CONFIG_DIR/configs/triton_<X_Y_Z>` for the Triton version it runs, then the other
  versions' folders there, newest first;
- the keys read as integers (vLLM drops a `triton_version` key first; SGLang does not, and
  fails on one), and the configuration of the key nearest the batch size by absolute
  difference, the first such key in the file on a tie.

tests/unit/test_vllm_table.py runs it on the tables autotune writes.

    python tests/vllm_lookup.py CONFIG_DIR --device-name "NVIDIA H200" --fixed E=128 \
        --fixed N=384 --batch 1 --batch 37 --batch 4096 [--engine sglang --triton 3.4.0] \
        [--dtype fp8_w8a8] [--block-shape 128,128]

Prints one JSON object: {"file": PATH (relative to CONFIG_DIR), "configs": {"1": {...}, ...}};
exits 1 when there is no such file (the servers then fall back to their default config).
"""

from __future__ import annotations

import argparse
import json
import os
import sys


def config_file_name(engine: str, fixed: list[str], device_name: str, dtype: str | None,
                     block_shape: list[int] | None) -> str:
    device = device_name.replace(" ", "_")
    if engine == "vllm" and "H200" in device.split("_"):
        device = "NVIDIA_H200"
    name = "".join(f"{item}," for item in fixed) + f"device_name={device}"
    if dtype:
        name += f",dtype={dtype}"
    if block_shape and all(block_shape):
        shape = str(block_shape)  # "[128, 128]", as SGLang writes it
        name += f",block_shape={shape.replace(' ', '') if engine == 'vllm' else shape}"
    return name + ".json"


def folders(engine: str, root: str, triton: str | None) -> list[str]:
    if engine == "vllm":
        return [root]
    base = os.path.join(root, "configs")
    versions = sorted((d.removeprefix("triton_") for d in os.listdir(base)
                       if d.startswith("triton_")) if os.path.isdir(base) else [],
                      key=lambda v: tuple(int(x) for x in v.split("_")), reverse=True)
    mine = triton.replace(".", "_") if triton else None
    order = ([mine] if mine else []) + [v for v in versions if v != mine]
    return [os.path.join(base, f"triton_{v}") for v in order]


def load_configs(engine: str, path: str) -> dict[int, dict]:
    with open(path) as fh:
        data = json.load(fh)
    if engine == "vllm":
        data.pop("triton_version", None)
    return {int(key): value for key, value in data.items()}


def pick(configs: dict[int, dict], batch: int) -> dict:
    return configs[min(configs, key=lambda key: abs(key - batch))]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("--engine", choices=["vllm", "sglang"], default="vllm")
    parser.add_argument("--device-name", required=True)
    parser.add_argument("--fixed", action="append", default=[], help="NAME=VALUE, in order")
    parser.add_argument("--dtype")
    parser.add_argument("--block-shape", type=lambda t: [int(x) for x in t.split(",")])
    parser.add_argument("--triton", help="the Triton version SGLang runs")
    parser.add_argument("--batch", action="append", type=int, required=True)
    args = parser.parse_args(argv)
    name = config_file_name(args.engine, args.fixed, args.device_name, args.dtype,
                            args.block_shape)
    for folder in folders(args.engine, args.folder, args.triton):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            configs = load_configs(args.engine, path)
            print(json.dumps({"file": os.path.relpath(path, args.folder),
                              "configs": {str(b): pick(configs, b) for b in args.batch}}))
            return 0
    print(json.dumps({"file": name, "configs": None}))
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
