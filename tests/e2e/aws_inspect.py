#!/usr/bin/env python3
"""aws_inspect.py - look at what kiln really made, with boto3 (an independent
client), for the e2e tests against moto. AWS_ENDPOINT_URL names the server.

  aws_inspect.py agree STATE_JSON CLUSTER WS
      every resource tagged for CLUSTER/WS is recorded in the state with its
      id, no address is held twice (no duplicate), every recorded resource
      exists, and nothing kiln could have made is untagged
  aws_inspect.py expect CLUSTER WS CHECK...
      named checks of attributes, tags and settings (see CHECKS)
  aws_inspect.py drift CLUSTER WS WHAT
      change something behind kiln's back: versioning-off, ingress-add
  aws_inspect.py left CLUSTER WS
      print what is left of CLUSTER/WS, one "TYPE NAME" per line
  aws_inspect.py nodes STATE_JSON CLUSTER WS GROUP [no-health]
      the group's recorded `nodes` are its running instances as
      DescribeInstances gives them: ids oldest launch first (ties by id),
      index, zone, private and public address, state, and health as the
      kiln:health tag says (null without one; not compared with no-health:
      a report that came after the commit); prints "nodes: N"
  aws_inspect.py user NAME POLICY_JSON [ACTION]
      make an IAM user whose one policy is POLICY_JSON (less ACTION, when
      given) and print "AWS_ACCESS_KEY_ID=... AWS_SECRET_ACCESS_KEY=..."
Exit 0 when every check holds; otherwise the faults are printed, exit 1.
"""
import collections
import json
import os
import sys

import boto3
import botocore.config


def clients():
    kw = dict(
        endpoint_url=os.environ["AWS_ENDPOINT_URL"],
        region_name=os.environ.get("AWS_REGION", "us-east-1"),
        aws_access_key_id=os.environ.get("AWS_ACCESS_KEY_ID", "testing"),
        aws_secret_access_key=os.environ.get("AWS_SECRET_ACCESS_KEY", "testing"),
        config=botocore.config.Config(retries={"total_max_attempts": 1}),
    )
    return {s: boto3.client(s, **kw) for s in ("ec2", "s3", "iam", "fsx", "efs")}


def tags_of(items):
    return {t["Key"]: t["Value"] for t in items or []}


def bucket_tags(s3, name):
    try:
        return tags_of(s3.get_bucket_tagging(Bucket=name)["TagSet"])
    except s3.exceptions.ClientError:
        return {}


def live(c, cluster, ws):
    """(address, id, tags) of everything that carries or could carry kiln tags."""
    ec2, s3, iam = c["ec2"], c["s3"], c["iam"]
    out = []
    untagged = []
    desc = {}
    for v in ec2.describe_vpcs()["Vpcs"]:
        if not v.get("IsDefault"):
            out.append(("aws_vpc", v["VpcId"], tags_of(v.get("Tags"))))
    for s in ec2.describe_subnets()["Subnets"]:
        if not s.get("DefaultForAz"):
            out.append(("aws_subnet", s["SubnetId"], tags_of(s.get("Tags"))))
    for g in ec2.describe_security_groups()["SecurityGroups"]:
        if g["GroupName"] != "default":
            out.append(("aws_security_group", g["GroupId"], tags_of(g.get("Tags"))))
            desc[g["GroupId"]] = "%r named %r in %s" % (g["GroupId"], g["GroupName"], g.get("VpcId"))
    for g in ec2.describe_internet_gateways()["InternetGateways"]:
        out.append(("aws_internet_gateway", g["InternetGatewayId"], tags_of(g.get("Tags"))))
    for g in ec2.describe_placement_groups()["PlacementGroups"]:
        out.append(("aws_placement_group", g["GroupName"], tags_of(g.get("Tags"))))
    groups = collections.defaultdict(list)
    for r in ec2.describe_instances()["Reservations"]:
        for i in r["Instances"]:
            if i["State"]["Name"] in ("terminated", "shutting-down"):
                continue
            t = tags_of(i.get("Tags"))
            if "kiln:address" not in t:
                untagged.append("instance %s" % i["InstanceId"])
                continue
            groups[(t.get("kiln:cluster"), t.get("kiln:workspace"), t["kiln:address"],
                    t.get("kiln:lineage"))].append(i)
    for (c_, w_, addr, lineage), insts in groups.items():
        # kiln's group id: ig/C/W/G, and @LINEAGE for a state that tags one.
        name = addr.split(".", 1)[1] + ("@" + lineage if lineage else "")
        t = {"kiln:cluster": c_, "kiln:workspace": w_, "kiln:address": addr}
        if lineage:
            t["kiln:lineage"] = lineage
        out.append(("aws_instance_group", "ig/%s/%s/%s" % (c_, w_, name), t))
    for b in s3.list_buckets()["Buckets"]:
        out.append(("aws_s3_bucket", b["Name"], bucket_tags(s3, b["Name"])))
    for r in iam.list_roles(PathPrefix="/kiln/")["Roles"]:
        t = tags_of(iam.list_role_tags(RoleName=r["RoleName"])["Tags"])
        out.append(("aws_iam_role", r["RoleName"], t))
    fsx, efs = c["fsx"], c["efs"]
    for f in fsx.describe_file_systems()["FileSystems"]:
        out.append(("aws_fsx_lustre", f["FileSystemId"], tags_of(f.get("Tags"))))
    for a in fsx.describe_data_repository_associations()["Associations"]:
        out.append(("aws_fsx_import", a["AssociationId"], tags_of(a.get("Tags"))))
    for f in efs.describe_file_systems()["FileSystems"]:
        t = tags_of(f.get("Tags"))
        out.append(("aws_efs", f["FileSystemId"], t))
        # A mount target has no tags: its file system's say whose it is.
        for m in efs.describe_mount_targets(FileSystemId=f["FileSystemId"])["MountTargets"]:
            mt = dict(t)
            if "kiln:address" in t:
                mt["kiln:address"] = "aws_efs_mount_target." + t["kiln:address"].split(".", 1)[1]
            out.append(("aws_efs_mount_target", m["MountTargetId"], mt))
    for typ, id_, t in out:
        if "kiln:address" not in t:
            untagged.append("%s %s" % (typ, desc.get(id_, id_)))
    mine = [(t["kiln:address"], id_, t.get("kiln:lineage")) for typ, id_, t in out
            if t.get("kiln:cluster") == cluster and t.get("kiln:workspace") == ws]
    return mine, untagged


def agree(state_path, cluster, ws):
    c = clients()
    with open(state_path) as f:
        state = json.load(f)
    recorded = {a: r["id"] for a, r in state.get("resources", {}).items()}
    mine, untagged = live(c, cluster, ws)
    faults = ["untagged: %s" % u for u in untagged]
    seen = collections.Counter(a for a, _, _ in mine)
    faults += ["%s is held %d times" % (a, n) for a, n in seen.items() if n > 1]
    for a, id_, lineage in mine:
        if recorded.get(a) != id_:
            faults.append("%s (%s) is not recorded (state has %s)" % (a, id_, recorded.get(a)))
        # Every resource names the state that owns it (kiln:lineage).
        if state.get("lineage") and lineage != state["lineage"]:
            faults.append("%s (%s) carries lineage %s, the state is %s"
                          % (a, id_, lineage, state["lineage"]))
    live_ids = {id_ for _, id_, _ in mine}
    for a, id_ in recorded.items():
        if id_ not in live_ids:
            faults.append("%s (%s) is recorded but does not exist" % (a, id_))
    return faults, "aws: %d resources agree with the state" % len(mine)


def instances(ec2, cluster, ws, group):
    out = []
    for r in ec2.describe_instances(Filters=[
            {"Name": "tag:kiln:cluster", "Values": [cluster]},
            {"Name": "tag:kiln:workspace", "Values": [ws]},
            {"Name": "tag:kiln:address", "Values": ["aws_instance_group." + group]},
            {"Name": "instance-state-name", "Values": ["pending", "running"]}])["Reservations"]:
        out += r["Instances"]
    return out


def role_policy(iam, name):
    """The role's inline policy "kiln" as a dict."""
    doc = iam.get_role_policy(RoleName=name, PolicyName="kiln")["PolicyDocument"]
    return json.loads(doc) if isinstance(doc, str) else doc


# The statement every node role ends with (issue 14): a node may put only the
# kiln:health tag, and only on its own instance.
NODE_HEALTH = {
    "Sid": "KilnNodeHealth", "Effect": "Allow", "Action": "ec2:CreateTags",
    "Resource": "arn:aws:ec2:*:*:instance/*",
    "Condition": {"StringEquals": {"aws:ARN": "${ec2:SourceInstanceARN}"},
                  "ForAllValues:StringEquals": {"aws:TagKeys": ["kiln:health"]}}}


# The statement a GPU group's role ends with (issue 17): its nodes' CloudWatch agent may
# put metrics into CWAgent only (PutMetricData has no resource-level permission).
GPU_METRICS = {
    "Sid": "KilnGpuMetrics", "Effect": "Allow", "Action": "cloudwatch:PutMetricData",
    "Resource": "*", "Condition": {"StringEquals": {"cloudwatch:namespace": "CWAgent"}}}


def role_runs_gpus(ec2, name):
    """Whether a live instance with instance profile NAME has a type with GPUs (as EC2
    describes the type)."""
    types = set()
    for r in ec2.describe_instances(Filters=[
            {"Name": "instance-state-name", "Values": ["pending", "running"]}])["Reservations"]:
        for i in r["Instances"]:
            if i.get("IamInstanceProfile", {}).get("Arn", "").endswith("/" + name):
                types.add(i["InstanceType"])
    if not types:
        return False
    return any(t.get("GpuInfo", {}).get("Gpus")
               for t in ec2.describe_instance_types(InstanceTypes=sorted(types))["InstanceTypes"])


def without_node_health(name, doc, faults, gpus):
    """The role's statements but its last: NODE_HEALTH, then GPU_METRICS when the role's
    nodes have GPUs (gpus), and GPU_METRICS nowhere else."""
    stmts = doc["Statement"]
    if gpus:
        if not stmts or stmts[-1] != GPU_METRICS:
            faults.append("role %s of GPU nodes does not end with the GPU-metrics statement: %s"
                          % (name, stmts))
            return stmts
        stmts = stmts[:-1]
    if GPU_METRICS in stmts or any(s.get("Sid") == "KilnGpuMetrics" for s in stmts):
        faults.append("role %s has a GPU-metrics statement it should not: %s" % (name, stmts))
    if not stmts or stmts[-1] != NODE_HEALTH:
        faults.append("role %s does not end with the node-health statement: %s" % (name, stmts))
        return stmts
    rest = stmts[:-1]
    if NODE_HEALTH in rest:
        faults.append("role %s has the node-health statement twice" % name)
    return rest


def user_data_faults(c, cluster, ws, parts):
    """The user-data= check of expect: what the nodes of group parts[0] boot with."""
    import base64
    import re
    import yaml
    ec2, fsx, efs = c["ec2"], c["fsx"], c["efs"]
    region = os.environ.get("AWS_REGION", "us-east-1")
    name, faults = parts[0], []
    opts = dict(p.partition("=")[::2] for p in parts[1:])
    mounts = [m for m in opts.get("mounts", "").split("+") if m]
    finds = [m for m in opts.get("find", "").split("+") if m]

    def ours(tags, addr):
        return (tags.get("kiln:cluster") == cluster and tags.get("kiln:workspace") == ws
                and tags.get("kiln:address") == addr)
    sources = {}
    for f in fsx.describe_file_systems()["FileSystems"]:
        for m in mounts:
            if ours(tags_of(f.get("Tags")), "aws_fsx_lustre." + m):
                sources[m] = "%s@tcp:/%s" % (f["DNSName"], f["LustreConfiguration"]["MountName"])
    for f in efs.describe_file_systems()["FileSystems"]:
        for m in mounts:
            if ours(tags_of(f.get("Tags")), "aws_efs." + m):
                sources[m] = "%s.efs.%s.amazonaws.com:/" % (f["FileSystemId"], region)
    insts = instances(ec2, cluster, ws, name)
    if not insts:
        faults.append("group %s has no instances" % name)
    for i in insts:
        iid = i["InstanceId"]
        ud = ec2.describe_instance_attribute(InstanceId=iid, Attribute="userData")
        raw = ud.get("UserData", {}).get("Value")
        if not raw:
            faults.append("%s has no user data" % iid)
            continue
        text = base64.b64decode(raw).decode()
        if not text.startswith("#cloud-config\n"):
            faults.append("%s user data is not cloud-config: %r" % (iid, text[:40]))
            continue
        doc = yaml.safe_load(text)
        files = {f["path"]: f["content"] for f in doc.get("write_files", [])}
        script = files.get("/var/lib/kiln/boot.sh", "")
        if "{{kiln:" in text:
            faults.append("%s user data still holds a placeholder" % iid)
        for m in mounts:
            if m in finds:
                continue
            src = sources.get(m)
            if not src:
                faults.append("no file system tagged for store %s" % m)
            elif not re.search(r"mount_fs '%s' '%s' " % (re.escape(m), re.escape(src)), script):
                faults.append("%s does not mount %s from %s" % (iid, m, src))
            elif src.endswith(".amazonaws.com:/") and ("'%s:/' 'efs' 'tls,_netdev,nofail' 'mount.efs'" % src.split(".")[0]) not in script:
                faults.append("%s does not mount %s by id with amazon-efs-utils where present" % (iid, m))
        for m in finds:
            if ("Value=='aws_fsx_lustre.%s'" % m) not in script or ("Value=='%s'" % ws) not in script:
                faults.append("%s does not look %s up by its kiln tags at boot" % (iid, m))
        if "local" in opts and ("local_nvme '%s'" % opts["local"]) not in script:
            faults.append("%s does not assemble its local NVMe at %s" % (iid, opts["local"]))
        if ("efa" in opts) != ("/etc/profile.d/kiln-efa.sh" in files):
            faults.append("%s EFA environment file: %s" % (iid, "missing" if "efa" in opts else "unexpected"))
        if not re.fullmatch(r"sha256:[0-9a-f]{64}", tags_of(i.get("Tags")).get("kiln:user-data", "")):
            faults.append("%s lacks its kiln:user-data tag" % iid)
    return faults


def expect(cluster, ws, checks):
    """CHECKS: group=NAME:count=N[:efa][:pg][:profile][:public]; bucket=STORE:versioning=on|off
    [:expire=DAYS]; sg-ingress=PORT/CIDR,...; role=NAME:read=A+B:write=C;
    role-allow=NAME=[[ACTIONS, RESOURCES], ...]; role-exact=NAME=[[ACTIONS, RESOURCE], ...]
    (both: the policy ends with NODE_HEALTH, checked exactly, and these come before it);
    zone=ZONE[:no-storage]; tags=K=V; expires=GROUP=TIME: every node's kiln:expires tag (the
    node TTL reads it from its instance metadata);
    user-data=GROUP:mounts=STORE+STORE[:local=PATH][:efa][:find=STORE]: every node's
    UserData (DescribeInstanceAttribute), decoded, is cloud-config whose boot script
    mounts each STORE from the file system kiln made for it (FSx: DNSName@tcp:/MountName;
    EFS: ID.efs.REGION.amazonaws.com:/), or, with find=, looks the Lustre store up
    at boot by its kiln tags; and the instance carries kiln:user-data"""
    c = clients()
    ec2, s3, iam = c["ec2"], c["s3"], c["iam"]
    prefix = "kiln-%s-%s-" % (cluster, ws)
    faults = []
    for check in checks:
        kind, _, rest = check.partition("=")
        parts = rest.split(":")
        if kind == "group":
            name = parts[0]
            insts = instances(ec2, cluster, ws, name)
            for p in parts[1:]:
                k, _, v = p.partition("=")
                if k == "count" and len(insts) != int(v):
                    faults.append("group %s has %d instances, want %s" % (name, len(insts), v))
                for i in insts:
                    nics = [n.get("InterfaceType") for n in i["NetworkInterfaces"]]
                    if k == "efa" and "efa" not in nics:
                        faults.append("%s has no EFA interface (%s)" % (i["InstanceId"], nics))
                    if k == "efa" and v and (nics.count("efa") != int(v) or
                                             len({n["Attachment"].get("NetworkCardIndex", 0)
                                                  for n in i["NetworkInterfaces"]}) != int(v)):
                        faults.append("%s has %d EFA interfaces on %d cards, want %s" % (
                            i["InstanceId"], nics.count("efa"),
                            len({n["Attachment"].get("NetworkCardIndex", 0) for n in i["NetworkInterfaces"]}), v))
                    if k == "pg" and not i["Placement"].get("GroupName"):
                        faults.append("%s is in no placement group" % i["InstanceId"])
                    if k == "profile" and not i.get("IamInstanceProfile"):
                        faults.append("%s has no instance profile" % i["InstanceId"])
                    if k == "type" and i["InstanceType"] != v:
                        faults.append("%s is %s, want %s" % (i["InstanceId"], i["InstanceType"], v))
                    if k == "zone" and i["Placement"]["AvailabilityZone"] != v:
                        faults.append("%s is in %s, want %s" % (i["InstanceId"], i["Placement"]["AvailabilityZone"], v))
            for i in insts:
                if i.get("MetadataOptions", {}).get("HttpTokens") != "required":
                    faults.append("%s does not require IMDSv2" % i["InstanceId"])
                # The node TTL (issue 29): tags in the metadata, powering off terminates.
                if i.get("MetadataOptions", {}).get("InstanceMetadataTags") != "enabled":
                    faults.append("%s has no instance tags in its metadata" % i["InstanceId"])
                b = ec2.describe_instance_attribute(InstanceId=i["InstanceId"],
                                                   Attribute="instanceInitiatedShutdownBehavior")
                if b["InstanceInitiatedShutdownBehavior"]["Value"] != "terminate":
                    faults.append("%s shuts down to %s, not terminate" % (
                        i["InstanceId"], b["InstanceInitiatedShutdownBehavior"]["Value"]))
                t = tags_of(i.get("Tags"))
                for k in ("kiln:cluster", "kiln:workspace", "kiln:address"):
                    if k not in t:
                        faults.append("%s lacks tag %s" % (i["InstanceId"], k))
                if not i.get("ClientToken"):
                    faults.append("%s was launched without a ClientToken" % i["InstanceId"])
        elif kind == "user-data":
            faults += user_data_faults(c, cluster, ws, parts)
        elif kind == "expires":
            name, _, want = rest.partition("=")
            insts = instances(ec2, cluster, ws, name)
            if not insts:
                faults.append("group %s has no instances" % name)
            for i in insts:
                got = tags_of(i.get("Tags")).get("kiln:expires")
                if got != want:
                    faults.append("%s kiln:expires is %s, want %s" % (i["InstanceId"], got, want))
        elif kind == "bucket":
            b = prefix + parts[0]
            v = s3.get_bucket_versioning(Bucket=b).get("Status", "Off")
            for p in parts[1:]:
                k, _, val = p.partition("=")
                if k == "versioning" and (v == "Enabled") != (val == "on"):
                    faults.append("bucket %s versioning is %s, want %s" % (b, v, val))
                if k == "expire":
                    try:
                        rules = s3.get_bucket_lifecycle_configuration(Bucket=b)["Rules"]
                    except s3.exceptions.ClientError:
                        rules = []
                    days = [r["NoncurrentVersionExpiration"]["NoncurrentDays"] for r in rules
                            if "NoncurrentVersionExpiration" in r]
                    if days != [int(val)]:
                        faults.append("bucket %s noncurrent expiry %s, want %s" % (b, days, val))
            pab = s3.get_public_access_block(Bucket=b)["PublicAccessBlockConfiguration"]
            if not all(pab.values()):
                faults.append("bucket %s public access block is %s" % (b, pab))
            try:
                s3.get_bucket_encryption(Bucket=b)
            except s3.exceptions.ClientError:
                faults.append("bucket %s has no default encryption" % b)
            t = bucket_tags(s3, b)
            if t.get("kiln:address") != "aws_s3_bucket." + parts[0]:
                faults.append("bucket %s tags %s" % (b, t))
        elif kind == "sg-ingress":
            want = sorted(rest.split(",")) if rest else []
            gs = ec2.describe_security_groups(Filters=[
                {"Name": "tag:kiln:cluster", "Values": [cluster]},
                {"Name": "tag:kiln:workspace", "Values": [ws]}])["SecurityGroups"]
            if len(gs) != 1:
                faults.append("%d security groups, want 1" % len(gs))
                continue
            g = gs[0]
            got, self_rule = [], False
            for p in g["IpPermissions"]:
                if p["IpProtocol"] == "-1" and any(u["GroupId"] == g["GroupId"] for u in p["UserIdGroupPairs"]):
                    self_rule = True
                for r in p.get("IpRanges", []):
                    got.append("%s/%s" % (p.get("FromPort"), r["CidrIp"]))
            if not self_rule:
                faults.append("security group %s does not admit itself" % g["GroupId"])
            if sorted(got) != want:
                faults.append("ingress %s, want %s" % (sorted(got), want))
        elif kind == "role":
            name = prefix + parts[0]
            r = iam.get_role(RoleName=name)["Role"]
            if r["Path"] != "/kiln/%s/%s/" % (cluster, ws):
                faults.append("role %s path %s" % (name, r["Path"]))
            # kiln's node statements (health, GPU metrics) are checked exactly there.
            stmts = without_node_health(name, role_policy(iam, name), faults,
                                        role_runs_gpus(c["ec2"], name))
            acts = {}
            for s in stmts:
                if isinstance(s["Resource"], list):
                    continue  # an allow: statement, as written (role-allow= checks them)
                a = s["Action"] if isinstance(s["Action"], list) else [s["Action"]]
                if "*" in a or s["Resource"] == "*" or any(x.endswith(":*") for x in a):
                    faults.append("role %s policy has a wildcard: %s" % (name, s))
                acts.setdefault(s["Resource"], set()).update(a)
            for p in parts[1:]:
                k, _, val = p.partition("=")
                for store in filter(None, val.split("+")):
                    objs = acts.get("arn:aws:s3:::%s%s/*" % (prefix, store), set())
                    if "s3:GetObject" not in objs:
                        faults.append("role %s cannot read %s" % (name, store))
                    if (k == "write") != ("s3:PutObject" in objs):
                        faults.append("role %s write on %s is %s" % (name, store, "s3:PutObject" in objs))
                    if "s3:ListBucket" not in acts.get("arn:aws:s3:::%s%s" % (prefix, store), set()):
                        faults.append("role %s cannot list %s" % (name, store))
            prof = iam.get_instance_profile(InstanceProfileName=name)["InstanceProfile"]
            if [x["RoleName"] for x in prof["Roles"]] != [name]:
                faults.append("instance profile %s holds %s" % (name, prof["Roles"]))
        elif kind == "role-allow":
            # role-allow=NAME=JSON: JSON lists [actions, resources] of the role's allow
            # statements, which follow every store statement.
            name, _, want = rest.partition("=")
            name = prefix + name
            stmts = without_node_health(name, role_policy(iam, name), faults,
                                        role_runs_gpus(c["ec2"], name))
            # kiln's own statements for the Slurm parameters are neither the
            # stores' nor the spec's allow entries.
            kinds = [isinstance(s["Resource"], list) for s in stmts
                     if s.get("Sid") not in ("KilnSsmRead", "KilnSlurmFind")]
            if kinds != sorted(kinds):
                faults.append("role %s: a store statement follows an allow statement" % name)
            got = sorted([sorted(s["Action"]), sorted(s["Resource"])]
                         for s in stmts if isinstance(s["Resource"], list)
                         and s["Effect"] == "Allow")
            want = sorted([sorted(a), sorted(r)] for a, r in json.loads(want))
            if got != want:
                faults.append("role %s allow statements %s, want %s" % (name, got, want))
        elif kind == "zone":
            # zone=Z: every zone-bound thing of the workspace is in Z (instances and
            # their subnets, the placement group's instances, FSx file systems' subnets,
            # EFS mount targets, every network interface in its VPC), none elsewhere;
            # zone=Z:no-storage: and no FSx file system or EFS mount target was made.
            zone = parts[0]
            scoped = [{"Name": "tag:kiln:cluster", "Values": [cluster]},
                      {"Name": "tag:kiln:workspace", "Values": [ws]}]
            subnet_zone = {sn["SubnetId"]: sn["AvailabilityZone"]
                           for sn in ec2.describe_subnets()["Subnets"]}
            alive = [i for r in ec2.describe_instances(Filters=scoped + [
                {"Name": "instance-state-name", "Values": ["pending", "running"]}])["Reservations"]
                for i in r["Instances"]]
            if not alive:
                faults.append("no instances of %s/%s are alive" % (cluster, ws))
            for i in alive:
                where = (i["Placement"]["AvailabilityZone"], subnet_zone.get(i.get("SubnetId")))
                if where != (zone, zone):
                    faults.append("%s (%s%s) is in %s, subnet in %s, want %s" % (
                        i["InstanceId"], tags_of(i.get("Tags")).get("kiln:address"),
                        ", placement group %s" % i["Placement"]["GroupName"]
                        if i["Placement"].get("GroupName") else "", where[0], where[1], zone))
            fss = [f for f in c["fsx"].describe_file_systems()["FileSystems"]
                   if tags_of(f.get("Tags")).get("kiln:cluster") == cluster
                   and tags_of(f.get("Tags")).get("kiln:workspace") == ws]
            mts = [m for f in c["efs"].describe_file_systems()["FileSystems"]
                   if tags_of(f.get("Tags")).get("kiln:cluster") == cluster
                   and tags_of(f.get("Tags")).get("kiln:workspace") == ws
                   for m in c["efs"].describe_mount_targets(FileSystemId=f["FileSystemId"])["MountTargets"]]
            if "no-storage" in parts[1:] and (fss or mts):
                faults.append("zone-bound storage was made: %s %s" % (
                    [f["FileSystemId"] for f in fss], [m["MountTargetId"] for m in mts]))
            if "no-storage" not in parts[1:] and not (fss and mts):
                faults.append("want an FSx file system and an EFS mount target, found %d and %d"
                              % (len(fss), len(mts)))
            for f in fss:
                zs = sorted({subnet_zone.get(x) for x in f.get("SubnetIds", [])})
                if zs != [zone]:
                    faults.append("FSx %s is in %s, want %s" % (f["FileSystemId"], zs, zone))
            for m in mts:
                if subnet_zone.get(m["SubnetId"]) != zone:
                    faults.append("EFS mount target %s is in %s, want %s" % (
                        m["MountTargetId"], subnet_zone.get(m["SubnetId"]), zone))
            vpcs = [v["VpcId"] for v in ec2.describe_vpcs(Filters=scoped)["Vpcs"]]
            left = collections.Counter(
                n["AvailabilityZone"] for n in (ec2.describe_network_interfaces(
                    Filters=[{"Name": "vpc-id", "Values": vpcs}])["NetworkInterfaces"]
                    if vpcs else []) if n["AvailabilityZone"] != zone)
            for z, n in sorted(left.items()):
                faults.append("%d network interfaces are left in %s" % (n, z))
        elif kind == "role-exact":
            # role-exact=NAME=JSON: every statement of the role's policy, as
            # [[ACTIONS], RESOURCE], nothing more; a RESOURCE of "bucket:S" or
            # "objects:S" is store S's bucket or its objects, "efs:S" the ARN of
            # the EFS file system tagged aws_efs.S (as EFS reports it).
            name, _, want = rest.partition("=")
            name = prefix + name
            doc = role_policy(iam, name)
            efs = {tags_of(f.get("Tags")).get("kiln:address"): f["FileSystemArn"]
                   for f in c["efs"].describe_file_systems()["FileSystems"]
                   if tags_of(f.get("Tags")).get("kiln:cluster") == cluster
                   and tags_of(f.get("Tags")).get("kiln:workspace") == ws}

            def where(r):
                if not isinstance(r, str):
                    return r  # a list, as an allow statement's Resource is written
                k, _, store = r.partition(":")
                if k == "bucket":
                    return "arn:aws:s3:::%s%s" % (prefix, store)
                if k == "objects":
                    return "arn:aws:s3:::%s%s/*" % (prefix, store)
                if k == "efs":
                    return efs.get("aws_efs." + store, "(no file system aws_efs.%s)" % store)
                return r
            stmts = without_node_health(name, doc, faults, role_runs_gpus(c["ec2"], name))
            got = sorted([sorted(st["Action"]), st["Resource"]] for st in stmts)
            want = sorted([sorted(a), where(r)] for a, r in json.loads(want))
            if got != want:
                faults.append("role %s statements %s, want %s" % (name, got, want))
            if any(st["Effect"] != "Allow" or st["Resource"] == "*" for st in stmts):
                faults.append("role %s has a statement that is not an Allow on exact ARNs" % name)
        else:
            faults.append("unknown check %s" % check)
    return faults, "aws: %d checks hold" % len(checks)


def drift(cluster, ws, what):
    c = clients()
    prefix = "kiln-%s-%s-" % (cluster, ws)
    if what.startswith("versioning-off="):
        c["s3"].put_bucket_versioning(Bucket=prefix + what.split("=", 1)[1],
                                      VersioningConfiguration={"Status": "Suspended"})
    elif what.startswith("ingress-add="):
        port, cidr = what.split("=", 1)[1].split("/", 1)
        g = c["ec2"].describe_security_groups(Filters=[
            {"Name": "tag:kiln:cluster", "Values": [cluster]},
            {"Name": "tag:kiln:workspace", "Values": [ws]}])["SecurityGroups"][0]
        c["ec2"].authorize_security_group_ingress(GroupId=g["GroupId"], IpPermissions=[
            {"IpProtocol": "tcp", "FromPort": int(port), "ToPort": int(port),
             "IpRanges": [{"CidrIp": cidr}]}])
    elif what.startswith("policy-add="):
        # A statement added to a role's inline policy by hand.
        name = prefix + what.split("=", 1)[1]
        doc = role_policy(c["iam"], name)
        doc["Statement"].append({"Effect": "Allow", "Action": "sts:GetCallerIdentity",
                                 "Resource": "*"})
        c["iam"].put_role_policy(RoleName=name, PolicyName="kiln", PolicyDocument=json.dumps(doc))
    else:
        return ["unknown drift %s" % what], ""
    return [], "aws: drift made: %s" % what


def left(cluster, ws):
    mine, _ = live(clients(), cluster, ws)
    for addr, id_, _ in sorted(mine):
        print(addr, id_)
    return [], None


def nodes(state_path, cluster, ws, group, with_health=True):
    with open(state_path) as f:
        state = json.load(f)
    res = state["resources"].get("aws_instance_group." + group)
    if not res:
        return ["aws_instance_group.%s is not recorded" % group], None
    got = res["attrs"].get("nodes")
    insts = instances(clients()["ec2"], cluster, ws, group)
    insts.sort(key=lambda i: (i["LaunchTime"], i["InstanceId"]))
    want = []
    for n, i in enumerate(insts):
        report = tags_of(i.get("Tags")).get("kiln:health")
        health = None
        if report is not None:
            word = report.split(":", 1)[0]
            health = word if word in ("healthy", "unhealthy") else "unhealthy"
        want.append({
            "id": i["InstanceId"], "index": n,
            "zone": i["Placement"]["AvailabilityZone"],
            "private_ip": i.get("PrivateIpAddress"), "public_ip": i.get("PublicIpAddress"),
            "state": i["State"]["Name"], "health": health})
    faults = []
    if not isinstance(got, list):
        return ["aws_instance_group.%s records no nodes array: %r" % (group, got)], None
    keys = ("id", "index", "zone", "private_ip", "public_ip", "state", "health")
    if not with_health:
        keys = keys[:-1]
        want = [{k: n[k] for k in keys} for n in want]
    trimmed = [{k: n.get(k) for k in keys} for n in got]
    if trimmed != want:
        faults.append("recorded nodes %s, DescribeInstances says %s" % (
            json.dumps(trimmed), json.dumps(want)))
    for n in got:
        if not n.get("private_ip"):
            faults.append("node %s has no private address" % n.get("id"))
    return faults, "nodes: %d" % len(got)


def user(name, policy_path, drop=None):
    with open(policy_path) as f:
        doc = json.load(f)
    if isinstance(doc["Statement"], dict):
        doc["Statement"] = [doc["Statement"]]
    if drop:
        for st in doc["Statement"]:
            acts = st["Action"] if isinstance(st["Action"], list) else [st["Action"]]
            st["Action"] = [a for a in acts if a != drop]
        doc["Statement"] = [st for st in doc["Statement"] if st["Action"]]
    iam = clients()["iam"]
    iam.create_user(UserName=name)
    key = iam.create_access_key(UserName=name)["AccessKey"]
    iam.put_user_policy(UserName=name, PolicyName="kiln", PolicyDocument=json.dumps(doc))
    print("AWS_ACCESS_KEY_ID=%s AWS_SECRET_ACCESS_KEY=%s" % (key["AccessKeyId"], key["SecretAccessKey"]))
    return [], None


def user_data_doc(cluster, ws, group):
    """The user data EC2 holds for the oldest running node of a group, decoded, on stdout."""
    import base64
    ec2 = clients()["ec2"]
    addr = "aws_instance_group." + group
    insts = [i for r in ec2.describe_instances()["Reservations"] for i in r["Instances"]
             if i["State"]["Name"] in ("pending", "running")
             and tags_of(i.get("Tags")).get("kiln:cluster") == cluster
             and tags_of(i.get("Tags")).get("kiln:workspace") == ws
             and tags_of(i.get("Tags")).get("kiln:address") == addr]
    if not insts:
        return ["no running node of %s in %s/%s" % (addr, cluster, ws)], None
    oldest = min(insts, key=lambda i: (i["LaunchTime"], i["InstanceId"]))
    ud = ec2.describe_instance_attribute(InstanceId=oldest["InstanceId"], Attribute="userData")
    value = ud.get("UserData", {}).get("Value")
    if not value:
        return ["%s has no user data" % oldest["InstanceId"]], None
    sys.stdout.write(base64.b64decode(value).decode())
    return [], None


def main():
    cmd = sys.argv[1]
    if cmd == "agree":
        faults, ok = agree(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == "expect":
        faults, ok = expect(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif cmd == "drift":
        faults, ok = drift(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == "left":
        faults, ok = left(sys.argv[2], sys.argv[3])
    elif cmd == "nodes":
        faults, ok = nodes(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5],
                           sys.argv[6:] != ["no-health"])
    elif cmd == "user-data":
        faults, ok = user_data_doc(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == "user":
        faults, ok = user(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for f in faults:
        print("aws: " + f)
    if not faults and ok:
        print(ok)
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())
