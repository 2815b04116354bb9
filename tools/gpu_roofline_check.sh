#!/usr/bin/env bash
# Run on the GPU machine (from the repo root): the ceilings table, a compute-bound GEMM and a
# memory-bound kernel judged against the roofline, and `tune --target 0.8` on a compute-bound
# kernel (issue 18). Writes what it prints under $1.
set -uo pipefail
out=${1:?usage: tools/gpu_roofline_check.sh OUT}
mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
py=python3
{
echo "== ceilings (measured now)"
$py -m pragma_ncu ceilings --refresh
$py -m pragma_ncu ceilings --format json > "$out/ceilings.json"
echo "== a tiled fp32 GEMM at 4096^3, three configurations"
for p in "INTERLEAVE=0 BK=8" "INTERLEAVE=1 BK=8" "INTERLEAVE=1 BK=16"; do
  args=""; for kv in $p; do args="$args --param $kv"; done
  $py -m pragma_ncu bench --kernel examples/roofline/sgemm_tiled.cu --shape 4096 $args
done
echo "== a memory-bound kernel: % roofline is the fraction of the copy ceiling"
$py -m pragma_ncu bench --kernel examples/silu_and_mul.cu --shape llama-7b
echo "== tune --target 0.8 on a compute-bound kernel"
$py -m pragma_ncu tune --kernel examples/roofline/poly_eval.cu --target 0.8 --rounds 3 \
    --shape 4M --store "$out/runs.sqlite" --no-llm
$py -m pragma_ncu trace last --store "$out/runs.sqlite" --format md > "$out/poly_eval_trace.md"
$py -m pragma_ncu trace last --store "$out/runs.sqlite" --format html > "$out/poly_eval_trace.html"
} 2>&1 | tee "$out/roofline.log"
