#!/usr/bin/env python3
"""tools/plot_bench.py, headless, on each kind of CSV it is for: the one `tune --shapes --csv`
writes (made here by the real binary through the replay evaluator), bench's (its columns as
tuner/gpu/retime.cpp writes them; bench needs a GPU), and tune CSVs of earlier versions
(`ratio_to_cublas`, without status, gpu and date). A CSV with no ratio column is refused.

Usage: plot_bench_test.py SGEMM_TUNE SOURCE_DIR. Exit 0: all passed, 1: a check failed,
77: no matplotlib (ctest reports a skip).
"""

import os
import subprocess
import sys
import tempfile

BENCH_CSV = """shape,M,N,K,layout,config,tuned_ms,cublas_ms,ratio,tuned_gflops,cublas_gflops,status,gpu,date,source,space,loads,reps,tuned_spread,cublas_spread,seed,reason
1024x1024x1024,1024,1024,1024,NN,wt_128x64x16_w64x32_wn2_t4x4_n128_mb1,0.062464,0.063424,1.0154,34379.5,33859.2,ok,NVIDIA H200,2026-11-29T20:49:17Z,tuned,default,float4,20,0.0123,0.0661,1314413160,
1023x777x513,1023,777,513,NT,,,,,,,untuned,NVIDIA H200,2026-11-29T20:49:18Z,db,,,20,,,1314413160,not tuned
"""

# tune --shapes --csv before `ratio` existed: ratio_to_cublas, 0 for a shape without a winner.
OLD_TUNE_CSV = """shape,M,N,K,layout,winner,median_ms,cublas_ms,ratio_to_cublas,gflops,wall_s,edge_checks_passed,edge_checks_total
4096x4096x4096,4096,4096,4096,NN,wt_128x64x16_w64x32_wn2_t4x4_n128_mb1,2.651840,2.683248,1.011844,51827.8,61.0,23,23
17x17x17,17,17,17,NN,,0.000000,0.004000,0.000000,0.0,1.0,0,0
"""

# Between the two: both names, ratio, status, gpu and date at the end.
MIDDLE_TUNE_CSV = """shape,M,N,K,layout,winner,median_ms,cublas_ms,ratio_to_cublas,gflops,wall_s,edge_checks_passed,edge_checks_total,ratio,status,gpu,date
512x2048x512,512,2048,512,NT,wt_128x64x16_w64x32_wn2_t4x4_n128_mb1,0.020000,0.022000,1.100000,53687.1,3.0,0,0,1.100000,ok,NVIDIA H200,2026-12-02T01:00:00Z
"""

NO_RATIO_CSV = """shape,layout,median_ms
512x2048x512,NT,0.02
"""

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print(f"FAIL: {what}", file=sys.stderr)


def plot(script, csv_path, out):
    env = dict(os.environ, MPLBACKEND="Agg")
    return subprocess.run([sys.executable, script, csv_path, out], env=env, capture_output=True,
                          text=True)


def expect_plot(script, csv_path, out, what):
    r = plot(script, csv_path, out)
    check(r.returncode == 0, f"{what}: exit {r.returncode}: {r.stderr.strip()}")
    if r.returncode == 0:
        with open(out, "rb") as f:
            head = f.read(8)
        ok = head.startswith(b"\x89PNG") if out.endswith(".png") else b"<" in head
        check(ok, f"{what}: {out} is not a {os.path.splitext(out)[1]} image")


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    binary, source = argv[1], argv[2]
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("skip: no matplotlib (apt-get install python3-matplotlib)")
        return 77
    script = os.path.join(source, "tools", "plot_bench.py")
    shipped = os.path.join(source, "datasets", "h200")
    with tempfile.TemporaryDirectory() as tmp:
        def write(name, text):
            p = os.path.join(tmp, name)
            with open(p, "w", encoding="utf-8") as f:
                f.write(text)
            return p

        # The CSV of tune --shapes, from the real binary on two recorded problems.
        suite = write("suite.json", '{"shapes": [{"shape": "512x2048x512", "layout": "NT"},'
                                    ' {"shape": "1000x1000x1000", "layout": "NN"}]}')
        tune_csv = os.path.join(tmp, "tune.csv")
        r = subprocess.run([binary, "-q", "tune", "--shapes", suite,
                            "--replay", os.path.join(shipped, "512x2048x512-NT.json.gz"),
                            "--replay", os.path.join(shipped, "1000x1000x1000-NN.json.gz"),
                            "--space", "tma-small", "--strategy", "random", "--max-evals", "10",
                            "--top", "1", "--seed", "2", "--csv", tune_csv,
                            "--db", os.path.join(tmp, "t.db")], capture_output=True, text=True)
        check(r.returncode == 0, f"tune --shapes --csv: exit {r.returncode}: {r.stderr.strip()}")
        if r.returncode == 0:
            expect_plot(script, tune_csv, os.path.join(tmp, "tune.png"), "tune --shapes CSV")
        expect_plot(script, write("bench.csv", BENCH_CSV), os.path.join(tmp, "bench.svg"),
                    "bench CSV")
        expect_plot(script, write("old.csv", OLD_TUNE_CSV), os.path.join(tmp, "old.png"),
                    "tune CSV with ratio_to_cublas only")
        expect_plot(script, write("mid.csv", MIDDLE_TUNE_CSV), os.path.join(tmp, "mid.png"),
                    "tune CSV with ratio_to_cublas and ratio")

        r = plot(script, write("none.csv", NO_RATIO_CSV), os.path.join(tmp, "none.png"))
        check(r.returncode == 2 and "missing columns: ratio" in r.stderr,
              f"a CSV without a ratio column: exit {r.returncode}: {r.stderr.strip()}")
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    print("plot_bench.py: all CSV kinds plotted")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
