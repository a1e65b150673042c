#!/usr/bin/env bash
# tools/cluster/shards.sh, the script both cluster recipes run, without a scheduler: shards are
# started as the Slurm array, a Kubernetes Indexed Job or any launcher would start them (their
# environment variables), replaying recorded datasets (no GPU), into work directories where one
# shard fails, one is killed, a directory is reused with another shard count, and a mark is
# mixed. The merge must refuse every partial or mixed run, exit 1, name what is missing and the
# command that runs it again, and leave the merged database and the table untouched; the printed
# commands, run as printed, must then complete the run, and the merge must publish it whole.
# Usage: shards_test.sh SGEMM_TUNE SOURCE_DIR.
set -euo pipefail
bin=$(realpath "$1")
src=$(realpath "$2")
shards_sh=$src/tools/cluster/shards.sh
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

work=$(mktemp -d "${TMPDIR:-/tmp}/sgt-shards-XXXXXX")
cleanup() { if [[ -z ${SGT_KEEP_SHARDS_TEST:-} ]]; then rm -rf "$work"; else echo "kept $work"; fi; }
trap cleanup EXIT

# Three problems with recordings, cheap to replay.
data=$src/datasets/h200
shapes=(1024x1024x1024-NN 512x2048x512-NT 2048x512x2048-TN)
suite=$work/suite.json
replay=""
{
  echo "["
  sep=""
  for s in "${shapes[@]}"; do
    printf '%s  {"shape": "%s", "layout": "%s"}' "$sep" "${s%-*}" "${s##*-}"
    sep=$',\n'
    replay+=" --replay $data/$s.json.gz"
  done
  printf '\n]\n'
} >"$suite"

# sgemm-tune behind a wrapper that, while $work/fail-<task> exists, makes that task's tune fail
# once (a node that dies: the task run again succeeds), or, while $work/kill-<task> exists,
# kills the shard's script outright (nothing after it runs, as with SIGKILL or a lost node).
wrapper=$work/sgemm-tune
cat >"$wrapper" <<EOF
#!/usr/bin/env bash
set -euo pipefail
task=\${SGT_SHARD_INDEX:-\${JOB_COMPLETION_INDEX:-\${SLURM_ARRAY_TASK_ID:-}}}
if [[ \${1:-} == tune && -e $work/fail-\$task ]]; then
  rm -f "$work/fail-\$task"
  echo "sgemm-tune: error: task \$task fails on purpose (the test)" >&2
  exit 3
fi
if [[ \${1:-} == tune && -e $work/kill-\$task ]]; then
  rm -f "$work/kill-\$task"
  kill -9 "\$PPID"
  exit 9
fi
exec "$bin" "\$@"
EOF
chmod +x "$wrapper"

export SGT_BIN=$wrapper SGT_SUITE=$suite
export SGT_TUNE_ARGS="--strategy exhaustive --space default --max-evals 30 --top 1 --seed 7$replay"
export SGT_EXPORT_FORMAT=json SGT_EXPORT_ARGS=--allow-stale
unset SGT_RUN SGT_SHARDS SGT_DB SGT_EXPORT SLURM_ARRAY_TASK_ID JOB_COMPLETION_INDEX SGT_SHARD_INDEX \
  SGT_SHARD_COUNT SGT_JOB_UID

# A shard started as `shards.sh tune` with what its launcher sets; prints its exit code.
shard() { # WORK RUN INDEX COUNT
  local rc=0
  SGT_WORK=$1 SGT_RUN=$2 SGT_SHARD_INDEX=$3 SGT_SHARD_COUNT=$4 \
    bash "$shards_sh" tune >"$1/shard-$3.log" 2>&1 || rc=$?
  echo "$rc"
}

# The merge must refuse: exit 1, its message matching each pattern given, and the merged
# database and table exactly as before. Extra variables come as NAME=value before WORK.
refuse() { # [VAR=value...] WORK WHAT PATTERN...
  local vars=()
  while [[ $1 == *=* ]]; do vars+=("$1"); shift; done
  local w=$1 what=$2 rc=0 before after
  shift 2
  before=$(cd "$w" && { sha256sum tuning.db table.json 2>/dev/null || true; })
  env "${vars[@]}" SGT_WORK="$w" SGT_EXPORT="$w/table.json" bash "$shards_sh" merge \
    >"$w/merge.out" 2>"$w/merge.err" || rc=$?
  [[ $rc == 1 ]] || fail "$what: the merge exited $rc, not 1: $(cat "$w/merge.err" "$w/merge.out")"
  for p in "$@"; do
    grep -qE -- "$p" "$w/merge.err" || fail "$what: the refusal does not say '$p': $(cat "$w/merge.err")"
  done
  grep -q "^Next:\|Next: " "$w/merge.err" || fail "$what: the refusal says nothing to do next"
  after=$(cd "$w" && { sha256sum tuning.db table.json 2>/dev/null || true; })
  [[ $before == "$after" ]] || fail "$what: the refused merge changed the database or the table"
  [[ ! -s $w/merge.out ]] || fail "$what: the refused merge printed a summary: $(cat "$w/merge.out")"
  echo "refused ($what): $(head -n1 "$w/merge.err")"
}

merge_ok() { # [VAR=value...] WORK WHAT
  local vars=()
  while [[ $1 == *=* ]]; do vars+=("$1"); shift; done
  local w=$1 what=$2
  env "${vars[@]}" SGT_WORK="$w" SGT_EXPORT="$w/table.json" bash "$shards_sh" merge \
    >"$w/merge.out" 2>"$w/merge.err" || fail "$what: the merge failed: $(cat "$w/merge.err")"
}

# The shapes of a table.json, one "MxNxK LAYOUT" a line, sorted.
table_shapes() {
  python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))
rows = ["%dx%dx%d %s" % (s["M"], s["N"], s["K"], s["layout"]) for g in t["gpus"] for s in g["shapes"]]
print("\n".join(sorted(rows)))' "$1"
}
all_shapes=$(printf '%s\n' "${shapes[@]}" | sed 's/-/ /' | sort)

# The commands the last refusal printed to run the missing shards again, then the merge, run as
# printed.
run_next() { # WORK
  sed -n '/^Next:/,$p' "$1/merge.err" | sed -n 's/^  //p' >"$1/next.sh"
  [[ -s $1/next.sh ]] || fail "no command after Next: in $(cat "$1/merge.err")"
  (cd "$work" && bash -euo pipefail "$1/next.sh") >"$1/next.out" 2>&1 ||
    fail "the printed commands failed: $(cat "$1/next.sh" "$1/next.out")"
}

# 1. A shard fails: no merge, with or without SGT_SHARDS, and none with a wrong SGT_SHARDS.
w=$work/one
mkdir -p "$w"
touch "$work/fail-1"
rcs="$(shard "$w" r1 0 3) $(shard "$w" r1 1 3) $(shard "$w" r1 2 3)"
[[ $rcs == "0 3 0" ]] || fail "the shards of r1 exited $rcs, not 0 3 0: $(cat "$w"/shard-*.log)"
grep -q '^state=failed' "$w/shards/tune-1.mark" || fail "the failed shard's mark: $(cat "$w/shards/tune-1.mark")"
[[ ! -e $w/shards/tune-1.json ]] || fail "the failed shard left a summary"
refuse SGT_SHARDS=3 "$w" "a failed shard, SGT_SHARDS=3" "shard 1 \(task 1\): failed"
refuse SGT_SHARDS=2 "$w" "SGT_SHARDS that disagrees with the marks" "SGT_SHARDS=2, but run r1 has 3 shards"
refuse SGT_RUN=r9 "$w" "a run that is not there" "no shard of run SGT_RUN=r9"
if bash "$shards_sh" check >/dev/null 2>&1 </dev/null; then fail "check passed without SGT_WORK"; fi
refuse "$w" "a failed shard" "run r1 has 2 of 3 shards finished" "shard 1 \(task 1\): failed \(exit 3\)" \
  "SGT_SHARD_INDEX=1 .*shards.sh tune"
[[ ! -e $w/tuning.db && ! -e $w/table.json ]] || fail "a refused merge wrote the database or table"
# What the refusal says to run, run as printed: the shard again (it resumes), then the merge.
run_next "$w"
grep -q "in all, from 3 databases" "$w/merge-summary.txt" ||
  fail "the merge after the rerun: $(cat "$w/next.out")"
[[ $(table_shapes "$w/table.json") == "$all_shapes" ]] ||
  fail "the table after the rerun has $(table_shapes "$w/table.json")"
echo "a failed shard: refused, then run again as the refusal said and merged whole"

# 2. The same directory reused by a run of 2 shards in which shard 1 fails. Its old done mark
# (r1's, finished) is cleared when it starts; r1's shard 2 is left over; shard 0's database was
# r1's deal and is set aside, not resumed.
before=$(sha256sum "$w/tuning.db" "$w/table.json")
touch "$work/fail-1"
rcs="$(shard "$w" r2 0 2) $(shard "$w" r2 1 2)"
[[ $rcs == "0 3" ]] || fail "the shards of r2 exited $rcs, not 0 3: $(cat "$w"/shard-*.log)"
if ! grep -q '^run=r2' "$w/shards/tune-1.mark" || ! grep -q '^state=failed' "$w/shards/tune-1.mark"; then
  fail "shard 1 of r2 did not replace r1's done mark: $(cat "$w/shards/tune-1.mark")"
fi
[[ ! -e $w/shards/tune-1.json ]] || fail "r1's summary of task 1 is still there"
[[ -e $w/shards/stale/run-r1/tune-0.db ]] || fail "r1's tune-0.db was not set aside: $(ls -R "$w/shards")"
refuse "$w" "a reused directory, no SGT_SHARDS" "belong to 2 runs" "run r1: tasks 2 \(of 3 shards" \
  "run r2: tasks 0,1 \(of 2 shards"
refuse SGT_SHARDS=2 "$w" "a reused directory, SGT_SHARDS=2" "belong to 2 runs"
refuse SGT_RUN=r1 "$w" "the older run, whose shards 0 and 1 were taken over" \
  "shard 0 \(task 0\): not started in this run \(tune-0.mark is of run r2\)"
refuse SGT_RUN=r2 SGT_SHARDS=2 "$w" "a reused directory, SGT_RUN=r2 SGT_SHARDS=2" "shard 1 \(task 1\): failed"
refuse SGT_RUN=r2 "$w" "a reused directory, SGT_RUN=r2" "run r2 has 1 of 2 shards finished" \
  "shard 1 \(task 1\): failed"
[[ $(sha256sum "$w/tuning.db" "$w/table.json") == "$before" ]] || fail "refusals changed the table"
# Run again as told; the merge then takes r2's two shards and leaves r1's task 2 out.
run_next "$w"
grep -q "not this run's, not merged: tune-2.db (run r1)" "$w/next.out" ||
  fail "the merge of r2 did not leave r1's tune-2.db out: $(cat "$w/next.out")"
grep -q "in all, from 2 databases" "$w/merge-summary.txt" || fail "r2's merge: $(cat "$w/merge-summary.txt")"
echo "a reused directory with another shard count: refused, then merged without the stale shard"

# 3. A shard killed outright: its old done mark is gone and its mark says it started. A run of
# the same deal resumes the databases (nothing set aside).
w=$work/killed
mkdir -p "$w"
[[ $(shard "$w" k1 0 2) == 0 && $(shard "$w" k1 1 2) == 0 ]] || fail "run k1: $(cat "$w"/shard-*.log)"
touch "$work/kill-1"
[[ $(shard "$w" k2 0 2) == 0 ]] || fail "run k2 shard 0: $(cat "$w/shard-0.log")"
[[ $(shard "$w" k2 1 2) != 0 ]] || fail "the killed shard exited 0"
[[ ! -e $w/shards/tune-1.json ]] || fail "the killed shard's old done mark (tune-1.json) is still there"
grep -q '^state=started' "$w/shards/tune-1.mark" || fail "killed: $(cat "$w/shards/tune-1.mark")"
[[ ! -e $w/shards/stale ]] || fail "a run of the same deal set databases aside: $(ls -R "$w/shards")"
refuse "$w" "a killed shard" "shard 1 \(task 1\): started at .* and did not finish"
# A shard that already finished in the run it is asked to join has nothing to do.
if [[ $(shard "$w" k2 0 2) != 0 ]] || ! grep -q "nothing to do" "$w/shard-0.log"; then
  fail "a finished shard run again: $(cat "$w/shard-0.log")"
fi
# Joining a run with another count, suite or options is refused before the done mark is touched.
if [[ $(shard "$w" k2 1 3) != 2 ]] ||
  ! grep -q "joins run k2, whose shard marks .* say count=2" "$w/shard-1.log"; then
  fail "a shard of another count joined the run: $(cat "$w/shard-1.log")"
fi
echo "a killed shard: its done mark cleared, refused; joining with another count refused"

# 4. Mixed marks within one run, and databases without marks.
sed -i 's/^count=2$/count=3/' "$w/shards/tune-0.mark"
refuse "$w" "a run with two counts" "run k2 is mixed: .*count="
w=$work/unmarked
mkdir -p "$w/shards"
cp "$work/killed/shards/tune-0.db" "$w/shards/tune-0.db"
refuse "$w" "databases without marks" "but no shard mark"
rm -rf "$w"
mkdir -p "$w"
refuse "$w" "no shard at all" "no shard has started"

# 5. The Kubernetes launcher: pod I of an Indexed Job, the run from the Job's uid. A pod that
# fails is started again by the Job (same uid) and resumes; the merge needs no count.
w=$work/k8s
mkdir -p "$w"
pod() { # INDEX
  local rc=0
  SGT_WORK=$w JOB_COMPLETION_INDEX=$1 SGT_SHARD_COUNT=2 SGT_JOB_UID=0b8e-uid SGT_NAMESPACE=tuning \
    bash "$shards_sh" tune >"$w/pod-$1.log" 2>&1 || rc=$?
  echo "$rc"
}
touch "$work/fail-0"
[[ "$(pod 0) $(pod 1)" == "3 0" ]] || fail "pods: $(cat "$w"/pod-*.log)"
refuse "$w" "a failed pod" "run 0b8e-uid has 1 of 2 shards finished" "shard 0 \(task 0\): failed" \
  "kubectl --namespace tuning delete job sgemm-tune sgemm-tune-merge && SGT_RUN=0b8e-uid tools/cluster/k8s/run.sh"
[[ $(pod 0) == 0 ]] || fail "the pod started again: $(cat "$w/pod-0.log")"
merge_ok "$w" "the Kubernetes run"
[[ $(table_shapes "$w/table.json") == "$all_shapes" ]] || fail "k8s table: $(table_shapes "$w/table.json")"
echo "Kubernetes: a failed pod refused, the pod started again, merged whole"

# 6. Slurm array tasks, from the environment Slurm gives them (no Slurm needed): the array 3-7:2
# (tasks 3, 5, 7 are shards 0, 1, 2), task 5 fails. Run again alone (`sbatch --array=5`: a
# one-task array with a job id of its own), it is refused without SGT_RUN, which would make it
# shard 0 of 1; with SGT_RUN it is shard 1/3 of the run.
w=$work/slurm
mkdir -p "$w"
task() { # TASK ARRAY_JOB MIN MAX STEP COUNT [VAR=value...]
  local rc=0
  env SGT_WORK="$w" SLURM_ARRAY_TASK_ID="$1" SLURM_ARRAY_JOB_ID="$2" SLURM_JOB_ID="$2$1" \
    SLURM_ARRAY_TASK_MIN="$3" SLURM_ARRAY_TASK_MAX="$4" SLURM_ARRAY_TASK_STEP="$5" \
    SLURM_ARRAY_TASK_COUNT="$6" "${@:7}" bash "$shards_sh" tune >"$w/task-$1.log" 2>&1 || rc=$?
  echo "$rc"
}
touch "$work/fail-5"
rcs="$(task 3 70 3 7 2 3) $(task 5 70 3 7 2 3) $(task 7 70 3 7 2 3)"
[[ $rcs == "0 3 0" ]] || fail "array 3-7:2 exited $rcs: $(cat "$w"/task-*.log)"
refuse "$w" "a failed array task" "run 70 has 2 of 3 shards finished" \
  "shard 1 \(task 5\): failed \(exit 3\)" "SGT_RUN=70 .*sbatch --parsable --array=5 "
[[ $(task 5 80 5 5 1 1) == 2 ]] || fail "task 5 alone without SGT_RUN: $(cat "$w/task-5.log")"
grep -q "set SGT_RUN=70" "$w/task-5.log" || fail "task 5 alone: $(cat "$w/task-5.log")"
[[ $(task 5 80 5 5 1 1 SGT_RUN=70) == 0 ]] || fail "task 5 with SGT_RUN: $(cat "$w/task-5.log")"
grep -q "shard 1/3 (--shard 1/3)" "$w/task-5.log" || fail "task 5 again: $(cat "$w/task-5.log")"
merge_ok "$w" "the array run completed"
[[ $(table_shapes "$w/table.json") == "$all_shapes" ]] || fail "slurm table: $(table_shapes "$w/table.json")"
echo "Slurm: a failed task refused, alone without SGT_RUN refused, with it shard 1/3; merged whole"
echo "PASS"
