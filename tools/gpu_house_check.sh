#!/usr/bin/env bash
# Issue 37's behaviour check on the GPU machine: the README's first command (install, then tune
# the bundled example) and one moves kernel, each tuned with the defaults; their winners, to be
# compared before and after a change that should change no behaviour (tools/house_winners.py).
#
#   bash tools/gpu_house_check.sh OUT        (GPU machine; wheels in .whl/, tools/install_wheels.sh)
#
# OUT/<name>.json is tune's JSON, OUT/<name>.log its progress, OUT/winners.txt the winners.
set -uo pipefail
OUT=${1:?usage: tools/gpu_house_check.sh OUT}
MOVES_KERNEL=${MOVES_KERNEL:-examples/moves/affine_rows.cu}
mkdir -p "$OUT"
bash tools/install_wheels.sh /tmp/site > "$OUT/wheels.log" 2>&1 || { cat "$OUT/wheels.log"; exit 1; }
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
unset PRAGMA_NCU_LLM_BASE_URL PRAGMA_NCU_LLM_MODEL
# The README's first command: `pip install .` (offline here: no index, no build isolation).
python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/site . \
    > "$OUT/install.log" 2>&1 || { tail -20 "$OUT/install.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt"
git log -1 --format='%H %s' 2>/dev/null | cut -c1-100 > "$OUT/commit.txt"
date -u +%Y-%m-%dT%H:%MZ > "$OUT/date.txt"
cd /tmp || exit 1  # run the installed package, not the checkout
repo=$OLDPWD
for run in "silu_and_mul:$repo/examples/templated/silu_and_mul.cu" "moves:$repo/$MOVES_KERNEL"; do
    name=${run%%:*} kernel=${run#*:}
    t0=$SECONDS
    python3 -m pragma_ncu tune --kernel "$kernel" --store "/tmp/$name.sqlite" \
        --format json > "$OUT/$name.json" 2> "$OUT/$name.log"
    echo "$name rc $? $((SECONDS - t0)) s" | tee -a "$OUT/walls.txt"
done
cd "$repo" && python3 tools/house_winners.py "$OUT" | tee "$OUT/winners.txt"
