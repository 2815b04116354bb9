#!/usr/bin/env bash
# explain's estimates against reality (issue 27, acceptances 3 and 4), one device call:
#   bash tools/gpu_explain_check.sh OUT
# 1. builds examples/apps/pipeline.cu as BASE, BASE with each fix alone (-DFIX_NORM_SCALE,
#    -DFIX_SGEMM_SMALL, -DFIX_SILU_MUL: the kernels explain ranks first, second and fifth on the
#    recorded BASE, fixed the way its diagnosis says) and with all three, and many.cu;
# 2. checks the fixed kernels against the originals (`pipeline_fixed 1 check`);
# 3. times each build's whole application with CUDA events (`pipeline_X 10 time`: median of 5
#    after a warm-up pass);
# 4. records BASE and the all-fixed build under ncu's default set, clocks untouched
#    (`ncu --clock-control none -o ...`, as tools/record_apps.py does), and runs `explain` on
#    both .ncu-rep (through ncu_report, found in the ncu install as the code does everywhere);
# 5. records many.cu (5,000 launches) with tools/record_apps.py's collection and times
#    `explain` on that .ncu-rep (benchmarks/explain_scale.py: wall time and peak memory);
# then prints estimate against measured saving per fixed kernel (tools/explain_check_summary.py).
# Needs nvcc, ncu and the image's Python packages (numpy, click, tabulate, jinja2). About 5 to 6
# minutes on an H200; every step is bounded so that the whole stays under 8. Results:
# OUT/explain_{base,fixed}.json, OUT/explain_base.txt, OUT/events.txt, OUT/check.txt,
# OUT/many_scale.json, OUT/*.log, OUT/summary.md (the .ncu-rep files stay in OUT too).
set -uo pipefail
OUT=${1:?usage: tools/gpu_explain_check.sh OUT}
mkdir -p "$OUT/bin"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
export PRAGMA_NCU_CACHE=${PRAGMA_NCU_CACHE:-/tmp/pcache}
PN="python3 -m pragma_ncu"
BIN="$OUT/bin"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
git log -1 --format='%H %s' 2>/dev/null | cut -c1-100 | tee "$OUT/commit.txt"
date -u +%Y-%m-%d > "$OUT/date.txt"

build() {  # build NAME SOURCE [FLAGS...]
    local name=$1 source=$2
    shift 2
    timeout 240 nvcc -O3 -arch=sm_90 -lineinfo -std=c++17 -o "$BIN/$name" \
        "examples/apps/$source" "$@" > "$OUT/build_$name.log" 2>&1 || echo "build $name failed"
}
start=$SECONDS
build pipeline_base pipeline.cu &
build pipeline_fix_norm_scale pipeline.cu -DFIX_NORM_SCALE &
build pipeline_fix_sgemm_small pipeline.cu -DFIX_SGEMM_SMALL &
build pipeline_fix_silu_mul pipeline.cu -DFIX_SILU_MUL &
build pipeline_fixed pipeline.cu -DFIX_NORM_SCALE -DFIX_SGEMM_SMALL -DFIX_SILU_MUL &
build many_base many.cu &
wait
echo "builds: $((SECONDS - start)) s" | tee "$OUT/walls.txt"

timeout 60 "$BIN/pipeline_fixed" 1 check | tee "$OUT/check.txt"
for variant in base fix_norm_scale fix_sgemm_small fix_silu_mul fixed; do
    echo "$variant $(timeout 60 "$BIN/pipeline_$variant" 10 time)"
done | tee "$OUT/events.txt"

for side in base fixed; do
    start=$SECONDS
    timeout 200 ncu --clock-control none -f -o "$OUT/$side" "$BIN/pipeline_$side" 10 \
        > "$OUT/ncu_$side.log" 2>&1
    echo "ncu pipeline_$side: exit $? in $((SECONDS - start)) s" | tee -a "$OUT/walls.txt"
    start=$SECONDS
    timeout 120 $PN explain "$OUT/$side.ncu-rep" --format json > "$OUT/explain_$side.json" \
        2> "$OUT/explain_$side.log"
    echo "explain $side.ncu-rep --format json: exit $? in $((SECONDS - start)) s" \
        | tee -a "$OUT/walls.txt"
done
timeout 120 $PN explain "$OUT/base.ncu-rep" --source-dir examples/apps > "$OUT/explain_base.txt" \
    2>> "$OUT/explain_base.log"
head -n 30 "$OUT/explain_base.txt"

start=$SECONDS
timeout 200 ncu --clock-control none --metrics gpu__time_duration.sum --section LaunchStats \
    --section Occupancy -f -o "$OUT/many" "$BIN/many_base" 50 > "$OUT/ncu_many.log" 2>&1
echo "ncu many_base: exit $? in $((SECONDS - start)) s" | tee -a "$OUT/walls.txt"
timeout 150 python3 benchmarks/explain_scale.py "$OUT/many.ncu-rep" --repeat 2 \
    --out "$OUT/many_scale.json" 2> "$OUT/many_scale.log"

python3 tools/explain_check_summary.py "$OUT" | tee "$OUT/summary.md"
