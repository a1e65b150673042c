#!/usr/bin/env bash
# Submits the Slurm recipe: [compile array ->] tune array -> merge, each waiting for the one before
# (the tune for the compile to succeed; the merge for every tune task to end, however it ended, so
# that it says which shards are missing rather than wait on a dependency that can never be met).
# Each submission is a new run: the tune array's job id, which the merge is given as SGT_RUN.
# Prints the job ids as `compile=ID tune=ID merge=ID`. Variables: docs/cluster.md; the essentials
# are SGT_SUITE, SGT_WORK and SGT_SHARDS.
#   SGT_SUITE=bench/shapes.json SGT_WORK=/shared/run SGT_SHARDS=8 tools/cluster/slurm/submit.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

: "${SGT_SUITE:?set SGT_SUITE to the suite to tune (a JSON list of shapes)}"
: "${SGT_WORK:?set SGT_WORK to a directory that every node sees}"
export SGT_SHARDS=${SGT_SHARDS:-4}
if ! [[ $SGT_SHARDS =~ ^[1-9][0-9]*$ ]]; then
  echo "submit: SGT_SHARDS='$SGT_SHARDS' is not a positive count" >&2
  exit 2
fi
# The suite's path as every node sees it.
SGT_SUITE=$(realpath "$SGT_SUITE")
mkdir -p "$SGT_WORK/logs"
SGT_WORK=$(realpath "$SGT_WORK")
export SGT_SUITE SGT_WORK
# Slurm runs copies of the batch scripts: tell them where the shared shards.sh is.
SGT_CLUSTER_TOOLS=$(cd "$here/.." && pwd)
export SGT_CLUSTER_TOOLS
# A new run: its tasks take the array's job id as the run, whatever this shell had set.
unset SGT_RUN

# Options per job, split on blanks. The tune array asks for one GPU per task unless told otherwise.
read -r -a tune_opts <<<"${SGT_SBATCH_TUNE---gres=gpu:1}"
read -r -a merge_opts <<<"${SGT_SBATCH_MERGE:-}"
read -r -a compile_opts <<<"${SGT_SBATCH_COMPILE:-}"

submit() { sbatch --parsable --export=ALL "$@" | cut -d';' -f1; }

dep=()
compile_id=none
if [[ ${SGT_COMPILE:-0} == 1 ]]; then
  compile_id=$(submit --array=0-$((${SGT_COMPILE_SHARDS:-$SGT_SHARDS} - 1)) \
    --output="$SGT_WORK/logs/compile-%A_%a.out" "${compile_opts[@]}" "$here/compile.sbatch")
  dep=(--dependency=afterok:"$compile_id")
fi
tune_id=$(submit "${dep[@]}" --array=0-$((SGT_SHARDS - 1)) \
  --output="$SGT_WORK/logs/tune-%A_%a.out" "${tune_opts[@]}" "$here/tune-array.sbatch")
merge_id=$(export SGT_RUN=$tune_id; submit --dependency=afterany:"$tune_id" \
  --output="$SGT_WORK/logs/merge-%j.out" "${merge_opts[@]}" "$here/merge.sbatch")
echo "compile=$compile_id tune=$tune_id merge=$merge_id"
