#!/usr/bin/env python3
"""What EC2 (moto with kiln's extension) really holds, for tests/e2e/capacity.sh: an
independent client (boto3), as tests/e2e/aws_inspect.py is for the rest.

  capacity_inspect.py odcr TYPE ZONE COUNT [END|- [START]]
                                                    create a targeted reservation (ending at END,
                                                    future-dated from START, RFC 3339, if given);
                                                    print its id
  capacity_inspect.py group NAME CR_ID...           make a Capacity Reservation group of those
                                                    reservations; print its ARN
  capacity_inspect.py in-reservation CR_ID|cluster:NAME N [LIFECYCLE]
                                                    exactly N live instances run in CR_ID (with
                                                    InstanceLifecycle LIFECYCLE, if given)
  capacity_inspect.py reservations TAG_WS N [STATE]  exactly N reservations carry kiln:workspace
                                                    TAG_WS (all in STATE, if given)
  capacity_inspect.py launch-refused CR_ID|cluster:NAME CODE
                                                    a capacity-block launch into CR_ID is
                                                    refused with error CODE (message printed)
  capacity_inspect.py purchases N                   the extension saw exactly N purchases
  capacity_inspect.py market CLUSTER LIFECYCLE N    exactly N live instances of the cluster, each
                                                    with InstanceLifecycle LIFECYCLE ("none": none)
  capacity_inspect.py cluster-in CLUSTER N CR_ID    exactly N live instances of the cluster, all
                                                    launched into CR_ID (so none left outside it)

Exit status 0 when it holds; otherwise the difference is printed and the status is 1.
AWS_ENDPOINT_URL, AWS_REGION and the credentials come from the environment.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.request

import boto3


def ec2():
    return boto3.client("ec2", endpoint_url=os.environ["AWS_ENDPOINT_URL"],
                        region_name=os.environ.get("AWS_REGION", "us-east-1"))


def live_instances(filters):
    out = []
    for r in ec2().describe_instances(Filters=filters)["Reservations"]:
        out += [i for i in r["Instances"] if i["State"]["Name"] in ("pending", "running")]
    return out


def want(got, expected, what) -> int:
    if got != expected:
        print(f"{what}: got {got!r}, want {expected!r}")
        return 1
    return 0


def main(argv) -> int:
    cmd, args = argv[1], argv[2:]
    if cmd == "odcr":
        itype, zone, count = args[:3]
        end = {"EndDateType": "limited", "EndDate": args[3]} if len(args) > 3 and args[3] != "-" else {}
        if len(args) > 4:
            end["StartDate"] = args[4]
        cr = ec2().create_capacity_reservation(
            InstanceType=itype, InstancePlatform="Linux/UNIX", AvailabilityZone=zone,
            InstanceCount=int(count), InstanceMatchCriteria="targeted",
            **end)["CapacityReservation"]
        print(cr["CapacityReservationId"])
        return 0
    if cmd == "group":
        # As "Capacity Reservation groups" (EC2 user guide) makes one: a group whose
        # configuration is a capacity reservation pool, then its members added.
        rg = boto3.client("resource-groups", endpoint_url=os.environ["AWS_ENDPOINT_URL"],
                          region_name=os.environ.get("AWS_REGION", "us-east-1"))
        arn = rg.create_group(Name=args[0], Configuration=[
            {"Type": "AWS::EC2::CapacityReservationPool"},
            {"Type": "AWS::ResourceGroups::Generic", "Parameters": [
                {"Name": "allowed-resource-types",
                 "Values": ["AWS::EC2::CapacityReservation"]}]}])["Group"]["GroupArn"]
        crs = ec2().describe_capacity_reservations(
            CapacityReservationIds=args[1:])["CapacityReservations"] if args[1:] else []
        if crs:
            rg.group_resources(Group=args[0],
                               ResourceArns=[c["CapacityReservationArn"] for c in crs])
        got = rg.list_group_resources(Group=args[0])["Resources"]
        if len(got) != len(crs):
            print(f"group {args[0]}: {len(got)} members, want {len(crs)}", file=sys.stderr)
            return 1
        print(arn)
        return 0
    if cmd in ("in-reservation", "launch-refused"):
        cr_id = args[0]
        if cr_id.startswith("cluster:"):  # the one reservation that cluster's tags name
            got = ec2().describe_capacity_reservations(Filters=[
                {"Name": "tag:kiln:cluster", "Values": [cr_id[8:]]}])["CapacityReservations"]
            if len(got) != 1:
                print(f"reservations of cluster {cr_id[8:]}: {len(got)}, want 1")
                return 1
            cr_id = got[0]["CapacityReservationId"]
    if cmd == "launch-refused":
        from botocore.exceptions import ClientError

        try:
            ec2().run_instances(
                ImageId="ami-1e749f67", InstanceType="p5.48xlarge", MinCount=1, MaxCount=1,
                InstanceMarketOptions={"MarketType": "capacity-block"},
                CapacityReservationSpecification={
                    "CapacityReservationTarget": {"CapacityReservationId": cr_id}})
        except ClientError as e:
            print(e.response["Error"]["Message"])
            return want(e.response["Error"]["Code"], args[1], "the launch's error code")
        print(f"a launch into {cr_id} was not refused")
        return 1
    if cmd == "in-reservation":
        n = int(args[1])
        insts = [i for i in live_instances([]) if i.get("CapacityReservationId") == cr_id]
        rc = want(len(insts), n, f"live instances in {cr_id}")
        if len(args) > 2:
            rc |= want(sorted({i.get("InstanceLifecycle", "none") for i in insts}), [args[2]],
                       "their lifecycle")
        cr = ec2().describe_capacity_reservations(CapacityReservationIds=[cr_id])
        avail = cr["CapacityReservations"][0]
        # Only an active reservation has instances available (a scheduled block has none).
        if avail["State"] == "active":
            rc |= want(avail["AvailableInstanceCount"], avail["TotalInstanceCount"] - n,
                       "AvailableInstanceCount")
        return rc
    if cmd == "reservations":
        ws, n = args[0], int(args[1])
        got = ec2().describe_capacity_reservations(
            Filters=[{"Name": "tag:kiln:workspace", "Values": [ws]}])["CapacityReservations"]
        rc = want(len(got), n, f"reservations of workspace {ws}")
        if len(args) > 2:
            rc |= want(sorted({c["State"] for c in got}), [args[2]], "their state")
        return rc
    if cmd == "purchases":
        url = os.environ["AWS_ENDPOINT_URL"] + "/_kiln/capacity-blocks"
        with urllib.request.urlopen(url, timeout=10) as r:
            purchases = json.load(r)["purchases"]
        return want(len(purchases), int(args[0]), f"purchases ({purchases})")
    if cmd == "market":
        cluster, life, n = args[0], args[1], int(args[2])
        insts = live_instances([{"Name": "tag:kiln:cluster", "Values": [cluster]}])
        rc = want(len(insts), n, f"live instances of {cluster}")
        if n:
            rc |= want(sorted({i.get("InstanceLifecycle", "none") for i in insts}), [life],
                       "their lifecycle")
        return rc
    if cmd == "cluster-in":
        cluster, n, cr_id = args[0], int(args[1]), args[2]
        insts = live_instances([{"Name": "tag:kiln:cluster", "Values": [cluster]}])
        rc = want(len(insts), n, f"live instances of {cluster}")
        rc |= want(sorted({i.get("CapacityReservationId", "none") for i in insts}), [cr_id],
                   "the reservations they run in")
        rc |= want(sorted({i.get("CapacityReservationSpecification", {})
                           .get("CapacityReservationTarget", {})
                           .get("CapacityReservationId", "none") for i in insts}), [cr_id],
                   "the reservation they target")
        return rc
    if cmd == "preference":
        # How the cluster's instances were asked to use capacity reservations, as EC2 reports it.
        cluster, pref = args[0], args[1]
        insts = live_instances([{"Name": "tag:kiln:cluster", "Values": [cluster]}])
        return want(sorted({i.get("CapacityReservationSpecification", {})
                            .get("CapacityReservationPreference", "unset") for i in insts}),
                    [pref], f"the capacity reservation preference of {cluster}'s instances")
    if cmd == "group-launch":
        # A launch targeting a reservation group no member fits: PREF "-" sends no
        # preference (EC2 launches on demand), else it is sent and CODE is the refusal.
        arn, pref = args[0], args[1]
        spec = {"CapacityReservationTarget": {"CapacityReservationResourceGroupArn": arn}}
        if pref != "-":
            spec["CapacityReservationPreference"] = pref
        from botocore.exceptions import ClientError

        try:
            got = ec2().run_instances(ImageId="ami-1e749f67", InstanceType="p5.48xlarge",
                                      MinCount=1, MaxCount=1,
                                      Placement={"AvailabilityZone": "us-east-1a"},
                                      CapacityReservationSpecification=spec)
        except ClientError as e:
            print(e.response["Error"]["Message"])
            return want(e.response["Error"]["Code"], args[2] if len(args) > 2 else None,
                        "the launch's error code")
        inst = got["Instances"][0]
        ec2().terminate_instances(InstanceIds=[inst["InstanceId"]])
        if len(args) > 2:
            print(f"a launch into {arn} was not refused")
            return 1
        return (want(inst.get("CapacityReservationId"), None, "the reservation it runs in")
                | want(inst.get("CapacityReservationSpecification", {})
                       .get("CapacityReservationPreference"), None, "the preference echoed"))
    if cmd == "ids":
        # The live instance ids of a cluster, sorted, one line: to tell a new gang from the old.
        insts = live_instances([{"Name": "tag:kiln:cluster", "Values": [args[0]]}])
        print(" ".join(sorted(i["InstanceId"] for i in insts)))
        return 0
    print(f"unknown command {cmd}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
