#!/usr/bin/env bash
# Run on the GPU machine (from the repo root): record the diagnosis calibration corpus
# (tools/record_corpus.py) and pack what comes back into $1/corpus-<phase>.tar.gz.
#   bash tools/gpu_corpus_check.sh OUT [app|ours|all] [NAME ...]
set -uo pipefail
out=${1:?usage: tools/gpu_corpus_check.sh OUT [app|ours|all] [NAME ...]}
phase=${2:-all}
shift 2 || shift $#
mkdir -p "$out"
export PYTHONUNBUFFERED=1
rec=/tmp/corpus-rec-$phase-$$
mkdir -p "$rec"
python3 tools/record_corpus.py --out "$rec" --phase "$phase" ${1:+--only "$@"} 2>&1 | tee "$out/record-$phase.log"
if [ "$phase" = app ] || [ "$phase" = all ]; then  # ncu's own tables, to read metric names and section contents
  sections=$(find /opt/nvidia /usr/local/cuda* -maxdepth 4 -type d -name sections 2>/dev/null | head -1)
  mkdir -p "$rec/meta"
  ncu --query-metrics --chip gh100 > "$rec/meta/query_metrics.txt" 2>&1
  [ -n "$sections" ] && tar -czf "$rec/meta/ncu_sections.tar.gz" -C "$(dirname "$sections")" sections
fi
find "$rec" -name '*.ncu-rep' -size +12M -delete
tar -czf "$out/corpus-$phase.tar.gz" -C "$rec" .
ls -la "$out"
python3 - "$rec/summary.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print("meta:", d["meta"])
for k, v in d["collections"].items():
    print(k, v)
bad = [r for r in d["ours"] if r.get("problem")]
print("ours:", len(d["ours"]), "kernels,", len(bad), "with a problem")
for r in bad:
    print("  ", r["kernel"], str(r["problem"])[:300])
PY
