#!/usr/bin/env bash
# Runs the Kubernetes recipe with kubectl: the volume, the suite's and the scripts' ConfigMaps,
# the Indexed Job, then (once it has ended, however it ended) the merge Job, which merges only
# when every shard of the run has finished and otherwise says which are missing and how to run
# them again. Usage: run.sh SUITE.json [NAMESPACE].
# With SGT_RUN set to an earlier run (the merge prints it), the tune Job runs that run again: the
# pods of its finished shards exit at once, the others resume their databases; delete the old
# Jobs first (kubectl delete job sgemm-tune sgemm-tune-merge), since a Job's pods cannot change.
# Change completions and SGT_SHARD_COUNT together in the tune Job to change the shard count.
# SGT_WAIT bounds the wait for the tune Job (24h; s, m or h).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
suite=${1:?usage: run.sh SUITE.json [NAMESPACE]}
ns=(--namespace "${2:-default}")
run=${SGT_RUN:-}

# Seconds from a duration such as 90s, 30m, 24h (a bare number: seconds).
seconds() {
  local d=$1
  case $d in
    *h) echo $((${d%h} * 3600)) ;;
    *m) echo $((${d%m} * 60)) ;;
    *s) echo "${d%s}" ;;
    *) echo "$d" ;;
  esac
}

# Waits until Job $1 is Complete or Failed, for at most $2 seconds; prints which.
wait_job() {
  local job=$1 limit=$2 waited=0 conds
  while ((waited <= limit)); do
    conds=" $(kubectl "${ns[@]}" get job "$job" \
      -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type} {end}') "
    case $conds in
      *" Complete "*) echo Complete && return 0 ;;
      *" Failed "*) echo Failed && return 0 ;;
    esac
    sleep 20
    waited=$((waited + 20))
  done
  echo "run.sh: job/$job has not ended after $limit s: see kubectl ${ns[*]} get pods" >&2
  return 1
}

kubectl "${ns[@]}" apply -f "$here/work-pvc.yaml"
kubectl "${ns[@]}" create configmap sgemm-tune-suite --from-file=suite.json="$suite" \
  --dry-run=client -o yaml | kubectl "${ns[@]}" apply -f -
# The script both Jobs run (tools/cluster/shards.sh, shared with the Slurm recipe).
kubectl "${ns[@]}" create configmap sgemm-tune-tools --from-file=shards.sh="$here/../shards.sh" \
  --dry-run=client -o yaml | kubectl "${ns[@]}" apply -f -
kubectl set env --local -f "$here/tune-indexed-job.yaml" SGT_RUN="$run" -o yaml |
  kubectl "${ns[@]}" apply -f -
state=$(wait_job sgemm-tune "$(seconds "${SGT_WAIT:-24h}")")
# A failed tune Job still goes to the merge: it names the shards that did not finish.
echo "run.sh: the tune Job ended $state"
# The run the merge takes: the one named, else this tune Job's (its uid, as its pods recorded it).
if [[ -z $run ]]; then
  run=$(kubectl "${ns[@]}" get job sgemm-tune -o jsonpath='{.metadata.uid}')
fi
kubectl "${ns[@]}" delete job sgemm-tune-merge --ignore-not-found
kubectl set env --local -f "$here/merge-job.yaml" SGT_RUN="$run" -o yaml |
  kubectl "${ns[@]}" apply -f -
state=$(wait_job sgemm-tune-merge 3600)
kubectl "${ns[@]}" logs job/sgemm-tune-merge
if [[ $state != Complete ]]; then
  echo "run.sh: the merge refused or failed (its log above says why and what to run)" >&2
  exit 1
fi
