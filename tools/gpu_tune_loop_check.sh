#!/usr/bin/env bash
# The GPU acceptance run of `pragma-ncu tune` (issue 6), one device call:
#   1. the three SGLang templates, no LLM, timed at the LLaMA shapes (odd shape verified);
#   2. the naive silu_and_mul with the coder served by tools/replay_llm_server.py replaying
#      tests/fixtures/llm/silu_rewrite.json;
# then every run's trace as md, json and html. Usage: bash tools/gpu_tune_loop_check.sh OUT
set -uo pipefail
OUT=${1:?usage: $0 OUT}
mkdir -p "$OUT/traces"
bash tools/install_wheels.sh /tmp/site >/dev/null 2>&1 || echo "wheel install failed"
export PYTHONPATH=/tmp/site:$PWD PRAGMA_NCU_CACHE=/tmp/pcache PYTHONUNBUFFERED=1
PN="python -m pragma_ncu"
STORE=gpu-runs/runs.sqlite   # relative: the paths the store keeps stay machine-independent
SHAPES="--shape llama-7b --shape llama-13b --shape llama-70b"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
for k in silu_and_mul.cu fused_add_rmsnorm.cu.j2 merge_attn_states_lse.cu; do
  stem=${k%%.*}
  start=$(date +%s)
  $PN tune --kernel examples/templated/$k $SHAPES --target ${TARGET:-0.97} --store $STORE \
      --no-llm > "$OUT/$stem.tune.log" 2>&1
  echo "$stem exit $? in $(( $(date +%s) - start )) s" | tee -a "$OUT/walls.txt"
  tail -n 20 "$OUT/$stem.tune.log"
done
python tools/replay_llm_server.py tests/fixtures/llm/silu_rewrite.json --url-file "$OUT/url" \
    --log "$OUT/llm_conversation.jsonl" > "$OUT/replay_server.log" 2>&1 &
SERVER=$!
sleep 2
start=$(date +%s)
PRAGMA_NCU_LLM_BASE_URL=$(cat "$OUT/url") PRAGMA_NCU_LLM_MODEL=replayed-coder \
  $PN tune --kernel examples/silu_and_mul.cu $SHAPES --store $STORE --rounds 3 \
  > "$OUT/silu_naive_llm.tune.log" 2>&1
echo "silu_naive_llm exit $? in $(( $(date +%s) - start )) s" | tee -a "$OUT/walls.txt"
tail -n 20 "$OUT/silu_naive_llm.tune.log"
kill $SERVER
for id in $(python -c "
import sqlite3; c = sqlite3.connect('$STORE')
print(' '.join(r[0] + ':' + r[1] for r in c.execute('select id, kernel from runs order by created')))"); do
  run=${id%%:*}; name=${id##*:}
  for fmt in md json html; do
    $PN trace "$run" --store $STORE --format $fmt -o "$OUT/traces/$name-$run.$fmt" || true
  done
done
find gpu-runs -name '*.ncu-rep' -size +4M -delete
tar czf "$OUT/gpu-runs.tgz" gpu-runs
ls -la "$OUT" "$OUT/traces"
