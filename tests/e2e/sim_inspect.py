#!/usr/bin/env python3
"""sim_inspect.py - look at a sim directory without kiln, for the e2e tests.

  sim_inspect.py SIM_DIR STATE_JSON   check: no address held twice, every
                                      sim resource recorded in the state
                                      with its id, every recorded resource
                                      alive; prints "sim: N resources" or
                                      the faults (exit 1)
  sim_inspect.py SIM_DIR count        number of resources
  sim_inspect.py SIM_DIR set ADDRESS ATTR JSON   edit a live attribute (drift)
  sim_inspect.py SIM_DIR rm ADDRESS   delete a resource behind kiln's back
  sim_inspect.py SIM_DIR untag ADDRESS   drop every kiln:* tag of a resource
                                      (a GPU group launched outside kiln)
  sim_inspect.py SIM_DIR ids          every resource as "ID ADDRESS", sorted
  sim_inspect.py SIM_DIR lineages WS  every resource of workspace WS as
                                      "ADDRESS LINEAGE OWNER", sorted
  sim_inspect.py SIM_DIR unlineage WS drop kiln:lineage and kiln:owner from
                                      every resource of workspace WS (made
                                      before kiln tagged lineages)
  sim_inspect.py SIM_DIR report ADDRESS INDEX VALUE   the node at INDEX of a
                                      node group (oldest launch first, ties by
                                      id) reports VALUE as its kiln:health tag
                                      from now on, as a booted node would
  sim_inspect.py SIM_DIR tag ADDRESS KEY   the resource's tag KEY ("-": none)
  sim_inspect.py SIM_DIR nodes ADDRESS   the group's nodes, one "ID PRIVATE_IP"
                                      a line, oldest launch first
The STATE_JSON check also finds every recorded resource tagged with the
state's lineage (kiln:lineage), when the state names one.
"""
import collections
import glob
import json
import os
import sys


def resources(sim):
    out = []
    for path in sorted(glob.glob(os.path.join(sim, "r", "*.json"))):
        with open(path) as f:
            out.append((path, json.load(f)))
    return out


def main():
    sim, cmd = sys.argv[1], sys.argv[2]
    res = resources(sim)
    if cmd == "count":
        print(len(res))
        return 0
    if cmd == "ids":
        for _, d in res:
            print(d["id"], d.get("tags", {}).get("kiln:address", "-"))
        return 0
    if cmd in ("lineages", "unlineage"):
        mine = [(p, d) for p, d in res if d.get("tags", {}).get("kiln:workspace") == sys.argv[3]]
        for path, doc in sorted(mine, key=lambda x: x[1]["tags"].get("kiln:address", "")):
            t = doc["tags"]
            if cmd == "lineages":
                print(t.get("kiln:address"), t.get("kiln:lineage", "-"), t.get("kiln:owner", "-"))
                continue
            t.pop("kiln:lineage", None)
            t.pop("kiln:owner", None)
            with open(path + ".tmp", "w") as f:
                json.dump(doc, f)
            os.replace(path + ".tmp", path)
        return 0
    if cmd in ("set", "rm", "untag", "report", "nodes", "tag"):
        addr = sys.argv[3]
        hits = [(p, d) for p, d in res if d.get("tags", {}).get("kiln:address") == addr]
        if len(hits) != 1:
            print(f"{addr}: {len(hits)} resources", file=sys.stderr)
            return 1
        path, doc = hits[0]
        if cmd == "rm":
            os.unlink(path)
            return 0
        if cmd == "tag":
            print(doc.get("tags", {}).get(sys.argv[4], "-"))
            return 0
        if cmd in ("report", "nodes"):
            recs = doc.get("sim", {}).get("nodes", {})
            order = sorted(doc["attrs"].get("instance_ids", []),
                           key=lambda i: (recs.get(i, {}).get("launched_ms", 0), i))
            if cmd == "nodes":
                for i in order:
                    print(i, recs.get(i, {}).get("private_ip", "-"))
                return 0
            rec = recs[order[int(sys.argv[4])]]
            rec["report"] = sys.argv[5]
            rec["report_at_ms"] = 0
            with open(path + ".tmp", "w") as f:
                json.dump(doc, f)
            os.replace(path + ".tmp", path)
            return 0
        if cmd == "untag":
            doc["tags"] = {k: v for k, v in doc.get("tags", {}).items() if not k.startswith("kiln:")}
            with open(path + ".tmp", "w") as f:
                json.dump(doc, f)
            os.replace(path + ".tmp", path)
            return 0
        doc["attrs"][sys.argv[4]] = json.loads(sys.argv[5])
        with open(path + ".tmp", "w") as f:
            json.dump(doc, f)
        os.replace(path + ".tmp", path)
        return 0
    with open(cmd) as f:
        doc = json.load(f)
    state, lineage = doc["resources"], doc.get("lineage")
    faults = []
    for _, d in res:
        t = d.get("tags", {})
        rec = state.get(t.get("kiln:address"))
        if lineage and rec and rec.get("id") == d["id"] and t.get("kiln:lineage") != lineage:
            faults.append(f"lineage: {t.get('kiln:address')} ({d['id']}) carries "
                          f"{t.get('kiln:lineage')}, the state is {lineage}")
    by_addr = collections.defaultdict(list)
    for _, d in res:
        by_addr[d.get("tags", {}).get("kiln:address")].append(d["id"])
    for addr, ids in sorted(by_addr.items()):
        if len(ids) > 1:
            faults.append(f"duplicate: {addr} is {' and '.join(ids)}")
        rec = state.get(addr)
        retained = False
        if not rec:
            docs = [d for _, d in res if d.get("tags", {}).get("kiln:address") == addr]
            retained = docs and docs[0]["attrs"].get("deletion") == "retain"
            if not retained:
                faults.append(f"untracked: {addr} ({ids[0]}) is not in the state")
        elif rec.get("id") not in ids:
            faults.append(f"wrong id: state has {addr} as {rec.get('id')}, the sim {ids}")
    for addr in sorted(state):
        if addr not in by_addr:
            faults.append(f"gone: {addr} is recorded but not in the sim")
    if faults:
        print("\n".join(faults))
        return 1
    print(f"sim: {len(res)} resources")
    return 0


if __name__ == "__main__":
    sys.exit(main())
