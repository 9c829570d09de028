#!/usr/bin/env python3
"""tf-plan-policy.py PLAN.json [MAX_NODES] - a policy written for `terraform show -json`.

The rules are those a conftest (OPA) policy over a Terraform plan holds, and
they read the plan the way such a policy does: only Terraform's names
(format_version, planned_values.root_module.resources, prior_state.values.
root_module.resources, resource_changes[].change.actions), nothing of kiln's
own "kiln" objects. In Rego they would read, for the first:

    deny[msg] {
      r := input.planned_values.root_module.resources[_]
      endswith(r.type, "_bucket")
      r.values.encrypted == false
      msg := sprintf("%s: a bucket is planned unencrypted", [r.address])
    }

OPA and conftest are neither in Debian nor on npm as a program, so the test
runs them as this Python transcription. Prints one "deny: MSG" line per
violation and "N denials"; exits 1 when there is any, 2 when the document is
not a plan in Terraform's shape.
"""
import json
import sys

# kiln's node groups, on its sim and aws providers.
NODE_GROUPS = ("sim_node_group", "aws_instance_group")


def resources(doc, *path):
    for key in path:
        doc = doc.get(key) if isinstance(doc, dict) else None
    if not isinstance(doc, list):
        raise ValueError("no %s list" % ".".join(path))
    return doc


def denials(plan, max_nodes):
    if not str(plan.get("format_version", "")).startswith("1."):
        raise ValueError("format_version %r is not 1.x" % plan.get("format_version"))
    planned = resources(plan, "planned_values", "root_module", "resources")
    prior = resources(plan, "prior_state", "values", "root_module", "resources")
    changes = resources(plan, "resource_changes")
    deny = []
    for r in planned:
        if r["type"].endswith("_bucket") and r["values"].get("encrypted") is False:
            deny.append("%s: a bucket is planned unencrypted" % r["address"])
        if r["type"] in NODE_GROUPS and r["values"].get("count", 0) > max_nodes:
            deny.append("%s: %d nodes planned, more than %d" % (
                r["address"], r["values"]["count"], max_nodes))
    existing = {r["address"]: r for r in prior}
    for rc in changes:
        r = existing.get(rc["address"])
        if r and "delete" in rc["change"]["actions"] and r["type"].endswith("_bucket"):
            deny.append("%s: deletes the bucket %s" % (rc["address"], r["values"].get("bucket")))
        if r and rc["type"] in NODE_GROUPS and "update" in rc["change"]["actions"]:
            after = {p["address"]: p for p in planned}[rc["address"]]
            if after["values"].get("count", 0) < r["values"].get("count", 0):
                deny.append("%s: shrinks from %d to %d nodes" % (
                    rc["address"], r["values"]["count"], after["values"]["count"]))
    return deny


def main(argv):
    if len(argv) not in (2, 3):
        sys.stderr.write("usage: tf-plan-policy.py PLAN.json [MAX_NODES]\n")
        return 2
    try:
        found = denials(json.load(open(argv[1])), int(argv[2]) if len(argv) == 3 else 8)
    except (OSError, ValueError, KeyError, TypeError) as e:
        print("not a plan in Terraform's shape: %s" % e)
        return 2
    for msg in found:
        print("deny: %s" % msg)
    print("%d denials" % len(found))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
