#!/usr/bin/env python3
"""Checks the Grafana dashboards in deploy/grafana/: each is valid JSON of a
dashboard (title, uid, panels with unique ids and a gridPos, every target a
PromQL expression), and every metric name its queries use is one the docs
document: a row of the metric tables in docs/edge.md ("Metrics") or
docs/operations.md ("Metrics"). A histogram's _bucket, _sum and _count
series count as its name. Then the same check must refuse each dashboard
under tests/deploy/grafana_bad/ (so it can fail).

Usage: tests/deploy/grafana_check.py [REPO_ROOT]   (exit 0: all good)
"""
import glob
import json
import os
import re
import sys

DOCS = ["docs/edge.md", "docs/operations.md"]
METRIC = re.compile(r"\b((?:edge|shorten)_[a-z0-9_]+)")
SUFFIXES = ("_bucket", "_sum", "_count")


def documented_metrics(root):
    """Names in the metric tables' first column. A cell may abbreviate names
    after the first: `edge_cache_hits_total`, `_stale_hits_total` means
    edge_cache_stale_hits_total (the first name's first two parts)."""
    names = set()
    for doc in DOCS:
        in_metrics = False
        with open(os.path.join(root, doc), encoding="utf-8") as f:
            for line in f:
                if line.startswith("## "):
                    in_metrics = line.strip() == "## Metrics"
                    continue
                if not in_metrics or not line.startswith("| `"):
                    continue
                cell = line.split("|")[1]
                prefix = None
                for token in re.findall(r"`([^`]+)`", cell):
                    name = token.split("{")[0].split(" ")[0]
                    if METRIC.fullmatch(name):
                        names.add(name)
                        if prefix is None:
                            prefix = "_".join(name.split("_")[:2])
                    elif name.startswith("_") and prefix is not None:
                        names.add(prefix + name)
    return names


def check_dashboard(path, known):
    """Problems of one dashboard, as strings (none: good)."""
    try:
        with open(path, encoding="utf-8") as f:
            dash = json.load(f)
    except (OSError, ValueError) as e:
        return [f"{path}: not valid JSON: {e}"]
    problems = []
    for key in ("title", "uid", "panels"):
        if key not in dash:
            problems.append(f"{path}: no {key}")
    ids = set()
    for panel in dash.get("panels", []):
        title = panel.get("title", "?")
        if panel.get("id") in ids:
            problems.append(f"{path}: panel id {panel.get('id')} repeated")
        ids.add(panel.get("id"))
        if "gridPos" not in panel:
            problems.append(f"{path}: panel {title!r} has no gridPos")
        if panel.get("type") == "row":
            continue
        targets = panel.get("targets") or []
        if not targets:
            problems.append(f"{path}: panel {title!r} has no query")
        for target in targets:
            expr = target.get("expr", "")
            if not expr:
                problems.append(f"{path}: panel {title!r} has a target without expr")
            for name in METRIC.findall(expr):
                base = name
                for suffix in SUFFIXES:
                    if name.endswith(suffix) and name[: -len(suffix)] in known:
                        base = name[: -len(suffix)]
                if base not in known:
                    problems.append(
                        f"{path}: panel {title!r} uses {name}, which no metric table in "
                        f"{' or '.join(DOCS)} documents")
    for var in dash.get("templating", {}).get("list", []):
        for name in METRIC.findall(json.dumps(var.get("query", ""))):
            if name not in known:
                problems.append(f"{path}: variable {var.get('name')!r} uses undocumented {name}")
    return problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    known = documented_metrics(root)
    if len(known) < 50:
        print(f"grafana_check: only {len(known)} metric names found in {DOCS}: parser broken?")
        return 1
    dashboards = sorted(glob.glob(os.path.join(root, "deploy/grafana/*.json")))
    if not dashboards:
        print("grafana_check: no dashboard in deploy/grafana/")
        return 1
    failed = False
    for path in dashboards:
        problems = check_dashboard(path, known)
        for p in problems:
            print(p)
        failed |= bool(problems)
        if not problems:
            print(f"ok: {os.path.relpath(path, root)} ({len(known)} documented metrics)")
    for path in sorted(glob.glob(os.path.join(root, "tests/deploy/grafana_bad/*.json"))):
        problems = check_dashboard(path, known)
        if problems:
            print(f"ok: {os.path.relpath(path, root)} refused: {problems[0].split(': ', 1)[1]}")
        else:
            print(f"{path}: should have been refused")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
