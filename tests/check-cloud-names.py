#!/usr/bin/env python3
"""check-cloud-names.py [--self-test] [ROOT] - the provider boundary.

DESIGN.md: "the engine never names a cloud"; adding a cloud is adding a
folder under providers/ and one line in the provider table. This reads the
engine's files (ROOT/src/*.c and *.h, default the repository this script is
in) with their comments left out, and, in cmd_*.c, their help text (the
options table and the command's cmd_info) left out too, and reports every
cloud name or service prefix it finds there outside ALLOWED, one
FILE:LINE: WORD: TEXT a line.

HACKING.md: a command never calls a provider hook. In cmd_*.c it also
reports every use of a hook (a function pointer of struct provider or
struct prov_type, read from ROOT/providers/provider.h) through prov, or
through a variable the file declares as one of those structs, one
FILE:LINE: hook NAME: TEXT a line; reading a plain field (prov->name) is
not a hook. Exit 0 when there is nothing to report, 1 when there is, 2 on
a usage error.

--self-test copies ROOT's src/ and providers/provider.h aside, plants a
cloud name in an engine file and in a comment and help text, and a hook
call and a field read in a command, and checks that only the cloud name
and the hook call are reported: the check is seen to fail before it is
trusted to pass.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Cloud names, their services' names and API prefixes, and the providers'
# own names, as words (case folded): a match is a cloud named in the engine.
CLOUD_WORDS = re.compile(
    r"\b(aws|amazon|amzn?|ec2|ami|ebs|s3|fsx|efs|cloudwatch|elasticfilesystem|"
    r"botocore|moto|gcp|google|gce|azure|sim)\b"
    r"|\b(iam|sts|ecr|s3|ec2|sim):|(?-i:\barn:)|\b(aws|sim)_|_(aws|sim)\b|x-amzn?-",
    re.IGNORECASE,
)

# What may stay, and why. Each is removed from a line before CLOUD_WORDS
# runs, in the one file it names. Keep this short: a new entry needs a
# reason a reader accepts, not a cloud rule that belongs in providers/.
ALLOWED = [
    # The audit rule table: each rule's id (stable: never renumbered, never
    # reused), text, and the Checkov and Trivy checks it names as its
    # equivalent. The rules DESIGN.md names are IAM's (iam:PassRole on *),
    # the policy language kiln compiles to and sim models.
    ("src/audit_rules.c", r'^\s*\{?\s*("(\\.|[^"\\])*"\s*,?\s*)+\}?,?\s*$'),
    ("src/audit.c", r"KILN-(S3|EC2|EBS|FSX|EFS|IAM)-\d{3}"),
    ("src/audit.c", r'"iam:\*"|"iam:PassRole"'),
    # The request-id and error-type headers http.c reads off any answer.
    ("src/http.c", r'"x-amzn?-[A-Za-z0-9-]+"'),
    # Examples: a mount path (DESIGN.md's spec), a --var value in a usage
    # error, read before any spec names its provider.
    ("src/spec_storage.c", r"like /fsx or"),
    ("src/spec_opts.c", r"image=ami-0123456789abcdef0"),
]


def strip_comments(text):
    """The C text with comments blanked (newlines kept), strings kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


# In cmd_*.c, the help text: the options table and the command's cmd_info.
HELP_START = re.compile(r"^(static )?const struct (cli_option \w+\[\]|cmd_info \w+) = \{")


def strip_help(text):
    lines, inside = text.split("\n"), False
    for k, line in enumerate(lines):
        if not inside and HELP_START.match(line):
            inside = True
        if inside:
            lines[k] = ""
            if line.startswith("};"):
                inside = False
    return "\n".join(lines)


# A function pointer member: "int (*create)(" or "const char *(*part_type)(".
HOOK_MEMBER = re.compile(r"\(\s*\*\s*(\w+)\s*\)\s*\(")


def hook_names(root):
    """The hooks of struct provider and struct prov_type in provider.h."""
    with open(os.path.join(root, "providers", "provider.h"), encoding="utf-8") as f:
        text = strip_comments(f.read())
    names = set()
    for struct in ("provider", "prov_type"):
        m = re.search(r"^struct %s \{(.*?)^\};" % struct, text, re.S | re.M)
        if m:
            names.update(HOOK_MEMBER.findall(m.group(1)))
    return sorted(names)


def hook_findings(rel, text, hooks):
    """Each line of a command's text that reaches a provider hook."""
    receivers = {"prov"} | set(
        re.findall(r"struct\s+(?:provider|prov_type)\s*\*\s*(?:const\s+)?(\w+)", text))
    rx = re.compile(r"\b(?:%s)\s*->\s*(%s)\b"
                    % ("|".join(sorted(receivers)), "|".join(hooks)))
    found = []
    for num, line in enumerate(text.split("\n"), 1):
        m = rx.search(line)
        if m:
            found.append("%s:%d: hook %s: %s" % (rel, num, m.group(1), line.strip()))
    return found


def findings(root):
    src = os.path.join(root, "src")
    hooks = hook_names(root)
    found = []
    for name in sorted(os.listdir(src)):
        if not name.endswith((".c", ".h")):
            continue
        rel = "src/" + name
        with open(os.path.join(src, name), encoding="utf-8", errors="replace") as f:
            text = strip_comments(f.read())
        hooked = []
        if name.startswith("cmd_"):
            text = strip_help(text)
            hooked = hook_findings(rel, text, hooks)
        allowed = [re.compile(rx) for path, rx in ALLOWED if path == rel]
        for num, line in enumerate(text.split("\n"), 1):
            for rx in allowed:
                line = rx.sub("", line)
            m = CLOUD_WORDS.search(line)
            if m:
                found.append("%s:%d: %s: %s" % (rel, num, m.group(0), line.strip()))
        found += hooked
    return found


def self_test(root):
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(os.path.join(root, "src"), os.path.join(tmp, "src"))
        os.mkdir(os.path.join(tmp, "providers"))
        shutil.copy(os.path.join(root, "providers", "provider.h"),
                    os.path.join(tmp, "providers", "provider.h"))
        with open(os.path.join(tmp, "src", "planted.c"), "w") as f:
            f.write('/* aws in a comment is fine */\nstatic const char *r = "us-east-1"; '
                    '/* aws */\nstatic const char *p = "aws";\n')
        with open(os.path.join(tmp, "src", "cmd_planted.c"), "w") as f:
            f.write('static const struct cli_option options[] = {\n'
                    '    {"provider", 0, true, 1, "aws|sim", "the cloud"},\n};\n'
                    'static const char *q = "arn:aws:s3:::x";\n'
                    'static const char *n(const struct engine *e) { return e->prov->name; }\n'
                    'static const char *g(const struct engine *e)\n'
                    '{ return e->prov->part_type(PART_GROUP); }\n')
        got = subprocess.run([sys.executable, os.path.abspath(__file__), tmp],
                             capture_output=True, text=True)
        want = ['src/cmd_planted.c:4: arn:: static const char *q = "arn:aws:s3:::x";',
                'src/cmd_planted.c:7: hook part_type: { return e->prov->part_type(PART_GROUP); }',
                'src/planted.c:3: aws: static const char *p = "aws";']
        # and one summary line for the cloud names, one for the hook call
        lines = got.stdout.splitlines()
        if got.returncode != 1 or lines[: len(want)] != want or len(lines) != len(want) + 2:
            print("check-cloud-names self-test: expected exit 1 and\n  %s\ngot exit %d and\n%s"
                  % ("\n  ".join(want), got.returncode, got.stdout + got.stderr))
            return 1
    print("check-cloud-names self-test: a planted cloud name and a command's hook call are "
          "reported, comments, help text and a field read are not")
    return 0


def main(argv):
    args = [a for a in argv[1:] if a != "--self-test"]
    if len(args) > 1 or any(a.startswith("-") for a in args):
        print("usage: check-cloud-names.py [--self-test] [ROOT]", file=sys.stderr)
        return 2
    root = args[0] if args else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if "--self-test" in argv[1:]:
        return self_test(root)
    found = findings(root)
    for line in found:
        print(line)
    hooks = sum(1 for line in found if ": hook " in line)
    if len(found) - hooks:
        print("%d cloud names in engine files: move each rule behind a provider.h hook "
              "(providers/), or, for a stable name, add it to ALLOWED in %s with why"
              % (len(found) - hooks, os.path.relpath(__file__, root)))
    if hooks:
        print("%d provider hook calls in commands: a command calls an operation or an "
              "engine function, which asks the provider (HACKING.md, the dependency rule)"
              % hooks)
    if found:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
