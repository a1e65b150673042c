#!/usr/bin/env bash
# Installs what is missing and builds sgemm-tune (Release with debug info) into ./build.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
export PATH="$PATH:/usr/local/cuda/bin"
cmake --preset default >/dev/null
cmake --build --preset default
