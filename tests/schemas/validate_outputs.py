#!/usr/bin/env python3
"""Runs the real sgemm-tune for each command that prints JSON on stdout (the replay evaluator,
the shipped datasets and the fixture database stand in for a GPU) and validates every document
against its schema in docs/schemas; then checks that the schemas are strict enough to fail a
document that disagrees with them, and that every schema file is used.

Usage: validate_outputs.py SGEMM_TUNE SOURCE_DIR. Exit 0: all valid, 1: a document or check
failed, 77: python3-jsonschema is missing (ctest reports a skip).
"""

import copy
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

failures = []


def fail(what):
    failures.append(what)
    print(f"FAIL: {what}", file=sys.stderr)


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        import jsonschema
    except ImportError:
        print("skip: no jsonschema module (apt-get install python3-jsonschema)")
        return 77
    binary, source = argv[1], argv[2]
    schema_dir = os.path.join(source, "docs", "schemas")
    datasets = os.path.join(source, "datasets", "h200")
    fixture = os.path.join(source, "tests", "db", "fixtures", "h200-1000x1000x1000-NN-schema3.db")

    schemas = {}
    for path in sorted(glob.glob(os.path.join(schema_dir, "*.schema.json"))):
        name = os.path.basename(path)[: -len(".schema.json")]
        with open(path, encoding="utf-8") as f:
            schemas[name] = json.load(f)
        try:
            jsonschema.Draft202012Validator.check_schema(schemas[name])
        except jsonschema.SchemaError as e:
            fail(f"{path} is not a valid draft 2020-12 schema: {e.message}")

    # common.schema.json holds the shared definitions the others reference by their $id.
    store = {s["$id"]: s for s in schemas.values() if "$id" in s}

    try:  # jsonschema 4.18 and later resolve through `referencing`; Debian 12 has 4.10
        from referencing import Registry, Resource

        registry = Registry().with_resources(
            (uri, Resource.from_contents(s)) for uri, s in store.items())

        def validator(name):
            return jsonschema.Draft202012Validator(schemas[name], registry=registry)
    except ImportError:
        def validator(name):
            resolver = jsonschema.RefResolver.from_schema(schemas[name], store=store)
            return jsonschema.Draft202012Validator(schemas[name], resolver=resolver)

    tmp = tempfile.mkdtemp(prefix="sgt-schemas-")
    used = set()
    samples = {}

    def t(name):
        return os.path.join(tmp, name)

    def ds(shape):
        return os.path.join(datasets, shape + ".json.gz")

    db = t("fixture.db")
    shutil.copyfile(fixture, db)  # the checked-in file is never opened for writing
    with open(t("suite.json"), "w", encoding="utf-8") as f:
        f.write('{"shapes": [{"shape": "512x2048x512", "layout": "NT"},'
                ' {"shape": "1000x1000x1000", "layout": "NN"}]}')
    with open(t("configs.txt"), "w", encoding="utf-8") as f:
        f.write("wt_128x64x16_w64x32_wn2_t4x4_n128_mb1\n")
    replay = ["--space", "tma-small", "--strategy", "random", "--max-evals", "10", "--top", "2",
              "--seed", "3"]

    # (schema, label, arguments, exit codes that come with a document)
    cases = [
        ("space", "plain", ["space", "--space", "quick"], [0]),
        ("space", "explained", ["space", "--space", "quick", "--shape", "1000x1000x1000",
                                "--layout", "NT", "--explain", "--list", "--simulate"], [0]),
        ("check", "valid", ["check", "wt_128x64x16_w64x32_wn2_t4x4_n128_mb1"], [0]),
        ("check", "invalid", ["check", "wt_128x64x16_w64x32_wn3_t4x4_n128_mb1"], [2]),
        ("check", "tma", ["check", "wt_64x128x16_w32x32_wn2_t4x4_n256_mb1_s2_p4_g8_o1_m1"],
         [0]),
        ("compile", "one config", ["compile", "--configs", t("configs.txt"), "--cache-dir",
                                   t("cache")], [0]),
        ("tune", "replay", ["tune", "--replay", ds("512x2048x512-NT"), "--shape", "512x2048x512",
                            "--layout", "NT", "--db", t("r.db")] + replay, [0]),
        ("tune", "suite", ["tune", "--shapes", t("suite.json"), "--replay", ds("512x2048x512-NT"),
                           "--replay", ds("1000x1000x1000-NN"), "--db", t("s.db")] + replay, [0]),
        ("tune", "suite spread over replay devices",
         ["tune", "--shapes", t("suite.json"), "--replay", ds("512x2048x512-NT"), "--replay",
          ds("1000x1000x1000-NN"), "--gpu", "0,1", "--db", t("g.db")] + replay, [0]),
        ("tune", "dry run", ["tune", "--dry-run", "--shape", "3000x3000x3000"], [0]),
        ("tune", "dry run of a suite", ["tune", "--dry-run", "--shapes", t("suite.json")], [0]),
        ("query", "exact", ["query", "--gpu", "NVIDIA H200", "--shape", "1000x1000x1000",
                            "--db", db], [0]),
        ("query", "nearest", ["query", "--gpu", "NVIDIA H200", "--shape", "999x1000x1000",
                              "--db", db], [3]),
        ("query", "default", ["query", "--gpu", "NVIDIA H200", "--shape", "1000x1000x1000",
                              "--layout", "TT", "--db", db], [4]),
        ("list", "fixture", ["list", "--db", db], [0]),
        ("db-info", "fixture", ["db", "info", "--check", "--db", db], [0]),
        ("db-ingest", "import", ["db", "import", ds("8192x128x8192-NN"), "--db", t("i.db")], [0]),
        ("db-ingest", "merge", ["db", "merge", db, "--db", t("i.db")], [0]),
        ("db-vacuum", "vacuum", ["db", "vacuum", "--db", t("i.db")], [0]),
        ("dataset-info", "two", ["dataset", "info", ds("512x2048x512-NT"),
                                 ds("8192x8192x8192-NN")], [0]),
        ("dataset-write", "header", ["dataset", "write", "--db", t("i.db"), "--shape",
                                     "8192x128x8192", "-o", t("w.json.gz")], [0]),
        ("strategy-bench", "brief", ["strategy-bench", "--strategies", "random", "--seeds", "1",
                                     "--max-fraction", "0.002", "--csv", t("sb.csv")], [0]),
        ("export", "table", ["export", "--format", "json", "-o", "-", "--db", db], [0]),
        ("db-export", "dump", ["db", "export", "--json", "-", "--db", t("i.db")], [0]),
    ]
    try:
        for schema, label, args, codes in cases:
            if schema not in schemas:
                fail(f"docs/schemas/{schema}.schema.json is missing")
                continue
            used.add(schema)
            # export and db export print their stored formats with -o - / --json -; every other
            # command prints through --json.
            flag = [] if schema in ("export", "db-export") else ["--json"]
            cmd = [binary, "-q"] + args + flag
            r = subprocess.run(cmd, capture_output=True, text=True)
            what = f"{schema} ({label}): {' '.join(args)}"
            if r.returncode not in codes:
                fail(f"{what}: exit {r.returncode}, expected {codes}: {r.stderr.strip()}")
                continue
            try:
                doc = json.loads(r.stdout)
            except json.JSONDecodeError as e:
                fail(f"{what}: stdout is not one JSON document: {e}")
                continue
            errors = sorted(validator(schema).iter_errors(doc), key=lambda e: list(e.path))
            for e in errors[:5]:
                fail(f"{what}: {'/'.join(map(str, e.path)) or '(top)'}: {e.message}")
            if not errors:
                print(f"ok: {what}")
            samples.setdefault(schema, doc)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    # bench needs a GPU: its schema is checked above only for being a schema, and below against
    # the example document it carries.
    used.update({"bench", "common", "captured"})
    for name in sorted(set(schemas) - used):
        fail(f"docs/schemas/{name}.schema.json is validated by no case here")
    for name, s in sorted(schemas.items()):
        for i, example in enumerate(s.get("examples", [])):
            for e in validator(name).iter_errors(example):
                fail(f"{name}: example {i}: {'/'.join(map(str, e.path))}: {e.message}")

    # The schemas must catch a document that disagrees with them: a field of the wrong type, a
    # required field gone, another format_version, and (where the schema is closed) a stray field.
    def expect_invalid(name, doc, why):
        if validator(name).is_valid(doc):
            fail(f"{name}: a document with {why} passed its schema")

    for name, doc in sorted(samples.items()):
        required = schemas[name].get("required", [])
        if "format_version" not in required:
            fail(f"{name}: format_version is not required")
        for key in required:
            altered = copy.deepcopy(doc)
            if key not in altered:
                continue  # the document itself failed its schema above
            del altered[key]
            expect_invalid(name, altered, f"no {key}")
        altered = copy.deepcopy(doc)
        altered["format_version"] = doc.get("format_version", 0) + 1
        expect_invalid(name, altered, "format_version + 1")
        typed = [k for k in required if k != "format_version"]
        if typed:
            altered = copy.deepcopy(doc)
            altered[typed[0]] = [altered[typed[0]]]
            expect_invalid(name, altered, f"{typed[0]} wrapped in an array")
    # A CSV-era name creeping back: the ratio to cuBLAS has one name.
    if "tune" in samples and "summary" not in samples["tune"]:
        altered = copy.deepcopy(samples["tune"])
        altered["finalists"][0]["ratio_to_cublas"] = altered["finalists"][0].pop("ratio")
        expect_invalid("tune", altered, "ratio_to_cublas instead of ratio")

    if failures:
        print(f"{len(failures)} failure(s)", file=sys.stderr)
        return 1
    print(f"all {len(cases)} documents match their schemas")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
