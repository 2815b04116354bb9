#!/usr/bin/env bash
# Run on the GPU machine (from the repo root): record profile fixtures for every example and
# planted kernel, then exercise the CLI on real reports and the GPU test tier. Logs go to $1.
set -uo pipefail
out=${1:?usage: tools/gpu_profile_check.sh OUT_DIR}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
py=python3
$py tools/record_profiles.py --out "$out/rec" ${ONLY:+--only $ONLY} 2>&1 | tee "$out/record.log"
echo "== profile + explain through the CLI"
$py -m pragma_ncu profile --kernel examples/silu_and_mul.cu --out "$out/cli" ; echo "rc=$?"
$py -m pragma_ncu explain "$out"/cli/*.profile.json --format md > "$out/cli/explain.md"; echo "rc=$?"
echo "== a report of another program with several kernels"
$py -m pragma_ncu bench --kernel examples/softmax.cu >/dev/null 2>&1  # caches the ceiling
ncu --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats \
    -c 10 -f -o "$out/multi" $py -m pragma_ncu bench --kernel examples/softmax.cu \
    > "$out/multi.log" 2>&1; echo "rc=$?"
$py -m pragma_ncu explain "$out/multi.ncu-rep" --format json > "$out/multi_explain.json"
$py -c "import json,sys; d=json.load(open(sys.argv[1])); print('kernel groups explained:', \
[(g['name'], g['diagnosis']['classification']) for g in d['application']['groups']])" \
    "$out/multi_explain.json"
$py -m pragma_ncu explain "$out/multi.ncu-rep" --kernel softmax | head -12
mkdir -p "$out/multi_csv"
for page in raw details; do
  extra=""; [ $page = raw ] && extra="--print-kernel-base mangled"
  ncu --import "$out/multi.ncu-rep" --csv --print-units base --page $page $extra \
      | gzip -n > "$out/multi_csv/$page.csv.gz"
done
echo "== errors"
$py -m pragma_ncu explain "$out/multi.ncu-rep" --kernel no_such_kernel; echo "rc=$?"
head -c 20000 "$out/multi.ncu-rep" > "$out/truncated.ncu-rep"
$py -m pragma_ncu explain "$out/truncated.ncu-rep"; echo "rc=$?"
PRAGMA_NCU_NCU=/nonexistent/ncu $py -m pragma_ncu profile --kernel examples/silu_and_mul.cu \
    --out "$out/noncu"; echo "rc=$?"
echo "== knowledge build against the local ncu install (twice: the second run is cached)"
export PRAGMA_NCU_DATA="$out/data"
for run in 1 2; do
  t0=$(date +%s.%N)
  $py -m pragma_ncu knowledge build --chip gh100 --no-llm --format json > "$out/kbuild$run.json"
  echo "rc=$? knowledge build run $run: $($py -c "import time; print(round(time.time() - $t0, 1))") s"
done
$py - "$out/kbuild1.json" "$out/kbuild2.json" <<'PY'
import json, sys
from pragma_ncu.knowledge.compendium import Compendium, load_generated
from pragma_ncu.backends.cuda.collect import DIAGNOSIS_METRICS
from pragma_ncu.infra.settings import load_settings
for path in sys.argv[1:]:
    d = json.load(open(path))
    print({k: v for k, v in d.items() if not isinstance(v, (list, dict))})
gen_path = load_settings().data_dir / "knowledge" / "compendium.json"
generated = Compendium(load_generated(gen_path))
names = list(DIAGNOSIS_METRICS) + ["gpu__time_duration.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "sm__warps_active.avg.pct_of_peak_sustained_active", "launch__registers_per_thread", "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"]
print("generated entries:", len(generated), "default metrics without a generated entry:",
      [n for n in names if generated.lookup(n) is None])
PY
$py -m pragma_ncu knowledge show dram__bytes_read.sum | head -8
echo "== GPU tests"
$py -m pytest -q tests/gpu 2>&1 | tail -15
