#!/usr/bin/env python3
"""check-sarif.py FILE... - validate SARIF logs from `kiln audit --format sarif`.

Each FILE is checked against the official SARIF 2.1.0 JSON Schema,
tests/sarif-schema-2.1.0.json, vendored unchanged from OASIS's repository
(https://github.com/oasis-tcs/sarif-spec, sarif-2.1/schema/sarif-schema-2.1.0.json
at commit e0583813964ec43cea53b6b531b402866095ed1f of 2026-03-01, last changed
there in a560296ca8c921f3bdb8d4a8db57ab83dae968a7 of 2024-05-02; the errata01
schema, sha256 c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e;
copied 2026-12-06), then for what the schema cannot say:

- every result's ruleIndex points at the rule its ruleId names, every ruleId is
  one of the driver's rules, and a result's level is its rule's default level;
- every rule has a name that is not its id, a shortDescription and an absolute
  helpUri (SARIF 3.49.12), as the SARIF Multitool's rules ask;
- every artifactLocation.uri is a relative reference with a uriBaseId that
  run.originalUriBaseIds defines, and each originalUriBaseIds uri is an
  absolute URI ending with "/" (SARIF 3.14.14; Multitool SARIF2016,
  FileUrisShouldBeRelative, which GitHub code scanning relies on to map a
  result to a file of the repository).

The schema's "format": "uri" is checked here with urllib, since jsonschema's
checker for it needs the rfc3987 module, which Debian's python3 lacks.
Prints `ok FILE`, or FILE: the first error; exits 1 when any file is invalid,
2 on a usage error.
"""
import json
import os
import sys
import urllib.parse

try:
    import jsonschema
except ImportError:
    if os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3") and \
            os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    sys.stderr.write("check-sarif.py: the python3 jsonschema module is not installed\n")
    sys.exit(2)

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sarif-schema-2.1.0.json")


def absolute(uri):
    return bool(urllib.parse.urlsplit(uri).scheme)


def schema_problem(log):
    schema = json.load(open(SCHEMA))
    errors = sorted(jsonschema.Draft4Validator(schema).iter_errors(log),
                    key=lambda e: list(e.path))
    if errors:
        e = errors[0]
        return "%s: %s" % ("/".join(str(p) for p in e.path) or "(top)", e.message)
    return None


def rule_problem(rules):
    for i, r in enumerate(rules):
        where = "runs/tool/driver/rules/%d (%s)" % (i, r["id"])
        if not r.get("name") or r["name"] == r["id"]:
            return "%s: no name, or the name is the id" % where
        if not r.get("shortDescription", {}).get("text"):
            return "%s: no shortDescription" % where
        if not absolute(r.get("helpUri", "")):
            return "%s: helpUri %r is not an absolute URI" % (where, r.get("helpUri"))
    return None


def location_problem(run, i, res):
    bases = run.get("originalUriBaseIds", {})
    for base, loc in bases.items():
        if not absolute(loc.get("uri", "")) or not loc["uri"].endswith("/"):
            return "runs/originalUriBaseIds/%s: uri %r is not absolute with a final /" % (
                base, loc.get("uri"))
    for loc in res.get("locations", []):
        art = loc.get("physicalLocation", {}).get("artifactLocation", {})
        uri = art.get("uri", "")
        if absolute(uri) or uri.startswith("/"):
            return "runs/results/%d: uri %r is absolute, not relative to a uriBaseId" % (i, uri)
        if art.get("uriBaseId") not in bases:
            return "runs/results/%d: uriBaseId %r is not in originalUriBaseIds" % (
                i, art.get("uriBaseId"))
    return None


def problems(log):
    err = schema_problem(log)
    if err:
        return err
    for run in log["runs"]:
        rules = run["tool"]["driver"].get("rules", [])
        ids = [r["id"] for r in rules]
        err = rule_problem(rules)
        if err:
            return err
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
            err = location_problem(run, i, res)
            if err:
                return err
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
