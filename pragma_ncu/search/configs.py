"""A config table read back as an application reads it, in either layout: this tool's
(`table`: configs/<kernel>/<device>.json, keyed by shape) or vLLM's and SGLang's (`vllm_table`:
E=128,N=384,device_name=NVIDIA_H200.json, keyed by the batch size). `best_config` answers the
parameters tuned for a shape, or for the nearest tuned one (each layout's own rule of nearness).

Like the two layouts' modules, this one needs nothing beyond the standard library.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

from pragma_ncu.search import vllm_table
from pragma_ncu.search.table import Dims, TableError, load_table, lookup, table_path


def best_config(table: Path | str, shape: Dims | str | int, *, kernel: str | None = None,
                device: str | None = None, dtype: str | None = None,
                block_shape: Sequence[int] | None = None,
                naming: vllm_table.Naming | None = None) -> dict[str, Any]:
    """The parameters tuned for `shape` (or the nearest tuned shape). `table` is a table file,
    or a folder of tables, which then needs the `device` (and the `kernel` for this layout's
    `configs/<kernel>/<device>.json`). A file, or a folder, in the vLLM or SGLang layout
    (`vllm_table`: `E=128,N=384,device_name=NVIDIA_H200.json`) is read as the engine reads it:
    `shape` is then the batch size, or the dims with the batch size among them; in a folder,
    the file is the one the engine loads for the device, `dtype` ("fp8_w8a8") and
    `block_shape` ((128, 128)), none of either meaning a file without it. `naming` gives the
    engine (by default the folder's: SGLang where it holds configs/triton_<X_Y_Z>/ folders),
    its Triton version and the map of its dim names to the shape's."""
    path = Path(table)
    naming = _naming(path, naming, dtype, block_shape)
    if path.is_dir():
        path = _in_folder(path, shape, kernel, device, naming)
    if vllm_table.DEVICE_PART in path.name:
        loaded = vllm_table.load(path)
        key, _ = vllm_table.nearest(loaded, vllm_table.batch_size(loaded, shape, naming))
        return dict(loaded.configs[key])
    tuned = load_table(path)
    if isinstance(shape, int):
        if len(tuned.dims) != 1:
            raise TableError(f"the table of {tuned.kernel} is keyed by {', '.join(tuned.dims)}: "
                             "give the shape's dims, not one size")
        shape = {tuned.dims[0]: shape}
    entry, _ = lookup(tuned, shape)
    return dict(entry.params)


def _naming(path: Path, naming: vllm_table.Naming | None, dtype: str | None,
            block_shape: Sequence[int] | None) -> vllm_table.Naming:
    """`naming` with the dtype and block shape asked; by default the engine a folder is laid
    out for."""
    if naming is None:
        naming = vllm_table.Naming(vllm_table.engine_of(path) if path.is_dir() else "vllm")
    shape = naming.block_shape if block_shape is None else \
        cast("tuple[int, int]", tuple(block_shape))  # two positive numbers: Naming checks
    return replace(naming, dtype=dtype if dtype is not None else naming.dtype,
                   block_shape=shape)


def _in_folder(root: Path, shape: Dims | str | int, kernel: str | None,
               device: str | None, naming: vllm_table.Naming) -> Path:
    """The file of a folder of tables: this layout's <kernel>/<device>.json, else the file
    the naming's engine loads for the device whose fixed dims `shape` matches."""
    if not device:
        raise TableError(f"{root} is a folder of tables: name the kernel and the device")
    own = table_path(root, kernel, device) if kernel else None
    if own is not None and own.is_file():
        return own
    try:
        return vllm_table.find(root, device, shape, naming)
    except TableError as exc:
        if own is None and not any(root.glob(f"*{vllm_table.DEVICE_PART}*")) \
                and not vllm_table.folders(root, replace(naming, engine="sglang")):
            raise TableError(f"{root} is a folder of tables: name the kernel and the "
                             "device") from None
        where = f"at {own}" if own is not None else f"for {kernel or 'the kernel'}"
        raise TableError(f"no tuned-config table {where} ({exc})") from None
