"""The same workers as Ray actors, one GPU (or one CPU) each, anywhere in a Ray cluster.

Ray is an optional extra (`pip install "pragma-ncu[ray]"`): it places the actors and carries
their calls; nothing here schedules or speaks a wire protocol of its own.

- Each actor (`WorkerActor`) runs the ordinary worker process (`python -m pragma_ncu.worker`)
  through a `Runner` on its node, so a kernel that crashes or hangs kills that process only: the
  actor answers `worker_crash` or `timeout` and starts a new worker at the next request, as on
  one host. Ray gives an actor with `num_gpus=1` one GPU through `CUDA_VISIBLE_DEVICES`, which
  the worker process inherits.
- Compiles stay on the driver, in its cache: the pruning by registers and shared memory needs
  ptxas's report before a point is sent anywhere, and the nodes need no CUDA toolkit or
  compiler. The built files (cubins, shared objects, the harness, a NumPy reference file) travel
  with the requests, each once per actor, and are staged on the node by content hash.
- An actor that dies (its node lost, or Ray killed it) is a `worker_crash` of the point it held;
  the next request creates a new actor, wherever Ray finds room.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from pragma_ncu.infra.errors import NoGPUError, PragmaError
from pragma_ncu.infra.settings import omp_threads, process_environment
from pragma_ncu.measure.measurement import Measurement, Status
from pragma_ncu.pool.runner import HELLO_TIMEOUT_S, Runner, WorkerDied
from pragma_ncu.pool.workers import PoolError, Slot
from pragma_ncu.worker.protocol import EvalRequest, eval_request_from_dict

log = logging.getLogger(__name__)

INSTALL = 'pip install "pragma-ncu[ray]"'
STAGE = "@stage@"  # stands for the actor's staging folder in shipped paths
MARGIN_S = 60.0  # beyond a request's own timeout, before the actor itself is given up
_FILE_KEYS = ("harness", "peaks", "cubin")


def connect(address: str, cpus: int | None = None) -> Any:
    """The `ray` module, connected: 'local' starts a private cluster on this host (`cpus`
    CPUs), 'auto' joins the cluster this host belongs to, anything else is its address."""
    try:
        import ray
    except ImportError:
        raise PoolError(f"--ray needs Ray, an optional extra: {INSTALL}") from None
    if ray.is_initialized():
        return ray
    try:
        if address == "local":
            ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise PoolError(f"no Ray cluster at {address!r} ({exc}). Start one with `ray start "
                        "--head` on one node and `ray start --address=HEAD:6379` on the "
                        "others, or use --ray local for a cluster of this host alone") from None
    return ray


def ray_slots(ray: Any, kind: str, count: int | None) -> list[Slot]:
    """`count` actor slots of one GPU (kind "gpu") or one CPU ("cpu") each; None: as many as
    the cluster has GPUs."""
    resource = "GPU" if kind == "gpu" else "CPU"
    have = int(ray.cluster_resources().get(resource, 0))
    wanted = have if count is None else count
    if wanted < 1 or wanted > have:
        raise PoolError(f"the Ray cluster has {have} {resource}(s); {wanted} worker(s) of one "
                        f"{resource} each cannot be placed")
    return [Slot(f"{kind}{i}") for i in range(wanted)]


class WorkerActor:
    """Runs on a node (as a Ray actor): one worker process, and the files shipped to it."""

    def __init__(self, timeout_s: float, omp_threads: str | None,
                 worker_args: tuple[str, ...]) -> None:
        # the worker's command after the interpreter (its target's), on the node's Python
        command = [sys.executable, *worker_args]
        env = process_environment()
        env.pop("OMP_NUM_THREADS", None)  # Ray sets it to the actor's CPUs; the driver's rules
        if omp_threads is not None:
            env["OMP_NUM_THREADS"] = omp_threads
        # the worker imports pragma_ncu from wherever this actor did (an install, a checkout)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        self.runner = Runner(command, timeout_s=timeout_s, env=env, describe=lambda d: d)
        self.stage = Path(tempfile.mkdtemp(prefix="pragma-ncu-ray-"))

    def hello(self) -> dict[str, Any]:
        try:
            return {"device": self.runner.hello(), "host": socket.gethostname()}
        except PragmaError as exc:
            return {"error": str(exc)}

    def evaluate(self, message: dict[str, Any], files: dict[str, bytes],
                 timeout_s: float | None) -> dict[str, Any]:
        self._unpack(files)
        req = eval_request_from_dict(localize(message, str(self.stage)))
        try:
            return self.runner.evaluate(req, timeout_s).to_json()
        except PragmaError as exc:  # a new worker could not start: the driver's NoGPUError
            return {"no_worker": str(exc)}

    def call(self, message: dict[str, Any], files: dict[str, bytes],
             timeout_s: float | None) -> dict[str, Any]:
        self._unpack(files)
        try:
            return self.runner.call(localize(message, str(self.stage)), timeout_s)
        except WorkerDied as exc:
            return {"ok": False, "died": exc.status.value, "error": str(exc)}
        except PragmaError as exc:
            return {"no_worker": str(exc)}

    def close(self) -> None:
        self.runner.close()
        shutil.rmtree(self.stage, ignore_errors=True)

    def _unpack(self, files: dict[str, bytes]) -> None:
        for name, data in files.items():
            path = self.stage / name
            if not path.is_file():
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_name(path.name + ".tmp")
                tmp.write_bytes(data)
                tmp.replace(path)


def localize(message: Any, stage: str) -> Any:
    """`message` with the staging placeholder replaced by this node's folder."""
    if isinstance(message, dict):
        return {k: localize(v, stage) for k, v in message.items()}
    if isinstance(message, list):
        return [localize(v, stage) for v in message]
    if isinstance(message, str) and message.startswith(STAGE):
        return stage + message[len(STAGE):]
    return message


class Shipper:
    """Rewrites a request's file paths to staged names and collects the files an actor does not
    hold yet (each file read once from the driver's disk)."""

    def __init__(self) -> None:
        self._read: dict[tuple[str, int, int], tuple[str, bytes]] = {}
        self.sent: set[str] = set()  # staged names the current actor holds

    def pack(self, message: dict[str, Any]) -> tuple[dict[str, Any], dict[str, bytes]]:
        files: dict[str, bytes] = {}
        packed = self._walk(message, files)
        ref = packed.get("reference")
        if isinstance(ref, dict) and ref.get("kind") == "numpy":
            packed["reference"] = self._numpy_reference(ref, files)
        return packed, files

    def _walk(self, value: Any, files: dict[str, bytes]) -> Any:
        if isinstance(value, dict):
            return {k: (self._file(v, files) if k in _FILE_KEYS and isinstance(v, str)
                        else self._walk(v, files)) for k, v in value.items()}
        if isinstance(value, list):
            return [self._walk(v, files) for v in value]
        return value

    def _numpy_reference(self, ref: dict[str, Any], files: dict[str, bytes]) -> dict[str, Any]:
        """'file.py:func' travels as a file; 'module:func' must be importable on the node."""
        target = str(ref.get("function") or "").split(":")[0]
        if not target.endswith(".py"):
            return ref
        staged = self._file(str(Path(ref.get("base_dir") or ".") / target), files)
        if not staged.startswith(STAGE):
            return ref
        return {**ref, "base_dir": staged.rsplit("/", 1)[0]}

    def _file(self, path: str, files: dict[str, bytes]) -> str:
        """The staged name of `path` (shipped if the actor lacks it); `path` itself when it
        is not a file here (left for the node to resolve)."""
        try:
            st = os.stat(path)
        except OSError:
            return path
        key = (path, st.st_mtime_ns, st.st_size)
        if key not in self._read:
            data = Path(path).read_bytes()
            digest = hashlib.sha256(data).hexdigest()[:24]
            self._read[key] = (f"{digest}/{Path(path).name}", data)
        name, data = self._read[key]
        if name not in self.sent:
            files[name] = data
            self.sent.add(name)
        return f"{STAGE}/{name}"


class RayRunner:
    """A `Runner` whose worker runs in a Ray actor: the pool's lanes use either alike."""

    def __init__(self, ray: Any, slot: Slot, *, cpu: bool, timeout_s: float,
                 describe: Callable[[dict[str, Any]], Any],
                 worker_args: tuple[str, ...]) -> None:
        self.ray, self.slot, self.cpu, self.timeout_s = ray, slot, cpu, timeout_s
        self.describe, self.worker_args = describe, worker_args
        self.device: Any = None
        self.host = ""
        self.starts = 0
        self._actor: Any = None
        self._shipper = Shipper()
        self._cls = ray.remote(WorkerActor)

    @property
    def restarts(self) -> int:
        return max(0, self.starts - 1)

    def _ensure(self) -> Any:
        if self._actor is not None:
            return self._actor
        need = {"num_cpus": 1, "num_gpus": 0} if self.cpu else {"num_cpus": 0, "num_gpus": 1}
        log.info("%s the Ray actor of %s", "restarting" if self.starts else "starting",
                 self.slot.label)
        actor = self._cls.options(**need).remote(self.timeout_s,
                                                 omp_threads(),
                                                 self.worker_args)
        try:
            answer = self.ray.get(actor.hello.remote(), timeout=HELLO_TIMEOUT_S)
        except Exception as exc:  # placement timed out, or the actor failed to start
            self.ray.kill(actor)
            raise NoGPUError(f"no Ray actor for {self.slot.label} started within "
                             f"{HELLO_TIMEOUT_S:.0f} s ({type(exc).__name__}: {exc})") from None
        if "error" in answer:
            self.ray.kill(actor)
            raise NoGPUError(answer["error"])
        self._actor, self.starts = actor, self.starts + 1
        self.device, self.host = self.describe(answer["device"]), answer.get("host", "")
        self._shipper.sent.clear()
        return actor

    def hello(self) -> Any:
        self._ensure()
        return self.device

    def evaluate(self, req: EvalRequest, timeout_s: float | None = None) -> Measurement:
        """Verify and time one candidate on the actor's node; a lost actor is a status."""
        base = Measurement(status=Status.OK, shape=req.task.shape_name,
                           bytes_moved=req.task.bytes_moved, flops=req.task.flops)
        try:
            answer = self._remote("evaluate", req.to_message(), timeout_s)
        except WorkerDied as exc:
            return replace(base, status=exc.status, message=str(exc))
        return Measurement.from_json(answer)

    def _checked(self, answer: dict[str, Any]) -> dict[str, Any]:
        """The actor's answer, or the NoGPUError of a worker that could not start there."""
        if "no_worker" in answer:
            self._lose()
            raise NoGPUError(answer["no_worker"])
        return answer

    def call(self, message: dict[str, Any], timeout_s: float | None = None) -> dict[str, Any]:
        answer: dict[str, Any] = self._remote("call", message, timeout_s)
        if "died" in answer:
            raise WorkerDied(Status(answer["died"]), str(answer.get("error")))
        return answer

    def _remote(self, method: str, message: dict[str, Any], timeout_s: float | None) -> Any:
        actor = self._ensure()
        packed, files = self._shipper.pack(message)
        wait = (timeout_s or self.timeout_s) + MARGIN_S
        try:
            answer = self.ray.get(getattr(actor, method).remote(packed, files, timeout_s),
                                  timeout=wait)
        except self.ray.exceptions.GetTimeoutError:
            log.info("the Ray actor of %s gave no answer within %.0f s", self.slot.label, wait)
            self._lose()
            raise WorkerDied(Status.TIMEOUT, f"the Ray actor of {self.slot.label} gave no "
                             f"answer within {wait:.0f} s: killed") from None
        except self.ray.exceptions.RayActorError as exc:
            log.info("the Ray actor of %s died: %s", self.slot.label, _first_line(exc))
            self._lose()
            raise WorkerDied(Status.WORKER_CRASH, f"the Ray actor of {self.slot.label} died: "
                             f"{_first_line(exc)}") from None
        return self._checked(answer)

    def _lose(self) -> None:
        if self._actor is not None:
            with contextlib.suppress(Exception):  # already gone with its node
                self.ray.kill(self._actor)
        self._actor = None

    def close(self, wait_s: float = 5.0) -> None:
        if self._actor is None:
            return
        with contextlib.suppress(Exception):  # a dead or stuck actor is killed all the same
            self.ray.get(self._actor.close.remote(), timeout=wait_s)
        self._lose()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:300] if text else type(exc).__name__
