#!/usr/bin/env bash
# The shipped Slurm recipe (tools/cluster/slurm) on a real one-node Slurm cluster started here:
# submit.sh submits the tune array (shards replaying recorded datasets: no GPU) and the merge job
# after it; the merged database's winners must be those of one `tune --shapes` over the same
# suite. Then real array environments against --shard auto: a range that starts at 2 with a step
# of 3, and an index list that must be refused.
# Usage: slurm_test.sh SGEMM_TUNE SOURCE_DIR. Exit 77 (a ctest skip) only when Slurm or munge
# cannot start on this machine, saying why; any other failure fails.
set -euo pipefail
bin=$(realpath "$1")
src=$(realpath "$2")
skip() {
  echo "SKIP: $*"
  exit 77
}
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

for tool in munged munge unmunge slurmctld slurmd sbatch squeue scontrol sinfo python3; do
  command -v "$tool" >/dev/null ||
    skip "$tool is not installed (tools/cluster/install-test-deps.sh installs Debian's slurmctld," \
      "slurmd, slurm-client and munge)"
done
[[ $(id -u) == 0 ]] || skip "the one-node cluster runs its daemons as root (SlurmUser=root); not root"

work=$(mktemp -d "${TMPDIR:-/tmp}/sgt-slurm-XXXXXX")
# shellcheck source=local_slurm.sh
source "$src/tests/cluster/local_slurm.sh"
cleanup() {
  slurm_stop "$work/cluster"
  if [[ -z ${SGT_KEEP_SLURM_TEST:-} ]]; then rm -rf "$work"; else echo "kept $work"; fi
}
trap cleanup EXIT
why=$(slurm_start "$work/cluster" 2>&1) || skip "Slurm cannot run here: $why"
export SLURM_CONF=$work/cluster/slurm.conf
echo "one-node cluster up: $(sinfo -h -o '%P %D %t %c CPUs')"

# Waits for a job to end; prints its state (COMPLETED, FAILED, ...). Fails after $2 seconds.
wait_job() {
  local id=$1 limit=$2 state=""
  for _ in $(seq $((limit * 2))); do
    state=$(scontrol show job -o "$id" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | head -n1 | cut -d= -f2)
    case $state in
      COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | PREEMPTED)
        echo "$state"
        return 0
        ;;
    esac
    sleep 0.5
  done
  echo "job $id still ${state:-unknown} after ${limit}s" >&2
  squeue >&2 || true
  scontrol show job "$id" >&2 || true
  return 1
}

# The suite: problems with recordings, of very different cost (a 4096^3 candidate costs about 9
# of 512x2048x512), so the deal is not round-robin.
data=$src/datasets/h200
shapes=(1024x1024x1024-NN 1000x1000x1000-NN 4096x4096x4096-NN 512x2048x512-NT 2048x512x2048-TN
        64x4096x4096-NN 8192x128x8192-NN)
suite=$work/suite.json
replay=()
{
  echo "["
  sep=""
  for s in "${shapes[@]}"; do
    printf '%s  {"shape": "%s", "layout": "%s"}' "$sep" "${s%-*}" "${s##*-}"
    sep=$',\n'
    replay+=(--replay "$data/$s.json.gz")
  done
  printf '\n]\n'
} >"$suite"
tune_args="--strategy exhaustive --space default --seed 7 --top 2 ${replay[*]}"

# The reference: one process, the whole suite.
"$bin" tune --shapes "$suite" $tune_args --db "$work/reference.db" --json >"$work/reference.json" \
  2>"$work/reference.log" || { cat "$work/reference.log" >&2; fail "the single-process tune failed"; }

# The recipe, as a user submits it: the compile array warms the shared kernel cache (two configs,
# one binary each: a shard each), then the tune array (no GPU asked for: the shards replay),
# then the merge.
shards=3
printf '%s\n' wt_128x64x16_w64x32_wn2_t4x4_n128_mb1 wt_64x64x8_w32x32_wn1_t4x4_n128_mb1 \
  >"$work/configs.txt"
ids=$(SGT_BIN=$bin SGT_SUITE=$suite SGT_WORK=$work/run SGT_SHARDS=$shards SGT_TUNE_ARGS=$tune_args \
  SGT_CACHE_DIR=$work/cache SGT_EXPORT=$work/run/table.json SGT_EXPORT_FORMAT=json \
  SGT_EXPORT_ARGS=--allow-stale SGT_SBATCH_TUNE="--cpus-per-task=1" \
  SGT_COMPILE=1 SGT_COMPILE_SHARDS=2 SGT_SBATCH_COMPILE="--cpus-per-task=1" \
  SGT_COMPILE_ARGS="--configs $work/configs.txt" "$src/tools/cluster/slurm/submit.sh")
echo "submitted: $ids"
compile_id=$(sed -n 's/.*compile=\([0-9]*\).*/\1/p' <<<"$ids")
[[ -n $compile_id ]] || fail "submit.sh submitted no compile array: $ids"
tune_id=$(sed -n 's/.*tune=\([0-9]*\).*/\1/p' <<<"$ids")
merge_id=$(sed -n 's/.*merge=\([0-9]*\).*/\1/p' <<<"$ids")
[[ -n $tune_id && -n $merge_id ]] || fail "submit.sh printed no job ids: $ids"
state=$(wait_job "$merge_id" 300) || fail "the merge job did not end"
if [[ $state != COMPLETED ]]; then
  for f in "$work"/run/logs/*; do echo "--- $f" >&2; tail -n 30 "$f" >&2; done
  fail "the merge job ended $state"
fi
echo "merge job $merge_id: $state"
# The compile array ran first, each task its own binary, into the one cache.
for i in 0 1; do
  log=$(ls "$work"/run/logs/compile-"${compile_id}"_$i.out 2>/dev/null) ||
    fail "no log of compile task $i: $(ls "$work/run/logs")"
  grep -q "shard $i/2 (SLURM_ARRAY_TASK_ID=$i of array 0-1 (2 tasks)): 1 of 2 binaries" "$log" ||
    fail "compile task $i: $(cat "$log")"
done
cubins=$(find "$work/cache" -name '*.cubin' | wc -l)
[[ $cubins == 2 ]] || fail "the compile array left $cubins binaries in the shared cache, not 2"
cat "$work/run/merge-summary.txt"

# Each shard tuned its own shapes; together, each shape once.
"$bin" export --db "$work/reference.db" --format json --allow-stale -o "$work/reference-table.json"
python3 - "$work" "$shards" "${#shapes[@]}" <<'PY'
import glob, json, sys
work, shards, total = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
seen = {}
for f in sorted(glob.glob(f"{work}/run/shards/tune-*.json")):
    j = json.load(open(f))
    sh = j["shard"]
    assert sh["count"] == shards and sh["of"] == total, (f, sh)
    assert "SLURM_ARRAY_TASK_ID" in sh["source"], sh["source"]
    for s in j["summary"]:
        key = (s["shape"], s["layout"])
        assert key not in seen, f"{key} tuned by shards {seen[key]} and {sh['index']}"
        seen[key] = sh["index"]
        assert s["status"] == "ok", (f, s)
assert len(seen) == total, f"{len(seen)} of {total} shapes tuned: {sorted(seen)}"
assert len(set(seen.values())) == shards, f"a shard had no shape: {seen}"
print("shards:", {i: sorted(k[0] for k, v in seen.items() if v == i) for i in range(shards)})

def winners(path):
    t = json.load(open(path))
    return {(g["name"], s["M"], s["N"], s["K"], s["layout"]): s["config_name"]
            for g in t["gpus"] for s in g["shapes"]}
ref = winners(f"{work}/reference-table.json")
got = winners(f"{work}/run/table.json")
assert len(ref) == total, ref
if ref != got:
    for k in sorted(set(ref) | set(got)):
        if ref.get(k) != got.get(k): print("differs:", k, ref.get(k), got.get(k))
    sys.exit("the merged winners differ from the single-process run's")
print(f"merged winners equal the single-process run's on all {total} shapes")
PY
summary=$work/run/merge-summary.txt
grep -q "in all, from $shards databases" "$summary" || fail "merge summary without its totals"
# Nothing lost or doubled: the merge added every trial of every shard.
shard_trials=0
for db in "$work"/run/shards/tune-*.db; do
  n=$("$bin" db info --db "$db" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["rows"]["trials"])')
  shard_trials=$((shard_trials + n))
done
grep -q "in all, from $shards databases: $shard_trials trials added, 0 already present" "$summary" ||
  fail "the merge did not add the shards' $shard_trials trials"

# Real array environments: tasks 2, 5, 8 are shards 0, 1, 2 of 3; an index list is refused.
logs=$work/arrays
mkdir -p "$logs"
sbatch --wait --array=2-8:3 --cpus-per-task=1 --output="$logs/range-%a.out" \
  --wrap "'$bin' tune --shapes '$suite' --shard auto --dry-run --json" >/dev/null ||
  fail "the --array=2-8:3 dry runs failed: $(cat "$logs"/range-*.out)"
for pair in 2:0 5:1 8:2; do
  grep -q "shard ${pair#*:}/3 (SLURM_ARRAY_TASK_ID=${pair%:*} of array 2-8:3 (3 tasks))" \
    "$logs/range-${pair%:*}.out" || fail "task ${pair%:*}: $(cat "$logs/range-${pair%:*}.out")"
done
if sbatch --wait --array=1,3,8 --cpus-per-task=1 --output="$logs/list-%a.out" \
  --wrap "'$bin' tune --shapes '$suite' --shard auto --dry-run" >/dev/null 2>&1; then
  fail "an index-list array was accepted as shards"
fi
grep -q -- "--array=1,3,8" "$logs/list-3.out" || fail "list array: $(cat "$logs/list-3.out")"
echo "array environments: 2-8:3 gives shards 0..2 of 3; 1,3,8 is refused"
echo "PASS"
