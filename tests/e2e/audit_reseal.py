#!/usr/bin/env python3
# audit_reseal.py PLANFILE MEMBERS_JSON: merge MEMBERS_JSON into a saved plan's
# "kiln" object (findings, as a kiln that audits every plan writes them; a
# member whose value is null is removed, as a kiln older than it wrote it) and
# reseal its digest the way plan.c computes it (compact, sorted keys, ASCII
# with upper-case \uXXXX escapes, reals to 17 significant digits).
import json, hashlib, sys, re

def enc(v):
    if isinstance(v, float):
        s = "%.17g" % v
        return s if re.search(r"[.eE]", s) else s + ".0"
    if isinstance(v, str):
        return re.sub(r"\\u([0-9a-f]{4})", lambda m: "\\u" + m.group(1).upper(), json.dumps(v, ensure_ascii=True))
    if isinstance(v, bool) or v is None or isinstance(v, int):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ",".join(enc(x) for x in v) + "]"
    return "{" + ",".join(enc(k) + ":" + enc(v[k]) for k in sorted(v)) + "}"

f = json.load(open(sys.argv[1]))
for k, v in json.load(open(sys.argv[2])).items():
    if v is None:
        f["plan"]["kiln"].pop(k, None)
    else:
        f["plan"]["kiln"][k] = v
f["digest"] = "sha256:" + hashlib.sha256(enc(f["plan"]).encode()).hexdigest()
json.dump(f, open(sys.argv[1], "w"), indent=2)
