#!/usr/bin/env bash
# Runs the Kubernetes recipe with kubectl: the volume, the suite's ConfigMap, the Indexed Job,
# then (once every index has completed) the merge Job. Usage: run.sh SUITE.json [NAMESPACE].
# Change completions and SGT_SHARD_COUNT together in both Jobs to change the shard count.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
suite=${1:?usage: run.sh SUITE.json [NAMESPACE]}
ns=(--namespace "${2:-default}")
kubectl "${ns[@]}" apply -f "$here/work-pvc.yaml"
kubectl "${ns[@]}" create configmap sgemm-tune-suite --from-file=suite.json="$suite" \
  --dry-run=client -o yaml | kubectl "${ns[@]}" apply -f -
kubectl "${ns[@]}" apply -f "$here/tune-indexed-job.yaml"
kubectl "${ns[@]}" wait --for=condition=complete job/sgemm-tune --timeout="${SGT_WAIT:-24h}"
kubectl "${ns[@]}" apply -f "$here/merge-job.yaml"
kubectl "${ns[@]}" wait --for=condition=complete job/sgemm-tune-merge --timeout=1h
kubectl "${ns[@]}" logs job/sgemm-tune-merge
