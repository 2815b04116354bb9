#!/usr/bin/env bash
# The progress display recorded as text (issue 29), in one go, under 2 minutes:
#   bash tools/gpu_progress_record.sh OUT          # on the GPU machine
#   bash tools/gpu_progress_record.sh OUT --cpu    # anywhere: the CPU example instead
# Runs, each on a terminal of 120 x 32 under tmux:
#   1. autotune of examples/templated/silu_and_mul.cu at llama-7b (72 points, exhaustive);
#      with --cpu, examples/cpu/conv1d.cpp at n64k-k33 (32 points);
#   2. tune --rounds 1 of the same kernel (baseline, one round: search, re-test, side by side,
#      profiles), with -v so that the log's lines show above the display.
# Each run is cut at 40 s (autotune) and 70 s (tune): a cut run still shows its display, and
# its exit status (124) says so.
# Each pane is captured every second (tmux capture-pane -p) into OUT/<run>/frame-NNNN.txt,
# the whole scrollback at the end into OUT/<run>/final.txt; tune's run log is copied to
# OUT/tune/run.log. Without tmux, each run is recorded by script(1) as a raw typescript
# (OUT/<run>/typescript, the control characters kept) on a terminal of the same size
# (RECORD_WITH=script asks for that even where tmux is).
# OUT/recordings.tar.gz holds it all (docs/recordings/ is where it goes once run); the table
# at the end gives each run's exit status, time, frames and the last progress line drawn.
# Exit 0 when both runs finished with status 0.
set -uo pipefail
OUT=${1:?usage: tools/gpu_progress_record.sh OUT [--cpu]}
CPU=${2:-}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
export PRAGMA_NCU_CACHE=${PRAGMA_NCU_CACHE:-/tmp/pcache}
COLS=120 ROWS=32
if [ "$CPU" = "--cpu" ]; then
    KERNEL=(--kernel examples/cpu/conv1d.cpp --shape n64k-k33)
else
    KERNEL=(--kernel examples/templated/silu_and_mul.cu --shape llama-7b)
fi
python3 -c "import tqdm" 2>/dev/null || { echo "needs tqdm (pip install tqdm)"; exit 2; }
TMUX_OK=$(command -v tmux >/dev/null && [ "${RECORD_WITH:-}" != script ] && echo yes || echo no)
t0=$SECONDS

script_for() {  # run, seconds at most, command...: OUT/<run>/run.sh runs it, notes its status
    local run=$1 limit=$2
    shift 2
    local dir="$OUT/$run"
    mkdir -p "$dir"
    echo "pragma-ncu ${*:4}" > "$dir/command.txt"  # as a user would type it
    {
        echo "cd $(printf %q "$PWD")"
        echo "timeout $limit $(printf '%q ' "$@")"
        echo "echo \$? > $(printf %q "$dir/exit")"
    } > "$dir/run.sh"
}

record_tmux() {  # run: the pane captured every second until the command has finished
    local dir="$OUT/$1" sock="pragma-rec-$$" n=0
    tmux -L "$sock" -f /dev/null new-session -d -s rec -x "$COLS" -y "$ROWS" \
        "bash $(printf %q "$dir/run.sh"); sleep 2"
    tmux -L "$sock" set-option -t rec history-limit 5000 >/dev/null
    while tmux -L "$sock" has-session -t rec 2>/dev/null; do
        n=$((n + 1))
        tmux -L "$sock" capture-pane -p -t rec > "$dir/$(printf 'frame-%04d.txt' "$n")"
        if [ -f "$dir/exit" ]; then
            sleep 0.5
            tmux -L "$sock" capture-pane -p -S - -t rec > "$dir/final.txt"
            tmux -L "$sock" kill-server 2>/dev/null
            break
        fi
        sleep 1
    done
}

record_script() {  # run: no tmux, so script(1) keeps a raw typescript of a fixed-size terminal
    local dir="$OUT/$1"
    COLUMNS=$COLS LINES=$ROWS script -q -c "stty cols $COLS rows $ROWS; \
        bash $(printf %q "$dir/run.sh")" "$dir/typescript" > /dev/null
}

record() {  # run, seconds at most, command...
    local t=$SECONDS
    script_for "$@"
    if [ "$TMUX_OK" = yes ]; then record_tmux "$1"; else record_script "$1"; fi
    echo $((SECONDS - t)) > "$OUT/$1/seconds"
}

record autotune 40 python3 -m pragma_ncu autotune "${KERNEL[@]}" --out "$OUT/autotune/out" \
    --no-cache
record tune 70 python3 -m pragma_ncu tune "${KERNEL[@]}" --rounds 1 -v \
    --store "$OUT/tune/store/runs.sqlite"
cp "$OUT"/tune/store/logs/*.log "$OUT/tune/run.log" 2>/dev/null

PHASES='(search|re-test|side by side): '
summary() {
    printf '%-9s %-6s %-5s %-7s %s\n' run exit s frames "last progress line drawn"
    for run in autotune tune; do
        local dir="$OUT/$run" frames last
        frames=$(find "$dir" -name 'frame-*.txt' | wc -l)
        if [ "$TMUX_OK" = yes ]; then
            last=$(cat "$dir"/frame-*.txt 2>/dev/null | grep -E "$PHASES" | tail -1)
        else
            last=$(tr '\r' '\n' < "$dir/typescript" 2>/dev/null | grep -E "$PHASES" | tail -1)
        fi
        last=$(sed -E 's/\x1b\[[0-9;]*[A-Za-z]//g; s/^ +//; s/ *[0-9]+%\|[^|]*\|//' <<< "$last" \
               | cut -c1-70)  # no bar, no escape sequence
        printf '%-9s %-6s %-5s %-7s %s\n' "$run" "$(cat "$dir/exit" 2>/dev/null || echo -)" \
            "$(cat "$dir/seconds")" "$frames" "${last:--}"
    done
}
summary | tee "$OUT/summary.txt"
echo "recorded with $([ "$TMUX_OK" = yes ] && tmux -V || echo 'script(1)'), ${COLS}x${ROWS}," \
     "total $((SECONDS - t0)) s" | tee -a "$OUT/summary.txt"
tar -czf "$OUT/recordings.tar.gz" -C "$OUT" --exclude=run.sh --exclude=out --exclude=store \
    autotune tune summary.txt
[ "$(cat "$OUT/autotune/exit" 2>/dev/null)" = 0 ] && [ "$(cat "$OUT/tune/exit" 2>/dev/null)" = 0 ]
