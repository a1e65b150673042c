#!/usr/bin/env bash
# The shipped Slurm recipe (tools/cluster/slurm) on a real one-node Slurm cluster started here:
# submit.sh submits the tune array (shards replaying recorded datasets: no GPU) and the merge job
# after it; the merged database's winners must be those of one `tune --shapes` over the same
# suite. Then runs where a shard fails: submitted by hand, merge.sbatch (with neither SGT_SHARDS
# nor SGT_RUN) must refuse, name the shard and write nothing, and the command it prints must
# complete the run; the same directory reused by submit.sh with another shard count, where a
# shard fails, must be refused by the merge job and by hand, with SGT_SHARDS and without. Then
# real array environments against --shard auto: a range that starts at 2 with a step of 3, and an
# index list that must be refused.
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

# Runs where a shard fails, on a small suite. The binary is behind a wrapper that fails task T's
# tune once while $work/fail-T exists (a node that dies: the task run again succeeds).
small=(1024x1024x1024-NN 512x2048x512-NT 2048x512x2048-TN)
small_suite=$work/small.json
small_args="--strategy exhaustive --space default --max-evals 30 --top 1 --seed 7"
sep="["
for s in "${small[@]}"; do
  printf '%s{"shape": "%s", "layout": "%s"}' "$sep" "${s%-*}" "${s##*-}"
  sep=","
  small_args+=" --replay $data/$s.json.gz"
done >"$small_suite"
echo "]" >>"$small_suite"
wrapper=$work/fail-once
cat >"$wrapper" <<EOF
#!/usr/bin/env bash
if [[ \${1:-} == tune && -e $work/fail-\${SLURM_ARRAY_TASK_ID:-} ]]; then
  rm -f "$work/fail-\$SLURM_ARRAY_TASK_ID"
  echo "sgemm-tune: error: task \$SLURM_ARRAY_TASK_ID fails on purpose (the test)" >&2
  exit 3
fi
exec "$bin" "\$@"
EOF
chmod +x "$wrapper"
run2=$work/run2
mkdir -p "$run2/logs"
slurm=$src/tools/cluster/slurm
# The merge by hand, as merge.sbatch's header shows it; extra variables as NAME=value arguments.
# Prints its exit code; its log is $run2/logs/merge-hand.out.
merge_by_hand() {
  local rc=0
  env "$@" SGT_WORK="$run2" SGT_EXPORT="$run2/table.json" SGT_EXPORT_FORMAT=json \
    SGT_EXPORT_ARGS=--allow-stale SGT_BIN="$wrapper" sbatch --wait --export=ALL \
    --output="$run2/logs/merge-hand.out" "$slurm/merge.sbatch" >/dev/null 2>&1 || rc=$?
  echo "$rc"
}

# (a) Three tasks submitted by hand; task 1 fails.
touch "$work/fail-1"
if SGT_SUITE=$small_suite SGT_WORK=$run2 SGT_BIN=$wrapper SGT_TUNE_ARGS=$small_args \
  sbatch --wait --array=0-2 --cpus-per-task=1 --export=ALL --output="$run2/logs/tune-%A_%a.out" \
  "$slurm/tune-array.sbatch" >/dev/null 2>&1; then
  fail "the array with a failing task succeeded: $(tail -n 3 "$run2"/logs/tune-*.out)"
fi
rc=$(merge_by_hand)
log=$run2/logs/merge-hand.out
[[ $rc != 0 ]] || fail "merge.sbatch merged 2 of 3 shards and exited 0: $(cat "$log")"
if ! grep -q "has 2 of 3 shards finished" "$log" || ! grep -q "shard 1 (task 1): failed (exit 3)" "$log"; then
  fail "the refusal does not name the failed shard: $(cat "$log")"
fi
[[ ! -e $run2/tuning.db && ! -e $run2/table.json ]] || fail "a refused merge wrote the database or table"
echo "a failed task: merge.sbatch by hand refused ($(grep -m1 'shard 1 (task 1)' "$log" | sed 's/^ *//'))"
# The command the refusal prints: task 1 again on its own (a new job of the same run), then the
# merge after it.
next=$(sed -n 's/^  \(job=.*\)$/\1/p' "$log")
[[ -n $next ]] || fail "the refusal prints no command to run: $(cat "$log")"
merge_id=$(cd "$work" && bash -c "$next" | sed -n 's/^Submitted batch job \([0-9]*\).*/\1/p')
[[ -n $merge_id ]] || fail "the printed command submitted no merge: $next"
state=$(wait_job "$merge_id" 180) || fail "the merge after the rerun did not end"
[[ $state == COMPLETED ]] || fail "the merge after the rerun ended $state: $(tail -n 20 "$run2"/logs/*)"
grep -q "in all, from 3 databases" "$run2/merge-summary.txt" ||
  fail "the merge after the rerun: $(cat "$run2/merge-summary.txt")"
python3 - "$run2/table.json" "${#small[@]}" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
n = sum(len(g["shapes"]) for g in t["gpus"])
assert n == int(sys.argv[2]), f"the table has {n} shapes, not {sys.argv[2]}"
PY
grep -q "shard 1/3 (--shard 1/3)" "$run2"/logs/tune-*_1.out ||
  fail "the task run again was not shard 1/3: $(cat "$run2"/logs/tune-*_1.out)"
echo "the printed command ran task 1 again as shard 1/3 of the same run; the merge published 3 of 3"

# (b) The same directory reused by submit.sh with 2 shards; task 0 fails. Task 2's done mark of
# the first run is left over, with another count.
table_before=$(sha256sum "$run2/tuning.db" "$run2/table.json")
touch "$work/fail-0"
ids=$(SGT_BIN=$wrapper SGT_SUITE=$small_suite SGT_WORK=$run2 SGT_SHARDS=2 SGT_TUNE_ARGS=$small_args \
  SGT_EXPORT=$run2/table.json SGT_EXPORT_FORMAT=json SGT_EXPORT_ARGS=--allow-stale \
  SGT_SBATCH_TUNE="--cpus-per-task=1" "$slurm/submit.sh")
merge_id=$(sed -n 's/.*merge=\([0-9]*\).*/\1/p' <<<"$ids")
tune_id=$(sed -n 's/.*tune=\([0-9]*\).*/\1/p' <<<"$ids")
state=$(wait_job "$merge_id" 180) || fail "the merge job of the reused directory did not end"
[[ $state != COMPLETED ]] || fail "the merge job published a run whose task 0 failed"
log=$run2/logs/merge-$merge_id.out
if ! grep -q "run $tune_id has 1 of 2 shards finished" "$log" ||
  ! grep -q "shard 0 (task 0): failed" "$log"; then
  fail "the merge job's refusal: $(cat "$log")"
fi
for vars in SGT_SHARDS=2 SGT_SHARDS=; do
  rc=$(merge_by_hand "$vars")
  log=$run2/logs/merge-hand.out
  [[ $rc != 0 ]] || fail "merge.sbatch ($vars) merged a partial, mixed directory: $(cat "$log")"
  grep -q "belong to 2 runs" "$log" || fail "merge.sbatch ($vars) did not say the runs are mixed: $(cat "$log")"
done
[[ $(sha256sum "$run2/tuning.db" "$run2/table.json") == "$table_before" ]] ||
  fail "a refused merge changed the database or the table"
echo "a reused directory, 2 shards, task 0 failed: the merge job and merge.sbatch by hand" \
  "(SGT_SHARDS=2 and unset) refused, the table untouched"

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
