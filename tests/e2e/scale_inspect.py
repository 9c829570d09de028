#!/usr/bin/env python3
"""What EC2 (moto with kiln's extension and its EC2 buckets) really holds, for
tests/e2e/scale.sh: an independent client (boto3).

  scale_inspect.py gang CLUSTER ADDRESS N      exactly N live instances carry kiln:cluster
                                               CLUSTER, each kiln:address ADDRESS and
                                               kiln:workspace, no id twice
  scale_inspect.py calls ACTION OP N           the emulator counted ec2:ACTION OP N times
                                               (OP: eq or le)
  scale_inspect.py throttled N                 the emulator's buckets refused exactly N requests
  scale_inspect.py refuses-big N               a RunInstances of N instances (more than EC2's
                                               instance bucket holds) is refused with HTTP 503
                                               RequestLimitExceeded, and launches nothing

Exit status 0 when it holds; otherwise the difference is printed and the status is 1.
AWS_ENDPOINT_URL, AWS_REGION and the credentials come from the environment.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.request

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError


def ec2():
    return boto3.client("ec2", endpoint_url=os.environ["AWS_ENDPOINT_URL"],
                        region_name=os.environ.get("AWS_REGION", "us-east-1"),
                        config=Config(retries={"max_attempts": 1, "mode": "standard"}))


def control(path: str) -> dict:
    with urllib.request.urlopen(os.environ["AWS_ENDPOINT_URL"] + "/_kiln/" + path) as r:
        return json.load(r)


def live(cluster: str) -> list:
    out, token = [], None
    while True:
        kw = {"Filters": [{"Name": "tag:kiln:cluster", "Values": [cluster]},
                          {"Name": "instance-state-name",
                           "Values": ["pending", "running", "stopping", "stopped"]}],
              "MaxResults": 1000}
        if token:
            kw["NextToken"] = token
        r = ec2().describe_instances(**kw)
        for res in r["Reservations"]:
            out.extend(res["Instances"])
        token = r.get("NextToken")
        if not token:
            return out


def gang(cluster: str, address: str, n: str) -> int:
    insts = live(cluster)
    ids = [i["InstanceId"] for i in insts]
    bad = [i["InstanceId"] for i in insts
           if {t["Key"]: t["Value"] for t in i.get("Tags", [])}.get("kiln:address") != address
           or "kiln:workspace" not in {t["Key"] for t in i.get("Tags", [])}]
    if len(ids) != int(n) or len(set(ids)) != len(ids) or bad:
        print(f"{len(ids)} live ({len(set(ids))} distinct), want {n}; "
              f"{len(bad)} without kiln:address {address} or kiln:workspace: {bad[:5]}")
        return 1
    return 0


def calls(action: str, op: str, n: str) -> int:
    got = control("calls")["by_action"].get(f"ec2:{action}", 0)
    ok = got == int(n) if op == "eq" else got <= int(n)
    if not ok:
        print(f"ec2:{action} was called {got} times, want {op} {n}")
    return 0 if ok else 1


def throttled(n: str) -> int:
    rl = control("rate-limits")
    if rl["throttled"] > int(n):
        print(f"{rl['throttled']} requests throttled, want at most {n}: {rl['throttled_by_action']}")
        return 1
    return 0


def refuses_big(n: str) -> int:
    c = ec2()
    image = c.describe_images()["Images"][0]["ImageId"]
    try:
        c.run_instances(ImageId=image, InstanceType="m7i.xlarge", MinCount=int(n), MaxCount=int(n))
    except ClientError as e:
        code = e.response["Error"]["Code"]
        status = e.response["ResponseMetadata"]["HTTPStatusCode"]
        if code == "RequestLimitExceeded" and status == 503:
            return 0
        print(f"refused with {status} {code}, want 503 RequestLimitExceeded")
        return 1
    print(f"a RunInstances of {n} was not refused")
    return 1


def main(argv: list) -> int:
    cmds = {"gang": gang, "calls": calls, "throttled": throttled, "refuses-big": refuses_big}
    if len(argv) < 2 or argv[1] not in cmds:
        print(__doc__, file=sys.stderr)
        return 2
    return cmds[argv[1]](*argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
