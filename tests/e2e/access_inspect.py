#!/usr/bin/env python3
"""access_inspect.py - what boto3 says of a workspace's nodes, against kiln.

  access_inspect.py hosts HOSTS_JSON CLUSTER WS
      `kiln hosts --format json` against DescribeInstances and
      DescribeInstanceTypes: every running instance tagged with the
      workspace is listed once, under kiln-CLUSTER-WS-GROUP-N, with its id,
      private and public address, zone and GPU count; nothing else is.
  access_inspect.py key-name CLUSTER WS GROUP NAME
      every instance of GROUP was launched with the key pair NAME.
  access_inspect.py user-data CLUSTER WS GROUP PUBFILE OUT
      every instance of GROUP was launched with user data
      (DescribeInstanceAttribute) whose ssh_authorized_keys hold the key of
      PUBFILE; the first one's is written to OUT, for cloud-init schema.
  access_inspect.py import-key NAME PUBFILE
      ImportKeyPair, as an account that requires a key pair would have one.

Prints one line on success; the differences, and exit 1, otherwise.
"""
import json
import os
import sys

import boto3
import botocore.config


def ec2():
    return boto3.client(
        "ec2",
        endpoint_url=os.environ["AWS_ENDPOINT_URL"],
        region_name=os.environ.get("AWS_REGION", "us-east-1"),
        aws_access_key_id=os.environ.get("AWS_ACCESS_KEY_ID", "testing"),
        aws_secret_access_key=os.environ.get("AWS_SECRET_ACCESS_KEY", "testing"),
        config=botocore.config.Config(retries={"total_max_attempts": 1}),
    )


def instances(c, cluster, ws):
    out = []
    pages = c.get_paginator("describe_instances").paginate(Filters=[
        {"Name": "tag:kiln:cluster", "Values": [cluster]},
        {"Name": "tag:kiln:workspace", "Values": [ws]},
        {"Name": "instance-state-name", "Values": ["pending", "running"]}])
    for page in pages:
        for r in page["Reservations"]:
            out.extend(r["Instances"])
    return out


def gpus_of(c, itype, cache):
    if itype not in cache:
        got = c.describe_instance_types(InstanceTypes=[itype])["InstanceTypes"]
        info = got[0].get("GpuInfo") if got else None
        cache[itype] = sum(g.get("Count", 0) for g in info["Gpus"]) if info else 0
    return cache[itype]


def hosts(path, cluster, ws):
    with open(path) as f:
        got = json.load(f)["nodes"]
    c = ec2()
    cache = {}
    groups = {}
    for i in instances(c, cluster, ws):
        tags = {t["Key"]: t["Value"] for t in i.get("Tags", [])}
        group = tags["kiln:address"].split(".", 1)[1]
        groups.setdefault(group, []).append(i)
    want = []
    for group in sorted(groups):
        insts = sorted(groups[group], key=lambda i: (i["LaunchTime"], i["InstanceId"]))
        for n, i in enumerate(insts):
            want.append({
                "name": "kiln-%s-%s-%s-%d" % (cluster, ws, group, n),
                "id": i["InstanceId"], "group": group, "index": n,
                "private_ip": i.get("PrivateIpAddress"),
                "public_ip": i.get("PublicIpAddress"),
                "zone": i["Placement"]["AvailabilityZone"],
                "instance_type": i["InstanceType"],
                "gpus": gpus_of(c, i["InstanceType"], cache)})
    keys = list(want[0].keys()) if want else []
    trimmed = [{k: n.get(k) for k in keys} for n in got]
    if trimmed != want:
        return ["kiln hosts says %s\nboto3 says %s" % (json.dumps(trimmed, indent=1),
                                                        json.dumps(want, indent=1))]
    print("hosts: %d nodes agree with DescribeInstances" % len(want))
    return []


def key_name(cluster, ws, group, name):
    bad = []
    insts = [i for i in instances(ec2(), cluster, ws)
             if {t["Key"]: t["Value"] for t in i.get("Tags", [])}.get("kiln:address")
             == "aws_instance_group." + group]
    if not insts:
        bad.append("no instance of %s" % group)
    for i in insts:
        if i.get("KeyName") != name:
            bad.append("%s has KeyName %r, not %r" % (i["InstanceId"], i.get("KeyName"), name))
    if not bad:
        print("key-name: %d instances launched with %s" % (len(insts), name))
    return bad


def user_data(cluster, ws, group, pubfile, out):
    import base64
    with open(pubfile) as f:
        key = f.read().strip()
    c = ec2()
    bad = []
    insts = [i for i in instances(c, cluster, ws)
             if {t["Key"]: t["Value"] for t in i.get("Tags", [])}.get("kiln:address")
             == "aws_instance_group." + group]
    if not insts:
        bad.append("no instance of %s" % group)
    for n, i in enumerate(insts):
        got = c.describe_instance_attribute(InstanceId=i["InstanceId"], Attribute="userData")
        doc = base64.b64decode(got.get("UserData", {}).get("Value", "")).decode()
        if n == 0:
            with open(out, "w") as f:
                f.write(doc)
        lines = doc.splitlines()
        if "ssh_authorized_keys:" not in lines or '  - "%s"' % key not in lines:
            bad.append("%s: the user data does not authorize %s" % (i["InstanceId"], key))
    if not bad:
        print("user-data: %d instances authorize the key" % len(insts))
    return bad


def terminate(cluster, ws, group):
    """Deletes a group's instances outside kiln, as someone with the console would."""
    c = ec2()
    ids = [i["InstanceId"] for i in instances(c, cluster, ws)
           if {t["Key"]: t["Value"] for t in i.get("Tags", [])}.get("kiln:address")
           == "aws_instance_group." + group]
    if not ids:
        return ["no instance of %s" % group]
    c.terminate_instances(InstanceIds=ids)
    print("terminate: %d instances of %s" % (len(ids), group))
    return []


def main():
    cmd = sys.argv[1]
    if cmd == "hosts":
        bad = hosts(*sys.argv[2:5])
    elif cmd == "key-name":
        bad = key_name(*sys.argv[2:6])
    elif cmd == "user-data":
        bad = user_data(*sys.argv[2:7])
    elif cmd == "terminate":
        bad = terminate(*sys.argv[2:5])
    elif cmd == "import-key":
        with open(sys.argv[3]) as f:
            ec2().import_key_pair(KeyName=sys.argv[2], PublicKeyMaterial=f.read().encode())
        bad = []
    else:
        sys.exit("unknown command %s" % cmd)
    for b in bad:
        print(b)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
