#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite. Exits non-zero if any test fails.
# GPU tests (ctest label `gpu`) skip themselves when no device is present.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh
ctest --preset default -j"$(nproc)" "$@"
