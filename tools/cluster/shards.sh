#!/usr/bin/env bash
# One tuning run spread over shards, shared by both recipes (slurm/*.sbatch and k8s/*.yaml run it)
# so that what a shard records and what the merge checks are written once:
#   shards.sh tune    this task's shard: clears its done mark, writes a start mark, tunes into
#                     $SGT_WORK/shards/tune-<task>.db, then marks itself finished
#   shards.sh check   whether every shard of one run has finished; exit 0 if so, else 1 naming
#                     what is missing and the command that runs it again
#   shards.sh merge   check, and only then `db merge` the run's shards and `export` the table
# The mark, shards/tune-<task>.mark, says which run, shard, shard count, suite and options the
# task's database belongs to. The merge reads the marks, not a count it is told, so a failed
# shard, a done mark left by an earlier run, or shards of two runs in one directory are refused
# instead of published as a partial table. docs/cluster.md lists the checks and the variables.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
me=$here/$(basename "${BASH_SOURCE[0]}")
bin=${SGT_BIN:-sgemm-tune}

die() {
  local rc=$1
  shift
  echo "$*" >&2
  exit "$rc"
}

# A word as the shell reads it back: bare when it is plain, else single-quoted.
q() {
  if [[ $1 =~ ^[A-Za-z0-9_./:=,@%+-]+$ ]]; then
    printf '%s' "$1"
  else
    printf "'%s'" "${1//\'/\'\\\'\'}"
  fi
}

# NAME=value for each of these variables that is set, quoted, for commands a person pastes.
env_words() {
  local name out=""
  for name in "$@"; do
    if [[ -n ${!name:-} ]]; then out+="$name=$(q "${!name}") "; fi
  done
  printf '%s' "$out"
}

now() { date -u +%Y-%m-%dT%H:%M:%SZ; }

sha() { sha256sum | cut -c1-16; }

: "${SGT_WORK:?set SGT_WORK to the directory every shard writes to (its shards/ holds the marks)}"
shards=$SGT_WORK/shards

# The marks, loaded by load_marks: MARK[<task>.<key>] = value, and TASKS the tasks that have one.
declare -A MARK=()
TASKS=()

load_marks() {
  local f t line
  shopt -s nullglob
  for f in "$shards"/tune-*.mark; do
    t=${f##*/tune-}
    t=${t%.mark}
    [[ $t =~ ^[0-9]+$ ]] || continue
    TASKS+=("$t")
    while IFS= read -r line || [[ -n $line ]]; do
      [[ $line == \#* || $line != *=* ]] && continue
      MARK["$t.${line%%=*}"]=${line#*=}
    done <"$f"
  done
  shopt -u nullglob
  if ((${#TASKS[@]})); then
    mapfile -t TASKS < <(printf '%s\n' "${TASKS[@]}" | sort -n)
  fi
}

mark() { printf '%s' "${MARK[$1.$2]:-}"; }

# Writes the mark of task $1 from the variables of cmd_tune, atomically (a reader sees the old
# mark or the new one, never half of one).
write_mark() {
  local task=$1 state=$2 extra=${3:-}
  {
    echo "# sgemm-tune shard mark (tools/cluster/shards.sh): which run, shard and suite"
    echo "# tune-$task.db belongs to, and whether the shard finished. The merge reads it."
    echo "state=$state"
    echo "run=$run"
    echo "launcher=$launcher"
    echo "task=$task"
    echo "index=$index"
    echo "count=$count"
    echo "array=$array"
    echo "suite=$suite_hash"
    echo "options=$options_hash"
    echo "version=$version"
    echo "host=$(hostname)"
    echo "job=$job"
    echo "started=$started"
    echo "rerun=$rerun"
    [[ -z $extra ]] || printf '%s\n' "$extra"
  } >"$shards/tune-$task.mark.part"
  mv -f "$shards/tune-$task.mark.part" "$shards/tune-$task.mark"
}

# One field of the top-level "shard" object of a `tune --json` document (printed indented, two
# spaces a level), so that no JSON tool is needed on the node.
shard_field() {
  awk -v k="\"$2\":" 'index($0, "  \"shard\": {") == 1 { f = 1; next }
    f && /^  [}]/ { exit }
    f && $1 == k { v = $2; gsub(/[^0-9]/, "", v); print v; exit }' "$1"
}

# ---------------------------------------------------------------------------------------------
# tune: run this task's shard.
cmd_tune() {
  : "${SGT_SUITE:?set SGT_SUITE to the suite to tune (a JSON list of shapes)}"
  [[ -r $SGT_SUITE ]] || die 2 "sgt-tune: cannot read the suite SGT_SUITE=$SGT_SUITE"
  local suite_abs work_abs task shard_arg min max step t
  suite_abs=$(realpath "$SGT_SUITE")
  mkdir -p "$shards" "$SGT_WORK/logs"
  work_abs=$(realpath "$SGT_WORK")
  run=${SGT_RUN:-}
  if [[ -n $run && ! $run =~ ^[A-Za-z0-9._-]+$ ]]; then
    die 2 "sgt-tune: SGT_RUN='$run' is not a run id (letters, digits, . _ -)"
  fi
  load_marks

  # Which task this is, of which run, and the run's array. A task of the array as submitted
  # lets `--shard auto` read the scheduler's environment; a task run again on its own (a new
  # job, SGT_RUN naming the earlier run) is given its shard from that run's marks, since its
  # own environment describes a one-task array.
  if [[ -n ${SLURM_ARRAY_TASK_ID:-} ]]; then
    launcher=slurm
    task=$SLURM_ARRAY_TASK_ID
    job=${SLURM_JOB_ID:-?}
    if [[ -z $run || $run == "${SLURM_ARRAY_JOB_ID:-}" ]]; then
      run=${SLURM_ARRAY_JOB_ID:?SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_JOB_ID is not}
      min=${SLURM_ARRAY_TASK_MIN:?} max=${SLURM_ARRAY_TASK_MAX:?} step=${SLURM_ARRAY_TASK_STEP:-1}
      count=${SLURM_ARRAY_TASK_COUNT:?}
      if (((max - min) / step + 1 != count)); then
        die 2 "sgt-tune: the array of job $run is an index list ($count tasks between $min and" \
          "$max), whose tasks have no positions: submit a range, --array=0-$((count - 1))"
      fi
      array=$min-$max:$step
      shard_arg=auto
      # `sbatch --array=5` alone, where task 5 is another run's shard: almost surely that shard
      # run again without SGT_RUN, which would tune the whole suite as shard 0 of 1.
      local other
      other=$(mark "$task" run)
      if ((count == 1)) && [[ -n $other && $other != "$run" && $(mark "$task" count) != 1 ]]; then
        die 2 "sgt-tune: task $task is an array of one task, but tune-$task.mark belongs to run" \
          "$other (shard $(mark "$task" index) of $(mark "$task" count), $(mark "$task" state))." \
          "To run that shard again, set SGT_RUN=$other (the merge prints the whole command);" \
          "to start a new run, submit its whole array, or remove tune-$task.mark first."
      fi
    else
      array="" count=""
      for t in "${TASKS[@]}"; do
        if [[ $(mark "$t" run) == "$run" ]]; then
          array=$(mark "$t" array) count=$(mark "$t" count)
          break
        fi
      done
      [[ -n $array ]] || die 2 "sgt-tune: SGT_RUN=$run names a run with no shard mark in" \
        "$shards: unset SGT_RUN to start a new run, or name the run the merge reported"
      IFS='-:' read -r min max step <<<"$array"
      if ((task < min || task > max || (task - min) % step != 0)); then
        die 2 "sgt-tune: task $task is not in run $run's array $array: submit the tasks the" \
          "merge named (--array=...), or unset SGT_RUN to start a new run"
      fi
      shard_arg=$(((task - min) / step))/$count
    fi
    index=$(((task - min) / step))
  elif [[ -n ${JOB_COMPLETION_INDEX:-} ]]; then
    launcher=kubernetes
    task=$JOB_COMPLETION_INDEX index=$task
    count=${SGT_SHARD_COUNT:?set SGT_SHARD_COUNT to the completions of the Job}
    run=${run:-${SGT_JOB_UID:-}}
    [[ -n $run ]] || die 2 "sgt-tune: no run id: set SGT_JOB_UID to the Job's uid (the manifest" \
      "takes it from the pod's controller-uid label) or SGT_RUN"
    job=${HOSTNAME:-?}
    array=0-$((count - 1)):1
    shard_arg=auto
  elif [[ -n ${SGT_SHARD_INDEX:-} ]]; then
    launcher='env'
    task=$SGT_SHARD_INDEX index=$task
    count=${SGT_SHARD_COUNT:?set SGT_SHARD_COUNT beside SGT_SHARD_INDEX}
    [[ -n $run ]] || die 2 "sgt-tune: set SGT_RUN to one id shared by every shard of this run"
    job=$$
    array=0-$((count - 1)):1
    shard_arg=auto
  else
    die 2 "sgt-tune: no shard in the environment: run it as a Slurm array task, a Kubernetes" \
      "Indexed Job pod, or with SGT_SHARD_INDEX, SGT_SHARD_COUNT and SGT_RUN set"
  fi
  [[ $task =~ ^[0-9]+$ && $count =~ ^[1-9][0-9]*$ ]] ||
    die 2 "sgt-tune: task '$task' or shard count '$count' is not a number"

  suite_hash=$(sha <"$suite_abs")
  # The deal depends on the suite and the options; every shard of a run must deal alike.
  options_hash=$(printf '%s' "${SGT_TUNE_ARGS:-}" | sha)
  version=$("$bin" --version 2>/dev/null | head -n1 || true)
  started=$(now)

  # What runs this task again in the same run; the merge prints it for the shards it misses
  # (@TASKS@: their task ids).
  case $launcher in
    slurm)
      local opts="" tres
      [[ -z ${SLURM_JOB_PARTITION:-} ]] || opts+=" --partition=$(q "$SLURM_JOB_PARTITION")"
      [[ -z ${SLURM_CPUS_PER_TASK:-} ]] || opts+=" --cpus-per-task=$SLURM_CPUS_PER_TASK"
      tres=$(scontrol show job -o "$job" 2>/dev/null | grep -o 'TresPerNode=[^ ]*' | head -n1 |
        cut -d= -f2- || true)
      [[ $tres != gres[:/]* ]] || opts+=" --gres=$(q "${tres#gres?}")"
      rerun="SGT_RUN=$run SGT_WORK=$(q "$work_abs") SGT_SUITE=$(q "$suite_abs") $(env_words \
        SGT_TUNE_ARGS SGT_BIN SGT_CACHE_DIR SGT_GPU)sbatch --parsable --array=@TASKS@"
      rerun+=" --export=ALL$opts"
      rerun+=" --output=$(q "$work_abs/logs/tune-%A_%a.out") $(q "$here/slurm/tune-array.sbatch")"
      ;;
    kubernetes)
      local ns=${SGT_NAMESPACE:-default}
      rerun="kubectl --namespace $(q "$ns") delete job sgemm-tune sgemm-tune-merge &&"
      rerun+=" SGT_RUN=$run tools/cluster/k8s/run.sh SUITE.json $(q "$ns")"
      rerun+="   # SUITE.json: the same suite; the pods of finished shards exit at once"
      ;;
    env)
      rerun="SGT_RUN=$run SGT_SHARD_INDEX=@TASK@ SGT_SHARD_COUNT=$count SGT_WORK=$(q "$work_abs")"
      rerun+=" SGT_SUITE=$(q "$suite_abs") $(env_words SGT_TUNE_ARGS SGT_BIN SGT_CACHE_DIR \
        SGT_GPU)$(q "$me") tune"
      ;;
  esac

  # Every shard of a run must deal the same suite the same way; refuse to join one that differs.
  local what mine theirs
  for t in "${TASKS[@]}"; do
    [[ $t != "$task" && $(mark "$t" run) == "$run" ]] || continue
    for what in count array suite options; do
      case $what in
        suite) mine=$suite_hash ;;
        options) mine=$options_hash ;;
        *) mine=${!what} ;;
      esac
      theirs=$(mark "$t" "$what")
      if [[ $theirs != "$mine" ]]; then
        die 2 "sgt-tune: task $task joins run $run, whose shard marks (tune-$t.mark) say" \
          "$what=$theirs, but this task has $what=$mine. Every shard of a run must tune the same" \
          "suite with the same SGT_TUNE_ARGS and count: run it as the run did, or start a new" \
          "run (unset SGT_RUN; submit.sh starts one)."
      fi
    done
  done

  local base=$shards/tune-$task
  echo "sgt-tune: task $task (job $job) on $(hostname): shard $index/$count of run $run" >&2
  # A shard that finished in this same run has nothing left to do (a whole array run again to
  # redo its failed shards: the finished ones exit at once).
  if [[ $(mark "$task" run) == "$run" && $(mark "$task" state) == finished &&
    $(mark "$task" suite) == "$suite_hash" && $(mark "$task" options) == "$options_hash" &&
    -f $base.db && -f $base.json ]]; then
    echo "sgt-tune: shard $index/$count (task $task) of run $run finished at" \
      "$(mark "$task" ended); nothing to do" >&2
    return 0
  fi
  # Resume the database only when it holds this very shard of the same deal; any other database
  # in its place (another run's deal, or one of unknown origin) is set aside, never resumed and so
  # never merged into this run.
  if [[ -e $base.db ]]; then
    if [[ $(mark "$task" index) != "$index" || $(mark "$task" count) != "$count" ||
      $(mark "$task" suite) != "$suite_hash" || $(mark "$task" options) != "$options_hash" ]]; then
      local old aside
      old=$(mark "$task" run)
      aside=$shards/stale/run-${old:-unmarked}
      mkdir -p "$aside"
      local f
      for f in "$base".{db,db-wal,db-shm,db-journal,csv,json}; do
        if [[ -e $f ]]; then mv -f "$f" "$aside/"; fi
      done
      echo "sgt-tune: tune-$task.db was another deal's (run ${old:-unknown}," \
        "shard $(mark "$task" index)/$(mark "$task" count)); set aside in $aside" >&2
    fi
  fi
  # The done mark goes first: from here until the end this task's mark says it has not finished.
  rm -f "$base.json" "$base.json.part"
  write_mark "$task" started

  local args=(tune --shapes "$suite_abs" --shard "$shard_arg" --db "$base.db" --csv "$base.csv"
    --gpu "${SGT_GPU:-auto}" -j "${SLURM_CPUS_PER_TASK:-0}" --json)
  if [[ -n ${SGT_CACHE_DIR:-} ]]; then args+=(--cache-dir "$SGT_CACHE_DIR"); fi
  # Extra tune options, split on blanks (e.g. "--budget 10m --space default+tma").
  local extra=()
  read -r -a extra <<<"${SGT_TUNE_ARGS:-}"
  local rc=0
  "$bin" "${args[@]}" "${extra[@]}" >"$base.json.part" || rc=$?
  if ((rc != 0)); then
    write_mark "$task" failed "$(printf 'rc=%s\nended=%s' "$rc" "$(now)")"
    die "$rc" "sgt-tune: shard $index/$count (task $task) of run $run failed (exit $rc); what" \
      "it measured is kept and a run again resumes it"
  fi
  local got_index got_count
  got_index=$(shard_field "$base.json.part" index)
  got_count=$(shard_field "$base.json.part" count)
  if [[ $got_index != "$index" || $got_count != "$count" ]]; then
    write_mark "$task" failed "$(printf 'rc=1\nended=%s' "$(now)")"
    die 1 "sgt-tune: sgemm-tune tuned shard '${got_index}/${got_count}', not $index/$count of" \
      "run $run: its --shard resolved otherwise (see the log above)"
  fi
  # The summary, then the mark: a finished mark always has its summary beside it.
  mv -f "$base.json.part" "$base.json"
  write_mark "$task" finished "$(printf 'items=%s\nended=%s' \
    "$(shard_field "$base.json" items)" "$(now)")"
  echo "sgt-tune: shard $index/$count (task $task) of run $run finished" >&2
}

# ---------------------------------------------------------------------------------------------
# check: does one run have every shard finished? Sets RUN_DBS (the databases to merge, in shard
# order) and returns 0, or prints why not and what to do, and returns 1.
RUN_DBS=()
RUN_LINE=""

check_run() {
  load_marks
  shopt -s nullglob
  local dbs=("$shards"/tune-*.db)
  shopt -u nullglob
  if ((${#TASKS[@]} == 0)); then
    if ((${#dbs[@]})); then
      echo "sgt-merge: ${#dbs[@]} shard databases in $shards but no shard mark" \
        "(tune-<task>.mark): they were not written by this recipe, so nothing says which run" \
        "they belong to or whether they finished. Next: run the tune array again (submit.sh);" \
        "it sets them aside and tunes again." >&2
    else
      echo "sgt-merge: no shard has started in $shards. Next: run the tune array (submit.sh)" >&2
    fi
    return 1
  fi

  # The run: SGT_RUN, else the only one the marks name.
  local run=${SGT_RUN:-} t r
  local -A runs=()
  for t in "${TASKS[@]}"; do
    r=$(mark "$t" run)
    if [[ ! $r =~ ^[A-Za-z0-9._-]+$ ]]; then
      echo "sgt-merge: tune-$t.mark names no run (run='$r'): shards.sh did not write it; nothing" \
        "was merged. Next: remove it, and run task $t again if it is one of the run's" >&2
      return 1
    fi
    runs[$r]+="${runs[$r]:+,}$t"
  done
  if [[ -z $run ]]; then
    if ((${#runs[@]} > 1)); then
      {
        echo "sgt-merge: the marks in $shards belong to ${#runs[@]} runs, so which shards make"
        echo "the table is not known; nothing was merged:"
        for r in $(printf '%s\n' "${!runs[@]}" | sort); do
          t=${runs[$r]%%,*}
          echo "  run $r: tasks ${runs[$r]} (of $(mark "$t" count) shards, array" \
            "$(mark "$t" array); task $t started $(mark "$t" started))"
        done
        echo "Next: set SGT_RUN to the run to merge (a Slurm array's job id, as submit.sh printed"
        echo "it; a Kubernetes Job's uid), or remove the marks (shards/tune-<task>.mark) of the"
        echo "runs you no longer want: their databases are never merged."
      } >&2
      return 1
    fi
    run=${!runs[*]}
  elif [[ -z ${runs[$run]:-} ]]; then
    echo "sgt-merge: no shard of run SGT_RUN=$run in $shards (runs there: ${!runs[*]})." \
      "Next: set SGT_RUN to one of them, or run that run's tune array first" >&2
    return 1
  fi
  local mine
  IFS=, read -r -a mine <<<"${runs[$run]}"

  # Every mark of the run must describe the same run: one count, array, suite and options.
  local what vals v first=${mine[0]}
  for what in count array suite options launcher; do
    vals=""
    for t in "${mine[@]}"; do
      v=$(mark "$t" "$what")
      [[ $v == "$(mark "$first" "$what")" ]] || vals+="${vals:+, }tune-$t.mark $what=$v"
    done
    if [[ -n $vals ]]; then
      echo "sgt-merge: run $run is mixed: tune-$first.mark says" \
        "$what=$(mark "$first" "$what"), but" \
        "$vals. Its shards did not deal one suite alike, so no table is made of them; nothing" \
        "was merged. Next: start a new run (submit.sh), or remove the marks and databases of" \
        "the shards that are not the run's and run those shards again with SGT_RUN=$run." >&2
      return 1
    fi
  done
  local count array launcher min max step
  count=$(mark "$first" count) array=$(mark "$first" array) launcher=$(mark "$first" launcher)
  if [[ ! $count =~ ^[1-9][0-9]*$ || ! $array =~ ^[0-9]+-[0-9]+:[1-9][0-9]*$ ]]; then
    echo "sgt-merge: tune-$first.mark gives count='$count' array='$array', which shards.sh does" \
      "not write; nothing was merged. Next: remove the marks of run $run and run it again" >&2
    return 1
  fi
  IFS='-:' read -r min max step <<<"$array"
  if [[ -n ${SGT_SHARDS:-} && ${SGT_SHARDS} != "$count" ]]; then
    echo "sgt-merge: SGT_SHARDS=$SGT_SHARDS, but run $run has $count shards (array $array, from" \
      "its marks); nothing was merged. Next: set SGT_SHARDS=$count or unset it, or set SGT_RUN" \
      "to the run of $SGT_SHARDS shards." >&2
    return 1
  fi

  # Shard i is task min + i*step; each must have finished, with its database and summary.
  local i missing=() lines=() state host why ok=0
  for ((i = 0; i < count; ++i)); do
    t=$((min + i * step))
    state=$(mark "$t" state)
    host="on $(mark "$t" host) (job $(mark "$t" job))"
    if [[ $(mark "$t" run) != "$run" ]]; then
      if [[ -n $(mark "$t" run) ]]; then
        why="not started in this run (tune-$t.mark is of run $(mark "$t" run))"
        lines+=("shard $i (task $t): $why")
      else
        lines+=("shard $i (task $t): never started (no tune-$t.mark)")
      fi
    elif [[ $(mark "$t" index) != "$i" ]]; then
      echo "sgt-merge: tune-$t.mark says shard $(mark "$t" index), but task $t of array $array is" \
        "shard $i: the mark was not written by this run. Next: remove it and run task $t again" >&2
      return 1
    elif [[ $state == finished && -f $shards/tune-$t.db && -f $shards/tune-$t.json ]]; then
      ok=$((ok + 1))
      continue
    elif [[ $state == finished ]]; then
      lines+=("shard $i (task $t): its mark says finished but tune-$t.db or tune-$t.json is gone")
    elif [[ $state == failed ]]; then
      lines+=("shard $i (task $t): failed (exit $(mark "$t" rc)) at $(mark "$t" ended) $host")
    else
      why="started at $(mark "$t" started) $host and did not finish (killed, or still running)"
      lines+=("shard $i (task $t): $why")
    fi
    missing+=("$t")
  done
  # Marks of the run outside its array are not from this recipe.
  for t in "${mine[@]}"; do
    if ((t < min || t > max || (t - min) % step != 0)); then
      echo "sgt-merge: tune-$t.mark says run $run, but task $t is not in its array $array, so" \
        "this recipe did not write it. Next: remove it and merge again" >&2
      return 1
    fi
  done

  if ((${#missing[@]})); then
    local list rerun merge_cmd
    list=$(
      IFS=,
      echo "${missing[*]}"
    )
    rerun=$(mark "$first" rerun)
    {
      echo "sgt-merge: run $run has $ok of $count shards finished; refusing to merge a partial run."
      echo "Nothing was merged: ${SGT_DB:-$SGT_WORK/tuning.db} and the table are as they were."
      printf '  %s\n' "${lines[@]}"
      echo "Next: run the missing shards again (each resumes its own database), then merge again:"
      case $launcher in
        slurm)
          merge_cmd="SGT_RUN=$run SGT_WORK=$(q "$(realpath "$SGT_WORK")") $(env_words SGT_SHARDS \
            SGT_DB SGT_EXPORT SGT_EXPORT_FORMAT SGT_EXPORT_ARGS SGT_BIN)sbatch --export=ALL"
          merge_cmd+=" --dependency=afterany:\${job%%;*}"
          merge_cmd+=" --output=$(q "$(realpath "$SGT_WORK")/logs/merge-%j.out")"
          merge_cmd+=" $(q "$here/slurm/merge.sbatch")"
          echo "  job=\$(${rerun/@TASKS@/$list}) && $merge_cmd"
          ;;
        kubernetes)
          echo "  $rerun"
          ;;
        *)
          for t in "${missing[@]}"; do echo "  ${rerun//@TASK@/$t}"; done
          echo "  SGT_RUN=$run SGT_WORK=$(q "$(realpath "$SGT_WORK")") $(env_words SGT_SHARDS \
            SGT_DB SGT_EXPORT SGT_EXPORT_FORMAT SGT_EXPORT_ARGS SGT_BIN)$(q "$me") merge"
          ;;
      esac
    } >&2
    return 1
  fi

  RUN_DBS=()
  for ((i = 0; i < count; ++i)); do RUN_DBS+=("$shards/tune-$((min + i * step)).db"); done
  RUN_LINE="run $run: all $count shards finished (array $array, suite $(mark "$first" suite),"
  RUN_LINE+=" options $(mark "$first" options), $(mark "$first" version))"
  # Databases in shards/ that are not this run's stay out of the table; say so.
  local db skipped=()
  for db in "${dbs[@]}"; do
    t=${db##*/tune-}
    t=${t%.db}
    r=$(mark "$t" run)
    [[ $r == "$run" ]] || skipped+=("tune-$t.db (${r:+run }${r:-no mark})")
  done
  if ((${#skipped[@]})); then
    echo "sgt-merge: not this run's, not merged: ${skipped[*]}" >&2
  fi
  return 0
}

cmd_merge() {
  local db=${SGT_DB:-$SGT_WORK/tuning.db}
  local table=${SGT_EXPORT:-$SGT_WORK/sgemm_tuned_table.hpp}
  if [[ -n ${SGT_SHARDS:-} && ! $SGT_SHARDS =~ ^[1-9][0-9]*$ ]]; then
    die 2 "sgt-merge: SGT_SHARDS='$SGT_SHARDS' is not a positive count; unset it to take the" \
      "count from the shards' marks"
  fi
  # Every check comes before the first write: a refused merge leaves the database and the table
  # as they were.
  check_run || exit 1
  {
    echo "sgt-merge: $RUN_LINE"
    "$bin" db merge --db "$db" "${RUN_DBS[@]}"
  } | tee "$SGT_WORK/merge-summary.txt"
  local extra=()
  read -r -a extra <<<"${SGT_EXPORT_ARGS:-}"
  "$bin" export --db "$db" --format "${SGT_EXPORT_FORMAT:-cpp}" -o "$table" "${extra[@]}"
  echo "sgt-merge: $db, table $table" >&2
}

case ${1:-} in
  tune) cmd_tune ;;
  check)
    check_run || exit 1
    echo "sgt-merge: $RUN_LINE" >&2
    printf '%s\n' "${RUN_DBS[@]}"
    ;;
  merge) cmd_merge ;;
  *) die 2 "usage: shards.sh tune|check|merge (variables: docs/cluster.md)" ;;
esac
