#!/usr/bin/env bash
# GPU test of serve mode (ctest label gpu): the example application (examples/preload) recorded
# with `sgemm-tune capture`, tuned briefly, exported, and served with `sgemm-tune serve --verify
# --min-ratio 0`, which compares every served call, of every winner, with the real cuBLAS's
# result; then the example timed end to end with and without the library, serving the winners
# faster than cuBLAS when tuned (the default). Exit 77 (a skip) without a CUDA device.
# Usage: gpu_serve.sh SGEMM_TUNE EXAMPLE [FIGURE.json]
#   FIGURE.json: where the timing goes (default: only printed).
# SGT_SERVE_TEST_EVALS: candidates measured per problem (default 24); SGT_SERVE_TEST_ITERS: the
# example's iterations when timed (default 200).
set -euo pipefail
cli=$1 example=$2 figure=${3:-}
evals=${SGT_SERVE_TEST_EVALS:-24}
iters=${SGT_SERVE_TEST_ITERS:-200}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

set +e
"$example" 1 >/dev/null 2>&1
rc=$?
set -e
if [ $rc -eq 2 ]; then
  echo "skip: no CUDA device"
  exit 77
fi
[ $rc -eq 0 ] || { echo "the example fails without the library (exit $rc)"; exit 1; }

echo "== capture"
"$cli" capture --timing --out "$work/captured.json" -- "$example" 3

echo "== tune (at most $evals candidates per problem)"
"$cli" tune --gpu auto --shapes "$work/captured.json" --db "$work/tune.db" \
  --cache-dir "$work/cache" --max-evals "$evals" --budget 3m

echo "== export"
"$cli" export --format json --db "$work/tune.db" -o "$work/table.json"

echo "== serve, every served call compared with cuBLAS"
"$cli" serve --table "$work/table.json" --cache-dir "$work/cache" --min-ratio 0 \
  --verify --preload-log info -- "$example" 3 >"$work/verify.out" 2>"$work/verify.err"
cat "$work/verify.out" "$work/verify.err"
if grep -q MISMATCH "$work/verify.out"; then echo "a check against the CPU failed"; exit 1; fi
python3 - "$work/verify.err" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"serve: (\d+) GEMM calls, (\d+) served by tuned kernels \((\d+) problems?\), "
              r"(\d+) passed to cuBLAS", text)
assert m, "no serve summary:\n" + text
calls, served, problems, through = map(int, m.groups())
assert served > 0, "nothing was served:\n" + text
assert calls == served + through, text
v = re.search(r"verified (\d+) against cuBLAS: (\d+) mismatched", text)
assert v, "nothing verified:\n" + text
assert int(v.group(1)) == served, f"{v.group(1)} verified of {served} served"
assert int(v.group(2)) == 0, "served calls differ from cuBLAS:\n" + text
# The example's TF32 call and its batch of 16 heads must have gone to cuBLAS.
assert "TF32 allowed" in text and "batched" in text, text
print(f"served {served} of {calls} calls ({problems} problems), every one equal to cuBLAS")
PY

echo "== the plan timed: winners cuBLAS beat when tuned go to cuBLAS (the default --min-ratio 1)"
"$cli" serve --table "$work/table.json" --cache-dir "$work/cache" --prepare-only \
  --write-plan "$work/plan.json"

echo "== timing: $iters iterations, 3 runs each, alternating"
python3 - "$cli" "$example" "$work/plan.json" "$iters" "$figure" <<'PY'
import datetime, json, re, statistics, subprocess, sys, time
cli, example, plan, iters, figure = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
commands = {"plain": [example, str(iters)],
            "served": [cli, "serve", "--plan", plan, "--", example, str(iters)]}
results = {"plain": [], "served": []}
for run in range(3):
    for kind, cmd in commands.items():
        t0 = time.perf_counter()
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wall = time.perf_counter() - t0
        assert p.returncode == 0, f"{kind}: exit {p.returncode}\n{p.stderr}"
        t = re.search(r"timing: first iteration ([\d.]+) ms, then ([\d.]+) ms per iteration", p.stderr)
        assert t, p.stderr
        results[kind].append({"wall_s": round(wall, 4), "first_ms": float(t.group(1)),
                              "per_iter_ms": float(t.group(2))})
gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader", "-i", "0"],
                     capture_output=True, text=True).stdout.strip()
med = lambda kind, key: statistics.median(r[key] for r in results[kind])
out = {"date": datetime.date.today().isoformat(), "gpu": gpu, "iterations": iters, **results,
       "median_per_iter_ms": {k: med(k, "per_iter_ms") for k in results},
       "median_wall_s": {k: med(k, "wall_s") for k in results}}
out["speedup_per_iter"] = out["median_per_iter_ms"]["plain"] / out["median_per_iter_ms"]["served"]
out["speedup_wall"] = out["median_wall_s"]["plain"] / out["median_wall_s"]["served"]
print(json.dumps(out, indent=1))
if figure:
    with open(figure, "w") as f:
        json.dump(out, f, indent=1)
PY
echo "ok"
