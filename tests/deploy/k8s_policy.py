#!/usr/bin/env python3
"""Policy check of rendered Kubernetes manifests (tests/deploy/k8s_check.sh).

  k8s_policy.py check FILE.yaml...      every object must follow the rules
  k8s_policy.py expect FILE.yaml...     negative test: every object carries the
                                        annotation k8s-check/expect (rule ids,
                                        comma-separated) and must break exactly
                                        those rules
  k8s_policy.py to-json FILE.yaml...    the objects as JSON for
                                        k8s_schema_check.js, on stdout

Rules, for every container of a workload (Deployment, StatefulSet,
DaemonSet, ReplicaSet, Job, CronJob, Pod):
  probes           liveness and readiness probes (not for the containers of
                   Jobs and CronJobs, which run to completion, nor init
                   containers)
  resources        cpu and memory requests and limits
  image-tag        an image pinned by tag or digest, never :latest or untagged
  non-root         runAsNonRoot true (container or pod)
  read-only-root   readOnlyRootFilesystem true
  no-escalation    allowPrivilegeEscalation false, not privileged
  drop-all         capabilities.drop holds ALL, nothing added
  seccomp          seccompProfile RuntimeDefault or Localhost (container or pod)
and for the objects together:
  volumes          every volumeMount names a volume or volume claim template
  secret-mode      secret volumes' defaultMode gives nobody but the owner
                   write (the binaries refuse such secret files)
  scale-target     an HPA's scaleTargetRef names an object of the rendering
Exit 0: as expected; 1: a rule broken (or not broken as expected); 2: usage.
"""

import json
import sys

import yaml

WORKLOADS = {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob", "Pod"}
RUN_TO_COMPLETION = {"Job", "CronJob"}
EXPECT_ANNOTATION = "k8s-check/expect"


def load(paths):
    """[(source, object)] of every non-empty YAML document in paths."""
    objects = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for doc in yaml.safe_load_all(f):
                if doc is not None:
                    objects.append((path, doc))
    return objects


def pod_spec_and_claims(obj):
    """(pod spec, names of volume claim templates) of a workload, else (None, ())."""
    kind = obj.get("kind")
    if kind not in WORKLOADS:
        return None, ()
    spec = obj.get("spec") or {}
    if kind == "Pod":
        return spec, ()
    if kind == "CronJob":
        spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    claims = tuple(((c.get("metadata") or {}).get("name")) for c in spec.get("volumeClaimTemplates") or [])
    return ((spec.get("template") or {}).get("spec") or {}), claims


def image_pinned(image):
    if "@sha256:" in image:
        return True
    last = image.rsplit("/", 1)[-1]
    if ":" not in last:
        return False
    return last.rsplit(":", 1)[1] not in ("", "latest")


def container_violations(kind, pod, container, init):
    """[(rule, message)] for one container."""
    found = []
    name = container.get("name")
    pod_sc = pod.get("securityContext") or {}
    sc = container.get("securityContext") or {}
    if not init and kind not in RUN_TO_COMPLETION:
        for probe in ("livenessProbe", "readinessProbe"):
            if not container.get(probe):
                found.append(("probes", f"container {name}: no {probe}"))
    resources = container.get("resources") or {}
    for part in ("requests", "limits"):
        for res in ("cpu", "memory"):
            if not (resources.get(part) or {}).get(res):
                found.append(("resources", f"container {name}: no {res} in resources.{part}"))
    image = container.get("image") or ""
    if not image_pinned(image):
        found.append(("image-tag", f"container {name}: image {image!r} is not pinned to a tag or digest"))
    if sc.get("runAsNonRoot", pod_sc.get("runAsNonRoot")) is not True:
        found.append(("non-root", f"container {name}: runAsNonRoot is not true"))
    if sc.get("runAsUser", pod_sc.get("runAsUser")) == 0:
        found.append(("non-root", f"container {name}: runAsUser 0"))
    if sc.get("readOnlyRootFilesystem") is not True:
        found.append(("read-only-root", f"container {name}: readOnlyRootFilesystem is not true"))
    if sc.get("allowPrivilegeEscalation") is not False or sc.get("privileged") is True:
        found.append(("no-escalation", f"container {name}: allowPrivilegeEscalation is not false, or privileged"))
    caps = sc.get("capabilities") or {}
    if "ALL" not in (caps.get("drop") or []) or caps.get("add"):
        found.append(("drop-all", f"container {name}: capabilities do not drop ALL, or add some"))
    seccomp = (sc.get("seccompProfile") or pod_sc.get("seccompProfile") or {}).get("type")
    if seccomp not in ("RuntimeDefault", "Localhost"):
        found.append(("seccomp", f"container {name}: seccompProfile is {seccomp or 'unset'}"))
    return found


def object_violations(obj, names_by_kind):
    """[(rule, message)] for one object; names_by_kind: {kind: {names}} of the rendering."""
    found = []
    kind = obj.get("kind")
    if kind == "HorizontalPodAutoscaler":
        ref = (obj.get("spec") or {}).get("scaleTargetRef") or {}
        if ref.get("name") not in names_by_kind.get(ref.get("kind"), set()):
            found.append(("scale-target", f"scaleTargetRef {ref.get('kind')}/{ref.get('name')} is not in the rendering"))
    pod, claims = pod_spec_and_claims(obj)
    if pod is None:
        return found
    volumes = {v.get("name"): v for v in pod.get("volumes") or []}
    for v in volumes.values():
        mode = (v.get("secret") or {}).get("defaultMode")
        if mode is not None and mode & 0o022:
            found.append(("secret-mode", f"volume {v.get('name')}: defaultMode {mode:o} lets others write"))
    for init, key in ((True, "initContainers"), (False, "containers")):
        for c in pod.get(key) or []:
            found.extend(container_violations(kind, pod, c, init))
            for m in c.get("volumeMounts") or []:
                if m.get("name") not in volumes and m.get("name") not in claims:
                    found.append(("volumes", f"container {c.get('name')}: mounts {m.get('name')!r}, "
                                             "which is no volume or volume claim template"))
    return found


def all_violations(objects):
    names_by_kind = {}
    for _, obj in objects:
        names_by_kind.setdefault(obj.get("kind"), set()).add((obj.get("metadata") or {}).get("name"))
    return [(source, obj, object_violations(obj, names_by_kind)) for source, obj in objects]


def describe(source, obj):
    return f"{source}: {obj.get('kind')}/{(obj.get('metadata') or {}).get('name')}"


def check(paths):
    results = all_violations(load(paths))
    broken = 0
    for source, obj, found in results:
        for rule, message in found:
            print(f"{describe(source, obj)}: [{rule}] {message}")
        broken += bool(found)
    print(f"policy: {len(results)} objects checked, {broken} break a rule")
    return 1 if broken else 0


def expect(paths):
    results = all_violations(load(paths))
    wrong = 0
    for source, obj, found in results:
        wanted = ((obj.get("metadata") or {}).get("annotations") or {}).get(EXPECT_ANNOTATION)
        if not wanted:
            print(f"{describe(source, obj)}: no {EXPECT_ANNOTATION} annotation")
            wrong += 1
            continue
        wanted = {r.strip() for r in wanted.split(",")}
        got = {rule for rule, _ in found}
        if got != wanted:
            print(f"{describe(source, obj)}: expected to break {sorted(wanted)}, broke {sorted(got)}")
            wrong += 1
        else:
            print(f"{describe(source, obj)}: rejected as expected ({', '.join(sorted(got))})")
    print(f"policy negative test: {len(results)} bad objects, {wrong} not rejected as expected")
    return 1 if wrong or not results else 0


def to_json(paths):
    json.dump([{"source": s, "object": o} for s, o in load(paths)], sys.stdout)
    return 0


def main(argv):
    commands = {"check": check, "expect": expect, "to-json": to_json}
    if len(argv) < 3 or argv[1] not in commands:
        print(__doc__, file=sys.stderr)
        return 2
    return commands[argv[1]](argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
