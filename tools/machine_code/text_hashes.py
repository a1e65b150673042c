#!/usr/bin/env python3
"""Machine-code identity: the SHA-256 of every .text section of configs compiled by NVRTC.

A change to the tuner that must not change what the GPU runs (a redesign, a refactor of the
kernel sources) is proved by compiling the same configs before and after and comparing their
cubins' .text sections: equal machine code runs as fast as it was measured, so every stored
figure still holds without a GPU to re-measure it.

  text_hashes.py sample --bin SGEMM_TUNE --out SAMPLE.json
      every winner in bench/results/*.csv (in its own layout and loads) and at least a tenth of
      every built-in space, chosen so that every value of every knob appears (NN, float4)
  text_hashes.py record --bin SGEMM_TUNE --sample SAMPLE.json --out MANIFEST.json [--jobs N]
      a sample may name its "arch" (default sm_90) and "precision" (a family of another class,
      e.g. sample-sm_90a-tf32x3_wg.json); the manifest keeps them and check compiles with them
  text_hashes.py check  --bin SGEMM_TUNE --manifest MANIFEST.json [--limit N] [--jobs N]
      compiles the first N configs of each instance (all without --limit) into a fresh cache and
      compares; exit 1 naming every config whose machine code differs (a config that differs is
      compiled twice more first: ptxas does not always give the same .text under load).
  text_hashes.py widen --bin SGEMM_TUNE --manifest MANIFEST.json --names LIST [--repeat 3]
      on the recorded tree only: adds the other outcomes ptxas gives for the listed configs.
  text_hashes.py rerecord --bin SGEMM_TUNE --manifest MANIFEST.json --names LIST [--jobs N]
      after a kernel change made on purpose: compiles the listed configs (a check's DIFFERS
      lines) and replaces their entries, alternatives dropped; every other entry stays as
      recorded, so a check still proves that nothing else changed.
"""
import argparse
import csv
import glob
import hashlib
import json
import math
import os
import random
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FORMAT = "sgemm-tune-text-hashes"


def run_json(cmd):
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return json.loads(out.stdout)


def text_sections(cubin):
    """{section name: sha256} of every .text.* section of an ELF file, read with readelf."""
    # readelf warns about the CUDA-specific info fields; the section table is read right.
    out = subprocess.run(["readelf", "-S", "-W", cubin], check=True, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True).stdout
    with open(cubin, "rb") as f:
        data = f.read()
    sections = {}
    for line in out.splitlines():
        line = line.strip()
        if not line.startswith("["):
            continue
        fields = line[line.index("]") + 1:].split()
        if len(fields) < 5 or not fields[0].startswith(".text."):
            continue
        name, offset, size = fields[0], int(fields[3], 16), int(fields[4], 16)
        sections[name] = hashlib.sha256(data[offset:offset + size]).hexdigest()
    return sections


def builtin_spaces(binary):
    # The names from `space --explain`'s error list would do; the JSON of `space` is cleaner.
    names = []
    for path in sorted(glob.glob(os.path.join(ROOT, "search_spaces", "*.json"))):
        names.append(os.path.splitext(os.path.basename(path))[0])
    return names


def sample(args):
    rng = random.Random(24)
    groups = {}
    # Winners: every config bench/results names, in the layout and loads it ran with.
    for path in sorted(glob.glob(os.path.join(ROOT, "bench", "results", "*.csv"))):
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                name = row.get("config") or row.get("winner") or ""
                if not name.startswith("wt_"):
                    continue
                loads = row.get("loads") or "float4"
                if loads not in ("float4", "scalar"):
                    loads = "float4"
                key = "%s/%s" % (row.get("layout") or "NN", loads)
                groups.setdefault(key, set()).add(name)
    # Names of knobs since removed, or configs today's rules refuse, are not comparable: skipped.
    for key in list(groups):
        valid = set()
        for name in sorted(groups[key]):
            r = subprocess.run([args.bin, "check", name], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
            if r.returncode == 0:
                valid.add(name)
        groups[key] = valid
    winners = sum(len(v) for v in groups.values())
    # A tenth of every built-in space (at least), every value of every knob among it.
    nn = groups.setdefault("NN/float4", set())
    spaces = {}
    for space in builtin_spaces(args.bin):
        j = run_json([args.bin, "space", "--space", space, "--list", "--json"])
        configs = j["configs"]
        chosen = set()
        fields = configs[0]["params"].keys() if configs else []
        for field in fields:
            for value in sorted({c["params"][field] for c in configs}):
                if any(c["params"][field] == value for c in configs if c["name"] in chosen):
                    continue
                pool = [c["name"] for c in configs if c["params"][field] == value]
                chosen.add(rng.choice(pool))
        want = math.ceil(len(configs) / 10)
        rest = [c["name"] for c in configs if c["name"] not in chosen]
        rng.shuffle(rest)
        chosen.update(rest[: max(0, want - len(chosen))])
        spaces[space] = {"survivors": len(configs), "sampled": len(chosen)}
        nn.update(chosen)
    doc = {"format": FORMAT + "-sample", "version": 1, "winners": winners, "spaces": spaces,
           "instances": {k: sorted(v) for k, v in sorted(groups.items())}}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    total = sum(len(v) for v in doc["instances"].values())
    print("sample: %d configs (%d winner entries), %s" % (total, winners, spaces))
    return 0


def compile_group(binary, key, names, cache, jobs, target=None):
    """target: the manifest's (or sample's) "arch" and "precision" (default sm_90, fp32)."""
    target = target or {}
    layout, loads = key.split("/")
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("\n".join(names) + "\n")
        listing = f.name
    try:
        cmd = [binary, "compile", "--configs", listing, "--layout", layout, "--loads", loads,
               "--arch", target.get("arch", "sm_90"), "--cache-dir", cache, "--json"]
        if target.get("precision"):
            cmd += ["--precision", target["precision"]]
        if jobs:
            cmd += ["-j", str(jobs)]
        j = run_json(cmd)
    finally:
        os.unlink(listing)
    out = {}
    for r in j["results"]:
        entry = {"status": r["status"], "instance": r["instance"]}
        if r["status"] == "ok" and r["cubin"]:
            entry["sections"] = text_sections(r["cubin"])
        out[r["name"]] = entry
    return j.get("nvrtc", ""), out


def record(args):
    with open(args.sample) as f:
        s = json.load(f)
    cache = tempfile.mkdtemp(prefix="sgt-text-")
    manifest = {"format": FORMAT, "version": 1, "arch": s.get("arch", "sm_90"), "instances": {}}
    if s.get("precision"):
        manifest["precision"] = s["precision"]
    for key, names in s["instances"].items():
        nvrtc, got = compile_group(args.bin, key, names, cache, args.jobs, manifest)
        manifest["nvrtc"] = nvrtc
        manifest["instances"][key] = got
        print("%s: %d configs" % (key, len(got)), file=sys.stderr)
    with open(args.out, "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    return 0


def widen(args):
    """Adds the outcomes ptxas gives for the listed configs over --repeat fresh single-thread
    compiles to their entries as alternatives. Only for a tree whose kernels the manifest was
    recorded from: an outcome of today's sources is then an outcome of the recorded ones."""
    with open(args.manifest) as f:
        m = json.load(f)
    wanted = read_names(args.names)
    added = 0
    for key, names in wanted.items():
        for _ in range(args.repeat):
            _, got = compile_group(args.bin, key, names, tempfile.mkdtemp(prefix="sgt-text-"), 1, m)
            for name in names:
                entry, have = m["instances"][key][name], got.get(name, {})
                if have.get("status") != entry.get("status") or "sections" not in have:
                    continue
                alts = entry.setdefault("alternatives", [])
                if have["sections"] != entry.get("sections") and have["sections"] not in alts:
                    alts.append(have["sections"])
                    added += 1
    with open(args.manifest, "w") as f:
        json.dump(m, f, indent=1, sort_keys=True)
        f.write("\n")
    print("widen: %d alternative outcomes added" % added)
    return 0


def read_names(path):
    """{instance: [config names]} from lines 'INSTANCE NAME[:] ...' (a check's DIFFERS lines,
    with or without the DIFFERS word)."""
    wanted = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if parts and parts[0] == "DIFFERS":
                parts = parts[1:]
            if len(parts) >= 2:
                wanted.setdefault(parts[0], []).append(parts[1].rstrip(":"))
    return wanted


def rerecord(args):
    with open(args.manifest) as f:
        m = json.load(f)
    cache = tempfile.mkdtemp(prefix="sgt-text-")
    replaced = 0
    for key, names in read_names(args.names).items():
        if key not in m["instances"]:
            print("%s: no such instance in %s" % (key, args.manifest), file=sys.stderr)
            return 2
        missing = [n for n in names if n not in m["instances"][key]]
        if missing:
            print("%s: not in the manifest: %s" % (key, " ".join(missing)), file=sys.stderr)
            return 2
        _, got = compile_group(args.bin, key, names, cache, args.jobs, m)
        for name in names:
            m["instances"][key][name] = got[name]
            replaced += 1
    with open(args.manifest, "w") as f:
        json.dump(m, f, indent=1, sort_keys=True)
        f.write("\n")
    print("rerecord: %d entries replaced" % replaced)
    return 0


def check(args):
    with open(args.manifest) as f:
        m = json.load(f)
    if m.get("format") != FORMAT:
        print("%s is not a %s manifest" % (args.manifest, FORMAT), file=sys.stderr)
        return 2
    cache = tempfile.mkdtemp(prefix="sgt-text-")
    differ, compared = [], 0
    for key, entries in sorted(m["instances"].items()):
        names = sorted(entries)
        if args.limit:
            names = names[: args.limit]
        if args.tamper is True:
            # Test of the check itself: one recorded section changed must be reported.
            first = next(n for n in names if entries[n].get("sections"))
            sec = sorted(entries[first]["sections"])[0]
            entries[first]["sections"][sec] = "0" * 64
            args.tamper = "%s %s" % (key, first)
        nvrtc, got = compile_group(args.bin, key, names, cache, args.jobs, m)
        if nvrtc != m.get("nvrtc"):
            print("NVRTC %s differs from the manifest's %s: machine code is not comparable"
                  % (nvrtc, m.get("nvrtc")), file=sys.stderr)
            return 2
        same = lambda want, have: (want.get("status") == have.get("status")
                                   and (want.get("sections") == have.get("sections")
                                        or have.get("sections") in want.get("alternatives", [])))
        suspects = [n for n in names if not same(entries[n], got.get(n, {}))]
        # ptxas does not always give the same .text under load (docs/experiments/
        # 2026-12-01-fma-order.md): a config that differs is compiled twice more, one thread, in
        # fresh caches, and counts as changed only if no compile matches.
        for attempt in range(2):
            if not suspects:
                break
            _, again = compile_group(args.bin, key, suspects, tempfile.mkdtemp(prefix="sgt-text-"), 1, m)
            suspects = [n for n in suspects if not same(entries[n], again.get(n, {}))]
        compared += len(names)
        for name in suspects:
            differ.append("%s %s: %s -> %s" % (key, name, entries[name].get("status"),
                                               got.get(name, {}).get("status")))
    print("machine code: %d of %d configs identical to %s" % (compared - len(differ), compared,
                                                               os.path.basename(args.manifest)))
    for d in differ:
        print("  DIFFERS " + d)
    if args.tamper:
        # Passes only when the altered config, and nothing else, was reported.
        ok = len(differ) == 1 and differ[0].startswith(args.tamper + ":")
        print("tamper test: %s" % ("the altered hash was reported" if ok else "FAILED"))
        return 0 if ok else 1
    return 1 if differ else 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("sample")
    a.add_argument("--bin", required=True)
    a.add_argument("--out", required=True)
    b = sub.add_parser("record")
    b.add_argument("--bin", required=True)
    b.add_argument("--sample", required=True)
    b.add_argument("--out", required=True)
    b.add_argument("--jobs", type=int, default=0)
    c = sub.add_parser("check")
    c.add_argument("--bin", required=True)
    c.add_argument("--manifest", required=True)
    c.add_argument("--limit", type=int, default=0)
    c.add_argument("--jobs", type=int, default=0)
    c.add_argument("--tamper", action="store_true",
                   help="alter one recorded hash first (to test that the check fails)")
    w = sub.add_parser("widen")
    w.add_argument("--bin", required=True)
    w.add_argument("--manifest", required=True)
    w.add_argument("--names", required=True, help="lines 'INSTANCE NAME' (a check's DIFFERS lines)")
    w.add_argument("--repeat", type=int, default=3)
    r = sub.add_parser("rerecord")
    r.add_argument("--bin", required=True)
    r.add_argument("--manifest", required=True)
    r.add_argument("--names", required=True, help="lines 'INSTANCE NAME' (a check's DIFFERS lines)")
    r.add_argument("--jobs", type=int, default=0)
    args = p.parse_args()
    return {"sample": sample, "record": record, "check": check, "widen": widen,
            "rerecord": rerecord}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
