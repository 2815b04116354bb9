"""Config tables in the layout vLLM and SGLang load their tuned kernel configs from: one file
per kernel setting, named by the dims that setting fixes, the device and the quantization
selectors, keyed by the batch size, each value the bare parameters the kernel is launched with.

    vLLM:    E=128,N=384,device_name=NVIDIA_H200.json
             E=128,N=384,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json
    SGLang:  configs/triton_3_4_0/
               E=128,N=384,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128, 128].json
    {"1": {"BLOCK_SIZE_M": 16, ...}, "64": {...}, "4096": {...}}

The engines' own naming, as their loaders stand (2026-11-28), is `Naming`'s:
- the device part is the CUDA device's name with spaces replaced by underscores; vLLM then
  folds every name with an `H200` token (`NVIDIA_H200_NVL`) into `NVIDIA_H200`, SGLang does not;
- the fused-MoE files are named by `E` and `N` in that order, whatever a spec calls its dims
  (`Naming.dims` maps the engine's names to the table's);
- `,dtype=fp8_w8a8` and `,block_shape=[128,128]` follow the device (SGLang writes the list as
  Python prints it, `[128, 128]`);
- vLLM reads the folder `VLLM_TUNED_CONFIG_FOLDER` names and drops a `triton_version` key;
  SGLang reads `configs/triton_<X_Y_Z>/` under `SGLANG_MOE_CONFIG_DIR` for the Triton version it
  runs (then the other versions' folders, newest first), and keeps every key.
The servers read the keys as integers and pick the configuration of the key nearest the batch
size by absolute difference, the first such key in the file on a tie (our files list them in
ascending order, so the smaller batch size wins); `nearest` does the same, so what
`best_config` answers for such a file is what the server will launch.

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pragma_ncu.search.table import Dims, Table, TableError, parse_dims

DEVICE_PART = "device_name="
ENGINES = ("vllm", "sglang")
MOE_DIMS = ("E", "N")  # the engines' fused-MoE files: E=<experts>,N=<intermediate size>
TRITON_VERSION = "triton_version"  # a key vLLM's tuning script may write, and vLLM drops
_DIM = re.compile(r"^([A-Za-z_]\w*)=(-?\d+)$")
_DTYPE = re.compile(r"^[A-Za-z0-9_]+$")
_VERSION = re.compile(r"^\d+(\.\d+)*$")
_SELECTORS = re.compile(r"^(?:,dtype=(?P<dtype>[A-Za-z0-9_]+))?"
                        r"(?:,block_shape=\[(?P<n>\d+), ?(?P<k>\d+)\])?(?P<rest>.*)$")


class NamingError(TableError):
    """A file name the engine's options cannot make; `option` names the option to change."""

    def __init__(self, message: str, option: str) -> None:
        super().__init__(message)
        self.option = option


@dataclass(frozen=True)
class Naming:
    """How a serving engine names one kernel's config files beyond the dims' values: the
    engine (its device-name rule and list spelling), the quantization selectors its loader
    asks for (`dtype`: "fp8_w8a8", "int8_w8a16", ...; `block_shape`: (128, 128)), the engine's
    names for the table's fixed dims in the file's order (`dims`: (("E", "experts"), ("N",
    "inter")); none: the table's own `E` and `N`), and for SGLang the Triton version whose
    `configs/triton_<X_Y_Z>/` folder it reads."""

    engine: str = "vllm"
    dtype: str | None = None
    block_shape: tuple[int, int] | None = None
    dims: tuple[tuple[str, str], ...] = field(default=())
    triton_version: str | None = None

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise NamingError(f"engine {self.engine!r}: expected one of {', '.join(ENGINES)}",
                              "--config-format")
        if self.dtype is not None and not _DTYPE.match(self.dtype):
            raise NamingError(f"dtype {self.dtype!r}: expected a name such as fp8_w8a8 "
                              "(letters, digits and underscores)", "--config-dtype")
        if self.block_shape is not None and (
                len(self.block_shape) != 2
                or not all(isinstance(b, int) and b > 0 for b in self.block_shape)):
            raise NamingError(f"block shape {self.block_shape!r}: expected two positive whole "
                              "numbers, N and K (128,128)", "--block-shape")
        if self.triton_version is not None and not _VERSION.match(self.triton_version):
            raise NamingError(f"Triton version {self.triton_version!r}: expected digits and "
                              "dots (3.4.0)", "--triton-version")
        engine_names = [e for e, _ in self.dims]
        table_names = [t for _, t in self.dims]
        for names, what in ((engine_names, "the engine's"), (table_names, "the table's")):
            twice = sorted({n for n in names if names.count(n) > 1})
            if twice:
                raise NamingError(f"the dim map names {what} dim {', '.join(twice)} twice",
                                  "--dim-map")

    def selectors(self) -> str:
        """',dtype=fp8_w8a8,block_shape=[128,128]' (SGLang: '[128, 128]'), or ''."""
        dtype = f",dtype={self.dtype}" if self.dtype else ""
        if not self.block_shape:
            return dtype
        sep = "," if self.engine == "vllm" else ", "
        return f"{dtype},block_shape=[{sep.join(str(b) for b in self.block_shape)}]"

    def folder(self) -> Path:
        """Where under the engine's config folder the files go: SGLang's
        configs/triton_<X_Y_Z>; vLLM's files lie directly in it."""
        if self.engine != "sglang":
            return Path()
        if not self.triton_version:
            raise NamingError("SGLang reads its config files from configs/triton_<version>/ "
                              "under SGLANG_MOE_CONFIG_DIR: give the Triton version the server "
                              "runs (--triton-version 3.4.0; python -c 'import triton; "
                              "print(triton.__version__)' says it)", "--triton-version")
        return Path("configs") / f"triton_{self.triton_version.replace('.', '_')}"

    def fixed(self, dims: Mapping[str, int]) -> dict[str, int]:
        """The table's fixed `dims` by the engine's names, in the file's order: the dim map's,
        else E then N; TableError where the table's dims cannot be told apart."""
        if self.dims:
            mapped = {t for _, t in self.dims}
            if mapped != set(dims):
                raise NamingError(
                    f"the dim map names {', '.join(sorted(mapped)) or 'no dim'} of the table; "
                    f"its fixed dims are {', '.join(dims) or 'none'}: map every fixed dim, "
                    "no other", "--dim-map")
            return {engine: int(dims[table]) for engine, table in self.dims}
        if set(dims) == set(MOE_DIMS) or not dims:
            return {name: int(dims[name]) for name in MOE_DIMS if name in dims}
        raise NamingError(
            f"vLLM and SGLang name a fused-MoE config file by E and N in that order "
            f"(E=128,N=384,device_name=...); the table fixes {', '.join(dims)}: say which is "
            "which with --dim-map E=<dim>,N=<dim> (or, for another kernel's files, the "
            "engine's names in its file's order)", "--dim-map")

    def table_dims(self, dims: Mapping[str, int]) -> dict[str, int]:
        """A shape's `dims` by the engine's names (a mapped dim renamed, the others kept)."""
        rename = {table: engine for engine, table in self.dims}
        return {rename.get(k, k): v for k, v in dims.items()}


VLLM = Naming()


def parse_dim_map(text: str | None) -> tuple[tuple[str, str], ...]:
    """'E=experts,N=inter' -> (("E", "experts"), ("N", "inter")): the engine's name of each
    table dim, in the file's order."""
    if not text:
        return ()
    pairs = []
    for part in text.split(","):
        engine, eq, table = (x.strip() for x in part.partition("="))
        if not eq or not re.match(r"^[A-Za-z_]\w*$", engine) \
                or not re.match(r"^[A-Za-z_]\w*$", table):
            raise TableError(f"dim map {text!r}: expected ENGINE_NAME=DIM,... (E=experts,"
                             "N=inter)")
        pairs.append((engine, table))
    return tuple(pairs)


def parse_block_shape(text: str | None) -> tuple[int, int] | None:
    """'128,128' (or '[128, 128]') -> (128, 128)."""
    if not text:
        return None
    parts = text.strip().strip("[]").split(",")
    try:
        values = tuple(int(p) for p in parts)
    except ValueError:
        values = ()
    if len(values) != 2 or min(values) <= 0:
        raise TableError(f"block shape {text!r}: expected two positive whole numbers, N and K "
                         "(128,128)")
    return values[0], values[1]


@dataclass(frozen=True)
class VllmTable:
    """One file of the layout: the dims its name fixes, its device part (underscored) and any
    selectors after it, the configurations by batch size in file order, and a
    `triton_version` the file carried (kept when it is written again)."""

    fixed: dict[str, int]
    device: str  # as in the name: "NVIDIA_H200"
    selectors: str  # what follows the device part: ",dtype=fp8_w8a8", or ""
    configs: dict[int, dict[str, Any]]
    triton_version: str | None = None


def device_part(device: str, engine: str = "vllm") -> str:
    """'NVIDIA H100 80GB HBM3' -> 'NVIDIA_H100_80GB_HBM3': spaces to underscores, as the
    servers name their files (a path separator, which no CUDA device name has, too); for vLLM
    a name with an H200 token is its H200 family's ('NVIDIA H200 NVL' -> 'NVIDIA_H200')."""
    part = device.replace(" ", "_").replace(os.sep, "_")
    if engine == "vllm" and "H200" in part.split("_"):
        return "NVIDIA_H200"
    return part


def file_name(fixed: Mapping[str, int], device: str, naming: Naming = VLLM) -> str:
    """'E=128,N=384,device_name=NVIDIA_H200.json' (`fixed` in its own order)."""
    dims = "".join(f"{name}={int(value)}," for name, value in fixed.items())
    return f"{dims}{DEVICE_PART}{device_part(device, naming.engine)}{naming.selectors()}.json"


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


def selectors_of(text: str) -> tuple[str | None, tuple[int, int] | None, str]:
    """A file name's selectors read as the engines write them: its dtype, its block shape
    (either spelling) and whatever else follows (SGLang's ',per_channel_quant=True', '_down')."""
    match = _SELECTORS.match(text)
    assert match is not None  # the last group takes anything
    shape = (int(match["n"]), int(match["k"])) if match["n"] else None
    return match["dtype"], shape, match["rest"]


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


def from_table(table: Table, batch: str, naming: Naming = VLLM) -> dict[str, VllmTable]:
    """`table` in this layout, by file path relative to the engine's config folder: its
    entries grouped by the values of every dim but `batch`, each keyed by its `batch` size,
    named as `naming`'s engine asks for them."""
    if batch not in table.dims:
        raise TableError(f"batch dim {batch!r}: the table of {table.kernel} is keyed by "
                         f"{', '.join(table.dims)}")
    folder = naming.folder()
    files: dict[str, VllmTable] = {}
    for entry in sorted(table.configs.values(), key=lambda e: e.dims[batch]):
        fixed = naming.fixed({d: int(entry.dims[d]) for d in table.dims if d != batch})
        name = str(folder / file_name(fixed, table.device, naming))
        held = files.setdefault(name, VllmTable(
            fixed, device_part(table.device, naming.engine), naming.selectors(), {}))
        held.configs[int(entry.dims[batch])] = dict(entry.params)
    return files


def write(root: Path, files: Mapping[str, VllmTable]) -> list[Path]:
    """Write each file under `root` (a name may hold the engine's sub-folders), adding to one
    already there: its batch sizes not written now stay, those written now are replaced, and a
    `triton_version` it carried stays."""
    paths = []
    for name, new in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        old = load(path) if path.is_file() else None
        merged = {**(old.configs if old else {}), **new.configs}
        data: dict[str, Any] = {str(m): merged[m] for m in sorted(merged)}
        kept = new.triton_version or (old.triton_version if old else None)
        if kept is not None:
            data[TRITON_VERSION] = kept
        text = json.dumps(data, indent=4) + "\n"
        tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(text)
        tmp.replace(path)
        paths.append(path)
    return paths


def load(path: Path) -> VllmTable:
    """A file of the layout, its keys as integers in file order (as the servers read it); a
    `triton_version` key, which vLLM's tuning script may write and vLLM drops, is kept aside."""
    fixed, device, selectors = parse_file_name(Path(path).name)
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise TableError(f"no config file at {path}") from None
    except (OSError, ValueError) as exc:
        raise TableError(f"{path} is not JSON ({exc})") from None
    version = data.pop(TRITON_VERSION, None) if isinstance(data, dict) else None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise TableError(f"{path}: expected {{\"BATCH\": {{PARAM: VALUE, ...}}, ...}} (and "
                         f"at most a \"{TRITON_VERSION}\")")
    try:
        configs = {int(key): value for key, value in data.items()}
    except ValueError:
        raise TableError(f"{path}: every key must be a batch size (an integer)") from None
    return VllmTable(fixed, device, selectors, configs,
                     None if version is None else str(version))


def nearest(table: VllmTable, size: int) -> tuple[int, bool]:
    """The key the servers pick for batch size `size` (nearest by absolute difference, the
    first in the file on a tie), and whether it is `size` itself."""
    if not table.configs:
        raise TableError(f"the vLLM table {_text(table.fixed)},{DEVICE_PART}{table.device}"
                         f"{table.selectors} is empty")
    key = min(table.configs, key=lambda k: abs(k - size))
    return key, key == size


def batch_size(table: VllmTable, shape: Dims | str | int, naming: Naming = VLLM) -> int:
    """The batch size `shape` asks for: an integer as it is, else the one dim of the shape
    (by the engine's names: `naming`'s dim map) that the file's name does not fix (the dims it
    does fix must match the file's)."""
    if isinstance(shape, int):
        return shape
    dims = naming.table_dims(parse_dims(shape))
    wrong = {k: v for k, v in dims.items() if k in table.fixed and table.fixed[k] != v}
    if wrong:
        raise TableError(f"the file is for {_text(table.fixed)}; the shape gives "
                         f"{_text(wrong)}")
    rest = [k for k in dims if k not in table.fixed]
    if len(rest) != 1:
        raise TableError(f"the file fixes {_text(table.fixed) or 'no dim'}: the shape must add "
                         f"exactly one dim, its batch size (it adds {', '.join(rest) or 'none'})")
    return dims[rest[0]]


def folders(root: Path, naming: Naming = VLLM) -> list[Path]:
    """Where an engine looks under `root`, in its order: vLLM the folder itself; SGLang its
    Triton version's configs/triton_<X_Y_Z> (or triton_<X_Y_Z> when `root` is the configs
    folder), then the other versions', newest first."""
    if naming.engine == "vllm":
        return [Path(root)]
    found: dict[tuple[int, ...], Path] = {}
    for base in (Path(root) / "configs", Path(root)):
        if not base.is_dir():
            continue
        for sub in base.iterdir():
            version = sub.name.removeprefix("triton_").replace("_", ".")
            if sub.is_dir() and sub.name.startswith("triton_") and _VERSION.match(version):
                found.setdefault(tuple(int(x) for x in version.split(".")), sub)
    asked = (tuple(int(x) for x in naming.triton_version.split("."))
             if naming.triton_version else None)
    order = sorted(found, reverse=True)
    if asked in found:
        order.remove(asked)
        order.insert(0, asked)
    return [found[v] for v in order]


def engine_of(root: Path) -> str:
    """The engine a folder of config files is laid out for: SGLang where it holds Triton
    version folders and no file of the layout itself, else vLLM."""
    if any(Path(root).glob(f"*{DEVICE_PART}*.json")):
        return "vllm"
    return "sglang" if folders(root, Naming("sglang")) else "vllm"


def find(root: Path, device: str, shape: Dims | str | int, naming: Naming = VLLM) -> Path:
    """The file under `root` the engine would load for `device`, the shape's fixed dims and
    `naming`'s selectors: the device part as the engine writes it, the dtype and block shape
    exactly those asked (none asked: a file without them), in the first of the engine's
    folders that holds one."""
    dims = {} if isinstance(shape, int) else naming.table_dims(parse_dims(shape))
    wanted = device_part(device, naming.engine)
    asked = (naming.dtype, naming.block_shape, "")
    for folder in folders(root, naming):
        found = []
        for path in sorted(folder.glob(f"*{DEVICE_PART}*.json")):
            try:
                fixed, dev, selectors = parse_file_name(path.name)
            except TableError:
                continue
            if dev == wanted and selectors_of(selectors) == asked \
                    and all(dims.get(k) == v for k, v in fixed.items()):
                found.append(path)
        if len(found) > 1:
            raise TableError(f"{folder}: {len(found)} config files for {wanted} match "
                             f"{_text(dims) or 'that batch size'} "
                             f"({', '.join(p.name for p in found)})")
        if found:
            return found[0]
    what = naming.selectors() or " without dtype or block shape"
    raise TableError(f"{root}: no {naming.engine} config file for {wanted}{what} matches "
                     f"{_text(dims) or 'that batch size'}")


def _text(dims: Mapping[str, int]) -> str:
    return ",".join(f"{k}={v}" for k, v in dims.items())
