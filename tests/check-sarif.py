#!/usr/bin/env python3
"""check-sarif.py FILE... - validate SARIF logs from `kiln audit --format sarif`.

Each FILE is checked against tests/sarif-schema-subset.json (the properties the
SARIF 2.1.0 standard requires on the objects kiln writes), then for what JSON
Schema cannot say: every result's ruleIndex points at the rule its ruleId
names, every ruleId is one of the driver's rules, and a result's level is its
rule's default level. Prints `ok FILE`, or FILE: the first error; exits 1 when
any file is invalid, 2 on a usage error.
"""
import json
import os
import sys

try:
    import jsonschema
except ImportError:
    if os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3") and \
            os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    sys.stderr.write("check-sarif.py: the python3 jsonschema module is not installed\n")
    sys.exit(2)

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sarif-schema-subset.json")


def problems(log):
    schema = json.load(open(SCHEMA))
    errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(log), key=lambda e: list(e.path))
    if errors:
        e = errors[0]
        return "%s: %s" % ("/".join(str(p) for p in e.path) or "(top)", e.message)
    for run in log["runs"]:
        rules = run["tool"]["driver"].get("rules", [])
        ids = [r["id"] for r in rules]
        for i, res in enumerate(run.get("results", [])):
            where = "runs/results/%d" % i
            if res.get("ruleId") not in ids:
                return "%s: ruleId %r is not one of the driver's rules" % (where, res.get("ruleId"))
            if "ruleIndex" in res and ids[res["ruleIndex"]] != res["ruleId"]:
                return "%s: ruleIndex %d is %s, not %s" % (where, res["ruleIndex"],
                                                           ids[res["ruleIndex"]], res["ruleId"])
            rule = rules[ids.index(res["ruleId"])]
            if res.get("level") != rule["defaultConfiguration"]["level"]:
                return "%s: level %s differs from its rule's %s" % (
                    where, res.get("level"), rule["defaultConfiguration"]["level"])
    return None


def main(argv):
    if len(argv) < 2:
        sys.stderr.write("usage: check-sarif.py FILE...\n")
        return 2
    bad = 0
    for path in argv[1:]:
        try:
            err = problems(json.load(open(path)))
        except (OSError, ValueError) as e:
            err = str(e)
        if err:
            print("%s: %s" % (path, err))
            bad = 1
        else:
            print("ok %s" % path)
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv))
