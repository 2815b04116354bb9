#!/usr/bin/env bash
# Tuning on two GPUs at once (issue 19), on nvidia-h200-x2, in one go (about 5 minutes):
#   bash tools/gpu_multi_check.sh OUT
# 0. the GPUs as the pool sees them, and the space of examples/multi/sgemm_space.cu on sm_90:
#    tools/space_counts.py compiles every one of its 574 points, so both runs below find the
#    compile cache warm and compare measurement throughput, not compile time;
# 1. autotune of that space at M = N = K = 2048 (exhaustive: no sampler noise, no optuna
#    needed) with --gpus 1, then --gpus 2: points per second and the winner of each;
# 2. --gpus 2 again, GPU 1's worker killed with SIGKILL a third of the way into the search:
#    the run must complete with every point measured once and none lost to the kill;
# 3. the GPU test of the pool (tests/gpu/test_gpu_pool.py: each worker opens its own GPU);
# 4. OUT/summary.md (tools/multi_summary.py) and each run's results.json, stdout and stderr.
# Needs no wheels. Exit 0 when every check holds.
set -uo pipefail
OUT=${1:?usage: tools/gpu_multi_check.sh OUT}
mkdir -p "$OUT"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
export PRAGMA_NCU_CACHE=${PRAGMA_NCU_CACHE:-/tmp/pcache}
KERNEL=examples/multi/sgemm_space.cu
ARGS=(--kernel "$KERNEL" --shape 2048 --strategy exhaustive --budget 1000)
t0=$SECONDS

nvidia-smi -L | tee "$OUT/nvidia-smi.txt"
python3 -m pragma_ncu.pool.devices | tee "$OUT/devices.json"
python3 tools/space_counts.py --kernel "$KERNEL" --json | tee "$OUT/space.json"

run() {  # label gpus
    local t=$SECONDS
    timeout 420 python3 -m pragma_ncu autotune "${ARGS[@]}" --gpus "$2" --out "$OUT/$1" --no-cache \
        > "$OUT/$1.txt" 2> "$OUT/$1.err"
    echo "$1 (--gpus $2): exit $? in $((SECONDS - t)) s"
}

gpu1_uuid() {  # the UUID the pool pins GPU 1's worker to
    python3 -c 'import json, sys; print(json.load(sys.stdin)["gpus"][1]["uuid"])' \
        < "$OUT/devices.json" 2>/dev/null \
        || sed -n '2s/.*UUID: \([^)]*\)).*/\1/p' "$OUT/nvidia-smi.txt"
}

kill_gpu1_worker() {  # after the search has run for $1 seconds
    local uuid pid
    uuid=$(gpu1_uuid)
    for _ in $(seq 180); do grep -q "searching" "$OUT/kill.err" 2>/dev/null && break; sleep 1; done
    sleep "$1"
    for pid in $(pgrep -f "pragma_ncu.worker"); do
        if tr '\0' '\n' < "/proc/$pid/environ" 2>/dev/null \
                | grep -qx "CUDA_VISIBLE_DEVICES=$uuid"; then
            kill -9 "$pid" && echo "killed pid $pid (GPU 1's worker, $uuid) at $(date +%T)"
        fi
    done
}

run gpus1 1
run gpus2 2
search_s=$(python3 -c 'import json, sys; print(max(3, int(json.load(open(sys.argv[1]))["stats"]["search_s"] / 3)))' \
    "$OUT/gpus2/results.json" 2>/dev/null || echo 15)
kill_gpu1_worker "$search_s" > "$OUT/kill.log" 2>&1 &
killer=$!
run kill 2
wait "$killer"
cat "$OUT/kill.log"
grep -h "died\|dropped" "$OUT/kill.err" | head -5
python3 -m pytest -q -p no:cacheprovider tests/gpu/test_gpu_pool.py > "$OUT/pytest.log" 2>&1
tests=$?
tail -3 "$OUT/pytest.log"
python3 tools/multi_summary.py "$OUT" | tee "$OUT/summary.md"
status=${PIPESTATUS[0]}
[ "$tests" -eq 0 ] || status=1
echo "total $((SECONDS - t0)) s"
exit "$status"
