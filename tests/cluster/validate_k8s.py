#!/usr/bin/env python3
"""Validates the Kubernetes recipe (tools/cluster/k8s/*.yaml) without a cluster.

Each manifest is checked against the strict JSON schemas of its kind (batch/v1 Job, v1
PersistentVolumeClaim) that the kubernetes-validate package ships, generated from Kubernetes'
own OpenAPI definitions, for the oldest and the newest Kubernetes the recipe is meant for. Then
what no schema says: the tune Job is Indexed and its SGT_SHARD_COUNT equals its completions (the
merge Job takes the count from the shards' marks; a count it is given must agree), both mount the
one claim, pods never restart in place, and both run the shared tools/cluster/shards.sh from the
ConfigMap that run.sh creates, the tune pods with the Job's uid as their run. Broken copies of the
manifests must be refused, so a validator that accepts everything fails here.

Usage: validate_k8s.py K8S_DIR. Exit 77 (a ctest skip) when kubernetes-validate is not installed
(tools/cluster/install-test-deps.sh installs it).
"""
import copy
import glob
import os
import sys

try:
    import kubernetes_validate
    import yaml
except ImportError as e:
    print(f"SKIP: {e.name} is not installed (tools/cluster/install-test-deps.sh installs "
          "kubernetes-validate into build/cluster-venv)")
    sys.exit(77)

# completionMode Indexed is GA from 1.24; the newest the package knows is checked too.
VERSIONS = ["1.25.0", kubernetes_validate.utils.latest_version()]


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def schema_errors(doc):
    """The schema violations of one resource, over every version; [] when it is valid."""
    errors = []
    for v in VERSIONS:
        try:
            kubernetes_validate.validate(doc, v, strict=True)
        except kubernetes_validate.ValidationError as e:
            errors.append(f"{v}: {e.message} at {'.'.join(str(p) for p in e.path)}")
        except kubernetes_validate.utils.SchemaNotFoundError as e:
            errors.append(f"{v}: no schema: {e}")
    return errors


def env_of(container, name):
    for e in container.get("env", []):
        if e["name"] == name:
            return e.get("value")
    return None


def main():
    k8s = sys.argv[1]
    docs = {}
    for path in sorted(glob.glob(os.path.join(k8s, "*.yaml"))):
        with open(path) as f:
            for doc in yaml.safe_load_all(f):
                if doc:
                    docs[(doc["kind"], doc["metadata"]["name"])] = (os.path.basename(path), doc)
    if not docs:
        fail(f"no manifests in {k8s}")
    for (kind, name), (path, doc) in docs.items():
        errs = schema_errors(doc)
        if errs:
            fail(f"{path} ({kind} {name}) breaks the schema:\n  " + "\n  ".join(errs))
        print(f"{path}: {doc['apiVersion']} {kind} {name} valid for Kubernetes "
              + " and ".join(VERSIONS))

    try:
        tune = docs[("Job", "sgemm-tune")][1]
        merge = docs[("Job", "sgemm-tune-merge")][1]
        pvc = docs[("PersistentVolumeClaim", "sgemm-tune-work")][1]
    except KeyError as e:
        fail(f"missing manifest {e}")
    spec = tune["spec"]
    if spec.get("completionMode") != "Indexed":
        fail("the tune Job is not Indexed: its pods would get no JOB_COMPLETION_INDEX")
    count = str(spec["completions"])
    tune_c = tune["spec"]["template"]["spec"]["containers"][0]
    if env_of(tune_c, "SGT_SHARD_COUNT") != count:
        fail(f"sgemm-tune: SGT_SHARD_COUNT={env_of(tune_c, 'SGT_SHARD_COUNT')} but the Job has "
             f"completions {count}")
    with open(os.path.join(k8s, "run.sh")) as f:
        run_sh = f.read()
    if "configmap sgemm-tune-tools --from-file=shards.sh=" not in run_sh:
        fail("run.sh does not create the ConfigMap sgemm-tune-tools from shards.sh")
    if not os.path.isfile(os.path.join(k8s, "..", "shards.sh")):
        fail("tools/cluster/shards.sh, which both Jobs run, is missing")
    for job, verb in ((tune, "tune"), (merge, "merge")):
        name = job["metadata"]["name"]
        pod = job["spec"]["template"]["spec"]
        if pod.get("restartPolicy") not in ("Never", "OnFailure"):
            fail(f"{name}: a Job's pods need restartPolicy Never or OnFailure")
        c = pod["containers"][0]
        for var in ("SGT_SHARD_COUNT", "SGT_SHARDS"):
            if job is merge and env_of(c, var) not in (None, count):
                fail(f"{name}: {var}={env_of(c, var)} but the tune Job has completions {count}")
        claims = {v["persistentVolumeClaim"]["claimName"] for v in pod.get("volumes", [])
                  if "persistentVolumeClaim" in v}
        if claims != {pvc["metadata"]["name"]}:
            fail(f"{name} mounts {claims}, not the claim of work-pvc.yaml")
        # Both run the one shared script (the marks one writes are what the other checks).
        command = c.get("command", []) + c.get("args", [])
        if command != ["bash", "/tools/shards.sh", verb]:
            fail(f"{name} runs {command}, not bash /tools/shards.sh {verb}")
        tools = [v for v in pod.get("volumes", [])
                 if v.get("configMap", {}).get("name") == "sgemm-tune-tools"]
        mounts = {m["name"]: m["mountPath"] for m in c.get("volumeMounts", [])}
        if len(tools) != 1 or mounts.get(tools[0]["name"]) != "/tools":
            fail(f"{name} does not mount the ConfigMap sgemm-tune-tools at /tools")
        if env_of(c, "SGT_WORK") != "/data" or mounts.get("work") != "/data":
            fail(f"{name}: SGT_WORK is not /data, where the claim is mounted")
        if env_of(c, "SGT_RUN") != "":
            fail(f"{name}: SGT_RUN must be empty in the manifest (run.sh sets it)")
    uid = [e for e in tune_c.get("env", []) if e["name"] == "SGT_JOB_UID"]
    if not uid or uid[0].get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") != \
            "metadata.labels['controller-uid']":
        fail("the tune Job does not take its run (SGT_JOB_UID) from the pod's controller-uid label")
    if "ReadWriteMany" not in pvc["spec"]["accessModes"]:
        fail("the work volume is not ReadWriteMany: the shards run on several nodes")

    # The validator itself: broken copies must be refused.
    broken = []
    b = copy.deepcopy(tune)
    b["spec"]["completionsMode"] = "Indexed"  # a misspelt field
    broken.append(("a misspelt field", b))
    b = copy.deepcopy(tune)
    b["spec"]["completions"] = "four"
    broken.append(("a count that is a string", b))
    b = copy.deepcopy(merge)
    del b["spec"]["template"]["spec"]["containers"][0]["name"]
    broken.append(("a container without its name", b))
    for what, doc in broken:
        if not schema_errors(doc):
            fail(f"the schema check accepted a Job with {what}")
    print(f"the tune Job is Indexed with {count} completions and SGT_SHARD_COUNT agrees; both Jobs "
          f"run shards.sh from the tools ConfigMap; {len(broken)} broken copies refused")
    print("PASS")


if __name__ == "__main__":
    main()
