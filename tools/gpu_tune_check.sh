#!/usr/bin/env bash
# The tuner's checks on a GPU machine, in one go (issue 5):
#   bash tools/gpu_tune_check.sh OUT
# 1. autotune each templated example at the three LLaMA shapes (the odd shape verified only);
#    silu_and_mul three times, to see that repeated runs agree;
# 2. the pragma-ncu side of the Kernel Tuner comparison (72 points, one shape, cold cache);
# 3. the GPU test tier of the tuner.
# Needs the wheels in .whl/ (optuna). Results: OUT/tune/<kernel>[-runN]/, OUT/bench_pragma.json,
# OUT/summary.md, OUT/*.log.
set -uo pipefail
OUT=${1:?usage: tools/gpu_tune_check.sh OUT}
mkdir -p "$OUT/tune"
bash tools/install_wheels.sh /tmp/site > "$OUT/wheels.log" 2>&1 || { cat "$OUT/wheels.log"; exit 1; }
export PYTHONPATH=/tmp/site:$PWD PRAGMA_NCU_CACHE=${PRAGMA_NCU_CACHE:-/tmp/pcache} PYTHONUNBUFFERED=1
SHAPES=(--shape llama-7b --shape llama-13b --shape llama-70b)
tune() {  # name kernel-file run-label
    local dir="$OUT/tune/$3"
    local t0=$SECONDS
    python3 -m pragma_ncu autotune --kernel "examples/templated/$2" "${SHAPES[@]}" \
        --out "$dir" --no-cache > "$OUT/tune/$3.txt" 2> "$OUT/tune/$3.err"
    echo "$3: exit $? in $((SECONDS - t0)) s"
}
tune silu_and_mul silu_and_mul.cu silu_and_mul
tune fused_add_rmsnorm fused_add_rmsnorm.cu.j2 fused_add_rmsnorm
tune merge_attn_states_lse merge_attn_states_lse.cu merge_attn_states_lse
tune silu_and_mul silu_and_mul.cu silu_and_mul-run2
tune silu_and_mul silu_and_mul.cu silu_and_mul-run3
python3 tools/tune_summary.py "$OUT"/tune/silu_and_mul "$OUT"/tune/fused_add_rmsnorm \
    "$OUT"/tune/merge_attn_states_lse | tee "$OUT/summary.md"
echo "repeats:"
python3 tools/tune_summary.py "$OUT"/tune/silu_and_mul* | grep general | tee "$OUT/repeats.md"
python3 benchmarks/compare_kernel_tuner.py --side pragma --out "$OUT/bench_pragma.json" \
    > "$OUT/bench_pragma.log" 2>&1
tail -5 "$OUT/bench_pragma.log"
python3 -m pytest -q -p no:cacheprovider tests/gpu/test_gpu_tuner.py > "$OUT/pytest.log" 2>&1
tail -3 "$OUT/pytest.log"
