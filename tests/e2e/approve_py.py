#!/usr/bin/env python3
"""approve_py.py COMMAND ARGS... - plan-file helpers for tests/e2e/approve.sh.

  digest FILE                 print the file's "digest"
  count FILE                  print how many approvals it holds
  field FILE I NAME           print member NAME of approval I
  set FILE I NAME VALUE       set member NAME of approval I (an edit by hand)
  retamper FILE               change the node group's count in the plan and
                              write the file back with its digest recomputed
                              as kiln computes it, approvals kept: a plan
                              changed after approval that passes the digest
                              check, so only the signatures can catch it
  show-json FILE DIGEST ID_VALID ID_UNKNOWN
                              check `kiln show --approvals --json` output
"""
import hashlib
import json
import re
import sys


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def save(path, doc):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


def kiln_digest(plan):
    """plan_digest(): compact, sorted keys, ASCII with upper-case \\u escapes.

    kiln writes reals with 17 significant digits, which json.dumps does not;
    a plan with a real is refused rather than digested differently.
    """
    def walk(v):
        if isinstance(v, float):
            sys.exit("the plan holds a real number; this helper cannot digest it as kiln does")
        if isinstance(v, dict):
            for x in v.values():
                walk(x)
        if isinstance(v, list):
            for x in v:
                walk(x)
    walk(plan)
    text = json.dumps(plan, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    text = re.sub(r"\\u([0-9a-f]{4})", lambda m: "\\u" + m.group(1).upper(), text)
    return "sha256:" + hashlib.sha256(text.encode("ascii")).hexdigest()


def retamper(path):
    doc = load(path)
    if kiln_digest(doc["plan"]) != doc["digest"]:
        sys.exit("cannot reproduce kiln's digest of the untouched plan: %s, file says %s"
                 % (kiln_digest(doc["plan"]), doc["digest"]))
    changed = False
    for rc in doc["plan"]["resource_changes"]:
        after = rc["change"].get("after") or {}
        if "count" in after:
            after["count"] += 1
            changed = True
            break
    if not changed:
        sys.exit("no count to change in the plan")
    doc["digest"] = kiln_digest(doc["plan"])
    if not doc.get("approvals"):
        sys.exit("the plan file holds no approvals")
    save(path, doc)


def show_json(path, digest, id_valid, id_unknown):
    doc = load(path)
    assert doc["file"] == "p.kiln", doc["file"]
    assert doc["digest"] == digest, doc["digest"]
    assert doc["trusted_keys"] == "trusted", doc["trusted_keys"]
    assert doc["valid"] == 1, doc["valid"]
    a, b = doc["approvals"]
    want_keys = ["key_id", "message", "signer", "status", "time", "trusted_by", "verifies"]
    assert sorted(a) == want_keys, sorted(a)
    assert (a["key_id"], a["status"], a["verifies"], a["trusted_by"], a["signer"]) == \
        (id_valid, "valid", True, "alice.pub", "alice"), a
    assert (b["key_id"], b["status"], b["verifies"], b["trusted_by"]) == \
        (id_unknown, "unknown_key", True, None), b
    assert b["message"] == "unknown key: no *.pub file in trusted holds it", b["message"]


def main(argv):
    cmd, args = argv[1], argv[2:]
    if cmd == "digest":
        print(load(args[0])["digest"])
    elif cmd == "count":
        print(len(load(args[0]).get("approvals", [])))
    elif cmd == "field":
        print(load(args[0])["approvals"][int(args[1])][args[2]])
    elif cmd == "set":
        doc = load(args[0])
        doc["approvals"][int(args[1])][args[2]] = args[3]
        save(args[0], doc)
    elif cmd == "retamper":
        retamper(args[0])
    elif cmd == "show-json":
        show_json(*args)
    else:
        sys.exit("unknown command %s" % cmd)


if __name__ == "__main__":
    main(sys.argv)
