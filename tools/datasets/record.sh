#!/usr/bin/env bash
# Records replay datasets: tunes every candidate of every built-in space (joined, deduplicated) at
# each given problem on this machine's GPU, one database per shape and layout, and resumes where an
# earlier run of the same command stopped (a finished shape is skipped, a half-done one continues
# from its stored trials; the kernel cache makes a binary compile once for every shape).
#
#   tools/datasets/record.sh [--bin PATH] [--seed N] [--precision P] OUTDIR SHAPE:LAYOUT...
#   e.g. tools/datasets/record.sh out/h200 4096x4096x4096:NN 4096x4096x1024:NT
#   SGT_DATASET_SPACE=tf32x3 tools/datasets/record.sh --precision fp32-accurate out/tc3 2048x2048x2048:NN
#
# --precision P (default fp32; also $SGT_DATASET_PRECISION) is passed to `tune --precision`: the
# split-TF32 family (space tf32x3) is enumerated only under fp32-accurate, where each candidate's
# error against FP64 is measured too. Under fp32-accurate `auto` joins every built-in space, the
# FFMA ones as well; set SGT_DATASET_SPACE=tf32x3 to record that family alone. Write the dataset
# with the same --precision (`sgemm-tune dataset write ... --precision fp32-accurate`).
#
# OUTDIR gets <shape>-<layout>.db (the tuning database: every trial with its status, registers,
# spills, compile and measure seconds, the repetitions' median and spread, cuBLAS in the same run),
# <shape>-<layout>.json (the tune's --json report), .log (its stderr) and .done once it finished.
# The kernel cache is $SGT_CACHE_DIR (default OUTDIR/kernels); SGT_DATASET_SPACE overrides the
# candidate set. datasets/README.md says how the databases become dataset files.
set -euo pipefail

bin=build/bin/sgemm-tune
seed=2612
precision="${SGT_DATASET_PRECISION:-fp32}"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bin) bin="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --precision) precision="$2"; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
  esac
done
if [[ $# -lt 2 ]]; then
  echo "usage: $0 [--bin PATH] [--seed N] [--precision P] OUTDIR SHAPE:LAYOUT..." >&2
  exit 2
fi
out="$1"; shift
mkdir -p "$out"
export SGT_CACHE_DIR="${SGT_CACHE_DIR:-$out/kernels}"

# Every built-in space, joined: the candidate set a dataset must cover.
spaces="${SGT_DATASET_SPACE:-auto}"

for item in "$@"; do
  shape="${item%%:*}"
  layout="${item##*:}"
  [[ "$shape" != "$item" ]] || layout=NN
  name="$shape-$layout"
  if [[ -e "$out/$name.done" ]]; then
    echo "$name: done earlier"
    continue
  fi
  echo "$name: tuning ($(date -u +%FT%TZ))"
  start=$(date +%s)
  if "$bin" tune --gpu auto --shape "$shape" --layout "$layout" --space "$spaces" --strategy exhaustive \
      --precision "$precision" --db "$out/$name.db" --top 3 --seed "$seed" --json >"$out/$name.json" 2>>"$out/$name.log"; then
    echo "$(( $(date +%s) - start ))" >"$out/$name.done"
    echo "$name: finished in $(( $(date +%s) - start )) s"
  else
    echo "$name: tune failed (exit $?), see $out/$name.log" >&2
  fi
done
