#!/usr/bin/env python3
"""check-command-ops.py [--self-test] [ROOT] - commands call one operation.

HACKING.md: a command (src/cmd_*.c) parses its flags, calls ONE operation,
renders what it returns and picks the exit code; the operation runs whole
(Terraform's backend/local operation, git's sequencer) and talks to the
user through the small interface the command hands it. So a command never
sequences the steps of a run itself.

This reads ROOT/src/operation.h (default: the repository this script is
in) for the functions it exports (operation_NAME), and every ROOT/src/cmd_*.c with
its comments and strings left out, and reports, one FILE:LINE: WHAT: TEXT
a line:

- a call of an operation_* function that is a step of a run (operation_load, operation_plan,
  operation_apply, operation_commit, operation_destroy, operation_repair, operation_takeover,
  operation_health_wait...): anything of operation.h but ENTRIES, the whole runs
  a command may call, and AFTER, what a command does with a finished run;
- a file calling more than one operation's entry (NAME_op_run, from
  src/*_op.h).

Exit 0 when there is nothing to report, 1 when there is, 2 on a usage
error. --self-test plants a step call, a second entry and the same words
in a comment and a string in a copy of ROOT, and checks that only the two
calls are reported: the check is seen to fail before it is trusted to pass.
"""
import importlib
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
strip_comments = importlib.import_module("check-cloud-names").strip_comments

# The whole runs a command may call instead of a NAME_op_run: the plan of a
# command that only reads (plan, cost, audit, status) and the IAM policy
# document; and, in ONLY_IN's one file, opening a run without the lock for
# the commands that only read the recorded state (run_open: hosts, ssh,
# exec).
ENTRIES = {"operation_plan_spec", "operation_iam_policy"}
ONLY_IN = {"operation_open": "src/cmd_run.c"}
# What a command does with a run once it is over: close it, the summary
# counts it renders, and whether a plan it only read breaks a team limit
# (operation_quota_check: no claim, no waiver; claiming is apply_op_run's).
AFTER = {"operation_close", "operation_finish", "operation_summary_counts", "operation_quota_check"}

DECL = re.compile(r"^[A-Za-z_][\w \t\*]*?\b(operation_[a-z_0-9]+)\s*\(", re.MULTILINE)
CALL = re.compile(r"\b(operation_[a-z_0-9]+)\s*\(")
ENTRY_CALL = re.compile(r"\b([a-z_0-9]+_op_run)\s*\(")


def blank_strings(text):
    """The text with string and character literals blanked (length kept)."""
    return re.sub(r'"(\\.|[^"\\\n])*"|\'(\\.|[^\'\\\n])*\'',
                  lambda m: '"' + " " * (len(m.group(0)) - 2) + '"', text)


def exported(root):
    with open(os.path.join(root, "src", "operation.h")) as f:
        return set(DECL.findall(strip_comments(f.read())))


def findings(root):
    steps = exported(root) - ENTRIES - AFTER
    out = []
    src = os.path.join(root, "src")
    for name in sorted(os.listdir(src)):
        if not (name.startswith("cmd_") and name.endswith(".c")):
            continue
        rel = "src/" + name
        with open(os.path.join(src, name)) as f:
            raw = f.read()
        text = blank_strings(strip_comments(raw)).splitlines()
        shown = raw.splitlines()
        entries = {}
        for n, line in enumerate(text, 1):
            for m in CALL.finditer(line):
                if m.group(1) in steps and ONLY_IN.get(m.group(1)) != rel:
                    out.append("%s:%d: step %s: %s" % (rel, n, m.group(1), shown[n - 1].strip()))
            for m in ENTRY_CALL.finditer(line):
                entries.setdefault(m.group(1), n)
        if len(entries) > 1:
            first = sorted(entries.items(), key=lambda kv: kv[1])
            out.append("%s:%d: entries %s: one command calls one operation"
                       % (rel, first[1][1], ", ".join(k for k, _ in first)))
    return sorted(out, key=lambda l: (l.split(":")[0], int(l.split(":")[1])))


def self_test(root):
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(os.path.join(root, "src"), os.path.join(tmp, "src"))
        with open(os.path.join(tmp, "src", "cmd_planted.c"), "w") as f:
            f.write('/* operation_plan(r, &err) in a comment is fine */\n'
                    'static const char *s = "operation_apply(r)";\n'
                    'static int a(struct op_run *r) { operation_close(r); return 0; }\n'
                    'static int b(struct op_run *r, struct kiln_error *e) { return operation_plan(r, e); }\n'
                    'static int c(void) { return reap_op_run(0, 0, 0); }\n'
                    'static int d(void) { return repair_op_run(0, 0); }\n'
                    'static int e(struct op_run *r) { return operation_open(r, 0, 0, 1, 0, 0); }\n')
        got = subprocess.run([sys.executable, os.path.abspath(__file__), tmp],
                             capture_output=True, text=True)
        want = ["src/cmd_planted.c:4: step operation_plan: static int b(struct op_run *r, "
                "struct kiln_error *e) { return operation_plan(r, e); }",
                "src/cmd_planted.c:6: entries reap_op_run, repair_op_run: one command "
                "calls one operation",
                "src/cmd_planted.c:7: step operation_open: static int e(struct op_run *r) "
                "{ return operation_open(r, 0, 0, 1, 0, 0); }"]
        lines = [l for l in got.stdout.splitlines() if not l.startswith("src/cmd_")
                 or l.startswith("src/cmd_planted.c:")]
        lines = [l for l in lines if l.startswith("src/")]
        if got.returncode != 1 or lines != want:
            print("check-command-ops self-test: expected exit 1 and\n  %s\ngot exit %d and\n%s"
                  % ("\n  ".join(want), got.returncode, got.stdout + got.stderr))
            return 1
    print("check-command-ops self-test: a planted step call and a second entry are reported, "
          "comments, strings and closing a run are not")
    return 0


def main(argv):
    args = [a for a in argv[1:] if a != "--self-test"]
    if len(args) > 1 or any(a.startswith("-") for a in args):
        print("usage: check-command-ops.py [--self-test] [ROOT]", file=sys.stderr)
        return 2
    root = args[0] if args else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if "--self-test" in argv[1:]:
        return self_test(root)
    found = findings(root)
    for line in found:
        print(line)
    if found:
        print("%d places where a command sequences a run: move the steps into the "
              "operation's one entry (src/NAME_op.c, NAME_op_run) and hand it a ui "
              "(HACKING.md, the dependency rule)" % len(found))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
