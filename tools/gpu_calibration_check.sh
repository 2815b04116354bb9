#!/usr/bin/env bash
# Per-GPU calibration (issue 29) on a machine of two GPUs or more, in one go, under 2 minutes:
#   bash tools/gpu_calibration_check.sh OUT
# 1. idle: autotune of 8 points of examples/multi/sgemm_space.cu (exhaustive, no optuna) at
#    M = N = K = 2048 with --gpus all. Before the search every GPU times the incumbent twice at
#    once (a slow tiling, BM=BN=32 TM=TN=2, so that one launch takes milliseconds, longer than
#    a time slice of a shared GPU): each GPU's figure, its ratio to the others' median, and
#    what the pool decided (on idle GPUs of one model: none excluded);
# 2. loaded: the same while a second process keeps GPU 1 busy (a spin kernel through cupy, so
#    the GPU is shared by time slices): GPU 1's figure against the others', and whether it was
#    excluded (then it measures no point, and the re-test runs elsewhere);
# 3. OUT/summary.md (tools/calibration_summary.py): each run's figures and decisions, and each
#    GPU's share of the points. Each run's OUT/<run>/results.json, stdout (OUT/<run>.txt) and
#    stderr (OUT/<run>.err, with the calibration line) stay in OUT.
# Needs no wheels (cupy is in the GPU machine's image). Exit 0 when both runs completed with a
# calibration and the idle one excluded no GPU.
set -uo pipefail
OUT=${1:?usage: tools/gpu_calibration_check.sh OUT}
mkdir -p "$OUT"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
export PRAGMA_NCU_CACHE=${PRAGMA_NCU_CACHE:-/tmp/pcache}
ARGS=(--kernel examples/multi/sgemm_space.cu --shape 2048 --strategy exhaustive --budget 8
      --top-k 2 --rounds 1 --gpus all
      --incumbent BM=32 --incumbent BN=32 --incumbent TM=2 --incumbent TN=2)
t0=$SECONDS

nvidia-smi -L | tee "$OUT/nvidia-smi.txt"
python3 -m pragma_ncu.pool.devices > "$OUT/devices.json"
gpu1=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["gpus"][1]["uuid"])' \
       < "$OUT/devices.json" 2>/dev/null) || { echo "needs two GPUs"; exit 2; }

run() {  # label, seconds at most
    local t=$SECONDS
    timeout "$2" python3 -m pragma_ncu autotune "${ARGS[@]}" --out "$OUT/$1" --no-cache \
        > "$OUT/$1.txt" 2> "$OUT/$1.err"
    echo "$1: exit $? in $((SECONDS - t)) s"
    grep -h "calibrat" "$OUT/$1.err"
}

busy() {  # keeps the GPU it sees busy for $1 seconds at most, launch after launch
    python3 - "$1" "$OUT/busy.ready" <<'EOF'
import sys, time
import cupy as cp
spin = cp.RawKernel(r'''
extern "C" __global__ void spin(float* x, long long cycles) {
    long long t0 = clock64(); float v = x[threadIdx.x];
    while (clock64() - t0 < cycles) v = v * 0.999999f + 1e-6f;
    x[threadIdx.x] = v;
}''', "spin")
x = cp.zeros(256, cp.float32)
sms = cp.cuda.Device().attributes["MultiProcessorCount"]
end = time.time() + float(sys.argv[1])
launches = 0
while time.time() < end:
    for _ in range(4):  # a few queued, so the GPU always has this process's work
        spin((sms * 8,), (256,), (x, cp.int64(4_000_000)))
    cp.cuda.Device().synchronize()
    launches += 4
    if launches == 4:
        open(sys.argv[2], "w").close()
print(f"busy: {launches} spin launches")
EOF
}

run idle 55
rm -f "$OUT/busy.ready"
CUDA_VISIBLE_DEVICES=$gpu1 busy 50 > "$OUT/busy.log" 2>&1 &
busy_pid=$!
for _ in $(seq 30); do [ -f "$OUT/busy.ready" ] && break; sleep 0.5; done
[ -f "$OUT/busy.ready" ] || { echo "the busy process did not start:"; cat "$OUT/busy.log"; }
run loaded 45
kill "$busy_pid" 2>/dev/null
wait "$busy_pid" 2>/dev/null
cat "$OUT/busy.log"
python3 tools/calibration_summary.py "$OUT" | tee "$OUT/summary.md"
status=${PIPESTATUS[0]}
echo "total $((SECONDS - t0)) s"
exit "$status"
