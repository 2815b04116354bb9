#!/usr/bin/env bash
# Acceptance 3 of the architecture redesign (issue 17) on a GPU machine, one device call:
#   bash tools/gpu_redesign_check.sh OUT
# 1. the README's first command, `pragma-ncu tune --kernel examples/templated/silu_and_mul.cu`
#    (its own defaults; only --store, --format json and --no-llm added, none of which changes a
#    measurement);
# 2. `autotune` of the three templated examples at the three LLaMA shapes (the odd shape
#    verified only), exhaustive (72, 40 and 96 points), as in docs/tuner.md;
# then a short table beside the H200 figures of docs/tune.md and docs/tuner.md.
# Needs nvcc, ncu and the image's Python packages (numpy, click, tabulate, jinja2, cuda-core);
# no optuna, openai, ray or tree-sitter. About 4 to 5 minutes on an H200; every step is bounded
# so that the whole stays under 8. Results: OUT/readme_tune.json, OUT/autotune/<kernel>/,
# OUT/*.log, OUT/summary.md.
set -uo pipefail
OUT=${1:?usage: tools/gpu_redesign_check.sh OUT}
mkdir -p "$OUT/autotune"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
export PRAGMA_NCU_CACHE=${PRAGMA_NCU_CACHE:-/tmp/pcache}
unset PRAGMA_NCU_LLM_BASE_URL PRAGMA_NCU_LLM_MODEL
PN="python3 -m pragma_ncu"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
git log -1 --format='%H %s' 2>/dev/null | cut -c1-100 | tee "$OUT/commit.txt"

start=$SECONDS
timeout 200 $PN tune --kernel examples/templated/silu_and_mul.cu --store "$OUT/runs.sqlite" \
    --format json --no-llm > "$OUT/readme_tune.json" 2> "$OUT/readme_tune.log"
echo "tune silu_and_mul (README): exit $? in $((SECONDS - start)) s" | tee "$OUT/walls.txt"
tail -n 5 "$OUT/readme_tune.log"

for k in silu_and_mul.cu fused_add_rmsnorm.cu.j2 merge_attn_states_lse.cu; do
    stem=${k%%.*}
    start=$SECONDS
    timeout 100 $PN autotune --kernel "examples/templated/$k" --shape llama-7b \
        --shape llama-13b --shape llama-70b --strategy exhaustive --out "$OUT/autotune/$stem" \
        > "$OUT/autotune/$stem.txt" 2> "$OUT/autotune/$stem.log"
    echo "autotune $stem: exit $? in $((SECONDS - start)) s" | tee -a "$OUT/walls.txt"
done

python3 tools/redesign_summary.py "$OUT" | tee "$OUT/summary.md"
