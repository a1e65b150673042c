#!/usr/bin/env bash
# Installs the Debian packages sgemm-tune builds against, only those that are missing.
# Idempotent: a second run installs nothing. The CUDA toolkit must already be installed
# (CMake finds it through nvcc on PATH or the usual install location).
set -euo pipefail

# The one list of them (the README points here rather than repeating it).
packages=(
  cmake ninja-build g++ pkg-config                   # the build
  nlohmann-json3-dev libspdlog-dev libsqlite3-dev    # JSON, logs, the tuning database
  libcli11-dev libmuparser-dev zlib1g-dev            # the command line, space expressions, .gz
  libxgboost-dev                                     # the `model` strategy's ranking model
  libssl-dev                                         # SHA-256 (libcrypto) of sources and binaries
  libgtest-dev                                       # the test suite
  python3-matplotlib                                 # `bench --plot`, `strategy-bench --plot`
  python3-jsonschema                                 # the tests of --json against docs/schemas
  python3-numpy                                      # tools/tf32x3's emulations and their test
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all packages present"
else
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -q
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if ! command -v nvcc >/dev/null 2>&1 && [[ ! -x /usr/local/cuda/bin/nvcc ]]; then
  echo "install-deps: the CUDA toolkit (nvcc, NVRTC, cuBLAS) was not found; install CUDA 12.x or 13.x" >&2
  exit 1
fi
