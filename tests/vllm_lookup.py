"""Look a kernel config up the way vLLM and SGLang do, with nothing of pragma-ncu imported: the
file named by the fixed dims and the device's name (spaces to underscores), its keys read as
integers, and the configuration of the key nearest the batch size by absolute difference (the
first such key in the file on a tie). tests/unit/test_vllm_table.py runs it on the tables
autotune writes.

    python tests/vllm_lookup.py CONFIG_DIR --device-name "NVIDIA H200" --fixed E=128 \
        --fixed N=384 --batch 1 --batch 37 --batch 4096

Prints one JSON object: {"file": NAME, "configs": {"1": {...}, "37": {...}, ...}}; exits 1
when there is no such file (the servers then fall back to their default config).
"""

from __future__ import annotations

import argparse
import json
import os
import sys


def config_file_name(fixed: list[str], device_name: str) -> str:
    selector = "".join(f"{item}," for item in fixed)
    return f"{selector}device_name={device_name.replace(' ', '_')}.json"


def load_configs(path: str) -> dict[int, dict]:
    with open(path) as fh:
        return {int(key): value for key, value in json.load(fh).items()}


def pick(configs: dict[int, dict], batch: int) -> dict:
    return configs[min(configs, key=lambda key: abs(key - batch))]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("--device-name", required=True)
    parser.add_argument("--fixed", action="append", default=[], help="NAME=VALUE, in order")
    parser.add_argument("--batch", action="append", type=int, required=True)
    args = parser.parse_args(argv)
    name = config_file_name(args.fixed, args.device_name)
    path = os.path.join(args.folder, name)
    if not os.path.exists(path):
        print(json.dumps({"file": name, "configs": None}))
        return 1
    configs = load_configs(path)
    print(json.dumps({"file": name, "configs": {str(b): pick(configs, b) for b in args.batch}}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
