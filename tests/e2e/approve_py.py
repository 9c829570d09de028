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
  edit FILE ADDRESS PATH JSON set PATH (dotted, such as change.actions or
                              change.after.count) of ADDRESS's change to the
                              JSON value and write the file back with its
                              digest recomputed: a deliberate edit that the
                              digest cannot catch; ADDRESS - is the plan
                              itself, a number in PATH a list index
                              (planned_values.root_module.resources.2.values.count)
  message FILE I MSG SIG      write the message approval I signs (kiln-approve(1),
                              WHAT IS SIGNED) to MSG and its raw signature to
                              SIG, for openssl pkeyutl -verify -rawin
  show-json FILE DIGEST ID_VALID ID_UNKNOWN
                              check `kiln show --approvals --json` output
"""
import base64
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


def canonical(v):
    """plan_canonical(): compact JSON, keys sorted, ASCII only, as jansson writes it.

    Strings escape every non-ASCII character as \\uXXXX with upper-case hex;
    reals have 17 significant digits ("%.17g", ".0" added to an integral
    value, no '+' or leading zeros in the exponent).
    """
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        text = "%.17g" % v
        if "." not in text and "e" not in text:
            text += ".0"
        return re.sub(r"e\+?(-?)0*(\d)", r"e\1\2", text)
    if isinstance(v, str):
        text = json.dumps(v, ensure_ascii=True)
        return re.sub(r"\\u([0-9a-f]{4})", lambda m: "\\u" + m.group(1).upper(), text)
    if isinstance(v, list):
        return "[" + ",".join(canonical(x) for x in v) + "]"
    return "{" + ",".join(canonical(k) + ":" + canonical(v[k]) for k in sorted(v)) + "}"


def kiln_digest(plan):
    """plan_digest(): the SHA-256 of the canonical text."""
    return "sha256:" + hashlib.sha256(canonical(plan).encode("ascii")).hexdigest()


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


def edit(path, address, where, value):
    doc = load(path)
    if kiln_digest(doc["plan"]) != doc["digest"]:
        sys.exit("cannot reproduce kiln's digest of the untouched plan")
    rc = [c for c in doc["plan"]["resource_changes"] if c["address"] == address]
    if address == "-":
        rc = [doc["plan"]]
    if len(rc) != 1:
        sys.exit("no change of %s in the plan" % address)
    keys = [int(k) if k.isdigit() else k for k in where.split(".")]
    obj = rc[0]
    for k in keys[:-1]:
        obj = obj[k]
    obj[keys[-1]] = json.loads(value)
    doc["digest"] = kiln_digest(doc["plan"])
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
    elif cmd == "edit":
        edit(*args)
    elif cmd == "message":
        doc = load(args[0])
        a = doc["approvals"][int(args[1])]
        with open(args[2], "wb") as f:
            f.write(("kiln-approval-v1\n%s\n%s\n" % (a["signer"], a["time"])).encode("utf-8"))
            f.write(canonical(doc["plan"]).encode("ascii"))
        with open(args[3], "wb") as f:
            f.write(base64.b64decode(a["signature"], validate=True))
    elif cmd == "show-json":
        show_json(*args)
    else:
        sys.exit("unknown command %s" % cmd)


if __name__ == "__main__":
    main(sys.argv)
