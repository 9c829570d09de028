#!/usr/bin/env python3
"""check-export-names.py [--self-test] [--report] [ROOT] - exported names lead to their file.

STYLE.md and HACKING.md: exported functions are named module_verb, as
libgit2's are (git_remote_create lives in remote.c), so a name says which
file to open. An exported function is one defined at file scope without
`static` in a .c file under src/ or providers/ (the definition's opening
brace on a line of its own, as the tree is formatted; `nm` of the objects
gives the same list). Its name leads to its file when it is the module's
name or starts with it and '_', where the module of a file FILE.c is:

- FILE itself, or FILE's singular or plural (diags_add in diag.c,
  provider_find in providers.c);
- the first word of FILE when that word is a module too, or `cmd`: the
  family of a module's files (plan_render.c's plan_, cmd_apply.c's cmd_,
  spec_compute.c's spec_, aws_ec2.c's aws_);
- the folder of a provider's files (providers/aws/creds.c's aws_);
- for the two files every module stands on, the prefixes agreed in AGREED.

main() is no module's. Every other exported function whose name does not
lead to its file is printed with its file. KNOWN lists those that stand,
each with why; the check fails (exit 1) on one that is not listed, and on a
listed one that is gone, so the list only shrinks. scripts/rename-exports.py
holds the renames that emptied it, and is run again over a merged branch
written with the old names. --report prints the counts too.

--self-test copies ROOT's src/ and providers/ aside, plants an exported
function named after no file in src/base.c, and checks it is reported.
"""
import os
import re
import shutil
import sys
import tempfile

DIRS = ("src", "providers")

# A definition at file scope: a return type, the name, the parameters, and
# the body's brace at the start of the next line. Declarations end in ';'.
DEFINITION = re.compile(
    r"^(?!static\b|typedef\b|extern\b|#)([A-Za-z_][\w \t*]*?[\s*])([A-Za-z_]\w*)\(([^;{}]*?)\)\s*\n\{",
    re.MULTILINE)

# Prefixes agreed for the modules every other stands on, as git and libgit2
# keep theirs short: base.c's allocation that aborts on failure (xmalloc,
# xstrdup: git's own names) and kiln's error type (kiln_error_set); strbuf.c's
# growable string is sb_, its variables' name everywhere.
AGREED = {
    "src/base.c": (re.compile(r"x[a-z]+$"), re.compile(r"kiln_\w+$")),
    "src/strbuf.c": (re.compile(r"sb_\w+$"),),
}

# Exported names that do not lead to their file yet, and why. Strike each as
# it is renamed (scripts/rename-exports.py).
KNOWN = set()


def source_files(root):
    for top in DIRS:
        for folder, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if name.endswith(".c"):
                    yield os.path.join(folder, name)


def stem(path):
    return os.path.splitext(os.path.basename(path))[0]


def exported(root):
    """[(path relative to root, function name)] of every exported function."""
    found = []
    for path in source_files(root):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        rel = os.path.relpath(path, root)
        found.extend((rel, m.group(2)) for m in DEFINITION.finditer(text))
    return found


def modules(rel, stems):
    s = stem(rel)
    out = {s, s + "s"}
    if s.endswith("s"):
        out.add(s[:-1])
    first = s.split("_")[0]
    if first in stems or first == "cmd":
        out.add(first)
    folder = os.path.basename(os.path.dirname(rel))
    if folder not in DIRS:
        out.add(folder)
    return out


def leads(rel, name, stems):
    if name == "main":
        return True
    if any(p.match(name) for p in AGREED.get(rel.replace(os.sep, "/"), ())):
        return True
    return any(name == m or name.startswith(m + "_") for m in modules(rel, stems))


def offenders(root):
    found = exported(root)
    stems = {stem(rel) for rel, _ in found}
    return found, sorted((rel, name) for rel, name in found if not leads(rel, name, stems))


def check(root, report):
    found, bad = offenders(root)
    status = 0
    for rel, name in bad:
        known = name in KNOWN
        if report or not known:
            print("%s%s: %s does not start with its file's module" %
                  ("known " if known else "", rel, name))
        status |= 0 if known else 1
    for gone in sorted(KNOWN - {name for _, name in bad}):
        print("gone: %s now leads to its file (or is gone): strike it from KNOWN" % gone)
        status = 1
    if report or status:
        print("%d exported functions, %d not leading to their file (%d known)" %
              (len(found), len(bad), len(KNOWN)))
    return status


def self_test(root):
    with tempfile.TemporaryDirectory() as tmp:
        for top in DIRS:
            shutil.copytree(os.path.join(root, top), os.path.join(tmp, top))
        with open(os.path.join(tmp, "src", "base.c"), "a", encoding="utf-8") as f:
            f.write("\nint planted_name(const char *s)\n{\n\treturn !s;\n}\n")
        _, bad = offenders(tmp)
        if ("src/base.c", "planted_name") not in [(r.replace(os.sep, "/"), n) for r, n in bad]:
            print("self-test: a planted exported planted_name in src/base.c was not reported",
                  file=sys.stderr)
            return 1
    return 0


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    flags = [a for a in argv if a.startswith("--")]
    if len(args) > 1 or any(f not in ("--self-test", "--report") for f in flags):
        print("usage: check-export-names.py [--self-test] [--report] [ROOT]", file=sys.stderr)
        return 2
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    if "--self-test" in flags:
        return self_test(root)
    return check(root, "--report" in flags)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
