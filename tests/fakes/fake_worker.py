"""A stand-in worker that speaks the real protocol without a GPU.

What it does for an `evaluate` request depends on the candidate's symbol:
  ok -> a verified measurement; hang -> sleeps forever; crash -> exits with code 7 after
  writing to stderr; fatal -> an illegal-address answer with fatal=true, then exits;
  garbage -> a non-JSON line; print -> writes junk to fd 1 first (must not reach the parent)
  then answers ok. `--no-gpu` makes hello fail like a machine without a driver. A `launch`
  request (the profiled launch under ncu) behaves the same way by its candidate's symbol.
"""

import json
import os
import sys
import time


def measurement(req):
    return {"status": "ok", "shape": req["task"]["shape_name"], "message": "",
            "checks": [{"phase": "verify", "seed": 1, "status": "ok", "outputs": [],
                        "guard_violations": [], "mutated_inputs": [], "message": ""}],
            "timing": {"median_us": 10.0, "mean_us": 10.1, "min_us": 9.9, "max_us": 10.5,
                       "p10_us": 9.95, "p90_us": 10.3, "iqr_us": 0.1, "stdev_us": 0.1,
                       "reps": 50, "mode": "events", "launches_per_sample": 1},
            "bytes_moved": req["task"]["bytes_moved"], "flops": None,
            "active_blocks_per_sm": 8, "occupancy": 1.0, "copy_us": 9.0, "seconds": 0.01,
            "reference_seconds": 0.0, "extra": {}}


DEVICE = {"name": "Fake GPU", "uuid": "fake-uuid", "compute_capability": "9.0", "arch": "sm_90",
          "sm_count": 132, "l2_bytes": 50 << 20, "memory_bytes": 80 << 30,
          "max_threads_per_block": 1024, "max_threads_per_sm": 2048, "max_blocks_per_sm": 32,
          "max_registers_per_sm": 65536, "max_registers_per_block": 65536,
          "max_shared_per_block": 49152, "max_shared_per_block_optin": 232448,
          "max_shared_per_sm": 233472, "clock_khz": 1980000, "memory_clock_khz": 2619000,
          "memory_bus_bits": 5120, "driver_version": 13000}


def main():
    channel = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    no_gpu = "--no-gpu" in sys.argv
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
