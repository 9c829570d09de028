#!/usr/bin/env python3
"""Proves that kiln's local AWS (tests/moto/kiln_moto.py, started by tests/moto/server.sh)
does what kiln's tests rely on.  Plain python3 + boto3; prints "ok - ..." / "not ok - ..."
lines and a closing "N passed, N failed" line; exit status 0 only if all passed.

Every boto3 client here makes exactly one attempt per call: botocore's
retries={'max_attempts': 1} still allows one retry (max_attempts counts retries in
botocore's config), so total_max_attempts=1 is used.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.request

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER_SH = os.path.join(HERE, "server.sh")
REGION = "us-east-1"
NO_RETRY = Config(retries={"total_max_attempts": 1})
TRUST = json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"},
                   "Action": "sts:AssumeRole"}],
})
WS = [{"Key": "kiln:workspace", "Value": "ws1"}]
WS_FILTER = [{"Name": "tag:kiln:workspace", "Values": ["ws1"]}]


class Server:
    """One kiln_moto.py, started and stopped through server.sh."""

    def __init__(self, name: str, env: dict | None = None, port: int | None = None):
        self.dir = os.path.join(TMP, name)
        args = ["sh", SERVER_SH, "start", self.dir] + ([str(port)] if port else [])
        out = subprocess.run(args, env={**os.environ, **(env or {})}, capture_output=True,
                             text=True, timeout=60)
        if out.returncode != 0:
            raise RuntimeError(f"server.sh start failed: {out.stderr}")
        m = re.fullmatch(r"export MOTO_PORT=(\d+) MOTO_PID=(\d+)\n", out.stdout)
        if not m:
            raise RuntimeError(f"unexpected server.sh output: {out.stdout!r}")
        self.port, self.pid = int(m.group(1)), int(m.group(2))
        self.url = f"http://127.0.0.1:{self.port}"
        SERVERS.append(self)

    def stop(self) -> subprocess.CompletedProcess:
        return subprocess.run(["sh", SERVER_SH, "stop", self.dir], capture_output=True,
                              text=True, timeout=30)

    def client(self, service: str, key: str = "testing", secret: str = "testing"):
        return boto3.client(service, region_name=REGION, endpoint_url=self.url,
                            aws_access_key_id=key, aws_secret_access_key=secret,
                            config=NO_RETRY)

    def control(self, path: str, body=None, method: str | None = None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data,
                                     method=method or ("GET" if body is None else "POST"))
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read() or b"null")


TMP = tempfile.mkdtemp(prefix="kiln-moto-")
SERVERS: list[Server] = []
PASSED: list[str] = []
FAILED: list[str] = []


def check(name: str, fn, *args) -> None:
    try:
        fn(*args)
    except Exception:
        FAILED.append(name)
        print(f"not ok - {name}")
        for line in traceback.format_exc().rstrip().splitlines():
            print(f"#   {line}")
    else:
        PASSED.append(name)
        print(f"ok - {name}")
    sys.stdout.flush()


def error_of(fn, *args, **kwargs) -> ClientError:
    try:
        fn(*args, **kwargs)
    except ClientError as e:
        return e
    raise AssertionError(f"{getattr(fn, '__name__', fn)} did not fail")


def code(e: ClientError) -> str:
    return e.response["Error"]["Code"]


def status(e: ClientError) -> int:
    return e.response["ResponseMetadata"]["HTTPStatusCode"]


def eq(got, want, what=""):
    assert got == want, f"{what}: got {got!r}, want {want!r}"


def network(ec2, zone="us-east-1a", cidr="10.0.1.0/24"):
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock=cidr, AvailabilityZone=zone)["Subnet"]["SubnetId"]
    return vpc, subnet


def count_instances(ec2, filters) -> int:
    res = ec2.describe_instances(Filters=filters)["Reservations"]
    return sum(len(r["Instances"]) for r in res)


# --------------------------------------------------------------------------------------
# Tests (each starts from POST /_kiln/reset)
# --------------------------------------------------------------------------------------


def t_placement_groups(s: Server):
    s.control("/_kiln/reset", {})
    ec2 = s.client("ec2")
    raw = {}
    ec2.meta.events.register("after-call.ec2.CreatePlacementGroup",
                             lambda http_response, **_: raw.setdefault("xml", http_response.content))
    pg = ec2.create_placement_group(
        GroupName="kiln-ws1", Strategy="cluster",
        TagSpecifications=[{"ResourceType": "placement-group", "Tags": WS}])["PlacementGroup"]
    eq(pg["GroupName"], "kiln-ws1", "GroupName")
    eq(pg["Strategy"], "cluster", "Strategy")
    eq(pg["State"], "available", "State")
    assert pg["GroupId"].startswith("pg-"), pg
    eq(pg["GroupArn"], f"arn:aws:ec2:{REGION}:123456789012:placement-group/kiln-ws1", "GroupArn")
    eq(pg["Tags"], WS, "Tags")
    xml = raw["xml"].decode()
    for frag in ("<CreatePlacementGroupResponse", "<placementGroup>", "<groupName>kiln-ws1</groupName>",
                 f"<groupId>{pg['GroupId']}</groupId>", "<groupArn>", "<strategy>cluster</strategy>",
                 "<state>available</state>", "<tagSet><item><key>kiln:workspace</key><value>ws1</value></item></tagSet>"):
        assert frag in xml, f"{frag} not in {xml}"
    part = ec2.create_placement_group(GroupName="other", Strategy="partition", PartitionCount=3)["PlacementGroup"]
    eq(part["PartitionCount"], 3, "PartitionCount")
    eq(code(error_of(ec2.create_placement_group, GroupName="kiln-ws1", Strategy="cluster")),
       "InvalidPlacementGroup.Duplicate", "duplicate")
    by_tag = ec2.describe_placement_groups(Filters=WS_FILTER)["PlacementGroups"]
    eq([g["GroupName"] for g in by_tag], ["kiln-ws1"], "tag filter")
    eq(ec2.describe_placement_groups(Filters=[{"Name": "tag:kiln:workspace", "Values": ["nope"]}])["PlacementGroups"], [], "tag filter miss")
    eq([g["GroupName"] for g in ec2.describe_placement_groups(Filters=[{"Name": "strategy", "Values": ["partition"]}])["PlacementGroups"]], ["other"], "strategy filter")
    eq([g["GroupName"] for g in ec2.describe_placement_groups(Filters=[{"Name": "group-name", "Values": ["kiln-*"]}])["PlacementGroups"]], ["kiln-ws1"], "group-name filter")
    eq([g["GroupName"] for g in ec2.describe_placement_groups(GroupNames=["other"])["PlacementGroups"]], ["other"], "GroupNames")
    eq([g["GroupName"] for g in ec2.describe_placement_groups(GroupIds=[pg["GroupId"]])["PlacementGroups"]], ["kiln-ws1"], "GroupIds")
    eq(code(error_of(ec2.describe_placement_groups, GroupNames=["nope"])), "InvalidPlacementGroup.Unknown", "describe unknown")

    _, subnet = network(ec2)
    eq(code(error_of(ec2.run_instances, ImageId="ami-12345678", MinCount=1, MaxCount=1, SubnetId=subnet,
                     Placement={"GroupName": "nope"})), "InvalidPlacementGroup.Unknown", "run in unknown group")
    eq(count_instances(ec2, []), 0, "nothing launched into an unknown group")
    inst = ec2.run_instances(ImageId="ami-12345678", MinCount=2, MaxCount=2, SubnetId=subnet,
                             InstanceType="p5.48xlarge", Placement={"GroupName": "kiln-ws1"})["Instances"]
    ids = [i["InstanceId"] for i in inst]
    for i in ec2.describe_instances(InstanceIds=ids)["Reservations"][0]["Instances"]:
        eq(i["Placement"]["GroupName"], "kiln-ws1", "DescribeInstances placement.groupName")
        eq(i["Placement"]["AvailabilityZone"], "us-east-1a", "zone")
    vpc_b = ec2.describe_subnets(SubnetIds=[subnet])["Subnets"][0]["VpcId"]
    subnet_b = ec2.create_subnet(VpcId=vpc_b, CidrBlock="10.0.2.0/24",
                                 AvailabilityZone="us-east-1b")["Subnet"]["SubnetId"]
    eq(code(error_of(ec2.run_instances, ImageId="ami-12345678", MinCount=1, MaxCount=1,
                     SubnetId=subnet_b, InstanceType="p5.48xlarge",
                     Placement={"GroupName": "kiln-ws1"})),
       "InvalidParameterCombination", "a cluster placement group keeps its running instances' zone")
    eq(code(error_of(ec2.delete_placement_group, GroupName="kiln-ws1")), "InvalidPlacementGroup.InUse", "delete in use")
    ec2.terminate_instances(InstanceIds=ids)
    ec2.delete_placement_group(GroupName="kiln-ws1")
    eq(code(error_of(ec2.describe_placement_groups, GroupNames=["kiln-ws1"])), "InvalidPlacementGroup.Unknown", "after delete")
    eq(code(error_of(ec2.delete_placement_group, GroupName="kiln-ws1")), "InvalidPlacementGroup.Unknown", "delete twice")


def t_efa(s: Server):
    s.control("/_kiln/reset", {})
    ec2 = s.client("ec2")
    vpc, subnet = network(ec2)
    sg = ec2.create_security_group(GroupName="efa", Description="efa", VpcId=vpc)["GroupId"]
    nics = [{"DeviceIndex": 0, "NetworkCardIndex": 0, "SubnetId": subnet, "Groups": [sg], "InterfaceType": "efa"}]
    nics += [{"DeviceIndex": 1, "NetworkCardIndex": c, "SubnetId": subnet, "Groups": [sg], "InterfaceType": "efa"}
             for c in (1, 2, 3)]
    nics += [{"DeviceIndex": 1, "NetworkCardIndex": 0, "SubnetId": subnet, "Groups": [sg]}]  # a plain ENA NIC
    res = ec2.run_instances(ImageId="ami-12345678", MinCount=2, MaxCount=2, InstanceType="p5.48xlarge",
                            NetworkInterfaces=nics)
    ids = [i["InstanceId"] for i in res["Instances"]]
    for inst in ec2.describe_instances(InstanceIds=ids)["Reservations"][0]["Instances"]:
        seen = sorted((n["Attachment"]["NetworkCardIndex"], n["Attachment"]["DeviceIndex"], n["InterfaceType"])
                      for n in inst["NetworkInterfaces"])
        eq(seen, [(0, 0, "efa"), (0, 1, "interface"), (1, 1, "efa"), (2, 1, "efa"), (3, 1, "efa")], "NICs")
        eq(inst["SubnetId"], subnet, "subnet")
        eq(inst["VpcId"], vpc, "vpc")
    enis = ec2.describe_network_interfaces(Filters=[{"Name": "attachment.instance-id", "Values": ids[:1]}])["NetworkInterfaces"]
    eq(sorted(e["InterfaceType"] for e in enis), ["efa"] * 4 + ["interface"], "DescribeNetworkInterfaces")
    ec2.terminate_instances(InstanceIds=ids)


def t_client_token(s: Server):
    s.control("/_kiln/reset", {})
    ec2 = s.client("ec2")
    _, subnet = network(ec2)
    args = dict(ImageId="ami-12345678", MinCount=2, MaxCount=2, InstanceType="p5.48xlarge", SubnetId=subnet,
                ClientToken="kiln-ws1-nodes-0001")
    first = ec2.run_instances(**args)
    again = ec2.run_instances(**args)
    eq(again["ReservationId"], first["ReservationId"], "same reservation")
    eq([i["InstanceId"] for i in again["Instances"]], [i["InstanceId"] for i in first["Instances"]], "same instances")
    eq(count_instances(ec2, []), 2, "instances after the repeat")
    for i in ec2.describe_instances()["Reservations"][0]["Instances"]:
        eq(i["ClientToken"], "kiln-ws1-nodes-0001", "DescribeInstances clientToken")
    eq(code(error_of(ec2.run_instances, **{**args, "MinCount": 3, "MaxCount": 3})), "IdempotentParameterMismatch",
       "same token, other parameters")
    other = ec2.run_instances(**{**args, "ClientToken": "kiln-ws1-nodes-0002"})
    assert other["ReservationId"] != first["ReservationId"]
    eq(count_instances(ec2, []), 4, "a new token launches")
    ec2.terminate_instances(InstanceIds=[i["InstanceId"] for i in first["Instances"]])
    relaunch = ec2.run_instances(**args)
    assert relaunch["ReservationId"] != first["ReservationId"], "terminated: the token launches anew"
    # boto3 always sends a ClientToken (an idempotency token in the model); kiln may not.
    bare = s.client("ec2")

    def drop_token(params, **_):
        params["body"].pop("ClientToken", None)  # returns None: the call goes on

    bare.meta.events.register("before-call.ec2.RunInstances", drop_token)
    plain = bare.run_instances(ImageId="ami-12345678", MinCount=1, MaxCount=1, SubnetId=subnet)
    eq(plain["Instances"][0]["ClientToken"], "", "no ClientToken given")


def t_capacity(s: Server):
    s.control("/_kiln/reset", {})
    ec2 = s.client("ec2")
    vpc, subnet_a = network(ec2)
    subnet_b = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.2.0/24", AvailabilityZone="us-east-1b")["Subnet"]["SubnetId"]
    eq(s.control("/_kiln/capacity", [{"instance_type": "p5.48xlarge", "zone": "us-east-1a", "max": 0}]),
       [{"instance_type": "p5.48xlarge", "zone": "us-east-1a", "max": 0}], "rules")
    p5 = [{"Name": "instance-type", "Values": ["p5.48xlarge"]}]
    e = error_of(ec2.run_instances, ImageId="ami-12345678", MinCount=2, MaxCount=2, InstanceType="p5.48xlarge",
                 SubnetId=subnet_a)
    eq(code(e), "InsufficientInstanceCapacity", "code")
    eq(status(e), 500, "HTTP status")
    want = ("We currently do not have sufficient p5.48xlarge capacity in the Availability Zone you requested "
            "(us-east-1a). Our system will be working on provisioning additional capacity.")
    assert e.response["Error"]["Message"].startswith(want), e.response["Error"]["Message"]
    eq(count_instances(ec2, p5), 0, "nothing launched")
    # other zones and other types are not limited
    ec2.run_instances(ImageId="ami-12345678", MinCount=1, MaxCount=1, InstanceType="p5.48xlarge", SubnetId=subnet_b)
    ec2.run_instances(ImageId="ami-12345678", MinCount=1, MaxCount=1, InstanceType="m5.large", SubnetId=subnet_a)
    # max counts pending+running instances: a gang of 2 fits in 3, a second gang does not
    s.control("/_kiln/capacity", [{"instance_type": "p5.48xlarge", "zone": "us-east-1a", "max": 3}])
    gang = ec2.run_instances(ImageId="ami-12345678", MinCount=2, MaxCount=2, InstanceType="p5.48xlarge", SubnetId=subnet_a)
    eq(code(error_of(ec2.run_instances, ImageId="ami-12345678", MinCount=2, MaxCount=2, InstanceType="p5.48xlarge",
                     SubnetId=subnet_a)), "InsufficientInstanceCapacity", "second gang")
    eq(count_instances(ec2, p5), 3, "p5 instances (2 in us-east-1a, 1 in us-east-1b)")
    ec2.terminate_instances(InstanceIds=[i["InstanceId"] for i in gang["Instances"]])
    ec2.run_instances(ImageId="ami-12345678", MinCount=2, MaxCount=2, InstanceType="p5.48xlarge", SubnetId=subnet_a)
    eq(s.control("/_kiln/capacity", []), [], "cleared")
    ec2.run_instances(ImageId="ami-12345678", MinCount=4, MaxCount=4, InstanceType="p5.48xlarge", SubnetId=subnet_a)


P5 = dict(ImageId="ami-12345678", InstanceType="p5.48xlarge")


def target(cr_id, market=None) -> dict:
    kw = {"CapacityReservationSpecification": {"CapacityReservationTarget": {"CapacityReservationId": cr_id}}}
    if market:
        kw["InstanceMarketOptions"] = {"MarketType": market}
    return kw


def t_odcr(s: Server):
    s.control("/_kiln/reset", {})
    ec2 = s.client("ec2")
    vpc, subnet_a = network(ec2)
    subnet_b = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.2.0/24", AvailabilityZone="us-east-1b")["Subnet"]["SubnetId"]
    cr = ec2.create_capacity_reservation(
        InstanceType="p5.48xlarge", InstancePlatform="Linux/UNIX", AvailabilityZone="us-east-1a",
        InstanceCount=2, InstanceMatchCriteria="targeted",
        TagSpecifications=[{"ResourceType": "capacity-reservation", "Tags": WS}])["CapacityReservation"]
    cr_id = cr["CapacityReservationId"]
    eq((cr["State"], cr["AvailableInstanceCount"], cr["ReservationType"]), ("active", 2, "default"), "new ODCR")
    eq(code(error_of(ec2.run_instances, MinCount=1, MaxCount=1, SubnetId=subnet_b, **P5, **target(cr_id))),
       "InvalidParameterValue", "wrong zone")
    eq(code(error_of(ec2.run_instances, ImageId="ami-12345678", InstanceType="p4d.24xlarge", MinCount=1, MaxCount=1,
                     SubnetId=subnet_a, **target(cr_id))), "InvalidParameterValue", "wrong type")
    eq(code(error_of(ec2.run_instances, MinCount=3, MaxCount=3, SubnetId=subnet_a, **P5, **target(cr_id))),
       "ReservationCapacityExceeded", "too many")
    eq(code(error_of(ec2.run_instances, MinCount=1, MaxCount=1, SubnetId=subnet_a, **P5,
                     **target("cr-0123456789abcdef0"))), "InvalidCapacityReservationId.NotFound", "unknown id")
    eq(code(error_of(ec2.run_instances, MinCount=1, MaxCount=1, SubnetId=subnet_a, **P5, **target("cr-1"))),
       "InvalidCapacityReservationId.Malformed", "malformed id")
    ids = [i["InstanceId"] for i in ec2.run_instances(MinCount=2, MaxCount=2, SubnetId=subnet_a, **P5,
                                                       **target(cr_id))["Instances"]]
    inst = ec2.describe_instances(InstanceIds=ids)["Reservations"][0]["Instances"]
    eq({i["CapacityReservationId"] for i in inst}, {cr_id}, "instances in the reservation")
    got = ec2.describe_capacity_reservations(Filters=WS_FILTER)["CapacityReservations"]
    eq([(c["CapacityReservationId"], c["AvailableInstanceCount"]) for c in got], [(cr_id, 0)], "by tag, used")
    ec2.terminate_instances(InstanceIds=ids[:1])
    eq(ec2.describe_capacity_reservations(CapacityReservationIds=[cr_id])["CapacityReservations"][0]
       ["AvailableInstanceCount"], 1, "a terminated instance frees its place")
    eq(code(error_of(ec2.describe_capacity_reservations, CapacityReservationIds=["cr-0123456789abcdef0"])),
       "InvalidCapacityReservationId.NotFound", "describe unknown")


def t_capacity_groups(s: Server):
    s.control("/_kiln/reset", {})
    ec2, rg = s.client("ec2"), s.client("resource-groups")
    vpc, subnet_a = network(ec2)
    subnet_b = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.2.0/24", AvailabilityZone="us-east-1b")["Subnet"]["SubnetId"]

    def odcr(itype, zone):
        return ec2.create_capacity_reservation(
            InstanceType=itype, InstancePlatform="Linux/UNIX", AvailabilityZone=zone, InstanceCount=2,
            InstanceMatchCriteria="targeted")["CapacityReservation"]
    other, fits = odcr("p4d.24xlarge", "us-east-1a"), odcr("p5.48xlarge", "us-east-1b")
    arn = rg.create_group(Name="pool", Configuration=[{"Type": "AWS::EC2::CapacityReservationPool"}])["Group"]["GroupArn"]
    eq(arn, f"arn:aws:resource-groups:{REGION}:123456789012:group/pool", "the group's ARN names the region")
    got = rg.group_resources(Group=arn, ResourceArns=[other["CapacityReservationArn"], fits["CapacityReservationArn"]])
    eq(len(got["Succeeded"]), 2, "members added")
    listed = rg.list_group_resources(Group=arn, Filters=[
        {"Name": "resource-type", "Values": ["AWS::EC2::CapacityReservation"]}])["Resources"]
    eq([r["Identifier"]["ResourceArn"] for r in listed],
       [other["CapacityReservationArn"], fits["CapacityReservationArn"]], "members listed by ARN")
    eq({r["Identifier"]["ResourceType"] for r in listed}, {"AWS::EC2::CapacityReservation"}, "their type")
    e = error_of(rg.list_group_resources, Group=arn.replace("pool", "nowhere"))
    eq((code(e), status(e)), ("NotFoundException", 404), "unknown group")
    by_group = {"CapacityReservationSpecification": {"CapacityReservationTarget": {
        "CapacityReservationResourceGroupArn": arn}}}
    ids = [i["InstanceId"] for i in ec2.run_instances(MinCount=2, MaxCount=2, SubnetId=subnet_b, **P5,
                                                       **by_group)["Instances"]]
    inst = ec2.describe_instances(InstanceIds=ids)["Reservations"][0]["Instances"]
    eq({i.get("CapacityReservationId") for i in inst}, {fits["CapacityReservationId"]}, "into the member that fits")
    ids = [i["InstanceId"] for i in ec2.run_instances(MinCount=1, MaxCount=1, SubnetId=subnet_a, **P5,
                                                       **by_group)["Instances"]]
    inst = ec2.describe_instances(InstanceIds=ids)["Reservations"][0]["Instances"]
    eq({i.get("CapacityReservationId") for i in inst}, {None}, "no member fits: on demand")


def t_capacity_blocks(s: Server):
    s.control("/_kiln/reset", {})
    ec2 = s.client("ec2")
    vpc, subnet_a = network(ec2)
    s.control("/_kiln/clock", {"now": "2026-12-02T00:00:00Z"})
    s.control("/_kiln/capacity-blocks", [
        {"instance_type": "p5.48xlarge", "zone": "us-east-1b", "start": "2026-12-04T11:30:00Z", "count": 4,
         "hourly_usd": 30},
        {"instance_type": "p5.48xlarge", "zone": "us-east-1a", "start": "2026-12-03T11:30:00Z", "count": 4,
         "hourly_usd": 31.464},
        {"instance_type": "p5.48xlarge", "zone": "us-east-1a", "start": "2026-12-01T11:30:00Z", "count": 4,
         "hourly_usd": 1},
    ])
    eq(code(error_of(ec2.describe_capacity_block_offerings, InstanceType="p5.48xlarge", InstanceCount=2,
                     CapacityDurationHours=25)), "InvalidParameterValue", "25 hours")
    eq(code(error_of(ec2.describe_capacity_block_offerings, InstanceType="p5.48xlarge", InstanceCount=2,
                     CapacityDurationHours=15 * 24)), "InvalidParameterValue", "15 days")
    ec2.describe_capacity_block_offerings(InstanceType="p5.48xlarge", InstanceCount=2, CapacityDurationHours=21 * 24)
    offers = ec2.describe_capacity_block_offerings(InstanceType="p5.48xlarge", InstanceCount=2,
                                                   CapacityDurationHours=24)["CapacityBlockOfferings"]
    eq([(o["AvailabilityZone"], o["StartDate"].isoformat(), o["UpfrontFee"]) for o in offers],
       [("us-east-1a", "2026-12-03T11:30:00+00:00", "1510.27"), ("us-east-1b", "2026-12-04T11:30:00+00:00", "1440.00")],
       "offerings from now on, earliest first, fee = hourly x count x hours")
    late = ec2.describe_capacity_block_offerings(InstanceType="p5.48xlarge", InstanceCount=2, CapacityDurationHours=24,
                                                 StartDateRange="2026-12-04T00:00:00Z")["CapacityBlockOfferings"]
    eq([o["AvailabilityZone"] for o in late], ["us-east-1b"], "StartDateRange")
    eq(ec2.describe_capacity_block_offerings(InstanceType="p5.48xlarge", InstanceCount=5,
                                             CapacityDurationHours=24)["CapacityBlockOfferings"], [], "too many")
    tags = [{"ResourceType": "capacity-reservation", "Tags": WS}]
    cr = ec2.purchase_capacity_block(CapacityBlockOfferingId=offers[0]["CapacityBlockOfferingId"],
                                     InstancePlatform="Linux/UNIX", TagSpecifications=tags)["CapacityReservation"]
    cr_id = cr["CapacityReservationId"]
    eq((cr["State"], cr["ReservationType"], cr["TotalInstanceCount"]), ("payment-pending", "capacity-block", 2),
       "purchased")
    eq([(c["CapacityReservationId"], c["State"]) for c in
        ec2.describe_capacity_reservations(Filters=WS_FILTER)["CapacityReservations"]],
       [(cr_id, "payment-pending")], "found by tag")
    eq(ec2.describe_capacity_reservations(CapacityReservationIds=[cr_id])["CapacityReservations"][0]["State"],
       "scheduled", "paid, before its start")
    eq(code(error_of(ec2.run_instances, MinCount=2, MaxCount=2, SubnetId=subnet_a, **P5,
                     **target(cr_id, "capacity-block"))), "InvalidCapacityReservationState.PendingActivation",
       "not active yet")
    s.control("/_kiln/clock", {"now": "2026-12-03T12:00:00Z"})
    eq(code(error_of(ec2.run_instances, MinCount=2, MaxCount=2, SubnetId=subnet_a, **P5, **target(cr_id))),
       "InvalidParameterValue", "a block needs MarketType capacity-block")
    ids = [i["InstanceId"] for i in ec2.run_instances(MinCount=2, MaxCount=2, SubnetId=subnet_a, **P5,
                                                       **target(cr_id, "capacity-block"))["Instances"]]
    inst = ec2.describe_instances(InstanceIds=ids)["Reservations"][0]["Instances"][0]
    eq((inst["CapacityReservationId"], inst["InstanceLifecycle"]), (cr_id, "capacity-block"), "launched into it")
    s.control("/_kiln/clock", {"now": "2026-12-04T11:30:00Z"})
    eq(ec2.describe_capacity_reservations(CapacityReservationIds=[cr_id])["CapacityReservations"][0]["State"],
       "expired", "at its end")
    purchases = s.control("/_kiln/capacity-blocks")["purchases"]
    eq([(p["reservation"], p["fee"]) for p in purchases], [(cr_id, "1510.27")], "purchases")
    eq(code(error_of(ec2.purchase_capacity_block, CapacityBlockOfferingId="cb-0123456789abcdef0",
                     InstancePlatform="Linux/UNIX")), "InvalidCapacityBlockOfferingIdNotFound",
       "unknown offering")
    s.control("/_kiln/clock", {})


def t_spot(s: Server):
    s.control("/_kiln/reset", {})
    ec2 = s.client("ec2")
    _, subnet = network(ec2)
    spot = {"InstanceMarketOptions": {"MarketType": "spot"}}
    ec2.run_instances(MinCount=1, MaxCount=1, SubnetId=subnet, **P5, **spot)
    eq(s.control("/_kiln/spot", {"available": False}), {"available": False}, "switched off")
    e = error_of(ec2.run_instances, MinCount=1, MaxCount=1, SubnetId=subnet, **P5, **spot)
    eq((code(e), status(e)), ("InsufficientInstanceCapacity", 500), "spot refused")
    ec2.run_instances(MinCount=1, MaxCount=1, SubnetId=subnet, **P5)  # on-demand still launches
    s.control("/_kiln/reset", {})
    eq(s.control("/_kiln/spot"), {"available": True}, "reset")


def fsx_setup(s: Server):
    ec2 = s.client("ec2")
    vpc, subnet = network(ec2)
    return s.client("fsx"), vpc, subnet


def create_lustre(fsx, subnet, token=None):
    kw = dict(FileSystemType="LUSTRE", StorageCapacity=1200, StorageType="SSD", SubnetIds=[subnet],
              LustreConfiguration={"DeploymentType": "PERSISTENT_2", "PerUnitStorageThroughput": 250},
              Tags=WS)
    if token:
        kw["ClientRequestToken"] = token
    return fsx.create_file_system(**kw)["FileSystem"]


def t_fsx_lifecycle(s: Server):
    s.control("/_kiln/reset", {})
    fsx, vpc, subnet = fsx_setup(s)
    fs = create_lustre(fsx, subnet, token="kiln-ws1-fsx")
    eq(fs["Lifecycle"], "CREATING", "create")
    assert fs["LustreConfiguration"]["MountName"], fs
    eq(fs["VpcId"], vpc, "VpcId")
    eq(create_lustre(fsx, subnet, token="kiln-ws1-fsx")["FileSystemId"], fs["FileSystemId"], "ClientRequestToken")
    eq(len(fsx.describe_file_systems()["FileSystems"]), 1, "one file system")  # describe 1
    d = fsx.describe_file_systems(FileSystemIds=[fs["FileSystemId"]])["FileSystems"][0]  # describe 2
    eq(d["Lifecycle"], "AVAILABLE", "second describe")
    eq(d["Tags"], WS, "tags")
    fsx.delete_file_system(FileSystemId=fs["FileSystemId"])
    eq(fsx.describe_file_systems(FileSystemIds=[fs["FileSystemId"]])["FileSystems"][0]["Lifecycle"], "DELETING", "deleting")
    eq(code(error_of(fsx.describe_file_systems, FileSystemIds=[fs["FileSystemId"]])), "FileSystemNotFound", "gone")
    eq(fsx.describe_file_systems()["FileSystems"], [], "gone from the list")
    eq(code(error_of(fsx.delete_file_system, FileSystemId=fs["FileSystemId"])), "FileSystemNotFound", "delete gone")

    # configurable: AVAILABLE on the first describe, or after some seconds
    s.control("/_kiln/fsx", {"available_after_describes": 1})
    fs = create_lustre(fsx, subnet)
    eq(fsx.describe_file_systems(FileSystemIds=[fs["FileSystemId"]])["FileSystems"][0]["Lifecycle"], "AVAILABLE", "N=1")
    s.control("/_kiln/fsx", {"available_after_seconds": 0.5})
    fs = create_lustre(fsx, subnet)
    eq(fsx.describe_file_systems(FileSystemIds=[fs["FileSystemId"]])["FileSystems"][0]["Lifecycle"], "CREATING", "T=0.5 before")
    time.sleep(0.6)
    eq(fsx.describe_file_systems(FileSystemIds=[fs["FileSystemId"]])["FileSystems"][0]["Lifecycle"], "AVAILABLE", "T=0.5 after")
    eq(s.control("/_kiln/fsx", {}), {"available_after_describes": 2}, "default restored")


def t_fsx_dra(s: Server):
    s.control("/_kiln/reset", {})
    s.control("/_kiln/fsx", {"available_after_describes": 1})
    fsx, _, subnet = fsx_setup(s)
    fs_id = create_lustre(fsx, subnet)["FileSystemId"]
    s.control("/_kiln/fsx", {})
    args = dict(FileSystemId=fs_id, FileSystemPath="/data", DataRepositoryPath="s3://kiln-ws1-data/train",
                BatchImportMetaDataOnCreate=True,
                S3={"AutoImportPolicy": {"Events": ["NEW", "CHANGED", "DELETED"]}},
                ClientRequestToken="kiln-ws1-dra", Tags=WS)
    dra = fsx.create_data_repository_association(**args)["Association"]
    assert dra["AssociationId"].startswith("dra-"), dra
    eq(dra["Lifecycle"], "CREATING", "create")
    for k in ("FileSystemId", "FileSystemPath", "DataRepositoryPath", "BatchImportMetaDataOnCreate", "S3", "Tags"):
        eq(dra[k], args[k], k)
    assert dra["ResourceARN"].endswith(f"association/{fs_id}/{dra['AssociationId']}"), dra["ResourceARN"]
    eq(fsx.create_data_repository_association(**args)["Association"]["AssociationId"], dra["AssociationId"],
       "ClientRequestToken")
    eq(code(error_of(fsx.create_data_repository_association, **{**args, "ClientRequestToken": "other"})),
       "BadRequest", "overlapping path")
    eq(code(error_of(fsx.create_data_repository_association, **{**args, "FileSystemId": "fs-00000000"})),
       "FileSystemNotFound", "unknown file system")
    got = fsx.describe_data_repository_associations(AssociationIds=[dra["AssociationId"]])["Associations"]
    eq([a["Lifecycle"] for a in got], ["CREATING"], "describe 1")
    got = fsx.describe_data_repository_associations(Filters=[{"Name": "file-system-id", "Values": [fs_id]}])["Associations"]
    eq([(a["AssociationId"], a["Lifecycle"]) for a in got], [(dra["AssociationId"], "AVAILABLE")], "describe 2 by filter")
    eq(fsx.describe_data_repository_associations(Filters=[{"Name": "file-system-id", "Values": ["fs-other"]}])["Associations"], [], "filter miss")
    deleted = fsx.delete_data_repository_association(AssociationId=dra["AssociationId"], DeleteDataInFileSystem=False)
    eq((deleted["AssociationId"], deleted["Lifecycle"], deleted["DeleteDataInFileSystem"]),
       (dra["AssociationId"], "DELETING", False), "delete")
    eq(fsx.describe_data_repository_associations(AssociationIds=[dra["AssociationId"]])["Associations"][0]["Lifecycle"], "DELETING", "deleting")
    eq(code(error_of(fsx.describe_data_repository_associations, AssociationIds=[dra["AssociationId"]])),
       "DataRepositoryAssociationNotFound", "gone")
    eq(code(error_of(fsx.delete_data_repository_association, AssociationId=dra["AssociationId"])),
       "DataRepositoryAssociationNotFound", "delete gone")


def t_efs(s: Server):
    s.control("/_kiln/reset", {})
    ec2, efs = s.client("ec2"), s.client("efs")
    vpc, subnet = network(ec2)
    sg = ec2.create_security_group(GroupName="efs", Description="efs", VpcId=vpc)["GroupId"]
    fs = efs.create_file_system(CreationToken="kiln-ws1-efs", Encrypted=True, Tags=WS)
    assert fs["Encrypted"] is True
    e = error_of(efs.create_file_system, CreationToken="kiln-ws1-efs", Encrypted=True)
    eq((code(e), status(e)), ("FileSystemAlreadyExists", 409), "repeated CreationToken")
    eq(e.response.get("FileSystemId"), fs["FileSystemId"], "FileSystemId in the error")
    eq(len(efs.describe_file_systems(CreationToken="kiln-ws1-efs")["FileSystems"]), 1, "one file system")
    mt = efs.create_mount_target(FileSystemId=fs["FileSystemId"], SubnetId=subnet, SecurityGroups=[sg])
    eq(mt["SubnetId"], subnet, "mount target subnet")
    got = efs.describe_mount_targets(FileSystemId=fs["FileSystemId"])["MountTargets"]
    eq([m["MountTargetId"] for m in got], [mt["MountTargetId"]], "DescribeMountTargets")
    eq(efs.describe_mount_target_security_groups(MountTargetId=mt["MountTargetId"])["SecurityGroups"], [sg], "mount target SG")
    efs.delete_mount_target(MountTargetId=mt["MountTargetId"])
    eq(efs.describe_mount_targets(FileSystemId=fs["FileSystemId"])["MountTargets"], [], "after DeleteMountTarget")
    efs.delete_file_system(FileSystemId=fs["FileSystemId"])


def t_s3(s: Server):
    s.control("/_kiln/reset", {})
    s3 = s.client("s3")
    b = "kiln-ws1-artifacts"
    s3.create_bucket(Bucket=b)
    s3.put_bucket_versioning(Bucket=b, VersioningConfiguration={"Status": "Enabled"})
    s3.put_bucket_encryption(Bucket=b, ServerSideEncryptionConfiguration={
        "Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]})
    pab = {"BlockPublicAcls": True, "IgnorePublicAcls": True, "BlockPublicPolicy": True, "RestrictPublicBuckets": True}
    s3.put_public_access_block(Bucket=b, PublicAccessBlockConfiguration=pab)
    rule = {"ID": "expire-tmp", "Status": "Enabled", "Filter": {"Prefix": "tmp/"}, "Expiration": {"Days": 7}}
    s3.put_bucket_lifecycle_configuration(Bucket=b, LifecycleConfiguration={"Rules": [rule]})
    s3.put_bucket_tagging(Bucket=b, Tagging={"TagSet": WS})
    eq(s3.get_bucket_versioning(Bucket=b)["Status"], "Enabled", "versioning")
    eq(s3.get_bucket_encryption(Bucket=b)["ServerSideEncryptionConfiguration"]["Rules"][0]
       ["ApplyServerSideEncryptionByDefault"]["SSEAlgorithm"], "AES256", "encryption")
    eq(s3.get_public_access_block(Bucket=b)["PublicAccessBlockConfiguration"], pab, "public access block")
    got = s3.get_bucket_lifecycle_configuration(Bucket=b)["Rules"][0]
    eq((got["ID"], got["Status"], got["Filter"], got["Expiration"]), (rule["ID"], "Enabled", rule["Filter"], rule["Expiration"]), "lifecycle")
    eq(s3.get_bucket_tagging(Bucket=b)["TagSet"], WS, "tagging")
    s3.put_object(Bucket=b, Key="a/b.txt", Body=b"x")
    s3.put_object(Bucket=b, Key="a/b.txt", Body=b"y")
    eq(len(s3.list_object_versions(Bucket=b)["Versions"]), 2, "versions kept")


def t_iam(s: Server):
    s.control("/_kiln/reset", {})
    iam = s.client("iam")
    path = "/kiln/c1/ws1/"
    role = iam.create_role(RoleName="kiln-c1-ws1-node", Path=path, AssumeRolePolicyDocument=TRUST,
                           Tags=[{"Key": "kiln:cluster", "Value": "c1"}])["Role"]
    eq(role["Path"], path, "path")
    eq(role["Arn"], f"arn:aws:iam::123456789012:role{path}kiln-c1-ws1-node", "arn")
    iam.create_role(RoleName="kiln-c1-ws2-node", Path="/kiln/c1/ws2/", AssumeRolePolicyDocument=TRUST)
    iam.create_role(RoleName="unrelated", AssumeRolePolicyDocument=TRUST)
    eq([r["RoleName"] for r in iam.list_roles(PathPrefix=path)["Roles"]], ["kiln-c1-ws1-node"], "PathPrefix ws1")
    eq(sorted(r["RoleName"] for r in iam.list_roles(PathPrefix="/kiln/c1/")["Roles"]),
       ["kiln-c1-ws1-node", "kiln-c1-ws2-node"], "PathPrefix c1")
    doc = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": ["s3:GetObject"],
                                                    "Resource": "arn:aws:s3:::kiln-ws1-artifacts/*"}]}
    iam.put_role_policy(RoleName="kiln-c1-ws1-node", PolicyName="s3-read", PolicyDocument=json.dumps(doc))
    eq(iam.list_role_policies(RoleName="kiln-c1-ws1-node")["PolicyNames"], ["s3-read"], "inline policies")
    eq(iam.get_role_policy(RoleName="kiln-c1-ws1-node", PolicyName="s3-read")["PolicyDocument"], doc, "policy document")
    ip = iam.create_instance_profile(InstanceProfileName="kiln-c1-ws1-node", Path=path)["InstanceProfile"]
    eq(ip["Path"], path, "instance profile path")
    iam.add_role_to_instance_profile(InstanceProfileName="kiln-c1-ws1-node", RoleName="kiln-c1-ws1-node")
    got = iam.get_instance_profile(InstanceProfileName="kiln-c1-ws1-node")["InstanceProfile"]
    eq([r["RoleName"] for r in got["Roles"]], ["kiln-c1-ws1-node"], "role in profile")
    eq(code(error_of(iam.add_role_to_instance_profile, InstanceProfileName="kiln-c1-ws1-node",
                     RoleName="kiln-c1-ws2-node")), "LimitExceeded", "one role per profile")
    eq([p["InstanceProfileName"] for p in iam.list_instance_profiles(PathPrefix=path)["InstanceProfiles"]],
       ["kiln-c1-ws1-node"], "ListInstanceProfiles PathPrefix")
    # the profile can be used at launch
    ec2 = s.client("ec2")
    _, subnet = network(ec2)
    ec2.run_instances(ImageId="ami-12345678", MinCount=1, MaxCount=1, SubnetId=subnet,
                      IamInstanceProfile={"Name": "kiln-c1-ws1-node"})


def t_tag_filters(s: Server):
    s.control("/_kiln/reset", {})
    ec2 = s.client("ec2")

    def spec(rt):
        return [{"ResourceType": rt, "Tags": WS}]

    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16", TagSpecifications=spec("vpc"))["Vpc"]["VpcId"]
    ec2.create_vpc(CidrBlock="10.1.0.0/16")  # untagged
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.1.0/24", TagSpecifications=spec("subnet"))["Subnet"]["SubnetId"]
    ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.2.0/24")
    sg = ec2.create_security_group(GroupName="kiln", Description="kiln", VpcId=vpc, TagSpecifications=spec("security-group"))["GroupId"]
    igw = ec2.create_internet_gateway(TagSpecifications=spec("internet-gateway"))["InternetGateway"]["InternetGatewayId"]
    ec2.create_internet_gateway()
    rt = ec2.create_route_table(VpcId=vpc, TagSpecifications=spec("route-table"))["RouteTable"]["RouteTableId"]
    inst = ec2.run_instances(ImageId="ami-12345678", MinCount=1, MaxCount=1, SubnetId=subnet,
                             TagSpecifications=spec("instance"))["Instances"][0]["InstanceId"]
    ec2.run_instances(ImageId="ami-12345678", MinCount=1, MaxCount=1, SubnetId=subnet)
    eq([v["VpcId"] for v in ec2.describe_vpcs(Filters=WS_FILTER)["Vpcs"]], [vpc], "DescribeVpcs")
    eq([x["SubnetId"] for x in ec2.describe_subnets(Filters=WS_FILTER)["Subnets"]], [subnet], "DescribeSubnets")
    eq([x["GroupId"] for x in ec2.describe_security_groups(Filters=WS_FILTER)["SecurityGroups"]], [sg], "DescribeSecurityGroups")
    eq([x["InternetGatewayId"] for x in ec2.describe_internet_gateways(Filters=WS_FILTER)["InternetGateways"]], [igw], "DescribeInternetGateways")
    eq([x["RouteTableId"] for x in ec2.describe_route_tables(Filters=WS_FILTER)["RouteTables"]], [rt], "DescribeRouteTables")
    got = [i["InstanceId"] for r in ec2.describe_instances(Filters=WS_FILTER)["Reservations"] for i in r["Instances"]]
    eq(got, [inst], "DescribeInstances")
    miss = [{"Name": "tag:kiln:workspace", "Values": ["ws2"]}]
    eq(ec2.describe_vpcs(Filters=miss)["Vpcs"], [], "no match")


def t_sg_self_reference(s: Server):
    s.control("/_kiln/reset", {})
    ec2 = s.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    sg = ec2.create_security_group(GroupName="efa", Description="efa", VpcId=vpc)["GroupId"]
    perm = [{"IpProtocol": "-1", "UserIdGroupPairs": [{"GroupId": sg}]}]
    ec2.authorize_security_group_ingress(GroupId=sg, IpPermissions=perm)
    ec2.authorize_security_group_egress(GroupId=sg, IpPermissions=perm)
    g = ec2.describe_security_groups(GroupIds=[sg])["SecurityGroups"][0]
    eq([(p["IpProtocol"], [u["GroupId"] for u in p["UserIdGroupPairs"]]) for p in g["IpPermissions"]],
       [("-1", [sg])], "ingress")
    # EC2 reports the default allow-all egress rule and the self rule as one -1 permission
    eg = [p for p in g["IpPermissionsEgress"] if p["IpProtocol"] == "-1"]
    eq([u["GroupId"] for p in eg for u in p["UserIdGroupPairs"]], [sg], "egress to itself")
    eq(code(error_of(ec2.authorize_security_group_ingress, GroupId=sg, IpPermissions=perm)),
       "InvalidPermission.Duplicate", "duplicate rule")
    rules = ec2.describe_security_group_rules(Filters=[{"Name": "group-id", "Values": [sg]}])["SecurityGroupRules"]
    self_rules = [r for r in rules if r.get("ReferencedGroupInfo", {}).get("GroupId") == sg]
    eq(sorted(r["IsEgress"] for r in self_rules), [False, True], "DescribeSecurityGroupRules")


FAULT_CALLS = {
    "ec2": lambda s: s.client("ec2").describe_vpcs(),
    "iam": lambda s: s.client("iam").list_roles(),
    "s3": lambda s: s.client("s3").list_buckets(),
    "fsx": lambda s: s.client("fsx").describe_file_systems(),
    "efs": lambda s: s.client("efs").describe_file_systems(),
}


def t_faults(s: Server):
    s.control("/_kiln/reset", {})
    want_throttle = {"ec2": ("RequestLimitExceeded", 503), "iam": ("Throttling", 400), "s3": ("SlowDown", 503),
                     "fsx": ("ThrottlingException", 400), "efs": ("ThrottlingException", 429)}
    want_5xx = {"ec2": ("InternalError", 500), "iam": ("ServiceFailure", 500), "s3": ("InternalError", 500),
                "fsx": ("InternalServerError", 500), "efs": ("InternalServerError", 500)}
    s.control("/_kiln/faults", {"throttle": 1.0})
    for svc, call in FAULT_CALLS.items():
        e = error_of(call, s)
        eq((code(e), status(e)), want_throttle[svc], f"{svc} throttled")
    raw = {}
    fsx = s.client("fsx")
    fsx.meta.events.register("after-call.fsx.DescribeFileSystems",
                             lambda http_response, **_: raw.setdefault("body", http_response.content))
    error_of(fsx.describe_file_systems)
    eq(raw["body"], b'{"__type":"ThrottlingException","message":"Rate exceeded"}', "FSx body")
    s.control("/_kiln/faults", {"error5xx": 1.0})
    for svc, call in FAULT_CALLS.items():
        e = error_of(call, s)
        eq((code(e), status(e)), want_5xx[svc], f"{svc} 5xx")
    # only the listed services
    s.control("/_kiln/faults", {"throttle": 1.0, "services": ["iam"]})
    FAULT_CALLS["ec2"](s)
    eq(code(error_of(FAULT_CALLS["iam"], s)), "Throttling", "iam listed")
    # only the listed actions: EC2 throttles each API action by its own bucket
    s.control("/_kiln/faults", {"throttle": 1.0, "actions": ["ec2:CreateVpc"]})
    FAULT_CALLS["ec2"](s)
    eq(code(error_of(s.client("ec2").create_vpc, CidrBlock="10.0.0.0/16")), "RequestLimitExceeded",
       "ec2:CreateVpc listed")
    # shares and seed: reproducible, roughly the asked share, and nothing done on a fault
    outcomes = []
    for _ in range(2):
        s.control("/_kiln/reset", {})
        s.control("/_kiln/faults", {"throttle": 0.2, "error5xx": 0.1, "seed": 7, "services": ["ec2"]})
        ec2, run = s.client("ec2"), []
        for i in range(60):
            try:
                ec2.create_vpc(CidrBlock="10.0.0.0/16", TagSpecifications=[
                    {"ResourceType": "vpc", "Tags": [{"Key": "n", "Value": str(i)}]}])
                run.append("ok")
            except ClientError as e:
                run.append(code(e))
        s.control("/_kiln/faults", {})
        made = ec2.describe_vpcs(Filters=[{"Name": "tag-key", "Values": ["n"]}])["Vpcs"]
        eq(len(made), run.count("ok"), "a faulted CreateVpc created nothing")
        outcomes.append(run)
    eq(outcomes[0], outcomes[1], "same seed, same faults")
    n_thr, n_err = outcomes[0].count("RequestLimitExceeded"), outcomes[0].count("InternalError")
    assert 4 <= n_thr <= 24 and 1 <= n_err <= 15, (n_thr, n_err)
    calls = s.control("/_kiln/calls")
    eq((calls["faults_injected"]["throttle"], calls["faults_injected"]["error5xx"]), (n_thr, n_err), "faults_injected")


def t_faults_after(s: Server):
    s.control("/_kiln/reset", {})
    ec2 = s.client("ec2")
    s.control("/_kiln/faults", {"error5xx_after": 1.0, "services": ["ec2", "fsx"]})
    e = error_of(ec2.create_vpc, CidrBlock="10.9.0.0/16",
                 TagSpecifications=[{"ResourceType": "vpc", "Tags": WS}])
    eq((code(e), status(e)), ("InternalError", 500), "reported failure")
    s.control("/_kiln/faults", {})
    eq(len(ec2.describe_vpcs(Filters=WS_FILTER)["Vpcs"]), 1, "the VPC was created all the same")
    # ... which is what idempotency tokens are for
    _, subnet = network(ec2)
    fsx = s.client("fsx")
    s.control("/_kiln/faults", {"error5xx_after": 1.0, "services": ["fsx"]})
    eq(code(error_of(create_lustre, fsx, subnet, "kiln-ws1-fsx")), "InternalServerError", "fsx create")
    s.control("/_kiln/faults", {})
    fs = create_lustre(fsx, subnet, "kiln-ws1-fsx")
    eq([f["FileSystemId"] for f in fsx.describe_file_systems()["FileSystems"]], [fs["FileSystemId"]],
       "the retry with the same token found the first file system")
    s.control("/_kiln/faults", {"error5xx_after": 1.0, "services": ["ec2"]})
    args = dict(ImageId="ami-12345678", MinCount=2, MaxCount=2, SubnetId=subnet, ClientToken="kiln-ws1-nodes")
    eq(code(error_of(ec2.run_instances, **args)), "InternalError", "run_instances")
    s.control("/_kiln/faults", {})
    ec2.run_instances(**args)
    eq(count_instances(ec2, []), 2, "the retry with the same ClientToken launched nothing more")


def t_call_counts(s: Server):
    s.control("/_kiln/reset", {})
    ec2, iam, s3, fsx, efs = (s.client(x) for x in ("ec2", "iam", "s3", "fsx", "efs"))
    s3.create_bucket(Bucket="kiln-count")
    s.control("/_kiln/calls/reset", {})
    ec2.describe_vpcs()
    ec2.describe_vpcs()
    iam.list_roles(PathPrefix="/kiln/")
    s3.put_bucket_versioning(Bucket="kiln-count", VersioningConfiguration={"Status": "Enabled"})
    s3.get_bucket_versioning(Bucket="kiln-count")
    s3.put_object(Bucket="kiln-count", Key="k/1", Body=b"1")
    s3.list_objects_v2(Bucket="kiln-count")
    s3.list_buckets()
    fsx.describe_file_systems()
    efs.describe_file_systems()
    error_of(efs.describe_mount_targets, FileSystemId="fs-12345678")
    s.control("/_kiln/calls")  # control requests are not counted
    calls = s.control("/_kiln/calls")
    want = {"ec2:DescribeVpcs": 2, "iam:ListRoles": 1, "s3:PutBucketVersioning": 1, "s3:GetBucketVersioning": 1,
            "s3:PutObject": 1, "s3:ListObjectsV2": 1, "s3:ListBuckets": 1, "fsx:DescribeFileSystems": 1,
            "efs:DescribeFileSystems": 1, "efs:DescribeMountTargets": 1}
    eq(calls["by_action"], want, "by_action")
    eq(calls["total"], sum(want.values()), "total")
    s.control("/_kiln/calls/reset", {})
    eq(s.control("/_kiln/calls")["total"], 0, "after reset")


def t_reset(s: Server):
    ec2 = s.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    s.control("/_kiln/capacity", [{"instance_type": "p5.48xlarge", "max": 0}])
    s.control("/_kiln/faults", {"throttle": 0.5})
    s.control("/_kiln/fsx", {"available_after_describes": 5})
    eq(s.control("/_kiln/reset", {}), {"ok": True}, "reset")
    eq(code(error_of(ec2.describe_vpcs, VpcIds=[vpc])), "InvalidVpcID.NotFound", "moto's state is gone")
    eq((s.control("/_kiln/capacity"), s.control("/_kiln/faults"), s.control("/_kiln/fsx")),
       ([], {}, {"available_after_describes": 2}), "control state")
    eq(s.control("/_kiln/calls")["by_action"], {"ec2:DescribeVpcs": 1}, "counts start again")
    try:
        s.control("/_kiln/faults", {"throttle": 2})
        raise AssertionError("a bad fault share was accepted")
    except urllib.error.HTTPError as e:
        eq(e.code, 400, "bad control request")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def t_auth(port: int):
    # Three requests are let through unauthenticated: CreateUser, CreateAccessKey,
    # PutUserPolicy.  (With INITIAL_NO_AUTH_ACTION_COUNT=2 the PutUserPolicy would itself be
    # checked, and no caller exists yet that could be allowed to make it.)
    s = Server("auth", env={"INITIAL_NO_AUTH_ACTION_COUNT": "3"}, port=port)
    eq(s.port, port, "--port honoured")
    iam = s.client("iam")
    iam.create_user(UserName="kiln-ci")
    key = iam.create_access_key(UserName="kiln-ci")["AccessKey"]
    policy = {"Version": "2012-10-17",
              "Statement": [{"Effect": "Allow", "Action": "ec2:DescribeVpcs", "Resource": "*"}]}
    iam.put_user_policy(UserName="kiln-ci", PolicyName="describe-vpcs", PolicyDocument=json.dumps(policy))
    ec2 = s.client("ec2", key["AccessKeyId"], key["SecretAccessKey"])
    ec2.describe_vpcs()
    e = error_of(ec2.create_vpc, CidrBlock="10.0.0.0/16")
    eq((code(e), status(e)), ("UnauthorizedOperation", 403), "CreateVpc")
    assert "ec2:CreateVpc" in e.response["Error"]["Message"], e.response["Error"]["Message"]
    eq(code(error_of(s.client("iam", key["AccessKeyId"], key["SecretAccessKey"]).list_users)), "AccessDenied", "iam:ListUsers")
    eq(code(error_of(s.client("ec2").describe_vpcs)), "AuthFailure", "unknown access key")
    eq(code(error_of(s.client("ec2", key["AccessKeyId"], "wrong-secret").describe_vpcs)), "AuthFailure", "bad signature")
    eq(s.control("/_kiln/health"), {"ok": True}, "control API needs no signature")
    stopped = s.stop()
    eq(stopped.returncode, 0, "server.sh stop")
    assert "ignored TERM" not in stopped.stderr, stopped.stderr
    with open(os.path.join(s.dir, "moto.log")) as f:
        assert "kiln_moto: stopping" in f.read(), "clean shutdown on SIGTERM"
    assert not running(s.pid), "server still running after stop"


def running(pid: int) -> bool:
    """Alive and not a zombie (an orphan may wait for its reaper a while)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def t_auth_two():
    # INITIAL_NO_AUTH_ACTION_COUNT=2 exactly: two requests pass unchecked, the third is checked.
    s = Server("auth2", env={"INITIAL_NO_AUTH_ACTION_COUNT": "2"})
    iam = s.client("iam")
    iam.create_user(UserName="kiln-ci")
    key = iam.create_access_key(UserName="kiln-ci")["AccessKey"]
    eq(code(error_of(iam.put_user_policy, UserName="kiln-ci", PolicyName="p", PolicyDocument="{}")),
       "InvalidClientTokenId", "third request, unknown key")
    e = error_of(s.client("ec2", key["AccessKeyId"], key["SecretAccessKey"]).describe_vpcs)
    eq(code(e), "UnauthorizedOperation", "a user without policies")
    s.stop()


def enforcing_server(name: str):
    """A server that checks IAM policies after its first three requests, which make the
    user "admin" allowed everything: the server and admin's access key."""
    s = Server(name, env={"INITIAL_NO_AUTH_ACTION_COUNT": "3"})
    iam = s.client("iam")
    iam.create_user(UserName="admin")
    key = iam.create_access_key(UserName="admin")["AccessKey"]
    iam.put_user_policy(UserName="admin", PolicyName="all", PolicyDocument=json.dumps(
        {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}))
    return s, key


def t_create_tags_conditions():
    # ec2:CreateTags evaluated per resource with aws:TagKeys, ec2:SourceInstanceARN and
    # aws:ARN (kiln_moto.patch_auth), with the credentials EC2 hands an instance
    # (/_kiln/instance-credentials): a node may tag itself with one key, nothing else.
    s, key = enforcing_server("tags")
    iam = s.client("iam", key["AccessKeyId"], key["SecretAccessKey"])
    ec2 = s.client("ec2", key["AccessKeyId"], key["SecretAccessKey"])
    trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {
        "Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}]}
    iam.create_role(RoleName="node", AssumeRolePolicyDocument=json.dumps(trust))
    iam.put_role_policy(RoleName="node", PolicyName="kiln", PolicyDocument=json.dumps(
        {"Version": "2012-10-17", "Statement": [{
            "Effect": "Allow", "Action": "ec2:CreateTags", "Resource": "arn:aws:ec2:*:*:instance/*",
            "Condition": {"StringEquals": {"aws:ARN": "${ec2:SourceInstanceARN}"},
                          "ForAllValues:StringEquals": {"aws:TagKeys": ["kiln:health"]}}}]}))
    iam.create_instance_profile(InstanceProfileName="node")
    iam.add_role_to_instance_profile(InstanceProfileName="node", RoleName="node")
    ami = ec2.describe_images()["Images"][0]["ImageId"]
    ids = [i["InstanceId"] for i in ec2.run_instances(
        ImageId=ami, MinCount=2, MaxCount=2, IamInstanceProfile={"Name": "node"})["Instances"]]
    creds = s.control("/_kiln/instance-credentials", {"instance_id": ids[0], "region": REGION})
    node = boto3.client("ec2", region_name=REGION, endpoint_url=s.url, config=NO_RETRY,
                        aws_access_key_id=creds["AccessKeyId"],
                        aws_secret_access_key=creds["SecretAccessKey"],
                        aws_session_token=creds["SessionToken"])
    node.create_tags(Resources=[ids[0]], Tags=[{"Key": "kiln:health", "Value": "healthy: 8/8 GPUs"}])
    eq(code(error_of(node.create_tags, Resources=[ids[1]],
                     Tags=[{"Key": "kiln:health", "Value": "healthy: 8/8 GPUs"}])),
       "UnauthorizedOperation", "another instance")
    eq(code(error_of(node.create_tags, Resources=[ids[0]], Tags=[{"Key": "Name", "Value": "x"}])),
       "UnauthorizedOperation", "another key")
    eq(code(error_of(node.create_tags, Resources=[ids[0]],
                     Tags=[{"Key": "kiln:health", "Value": "ok"}, {"Key": "Name", "Value": "x"}])),
       "UnauthorizedOperation", "the key beside another")
    # Without the condition the same credentials may tag any instance: the check is real.
    iam.put_role_policy(RoleName="node", PolicyName="kiln", PolicyDocument=json.dumps(
        {"Version": "2012-10-17", "Statement": [{
            "Effect": "Allow", "Action": "ec2:CreateTags", "Resource": "arn:aws:ec2:*:*:instance/*"}]}))
    node.create_tags(Resources=[ids[1]], Tags=[{"Key": "Name", "Value": "x"}])
    # Credentials that are no instance's (a user) never match ec2:SourceInstanceARN.
    iam.put_user_policy(UserName="admin", PolicyName="all", PolicyDocument=json.dumps(
        {"Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Action": "iam:*", "Resource": "*"},
            {"Effect": "Allow", "Action": "ec2:CreateTags", "Resource": "*",
             "Condition": {"StringEquals": {"aws:ARN": "${ec2:SourceInstanceARN}"}}}]}))
    eq(code(error_of(ec2.create_tags, Resources=[ids[0]], Tags=[{"Key": "kiln:health", "Value": "x"}])),
       "UnauthorizedOperation", "a user is no instance")
    s.stop()


def t_iam_resource_types():
    # IAM actions are authorized on the resource type AWS's service authorization data
    # (tests/iam-data) lists for them: iam:AddRoleToInstanceProfile on the instance
    # profile alone, so a grant on the role ARN only is denied, one on the profile allowed.
    s, key = enforcing_server("iamtypes")
    admin = s.client("iam", key["AccessKeyId"], key["SecretAccessKey"])
    path = "/kiln/c1/ws1/"
    admin.create_role(RoleName="node", Path=path, AssumeRolePolicyDocument=TRUST)
    admin.create_instance_profile(InstanceProfileName="node", Path=path)
    admin.create_user(UserName="ci")
    ci_key = admin.create_access_key(UserName="ci")["AccessKey"]
    ci = s.client("iam", ci_key["AccessKeyId"], ci_key["SecretAccessKey"])
    acct = "123456789012"

    def grant(resource):
        admin.put_user_policy(UserName="ci", PolicyName="kiln", PolicyDocument=json.dumps(
            {"Version": "2012-10-17", "Statement": [{
                "Effect": "Allow",
                "Action": ["iam:AddRoleToInstanceProfile", "iam:RemoveRoleFromInstanceProfile"],
                "Resource": resource}]}))

    grant(f"arn:aws:iam::{acct}:role{path}*")
    eq(code(error_of(ci.add_role_to_instance_profile, InstanceProfileName="node", RoleName="node")),
       "AccessDenied", "AddRoleToInstanceProfile granted on the role ARN only")
    grant(f"arn:aws:iam::{acct}:instance-profile{path}*")
    ci.add_role_to_instance_profile(InstanceProfileName="node", RoleName="node")
    ci.remove_role_from_instance_profile(InstanceProfileName="node", RoleName="node")
    # EC2 the same: ec2:CreateVpc is authorized on the vpc type, not on a subnet's ARN.
    ec2 = s.client("ec2", ci_key["AccessKeyId"], ci_key["SecretAccessKey"])
    for kind, ok in (("subnet", False), ("vpc", True)):
        admin.put_user_policy(UserName="ci", PolicyName="kiln", PolicyDocument=json.dumps(
            {"Version": "2012-10-17", "Statement": [{
                "Effect": "Allow", "Action": "ec2:CreateVpc",
                "Resource": f"arn:aws:ec2:{REGION}:*:{kind}/*"}]}))
        if ok:
            ec2.create_vpc(CidrBlock="10.9.0.0/16")
        else:
            eq(code(error_of(ec2.create_vpc, CidrBlock="10.9.0.0/16")),
               "UnauthorizedOperation", "CreateVpc granted on a subnet ARN only")
    s.stop()


def t_server_sh():
    out = subprocess.run(["sh", SERVER_SH, "available"], capture_output=True, text=True)
    eq(out.returncode, 0, f"available: {out.stderr}")
    out = subprocess.run(["sh", SERVER_SH, "available"], capture_output=True, text=True,
                         env={**os.environ, "PYTHON": "false"})
    eq(out.returncode, 1, "available with a python that imports nothing")
    assert "moto" in out.stderr and "boto3" in out.stderr, out.stderr
    # A server that cannot come up (its port is taken): a clear message and the log tail.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = subprocess.run(["sh", SERVER_SH, "start", os.path.join(TMP, "bad"), str(port)],
                             capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and "moto.log" in out.stderr, out
    assert "Address already in use" in out.stderr, out.stderr


def main() -> int:
    main_server = None
    try:
        try:
            main_server = Server("main")
        except Exception as e:
            print(f"not ok - start kiln_moto via server.sh\n#   {e}")
            FAILED.append("start")
            return 1
        print(f"ok - server.sh start (port {main_server.port}, pid {main_server.pid})")
        PASSED.append("start")
        s = main_server
        check("placement groups: create with tags, describe by tag/strategy/name/id, RunInstances placement, delete", t_placement_groups, s)
        check("EFA: InterfaceType efa and NetworkCardIndex kept per NIC in DescribeInstances", t_efa, s)
        check("RunInstances ClientToken idempotency", t_client_token, s)
        check("capacity rule: InsufficientInstanceCapacity (HTTP 500), nothing launched", t_capacity, s)
        check("capacity reservations: targeted launches, wrong zone/type, full, unknown, by tag", t_odcr, s)
        check("capacity reservation groups: members, ListGroupResources, launches into a member or on demand",
              t_capacity_groups, s)
        check("capacity blocks: offerings, durations, purchase with tags, states over the clock, launch", t_capacity_blocks, s)
        check("spot capacity switched off: InsufficientInstanceCapacity, on-demand unaffected", t_spot, s)
        check("FSx: CREATING -> AVAILABLE -> DELETING -> FileSystemNotFound; ClientRequestToken; configurable", t_fsx_lifecycle, s)
        check("FSx data repository associations: create/describe/delete", t_fsx_dra, s)
        check("EFS: CreationToken, mount targets", t_efs, s)
        check("S3: versioning, encryption, public access block, lifecycle, tagging", t_s3, s)
        check("IAM: role paths, ListRoles PathPrefix, inline policies, instance profiles", t_iam, s)
        check("EC2 tag:kiln:workspace filters on VPCs, subnets, SGs, IGWs, route tables, instances", t_tag_filters, s)
        check("security group self-reference ingress and egress (-1)", t_sg_self_reference, s)
        check("faults: throttling and 5xx in each service's shape; seed; services; actions", t_faults, s)
        check("faults: error5xx_after performs the action, tokens make the retry safe", t_faults_after, s)
        check("call counting by service and action", t_call_counts, s)
        check("POST /_kiln/reset", t_reset, s)
        check("INITIAL_NO_AUTH_ACTION_COUNT: signatures and IAM policy enforced; --port; clean stop", t_auth, free_port())
        check("INITIAL_NO_AUTH_ACTION_COUNT=2: the third request is checked", t_auth_two)
        check("ec2:CreateTags conditions (aws:TagKeys, ec2:SourceInstanceARN, aws:ARN); instance credentials", t_create_tags_conditions)
        check("IAM and EC2 actions authorized on the resource type of AWS's service authorization data",
              t_iam_resource_types)
        check("server.sh available / start failure", t_server_sh)
    finally:
        for srv in SERVERS:
            srv.stop()
        if not FAILED:
            shutil.rmtree(TMP, ignore_errors=True)
        else:
            print(f"# server logs kept in {TMP}")
    print(f"{len(PASSED)} passed, {len(FAILED)} failed")
    return 0 if not FAILED else 1


if __name__ == "__main__":
    sys.exit(main())
