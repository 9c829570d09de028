#!/usr/bin/env python3
"""check-plan-schema.py FILE... - validate kiln plan documents against tests/plan-schema.json.

Each FILE is a plan document (what `kiln plan --json` prints) or a plan file
({"kiln_plan_file": 1, "digest": "sha256:..", "approvals": [..], "plan": PLAN}),
whose wrapper (and the shape of its approvals) is checked and whose "plan" is
validated. Prints `ok FILE` for each valid file, or
FILE: the first error (with its JSON path); exits 1 when any file is invalid,
2 on a usage error. Besides the schema, it checks what JSON Schema cannot say:
each address is TYPE.NAME, and addresses are sorted and distinct (but for a
"deposed" duplicate, which follows the resource whose address it carries);
and planned_values and prior_state (Terraform's values representation) say
what resource_changes say, derived here on their own: every change but a
delete in planned_values with its after (less after_unknown), every change
with a before (but a deposed one) in prior_state with that before.
"""
import json
import os
import re
import sys

try:
    import jsonschema
except ImportError:
    # Debian's python3-jsonschema lives with /usr/bin/python3, which may not be
    # the python3 first in PATH.
    if os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3") and \
            os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    sys.stderr.write("check-plan-schema.py: the python3 jsonschema module is not installed "
                     "(Debian: python3-jsonschema; make deps)\n")
    sys.exit(2)

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plan-schema.json")
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")


def where(path):
    """A JSON path as kiln's messages write it: resource_changes[4].change.actions."""
    text = "".join("[%d]" % p if isinstance(p, int) else ".%s" % p for p in path)
    return text[1:] if text.startswith(".") else text or "(top level)"


def reject_duplicates(pairs):
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError("duplicate key %r" % key)
        seen[key] = value
    return seen


def check_addresses(plan):
    """Errors the schema cannot express, as (path, message)."""
    errors = []
    for key in ("resource_changes", "resource_drift"):
        previous = None
        for i, rc in enumerate(plan.get(key, [])):
            address = rc.get("address")
            expected = "%s.%s" % (rc.get("type"), rc.get("name"))
            if address != expected:
                errors.append(("%s[%d].address" % (key, i),
                               "%r is not TYPE.NAME (%r)" % (address, expected)))
            duplicate = address == previous and "deposed" in rc
            if previous is not None and address <= previous and not duplicate:
                errors.append(("%s[%d].address" % (key, i),
                               "%r is not after %r: addresses are sorted and distinct"
                               % (address, previous)))
            previous = address
    return errors


def values_resource(rc, values, sensitive, unknown):
    """A change's resource as Terraform's values representation writes it."""
    return {"address": rc["address"], "mode": rc["mode"], "type": rc["type"],
            "name": rc["name"], "provider_name": rc["provider_name"],
            "values": {k: v for k, v in values.items() if unknown.get(k) is not True},
            "sensitive_values": sensitive if isinstance(sensitive, dict) else {}}


def check_values(plan):
    """planned_values and prior_state against resource_changes, as (path, message)."""
    planned, prior = [], []
    for rc in plan.get("resource_changes", []):
        ch = rc["change"]
        if isinstance(ch.get("before"), dict) and "deposed" not in rc:
            prior.append(values_resource(rc, ch["before"], ch.get("before_sensitive"), {}))
        if isinstance(ch.get("after"), dict) and ch["actions"] != ["delete"]:
            unknown = ch.get("after_unknown") or {}
            planned.append(values_resource(rc, ch["after"], ch.get("after_sensitive"),
                                           unknown))
    have_planned = plan["planned_values"]["root_module"]["resources"]
    have_prior = plan["prior_state"]["values"]["root_module"]["resources"]
    for key, have, want in (("planned_values.root_module.resources", have_planned, planned),
                            ("prior_state.values.root_module.resources", have_prior, prior)):
        if have != want:
            return [(key, "is not what resource_changes give: %s" % json.dumps(want)[:300])]
    return []


APPROVAL_KEYS = ["algorithm", "key_id", "public_key", "signature", "signer", "time"]
APPROVAL_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
BASE64 = re.compile(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$")


def check_approvals(approvals):
    """The "approvals" of a plan file (kiln-approve(1)): their shape, not their signatures."""
    if not isinstance(approvals, list):
        return "approvals is not an array"
    for i, a in enumerate(approvals):
        if not isinstance(a, dict) or sorted(a) != APPROVAL_KEYS:
            return "approvals[%d] does not have exactly the members %s" % (
                i, ", ".join(APPROVAL_KEYS))
        if not all(isinstance(v, str) for v in a.values()):
            return "approvals[%d] has a member that is not a string" % i
        if a["algorithm"] != "ed25519" or not DIGEST.match(a["key_id"]) or \
                not APPROVAL_TIME.match(a["time"]) or not BASE64.match(a["signature"]) or \
                not BASE64.match(a["public_key"]) or not a["signer"]:
            return "approvals[%d] is not well formed" % i
    return None


def check(path, validator):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f, object_pairs_hook=reject_duplicates)
    except (OSError, ValueError) as e:
        return "%s: %s" % (path, e)
    plan = doc
    if isinstance(doc, dict) and "kiln_plan_file" in doc:
        if doc.get("kiln_plan_file") != 1 or type(doc.get("kiln_plan_file")) is not int:
            return "%s: kiln_plan_file is %r, not 1" % (path, doc.get("kiln_plan_file"))
        if not isinstance(doc.get("digest"), str) or not DIGEST.match(doc["digest"]):
            return "%s: digest is %r, not \"sha256:\" and 64 hex digits" % (path, doc.get("digest"))
        extra = set(doc) - {"kiln_plan_file", "digest", "approvals", "plan"}
        if extra:
            return "%s: unknown plan file keys: %s" % (path, ", ".join(sorted(extra)))
        error = check_approvals(doc.get("approvals", []))
        if error:
            return "%s: %s" % (path, error)
        plan = doc.get("plan")
    error = jsonschema.exceptions.best_match(validator.iter_errors(plan))
    if error is not None:
        return "%s: %s: %s" % (path, where(error.absolute_path), error.message)
    if isinstance(plan, dict):
        for at, message in check_addresses(plan) + check_values(plan):
            return "%s: %s: %s" % (path, at, message)
    return None


def main(argv):
    if len(argv) < 2:
        sys.stderr.write("usage: %s FILE...\n" % argv[0])
        return 2
    with open(SCHEMA, encoding="utf-8") as f:
        schema = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    validator = cls(schema)
    status = 0
    for path in argv[1:]:
        error = check(path, validator)
        if error:
            print(error)
            status = 1
        else:
            print("ok %s" % path)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
