#!/usr/bin/env python3
"""Checks that tests/ mirrors the source tree and that every Catch2 test case
follows the one tag scheme (tests/CMakeLists.txt says both). Run by ctest as
tests/layout; prints each violation with its file and line, exits 1 on any.

  tests/layout_check.py REPO_ROOT
"""

import pathlib
import re
import sys

# Folders of tests/ that are not mirrors of a source folder.
NOT_MIRRORS = {"support", "fuzz", "bench", "deploy"}
# Folders that hold an area's tests with real processes, under the area.
PROCESS_FOLDERS = {"e2e", "hostile"}
KINDS = {".", "bench", "memory", "contract", "concurrent", "pg", "e2e", "hostile"}
UNIT_TAG = re.compile(r"^[a-z][a-z0-9_]*$")
TEST_MACRO = re.compile(r"\b(TEST_CASE_METHOD|TEMPLATE_TEST_CASE|TEST_CASE|SCENARIO)\s*\(")


def string_literals(text, i):
    """Adjacent C string literals from text[i:] (whitespace between them
    skipped): (value, end) or None."""
    parts = []
    end = None
    while True:
        while i < len(text) and text[i] in " \t\n":
            i += 1
        if i >= len(text) or text[i] != '"':
            break
        k = i + 1
        while text[k] != '"':
            k += 2 if text[k] == "\\" else 1
        parts.append(text[i + 1 : k])
        i = end = k + 1
    return None if end is None else ("".join(parts), end)


def test_cases(text):
    """(line, name, tags or None) for each test macro in a C++ file."""
    for m in TEST_MACRO.finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        if text[line_start : m.start()].lstrip().startswith(("//", "#define")):
            continue
        i = m.end()
        if m.group(1) == "TEST_CASE_METHOD":
            i = text.index(",", i) + 1
        name = string_literals(text, i)
        if name is None:
            continue
        j = name[1]
        while text[j] in " \t\n":
            j += 1
        tags = string_literals(text, j + 1) if text[j] == "," else None
        yield text.count("\n", 0, m.start()) + 1, name[0], None if tags is None else tags[0]


def check_tags(area, tags):
    """The problems with one test case's tag string, as sentences."""
    if tags is None:
        return [f"has no tags; the first must be [{area}]"]
    found = re.findall(r"\[([^\]]*)\]", tags)
    if "".join(f"[{t}]" for t in found) != tags:
        return [f"tag string {tags!r} is not a sequence of [tags]"]
    if not found or found[0] != area:
        return [f"first tag must be the test's folder [{area}], not {tags!r}"]
    problems = []
    rest = found[1:]
    for t in rest:
        if t not in KINDS and not UNIT_TAG.match(t):
            problems.append(f"tag [{t}] is neither a kind ({', '.join(sorted(KINDS))}) nor a lowercase unit")
    units = [t for t in rest if t not in KINDS]
    if any(rest.index(u) > min((rest.index(k) for k in rest if k in KINDS), default=len(rest)) for u in units):
        problems.append("unit tags come before kind tags")
    if "." in rest and not {"bench", "memory"} & set(rest):
        problems.append("a hidden case ([.]) is a measurement: tag it [bench] or [memory] too")
    return problems


def main(root):
    tests = root / "tests"
    problems = []
    for folder in sorted(p for p in tests.rglob("*") if p.is_dir()):
        rel = folder.relative_to(tests)
        if rel.parts[0] in NOT_MIRRORS or rel.name in PROCESS_FOLDERS:
            continue
        if any(part in PROCESS_FOLDERS for part in rel.parts) or "corpus" in rel.parts:
            continue
        if not (root / rel).is_dir():
            problems.append(f"tests/{rel}/: no source folder {rel}/ to mirror")
    for source in sorted(tests.rglob("*.cc")):
        rel = source.relative_to(tests)
        if rel.parts[0] == "fuzz":
            continue
        area = str(rel.parent)
        text = source.read_text()
        for line, name, tags in test_cases(text):
            for problem in check_tags(area, tags):
                problems.append(f"tests/{rel}:{line}: \"{name}\": {problem}")
        if source.name.endswith("_test.cc"):
            cmake = (source.parent / "CMakeLists.txt")
            listed = cmake.exists() and re.search(rf"(^|[\s/]){re.escape(source.name)}(\s|\))", cmake.read_text(), re.M)
            if not listed:
                problems.append(f"tests/{rel}: not built by tests/{rel.parent}/CMakeLists.txt")
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} problem(s); the layout and the tag scheme: tests/CMakeLists.txt")
        return 1
    print("tests/ mirrors the source tree; every test case follows the tag scheme")
    return 0


if __name__ == "__main__":
    sys.exit(main(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()))
