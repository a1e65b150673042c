#!/usr/bin/env bash
# GPU test of libsgemm_tune_preload against the real cuBLAS (ctest label gpu): the example
# application (examples/preload) under the library must print the same results as without it,
# the capture must hold its GEMMs with their device and times, and sgemm-tune must plan a tune
# of the FP32 ones. Exit 77 (a skip) without a CUDA device.
# Usage: gpu_capture.sh PRELOAD_LIB EXAMPLE SGEMM_TUNE SOURCE_DIR
set -euo pipefail
lib=$1 example=$2 cli=$3 source=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

set +e
"$example" 3 >"$work/plain.out" 2>"$work/plain.err"
rc=$?
set -e
if [ $rc -eq 2 ]; then
  echo "skip: no CUDA device"
  exit 77
fi
[ $rc -eq 0 ] || { cat "$work/plain.out" "$work/plain.err"; exit 1; }

LD_PRELOAD=$lib SGT_CAPTURE=$work/captured.json SGT_CAPTURE_TIMING=1 \
  "$example" 3 >"$work/capture.out" 2>"$work/capture.err"
# The results checked against the CPU are printed with their errors: identical, to the digit.
diff "$work/plain.out" "$work/capture.out"
grep -q "14 GEMM calls, 14 recorded as 5 problems" "$work/capture.err" ||
  { cat "$work/capture.err"; exit 1; }

python3 - "$work/captured.json" <<'PY'
import json, sys
capture = json.load(open(sys.argv[1]))
process = capture["processes"][0]
assert process["devices"] and process["devices"][0]["name"], process
problems = {(p["shape"], p["layout"], p["precision"], p["batch"]): p for p in capture["problems"]}
linear = problems[("512x3072x768", "NT", "fp32", 1)]
assert linear["calls"] == 4 and linear["timed_calls"] == 3 and linear["time_ms"] > 0, linear
assert linear["device"] == process["devices"][0]["index"], linear
assert ("3072x768x512", "TN", "fp32", 1) in problems, problems.keys()
assert problems[("1024x1024x1024", "NN", "fp32", 1)]["cublas"]["order_c"] == "row"
assert ("512x3072x768", "NT", "tf32", 1) in problems, problems.keys()
assert ("128x128x64", "NT", "fp32", 16) in problems, problems.keys()
PY

set +e
python3 "$source/tests/preload/validate_capture.py" \
  "$source/docs/schemas/captured.schema.json" "$work/captured.json"
rc=$?
set -e
[ $rc -eq 0 ] || [ $rc -eq 77 ] || exit 1

"$cli" tune --dry-run --arch sm_90 --space quick --json --shapes "$work/captured.json" \
  >"$work/plan.json"
python3 - "$work/plan.json" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
got = sorted(r["shape"] + " " + r["layout"] for r in runs)
assert got == ["1024x1024x1024 NN", "3072x768x512 TN", "512x3072x768 NT"], got
PY
echo "ok"
