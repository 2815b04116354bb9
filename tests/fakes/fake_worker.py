"""A stand-in worker that speaks the real protocol without a GPU.

What it does for an `evaluate` request depends on the candidate's symbol:
  ok -> a verified measurement; hang -> sleeps forever; crash -> exits with code 7 after
  writing to stderr; fatal -> an illegal-address answer with fatal=true, then exits;
  garbage -> a non-JSON line; print -> writes junk to fd 1 first (must not reach the parent)
  then answers ok. `--no-gpu` makes hello fail like a machine without a driver. A `launch`
  request (the profiled launch under ncu) behaves the same way by its candidate's symbol.

As one GPU of many (the worker pool's tests), it reads its environment:
  CUDA_VISIBLE_DEVICES -> its UUID (the pin); FAKE_GPU_NAME -> its model;
  FAKE_GPU_SPEED -> a factor on every time; FAKE_GPU_DELAY -> seconds each evaluate takes;
  FAKE_GPU_LOG -> a file it appends "<uuid> <seeds>" to for every evaluate;
  FAKE_GPU_DIE_AT=N:MARKER -> at its N-th evaluate it kills itself (SIGKILL, as a user or the
  OOM killer would), once: MARKER is created so that its replacement does not;
  FAKE_GPU_HANG_AT=N:MARKER -> the same, but it hangs; FAKE_GPU_BROKEN=1 -> every evaluate
  kills it (a GPU that keeps failing).
A task param COST (µs) sets the measured median time (times FAKE_GPU_SPEED).
"""

import json
import os
import signal
import sys
import time


def measurement(req):
    cost = float(req["task"].get("params", {}).get("COST", 10.0))
    t = cost * float(os.environ.get("FAKE_GPU_SPEED", "1"))
    return {"status": "ok", "shape": req["task"]["shape_name"], "message": "",
            "checks": [{"phase": "verify", "seed": 1, "status": "ok", "outputs": [],
                        "guard_violations": [], "mutated_inputs": [], "message": ""}],
            "timing": {"median_us": t, "mean_us": t * 1.01, "min_us": t * 0.99,
                       "max_us": t * 1.05, "p10_us": t * 0.995, "p90_us": t * 1.03,
                       "iqr_us": t * 0.01, "stdev_us": t * 0.01,
                       "reps": 50, "mode": "events", "launches_per_sample": 1},
            "bytes_moved": req["task"]["bytes_moved"], "flops": None,
            "active_blocks_per_sm": 8, "occupancy": 1.0, "copy_us": 9.0, "seconds": 0.01,
            "reference_seconds": 0.0, "extra": {}}


DEVICE = {"name": os.environ.get("FAKE_GPU_NAME", "Fake GPU"),
          "uuid": os.environ.get("CUDA_VISIBLE_DEVICES", "fake-uuid"),
          "compute_capability": "9.0", "arch": "sm_90",
          "sm_count": 132, "l2_bytes": 50 << 20, "memory_bytes": 80 << 30,
          "max_threads_per_block": 1024, "max_threads_per_sm": 2048, "max_blocks_per_sm": 32,
          "max_registers_per_sm": 65536, "max_registers_per_block": 65536,
          "max_shared_per_block": 49152, "max_shared_per_block_optin": 232448,
          "max_shared_per_sm": 233472, "clock_khz": 1980000, "memory_clock_khz": 2619000,
          "memory_bus_bits": 5120, "driver_version": 13000}


def once(variable, count):
    """True when `variable` (N:MARKER) says this is the N-th evaluate and MARKER is not there
    yet (it is created now)."""
    spec = os.environ.get(variable)
    if not spec:
        return False
    n, marker = spec.split(":", 1)
    if count != int(n) or os.path.exists(marker):
        return False
    open(marker, "w").close()
    return True


def as_pool_gpu(msg, count):
    """What the environment asks of this evaluate, as one GPU of a pool."""
    log = os.environ.get("FAKE_GPU_LOG")
    if log:
        with open(log, "a") as fh:
            fh.write(f"{DEVICE['uuid']} {','.join(map(str, msg['check']['seeds']))}\n")
    if os.environ.get("FAKE_GPU_BROKEN") or once("FAKE_GPU_DIE_AT", count):
        os.kill(os.getpid(), signal.SIGKILL)
    if once("FAKE_GPU_HANG_AT", count):
        time.sleep(3600)
    time.sleep(float(os.environ.get("FAKE_GPU_DELAY", "0")))


def main():
    channel = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    no_gpu = "--no-gpu" in sys.argv or bool(os.environ.get("FAKE_GPU_NO_START"))
    evaluates = 0
    for line in sys.stdin.buffer:
        msg = json.loads(line)
        op = msg["op"]
        if op == "exit":
            return 0
        if op == "hello":
            answer = ({"ok": False, "kind": "no_gpu", "error": "CUDA_ERROR_NO_DEVICE"} if no_gpu
                      else {"ok": True, "device": DEVICE})
        elif op == "ceiling":
            answer = {"ok": True, "ceiling": {"gbps": 4000.0, "method": "fake copy",
                                              "methods": {"fake copy": 4000.0}, "bytes": 1}}
        else:
            req = msg["request"] if op == "launch" else msg
            if op == "evaluate":
                evaluates += 1
                as_pool_gpu(msg, evaluates)
            mode = req["candidate"]["symbol"]
            if mode == "hang":
                time.sleep(3600)
            if mode == "crash":
                sys.stderr.write("Segmentation fault in fake kernel\n")
                sys.stderr.flush()
                os._exit(7)
            if mode == "garbage":
                channel.write(b"this is not json\n")
                continue
            if mode == "print":
                os.write(1, b"{\"ok\": false, \"junk\": 1}\n")
            if mode == "fatal":
                channel.write((json.dumps({"ok": False, "kind": "cuda", "fatal": True,
                                           "error": "CUDA_ERROR_ILLEGAL_ADDRESS"}) + "\n").encode())
                return 3
            answer = ({"ok": True, "launches": msg.get("warmup", 0) + 1} if op == "launch"
                      else {"ok": True, "measurement": measurement(msg)})
        channel.write((json.dumps(answer) + "\n").encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
