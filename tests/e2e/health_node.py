#!/usr/bin/env python3
"""health_node.py - what a booted node does about its health, emulated against moto
(nothing boots there): with the credentials EC2 gives the instance (its instance
profile's role, through the kiln extension's /_kiln/instance-credentials), it puts the
kiln:health tag on itself, as the generated boot script does with
`aws ec2 create-tags --resources IID --tags Key=kiln:health,Value=...`.
AWS_ENDPOINT_URL names the server; the admin credentials in the environment only find
the instances.

  health_node.py tag CLUSTER WS GROUP INDEX VALUE
      wait (60 s at most) for the group's INDEX-th running instance (oldest launch
      first, ties by id), then tag it kiln:health=VALUE with its own credentials;
      prints its id
  health_node.py tag-new CLUSTER WS GROUP VALUE KNOWN_ID...
      wait (60 s at most) for a running instance of the group that is none of the
      known ones, then tag it kiln:health=VALUE with its own credentials; prints its id
  health_node.py show IID
      "STATE kiln:address=... kiln:cluster=..." of any instance, terminated included
  health_node.py newest CLUSTER WS GROUP
      the id of the group's newest running instance
  health_node.py limits CLUSTER WS GROUP
      with the credentials of the group's first instance: tagging itself kiln:health
      is allowed; tagging the second instance, or itself with another key, is refused
      with UnauthorizedOperation; prints one line per try, exit 1 when one went
      otherwise
  health_node.py metrics CLUSTER WS GROUP
      with the credentials of the group's first instance, as its CloudWatch agent
      publishes (issue 17): PutMetricData into CWAgent is allowed, into another
      namespace refused with AccessDeniedException; one line per try, exit 1 when one went
      otherwise
  health_node.py put-metric NAMESPACE
      PutMetricData into NAMESPACE with the environment's credentials: "allowed" or
      the error code
"""
import json
import os
import sys
import time
import urllib.request

import boto3
import botocore.config
import botocore.exceptions


def client(service, creds=None):
    kw = dict(endpoint_url=os.environ["AWS_ENDPOINT_URL"],
              region_name=os.environ.get("AWS_REGION", "us-east-1"),
              config=botocore.config.Config(retries={"total_max_attempts": 1}))
    if creds:
        kw.update(aws_access_key_id=creds["AccessKeyId"],
                  aws_secret_access_key=creds["SecretAccessKey"],
                  aws_session_token=creds["SessionToken"])
    return boto3.client(service, **kw)


def ec2(creds=None):
    return client("ec2", creds)


def instances(cluster, ws, group):
    out = []
    for r in ec2().describe_instances(Filters=[
            {"Name": "tag:kiln:cluster", "Values": [cluster]},
            {"Name": "tag:kiln:workspace", "Values": [ws]},
            {"Name": "tag:kiln:address", "Values": ["aws_instance_group." + group]},
            {"Name": "instance-state-name", "Values": ["pending", "running"]}])["Reservations"]:
        out += r["Instances"]
    return sorted(out, key=lambda i: (i["LaunchTime"], i["InstanceId"]))


def credentials(iid):
    req = urllib.request.Request(
        os.environ["AWS_ENDPOINT_URL"] + "/_kiln/instance-credentials",
        data=json.dumps({"instance_id": iid,
                         "region": os.environ.get("AWS_REGION", "us-east-1")}).encode(),
        headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req) as resp:
        return json.load(resp)


def put_metric(creds, namespace):
    try:
        client("cloudwatch", creds).put_metric_data(Namespace=namespace, MetricData=[{
            "MetricName": "nvidia_smi_utilization_gpu", "Unit": "Percent", "Value": 97.0,
            "Dimensions": [{"Name": "InstanceId", "Value": "i-0123456789abcdef0"}]}])
        return "allowed"
    except botocore.exceptions.ClientError as e:
        return e.response["Error"]["Code"]


def tag(creds, iid, key, value):
    try:
        ec2(creds).create_tags(Resources=[iid], Tags=[{"Key": key, "Value": value}])
        return "allowed"
    except botocore.exceptions.ClientError as e:
        return e.response["Error"]["Code"]


def report(iid, value):
    """The node iid tags itself kiln:health VALUE with its own credentials."""
    got = tag(credentials(iid), iid, "kiln:health", value)
    if got != "allowed":
        print(f"{iid}: tagging itself: {got}", file=sys.stderr)
        return 1
    print(iid)
    return 0


def main():
    if sys.argv[1] == "show":
        for r in ec2().describe_instances(InstanceIds=[sys.argv[2]])["Reservations"]:
            for i in r["Instances"]:
                tags = {t["Key"]: t["Value"] for t in i.get("Tags", [])}
                print(i["State"]["Name"], " ".join(
                    f"{k}={tags[k]}" for k in ("kiln:address", "kiln:cluster", "kiln:workspace")
                    if k in tags))
        return 0
    if sys.argv[1] == "put-metric":
        print(put_metric(None, sys.argv[2]))
        return 0
    cmd, cluster, ws, group = sys.argv[1:5]
    if cmd == "tag":
        index, value = int(sys.argv[5]), sys.argv[6]
        deadline = time.time() + 60
        while True:
            found = instances(cluster, ws, group)
            if len(found) > index or time.time() > deadline:
                break
            time.sleep(0.5)
        if len(found) <= index:
            print(f"{group}: no instance {index} after 60 s", file=sys.stderr)
            return 1
        return report(found[index]["InstanceId"], value)
    if cmd == "tag-new":
        value, known = sys.argv[5], set(sys.argv[6:])
        deadline = time.time() + 60
        while True:
            new = [i for i in instances(cluster, ws, group) if i["InstanceId"] not in known]
            if new or time.time() > deadline:
                break
            time.sleep(0.5)
        if not new:
            print(f"{group}: no new instance after 60 s", file=sys.stderr)
            return 1
        return report(new[0]["InstanceId"], value)
    if cmd == "newest":
        print(instances(cluster, ws, group)[-1]["InstanceId"])
        return 0
    if cmd == "limits":
        found = instances(cluster, ws, group)
        me, other = found[0]["InstanceId"], found[1]["InstanceId"]
        creds = credentials(me)
        tries = [("itself kiln:health", tag(creds, me, "kiln:health", "healthy: 8/8 GPUs"),
                  "allowed"),
                 ("another instance kiln:health", tag(creds, other, "kiln:health", "healthy: x"),
                  "UnauthorizedOperation"),
                 ("itself another key", tag(creds, me, "Name", "mine"),
                  "UnauthorizedOperation")]
        bad = 0
        for what, got, want in tries:
            print(f"{what}: {got}")
            bad += got != want
        return 1 if bad else 0
    if cmd == "metrics":
        creds = credentials(instances(cluster, ws, group)[0]["InstanceId"])
        tries = [("CWAgent", put_metric(creds, "CWAgent"), "allowed"),
                 ("KilnOther", put_metric(creds, "KilnOther"), "AccessDeniedException")]
        bad = 0
        for what, got, want in tries:
            print(f"PutMetricData into {what}: {got}")
            bad += got != want
        return 1 if bad else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
