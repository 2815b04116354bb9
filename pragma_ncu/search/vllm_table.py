"""Config tables in the layout vLLM and SGLang load their tuned kernel configs from: one file
per kernel setting, named by the dims that setting fixes and the device, keyed by the batch
size, each value the bare parameters the kernel is launched with.

    E=128,N=384,device_name=NVIDIA_H200.json
    {"1": {"BLOCK_SIZE_M": 16, ...}, "64": {...}, "4096": {...}}

The device part is the CUDA device's name (what `torch.cuda.get_device_name()` answers) with
spaces replaced by underscores, nothing else changed; the fixed dims come first, in the spec's
order, as NAME=VALUE. The servers read the keys as integers and pick the configuration of the
key nearest the batch size by absolute difference, the first such key in the file on a tie (our
files list them in ascending order, so the smaller batch size wins); `nearest` does the same,
so what `best_config` answers for such a file is what the server will launch. Files named with
further selectors after the device (`,dtype=fp8_w8a8`, `,block_shape=[128,128]`) are read too.

Which dim is the batch size: the one that varies across the shapes while the others stay fixed
(`batch_dim`), or the one named. With more than one varying dim it must be named, and the other
varying dims then split the table into one file per combination of their values.

Like `table`, this module needs nothing beyond the standard library.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pragma_ncu.search.table import Dims, Table, TableError, parse_dims

DEVICE_PART = "device_name="
_DIM = re.compile(r"^([A-Za-z_]\w*)=(-?\d+)$")


@dataclass(frozen=True)
class VllmTable:
    """One file of the layout: the dims its name fixes, its device part (underscored) and any
    selectors after it, and the configurations by batch size in file order."""

    fixed: dict[str, int]
    device: str  # as in the name: "NVIDIA_H200"
    selectors: str  # what follows the device part: ",dtype=fp8_w8a8", or ""
    configs: dict[int, dict[str, Any]]


def device_part(device: str) -> str:
    """'NVIDIA H100 80GB HBM3' -> 'NVIDIA_H100_80GB_HBM3': spaces to underscores, as the
    servers name their files (a path separator, which no CUDA device name has, too)."""
    return device.replace(" ", "_").replace(os.sep, "_")


def file_name(fixed: Mapping[str, int], device: str) -> str:
    """'E=128,N=384,device_name=NVIDIA_H200.json' (`fixed` in its own order)."""
    dims = "".join(f"{name}={int(value)}," for name, value in fixed.items())
    return f"{dims}{DEVICE_PART}{device_part(device)}.json"


def parse_file_name(name: str) -> tuple[dict[str, int], str, str]:
    """The fixed dims, the device part and the selectors of a file name of the layout."""
    stem = Path(name).name.removesuffix(".json")
    head, sep, tail = stem.rpartition(DEVICE_PART)
    if not sep or (head and not head.endswith(",")):
        raise TableError(f"{name}: not a vLLM config file name (DIM=N,...,device_name=DEVICE"
                         "[,dtype=...].json)")
    fixed = {}
    for part in filter(None, head.split(",")):
        match = _DIM.match(part)
        if match is None:
            raise TableError(f"{name}: {part!r} is not NAME=INT")
        fixed[match.group(1)] = int(match.group(2))
    device, comma, rest = tail.partition(",")
    return fixed, device, comma + rest


def batch_dim(shapes: Sequence[Mapping[str, int]], given: str | None = None) -> str:
    """The dim the table is keyed by: `given`, else the only dim whose size varies across
    `shapes`, else the only dim there is; TableError otherwise, naming the candidates."""
    names = list(shapes[0]) if shapes else []
    if given is not None:
        if given not in names:
            raise TableError(f"batch dim {given!r}: the shapes' dims are "
                             f"{', '.join(names) or 'none'}")
        return given
    varying = [n for n in names if len({s[n] for s in shapes}) > 1]
    if len(varying) == 1:
        return varying[0]
    if len(names) == 1:
        return names[0]
    what = (f"vary in {', '.join(varying)}" if varying
            else f"fix every dim ({', '.join(names) or 'none'})")
    raise TableError(f"the shapes {what}: name the batch-size dim (--batch-dim NAME); the "
                     "others name the files, one file per combination of their values")


def from_table(table: Table, batch: str) -> dict[str, VllmTable]:
    """`table` in this layout, by file name: its entries grouped by the values of every dim
    but `batch`, each keyed by its `batch` size."""
    if batch not in table.dims:
        raise TableError(f"batch dim {batch!r}: the table of {table.kernel} is keyed by "
                         f"{', '.join(table.dims)}")
    files: dict[str, VllmTable] = {}
    for entry in sorted(table.configs.values(), key=lambda e: e.dims[batch]):
        fixed = {d: int(entry.dims[d]) for d in table.dims if d != batch}
        name = file_name(fixed, table.device)
        held = files.setdefault(name, VllmTable(fixed, device_part(table.device), "", {}))
        held.configs[int(entry.dims[batch])] = dict(entry.params)
    return files


def write(root: Path, files: Mapping[str, VllmTable]) -> list[Path]:
    """Write each file under `root`, adding to one already there: its batch sizes not written
    now stay, those written now are replaced."""
    root.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, new in files.items():
        path = root / name
        old = load(path).configs if path.is_file() else {}
        merged = {**old, **new.configs}
        text = json.dumps({str(m): merged[m] for m in sorted(merged)}, indent=4) + "\n"
        tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(text)
        tmp.replace(path)
        paths.append(path)
    return paths


def load(path: Path) -> VllmTable:
    """A file of the layout, its keys as integers in file order (as the servers read it)."""
    fixed, device, selectors = parse_file_name(Path(path).name)
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise TableError(f"no config file at {path}") from None
    except (OSError, ValueError) as exc:
        raise TableError(f"{path} is not JSON ({exc})") from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise TableError(f"{path}: expected {{\"BATCH\": {{PARAM: VALUE, ...}}, ...}}")
    try:
        configs = {int(key): value for key, value in data.items()}
    except ValueError:
        raise TableError(f"{path}: every key must be a batch size (an integer)") from None
    return VllmTable(fixed, device, selectors, configs)


def nearest(table: VllmTable, size: int) -> tuple[int, bool]:
    """The key the servers pick for batch size `size` (nearest by absolute difference, the
    first in the file on a tie), and whether it is `size` itself."""
    if not table.configs:
        raise TableError(f"the vLLM table {file_name(table.fixed, table.device)} is empty")
    key = min(table.configs, key=lambda k: abs(k - size))
    return key, key == size


def batch_size(table: VllmTable, shape: Dims | str | int) -> int:
    """The batch size `shape` asks for: an integer as it is, else the one dim of the shape
    that the file's name does not fix (the dims it does fix must match the file's)."""
    if isinstance(shape, int):
        return shape
    dims = parse_dims(shape)
    wrong = {k: v for k, v in dims.items() if k in table.fixed and table.fixed[k] != v}
    if wrong:
        raise TableError(f"the file is for {_text(table.fixed)}; the shape gives "
                         f"{_text(wrong)}")
    rest = [k for k in dims if k not in table.fixed]
    if len(rest) != 1:
        raise TableError(f"the file fixes {_text(table.fixed) or 'no dim'}: the shape must add "
                         f"exactly one dim, its batch size (it adds {', '.join(rest) or 'none'})")
    return dims[rest[0]]


def find(root: Path, device: str, shape: Dims | str | int) -> Path:
    """The file under `root` for `device` whose fixed dims the shape matches."""
    dims = {} if isinstance(shape, int) else parse_dims(shape)
    wanted = device_part(device)
    found = []
    for path in sorted(Path(root).glob(f"*{DEVICE_PART}*.json")):
        try:
            fixed, dev, _ = parse_file_name(path.name)
        except TableError:
            continue
        if dev == wanted and all(dims.get(k) == v for k, v in fixed.items()):
            found.append(path)
    if len(found) != 1:
        which = "no" if not found else f"{len(found)} ({', '.join(p.name for p in found)})"
        raise TableError(f"{root}: {which} vLLM config file for {wanted} matches "
                         f"{_text(dims) or 'that batch size'}")
    return found[0]


def _text(dims: Mapping[str, int]) -> str:
    return ",".join(f"{k}={v}" for k, v in dims.items())
