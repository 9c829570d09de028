#!/usr/bin/env python3
"""check-include-circles.py [--self-test] [--report] [ROOT] - no module includes itself.

A module is a file stem: src/store.c and src/store.h are the module
"store"; providers/aws/aws_capacity.c and .h are "aws_capacity". A module
depends on another when its .c or .h file has `#include "OTHER.h"`. A circle
is a set of two or more modules each reachable from the others (a strongly
connected component); HACKING.md's dependency rule says there are none, so
each module can be read, tested and replaced from the bottom up.

Prints each circle, its modules and the include lines that close it. The
circles not yet broken are listed in KNOWN, each with what breaking it
takes: the check fails (exit 1) on a circle that is not listed, and on a
listed one that is gone, so the list only shrinks and is struck as each
falls. Exit 0 when the circles are exactly KNOWN, 2 on a usage error.
--report prints the counts (modules, include edges, circles) too, for the
figures of a change.

--self-test copies ROOT's src/ and providers/ aside, plants an include of
main.h in base.h (the module everything stands on), and checks that the
circle is reported: the check is seen to fail before it is trusted to pass.
"""
import os
import re
import shutil
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)
DIRS = ("src", "providers")

# Circles that stand, and why (issue 32). Strike each as it is broken.
KNOWN = set()


def source_files(root):
    for top in DIRS:
        for folder, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if name.endswith((".c", ".h")):
                    yield os.path.join(folder, name)


def stem(path):
    return os.path.splitext(os.path.basename(path))[0]


def module_graph(root):
    """{module: {included module: first 'file:line' that includes it}}"""
    modules = {}
    files = list(source_files(root))
    known = {stem(f) for f in files}
    for path in files:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        edges = modules.setdefault(stem(path), {})
        for m in INCLUDE.finditer(text):
            target = stem(m.group(1))
            if target == stem(path) or target not in known:
                continue
            line = text.count("\n", 0, m.start()) + 1
            where = "%s:%d" % (os.path.relpath(path, root), line)
            edges.setdefault(target, where)
    return modules


def circles(graph):
    """Tarjan's strongly connected components with more than one module."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def describe(graph, component):
    members = set(component)
    lines = ["circle: " + " ".join(component)]
    for a in component:
        for b, where in sorted(graph[a].items()):
            if b in members:
                lines.append("  %s includes %s.h (%s)" % (a, b, where))
    return "\n".join(lines)


def check(root, report):
    graph = module_graph(root)
    found = circles(graph)
    status = 0
    for component in found:
        known = tuple(component) in KNOWN
        if report or not known:
            print(("known " if known else "new ") + describe(graph, component))
        status |= 0 if known else 1
    for gone in sorted(KNOWN - {tuple(c) for c in found}):
        print("gone: %s is no longer a circle: strike it from KNOWN" % " ".join(gone))
        status = 1
    if report or status:
        edges = sum(len(e) for e in graph.values())
        print("%d modules, %d include edges, %d circles (%d known)"
              % (len(graph), edges, len(found), len(KNOWN)))
    return status


def self_test(root):
    with tempfile.TemporaryDirectory() as tmp:
        for top in DIRS:
            shutil.copytree(os.path.join(root, top), os.path.join(tmp, top))
        with open(os.path.join(tmp, "src", "base.h"), "a", encoding="utf-8") as f:
            f.write('\n#include "main.h"\n')
        found = circles(module_graph(tmp))
        if not any("base" in c and "main" in c for c in found):
            print("self-test: a planted include of main.h in base.h was not reported", file=sys.stderr)
            return 1
    return 0


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    flags = [a for a in argv if a.startswith("--")]
    if len(args) > 1 or any(f not in ("--self-test", "--report") for f in flags):
        print("usage: check-include-circles.py [--self-test] [--report] [ROOT]", file=sys.stderr)
        return 2
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    if "--self-test" in flags:
        return self_test(root)
    return check(root, "--report" in flags)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
