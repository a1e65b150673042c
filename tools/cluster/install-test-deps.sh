#!/usr/bin/env bash
# Installs what the cluster tests need, only what is missing: Debian's Slurm (slurmctld, slurmd,
# slurm-client) and munge for the one-node cluster of tests/cluster/slurm_test.sh, and
# kubernetes-validate (PyPI; it ships Kubernetes' JSON schemas) into build/cluster-venv for
# tests/cluster/validate_k8s.py. Idempotent. No daemon is started: the test starts its own.
set -euo pipefail
cd "$(dirname "$0")/../.."

packages=(slurmctld slurmd slurm-client munge)
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
if ! python3 -m venv --help >/dev/null 2>&1; then missing+=(python3-venv); fi
if ((${#missing[@]} == 0)); then
  echo "install-test-deps: Debian packages present"
else
  echo "install-test-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -q
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

venv=build/cluster-venv
version=1.37.0
if "$venv/bin/python3" -c "import kubernetes_validate, sys
sys.exit(kubernetes_validate.__version__ != '$version')" 2>/dev/null; then
  echo "install-test-deps: kubernetes-validate $version present"
else
  echo "install-test-deps: installing kubernetes-validate $version into $venv"
  mkdir -p build
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "kubernetes-validate==$version"
fi
