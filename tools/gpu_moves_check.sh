#!/usr/bin/env bash
# Issues 26 and 34 on a GPU machine, in one device call: `tune --no-llm` with the source moves on
# every calibration kernel (examples/moves/*.cu), every held-out one (examples/moves/heldout/*.cu),
# every bundled plain example (examples/*.cu) and the structural sets (examples/moves/structural/
# and its heldaside/ and heldaside2/, each kernel's hand-written version in fast/ timed beside it
# by `bench`; its extra/, naive kernels only), as
# parallel streams, one per GPU:
#   bash tools/gpu_moves_check.sh OUT [NAME ...]     (NAME: only these kernels, or these sets)
# Each kernel: `pragma-ncu tune --kernel K --shape S --no-llm` at its first shape (the spec's
# others verified only), with the rounds, the points per round, the seconds of a round's search
# and of one measurement capped (ROUNDS, BUDGET, ROUND_S, MEASURE_S), one run store per kernel,
# its trace as md, html and json, its wall. A stream starts a kernel only while its deadline
# (DEADLINE s from the start) leaves PER_KERNEL s, the most a kernel may take, so the whole
# ends under 9 minutes; a kernel not started is listed as skipped. One GPU: GPUS=1 (FIRST_GPU=N
# picks which, so that two invocations with kernel lists of their own can share a machine).
# Needs nvcc, ncu and the wheels in .whl/ installed by tools/install_wheels.sh: tree-sitter and
# tree-sitter-cuda (the moves read the source with them; without them every move is refused)
# and optuna with its dependencies, as tools/gpu_tune_check.sh uses them (a round whose space
# outgrows its budget is searched with TPE).
# Results: OUT/results/<set>-<kernel>.json (tune --format json), OUT/traces/<set>-<kernel>.
# {md,html,json}, OUT/logs/, OUT/walls.txt and the table OUT/table.md (tools/moves_table.py).
set -uo pipefail
OUT=${1:?usage: tools/gpu_moves_check.sh OUT}
ROUNDS=${ROUNDS:-3} BUDGET=${BUDGET:-24} ROUND_S=${ROUND_S:-20} MEASURE_S=${MEASURE_S:-20}
PER_KERNEL=${PER_KERNEL:-75} DEADLINE=${DEADLINE:-510} GPUS=${GPUS:-2} FIRST_GPU=${FIRST_GPU:-0}
# DEFAULTS=1: tune at its default options (its own --max-time of 120 s bounds each run)
LIMITS="--rounds $ROUNDS --budget $BUDGET --time-budget $ROUND_S --timeout $MEASURE_S"
[ "${DEFAULTS:-0}" = 1 ] && LIMITS=""
mkdir -p "$OUT/results" "$OUT/traces" "$OUT/logs" "$OUT/runs"
if ! PYTHONPATH=/tmp/site python3 -c "import tree_sitter, optuna" 2> /dev/null; then
    bash tools/install_wheels.sh /tmp/site > "$OUT/wheels.log" 2>&1 || { cat "$OUT/wheels.log"; exit 1; }
fi
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
unset PRAGMA_NCU_LLM_BASE_URL PRAGMA_NCU_LLM_MODEL
python3 -c "import tree_sitter, tree_sitter_cuda" 2> "$OUT/logs/tree_sitter.log" || {
    echo "the moves need tree-sitter and tree-sitter-cuda: put their wheels in .whl/"; exit 1; }
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
git log -1 --format='%H %s' 2>/dev/null | cut -c1-100 > "$OUT/commit.txt"
date -u +%Y-%m-%d > "$OUT/date.txt"
python3 tools/moves_table.py --list "${@:2}" > "$OUT/kernels.txt" || exit 1  # set kernel shape
: > "$OUT/walls.txt"
start=$SECONDS

stream() {  # GPU index, the kernels.txt lines this GPU runs (every GPUS-th from the index)
    local gpu=$1 line=0 set kernel shape name left t0 rc
    while read -r set kernel shape; do
        line=$((line + 1))
        [ $(((line - 1) % GPUS)) -eq "$gpu" ] || continue
        name=$(basename "${kernel%%.*}")
        left=$((DEADLINE - (SECONDS - start)))
        if [ "$left" -lt "$PER_KERNEL" ]; then
            echo "$set $name skipped 0 gpu$gpu" >> "$OUT/walls.txt"
            continue
        fi
        t0=$SECONDS
        # SIGINT first: tune marks the run interrupted and closes its workers (exit 130)
        CUDA_VISIBLE_DEVICES=$((gpu + FIRST_GPU)) PRAGMA_NCU_CACHE=/tmp/pcache-$((gpu + FIRST_GPU)) \
            timeout -s INT -k 10 "$PER_KERNEL" \
            python3 -m pragma_ncu tune --kernel "$kernel" --shape "$shape" --no-llm \
            $LIMITS --store "$OUT/runs/$set-$name.sqlite" --format json ${TUNE_ARGS:-} \
            > "$OUT/results/$set-$name.json" 2> "$OUT/logs/$set-$name.log"
        rc=$?
        case "$set" in structural|heldaside|heldaside2)  # the hand-written version, at the same shape
            CUDA_VISIBLE_DEVICES=$((gpu + FIRST_GPU)) PRAGMA_NCU_CACHE=/tmp/pcache-$((gpu + FIRST_GPU)) \
                timeout -k 10 90 python3 -m pragma_ncu bench --kernel "$(dirname "$kernel")/fast/$(basename "$kernel")" \
                --shape "$shape" --format json > "$OUT/results/$set-$name.fast.json" 2>> "$OUT/logs/$set-$name.log";;
        esac
        echo "$set $name $rc $((SECONDS - t0)) gpu$gpu" >> "$OUT/walls.txt"
        echo "gpu$gpu $set $name: exit $rc in $((SECONDS - t0)) s"
        python3 tools/moves_table.py --traces "$OUT/runs/$set-$name.sqlite" \
            "$OUT/traces/$set-$name" >> "$OUT/logs/traces.log" 2>&1
    done < "$OUT/kernels.txt"
}

for ((g = 0; g < GPUS; g++)); do stream "$g" & done
wait
echo "all streams done in $((SECONDS - start)) s"
python3 tools/moves_table.py "$OUT" > "$OUT/table.md"
python3 tools/moves_table.py --structural "$OUT" | tee "$OUT/structural.md"
