"""A config table read back as an application reads it, in either layout: this tool's
(`table`: configs/<kernel>/<device>.json, keyed by shape) or vLLM's (`vllm_table`:
E=128,N=384,device_name=NVIDIA_H200.json, keyed by the batch size). `best_config` answers the
parameters tuned for a shape, or for the nearest tuned one (each layout's own rule of nearness).

Like the two layouts' modules, this one needs nothing beyond the standard library.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pragma_ncu.search import vllm_table
from pragma_ncu.search.table import Dims, TableError, load_table, lookup, table_path


def best_config(table: Path | str, shape: Dims | str | int, *, kernel: str | None = None,
                device: str | None = None) -> dict[str, Any]:
    """The parameters tuned for `shape` (or the nearest tuned shape). `table` is a table file,
    or a folder of tables, which then needs the `device` (and the `kernel` for this layout's
    `configs/<kernel>/<device>.json`). A file, or a folder, in the vLLM layout
    (`vllm_table`: `E=128,N=384,device_name=NVIDIA_H200.json`) is read as vLLM reads it:
    `shape` is then the batch size, or the dims with the batch size among them."""
    path = Path(table)
    if path.is_dir():
        path = _in_folder(path, shape, kernel, device)
    if vllm_table.DEVICE_PART in path.name:
        loaded = vllm_table.load(path)
        key, _ = vllm_table.nearest(loaded, vllm_table.batch_size(loaded, shape))
        return dict(loaded.configs[key])
    tuned = load_table(path)
    if isinstance(shape, int):
        if len(tuned.dims) != 1:
            raise TableError(f"the table of {tuned.kernel} is keyed by {', '.join(tuned.dims)}: "
                             "give the shape's dims, not one size")
        shape = {tuned.dims[0]: shape}
    entry, _ = lookup(tuned, shape)
    return dict(entry.params)


def _in_folder(root: Path, shape: Dims | str | int, kernel: str | None,
               device: str | None) -> Path:
    """The file of a folder of tables: this layout's <kernel>/<device>.json, else the vLLM
    layout's file for the device whose fixed dims `shape` matches."""
    if not device:
        raise TableError(f"{root} is a folder of tables: name the kernel and the device")
    own = table_path(root, kernel, device) if kernel else None
    if own is not None and own.is_file():
        return own
    try:
        return vllm_table.find(root, device, shape)
    except TableError as exc:
        if own is None and not any(root.glob(f"*{vllm_table.DEVICE_PART}*")):
            raise TableError(f"{root} is a folder of tables: name the kernel and the "
                             "device") from None
        where = f"at {own}" if own is not None else f"for {kernel or 'the kernel'}"
        raise TableError(f"no tuned-config table {where} ({exc})") from None
