"""Which GPUs a run uses (`--gpus all|N|0,2,...`) and how each worker is pinned to one.

The host's GPUs are counted in a child process (`python -m pragma_ncu.pool.devices`, which asks
the driver through cuda-bindings), or by `nvidia-smi -L` where that fails, so that this process
never creates a CUDA context. Ordinals follow the PCI bus order, as nvidia-smi numbers GPUs.
Each worker gets `CUDA_VISIBLE_DEVICES=<its GPU's UUID>`: it sees one device, its device 0, and
no device order can move it to another GPU.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pragma_ncu.infra.errors import NoGPUError
from pragma_ncu.pool.workers import Slot

Run = Callable[..., "subprocess.CompletedProcess[str]"]
QUERY_TIMEOUT_S = 60
_SMI_LINE = re.compile(r"^GPU (\d+): (.+?) \(UUID: ([^)]+)\)")


@dataclass(frozen=True)
class GpuInfo:
    ordinal: int
    name: str
    uuid: str  # "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6"


@dataclass(frozen=True)
class GpuSelection:
    """What `--gpus` asked for: every GPU, the first `count`, or these ordinals."""

    count: int | None = None  # None with no ordinals: all
    ordinals: tuple[int, ...] = ()

    @property
    def all(self) -> bool:
        return self.count is None and not self.ordinals

    @property
    def text(self) -> str:
        """As `--gpus` takes it: 'all', '2', '0,2', '3,' (`parse_gpus` reads it back)."""
        if self.ordinals:
            return ",".join(map(str, self.ordinals)) + ("," if len(self.ordinals) == 1 else "")
        return "all" if self.count is None else str(self.count)


def parse_gpus(text: str) -> GpuSelection:
    """'all', a count ('2'), or ordinals with commas ('0,2'; one GPU by ordinal: '3,')."""
    text = text.strip().lower()
    if text == "all":
        return GpuSelection()
    try:
        if "," in text:
            ordinals = tuple(int(p) for p in text.split(",") if p.strip())
            if not ordinals or min(ordinals) < 0 or len(set(ordinals)) != len(ordinals):
                raise ValueError
            return GpuSelection(ordinals=ordinals)
        count = int(text)
    except ValueError:
        raise ValueError(f"--gpus {text!r}: expected 'all', a count such as 2, or distinct "
                         "ordinals such as 0,2 (one GPU by ordinal: 3,)") from None
    if count < 1:
        raise ValueError(f"--gpus {count}: at least one GPU")
    return GpuSelection(count=count)


def select(selection: GpuSelection, gpus: Sequence[GpuInfo]) -> list[GpuInfo]:
    """The GPUs `selection` names among the host's; ValueError says what the host has."""
    have = ", ".join(f"{g.ordinal} ({g.name})" for g in gpus) or "none"
    if selection.all:
        return list(gpus)
    if selection.count is not None:
        if selection.count > len(gpus):
            raise ValueError(f"--gpus {selection.count}: this host has {len(gpus)} GPU(s): "
                             f"{have}")
        return list(gpus[:selection.count])
    by_ordinal = {g.ordinal: g for g in gpus}
    missing = [o for o in selection.ordinals if o not in by_ordinal]
    if missing:
        raise ValueError(f"--gpus: no GPU {', '.join(map(str, missing))} here; this host has "
                         f"{have}")
    return [by_ordinal[o] for o in selection.ordinals]


def gpu_slots(gpus: Sequence[GpuInfo], base_env: Mapping[str, str]) -> list[Slot]:
    """One worker slot per GPU, pinned by UUID (ordinal where the UUID is unknown)."""
    return [Slot(f"gpu{g.ordinal}", tuple(pin_env(g, base_env).items()), g.uuid) for g in gpus]


def pin_env(gpu: GpuInfo, base_env: Mapping[str, str]) -> dict[str, str]:
    return {**base_env, "CUDA_VISIBLE_DEVICES": gpu.uuid or str(gpu.ordinal),
            "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}


def list_gpus(python: str, env: Mapping[str, str], run: Run = subprocess.run) -> list[GpuInfo]:
    """The host's GPUs, asked of the driver in a child process, else of nvidia-smi."""
    reasons = []
    child_env = {**env, "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
    try:
        proc = run([python, "-m", "pragma_ncu.pool.devices"], capture_output=True, text=True,
                   timeout=QUERY_TIMEOUT_S, env=child_env)
        data = json.loads(proc.stdout or "{}")
        if data.get("gpus"):
            return [GpuInfo(int(g["ordinal"]), g["name"], g["uuid"]) for g in data["gpus"]]
        reasons.append(data.get("error") or (proc.stderr or "").strip()[-300:]
                       or "no GPU reported")
    except (OSError, subprocess.TimeoutExpired, ValueError) as exc:
        reasons.append(f"driver query: {exc}")
    try:
        smi = run(["nvidia-smi", "-L"], capture_output=True, text=True,
                  timeout=QUERY_TIMEOUT_S)
        found = parse_smi(smi.stdout)
        if found:
            return visible(found, env.get("CUDA_VISIBLE_DEVICES"))
        reasons.append(f"nvidia-smi -L: {(smi.stdout + smi.stderr).strip()[:200] or 'nothing'}")
    except (OSError, subprocess.TimeoutExpired) as exc:
        reasons.append(f"nvidia-smi: {exc}")
    raise NoGPUError("; ".join(reasons))


def parse_smi(text: str) -> list[GpuInfo]:
    """`nvidia-smi -L` lines: 'GPU 0: NVIDIA H200 (UUID: GPU-...)'."""
    out = []
    for line in text.splitlines():
        m = _SMI_LINE.match(line.strip())
        if m:
            out.append(GpuInfo(int(m.group(1)), m.group(2), m.group(3)))
    return out


def visible(gpus: list[GpuInfo], cuda_visible: str | None) -> list[GpuInfo]:
    """nvidia-smi ignores CUDA_VISIBLE_DEVICES: keep the GPUs it names (ordinals or UUIDs),
    renumbered as CUDA numbers them."""
    if cuda_visible is None or not cuda_visible.strip():
        return gpus
    kept = []
    for item in (p.strip() for p in cuda_visible.split(",")):
        match = [g for g in gpus if (item.isdigit() and g.ordinal == int(item))
                 or (not item.isdigit() and g.uuid.startswith(item))]
        if not match:
            break  # CUDA stops at the first entry it cannot resolve
        kept.append(match[0])
    return [GpuInfo(i, g.name, g.uuid) for i, g in enumerate(kept)]


def _uuid_text(raw: bytes) -> str:
    h = raw.hex()
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def _query() -> dict[str, Any]:
    """The GPUs the driver sees (runs in the child process)."""
    try:
        from cuda.bindings import driver

        def ok(result: Any) -> Any:
            err, *rest = result if isinstance(result, tuple) else (result,)
            if err != driver.CUresult.CUDA_SUCCESS:
                raise RuntimeError(f"{driver.cuGetErrorName(err)[1]!r}")
            return rest[0] if len(rest) == 1 else rest

        ok(driver.cuInit(0))
        gpus = []
        for i in range(int(ok(driver.cuDeviceGetCount()))):
            dev = ok(driver.cuDeviceGet(i))
            name = ok(driver.cuDeviceGetName(256, dev))
            uuid = ok(driver.cuDeviceGetUuid(dev))
            gpus.append({"ordinal": i, "name": name.split(b"\0")[0].decode(),
                         "uuid": _uuid_text(bytes(uuid.bytes))})
        return {"gpus": gpus}
    except Exception as exc:  # reported to the parent, which falls back to nvidia-smi
        return {"gpus": [], "error": f"{type(exc).__name__}: {exc}"}


if __name__ == "__main__":
    sys.stdout.write(json.dumps(_query()) + "\n")
