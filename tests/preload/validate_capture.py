#!/usr/bin/env python3
"""Validates capture files of libsgemm_tune_preload against docs/schemas/captured.schema.json,
then checks that the schema is strict enough to fail a capture that disagrees with it.

Usage: validate_capture.py SCHEMA CAPTURE... Exit 0: all valid, 1: a file or check failed,
77: python3-jsonschema is missing (the test reports a skip).
"""

import copy
import json
import sys


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        import jsonschema
    except ImportError:
        print("skip: no jsonschema module (apt-get install python3-jsonschema)")
        return 77
    with open(argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    failures = 0
    for path in argv[2:]:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
        for e in errors[:5]:
            print(f"FAIL {path}: {'/'.join(map(str, e.path)) or '(top)'}: {e.message}")
        failures += bool(errors)
        if errors or not doc["problems"]:
            continue
        # What the schema must refuse: another format or version, a problem without its shape,
        # a layout outside NN/NT/TN/TT, a class that is not one of the classes.
        for what, change in [
            ("format", lambda d: d.update(format="sgemm-tune-trials")),
            ("format_version", lambda d: d.update(format_version=2)),
            ("no shape", lambda d: d["problems"][0].pop("shape")),
            ("layout XN", lambda d: d["problems"][0].update(layout="XN")),
            ("alpha 2", lambda d: d["problems"][0].update(alpha="2")),
            ("calls -1", lambda d: d["problems"][0].update(calls=-1)),
            ("no processes", lambda d: d.pop("processes")),
        ]:
            altered = copy.deepcopy(doc)
            change(altered)
            if validator.is_valid(altered):
                print(f"FAIL {path}: a capture with {what} passed the schema")
                failures += 1
        print(f"ok: {path}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
