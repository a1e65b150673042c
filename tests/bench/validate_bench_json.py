#!/usr/bin/env python3
"""Validates one `bench --json` document against docs/schemas/bench.schema.json (and the common
definitions it references), for tests that build the document without a GPU.

Usage: validate_bench_json.py SCHEMA_DIR DOCUMENT. Exit 0: valid, 1: invalid (the errors are
printed), 2: bad usage, 77: python3-jsonschema is missing (the test skips).
"""

import glob
import json
import os
import sys


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        import jsonschema
    except ImportError:
        print("skip: no jsonschema module (apt-get install python3-jsonschema)")
        return 77
    schema_dir, document = argv[1], argv[2]
    schemas = {}
    for path in glob.glob(os.path.join(schema_dir, "*.schema.json")):
        with open(path, encoding="utf-8") as f:
            s = json.load(f)
        schemas[s["$id"]] = s
    bench = next(s for s in schemas.values() if s["$id"].endswith("/bench.schema.json"))
    try:  # jsonschema 4.18 and later resolve through `referencing`; Debian 12 has 4.10
        from referencing import Registry, Resource

        registry = Registry().with_resources(
            (uri, Resource.from_contents(s)) for uri, s in schemas.items())
        validator = jsonschema.Draft202012Validator(bench, registry=registry)
    except ImportError:
        resolver = jsonschema.RefResolver.from_schema(bench, store=schemas)
        validator = jsonschema.Draft202012Validator(bench, resolver=resolver)
    with open(document, encoding="utf-8") as f:
        doc = json.load(f)
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    for e in errors[:10]:
        print(f"{'/'.join(map(str, e.path)) or '(top)'}: {e.message}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
