#!/usr/bin/env python3
"""slurm_inspect.py - what kiln made for `scheduler: slurm`, seen with boto3
(an independent client) against moto; AWS_ENDPOINT_URL names the server.

  slurm_inspect.py params CLUSTER WS DIR
      read the workspace's three parameters into DIR: munge-key (the
      SecureString, decrypted), slurm.conf and gres.conf (Strings); fails
      unless each has the type kiln says and kiln's tags
  slurm_inspect.py ssm-resources CLUSTER WS
      each of the workspace's roles and the SSM resources its inline policy
      names, one "ROLE ARN,ARN..." line per role
  slurm_inspect.py kms-key ALIAS
      a symmetric KMS key with ALIAS (what a user makes for scheduler.kms_key);
      prints its key ARN
  slurm_inspect.py kms-use CLUSTER WS
      the KeyId SSM encrypts the munge key with (DescribeParameters), then
      each role's KilnSlurmKey statement, "ROLE JSON" (compact, sorted keys)
  slurm_inspect.py user-data CLUSTER WS
      the decoded user data of each of the workspace's instances
  slurm_inspect.py report-healthy CLUSTER WS GROUP N
      N of GROUP's instances put kiln:health "healthy: ..." on themselves, as
      a node does at the end of its boot (contract 2 of issue 14)
  slurm_inspect.py scheduler-script CLUSTER WS GROUP OUT
      the scheduler part of the boot script in the user data GROUP's first
      instance was launched with (cloud-config write_files), into OUT
Exit 0 when every check holds; otherwise the faults are printed, exit 1.
"""
import base64
import json
import os
import sys

import boto3
import botocore.config


def client(service):
    return boto3.client(
        service,
        endpoint_url=os.environ["AWS_ENDPOINT_URL"],
        region_name=os.environ.get("AWS_REGION", "us-east-1"),
        aws_access_key_id=os.environ.get("AWS_ACCESS_KEY_ID", "testing"),
        aws_secret_access_key=os.environ.get("AWS_SECRET_ACCESS_KEY", "testing"),
        config=botocore.config.Config(retries={"total_max_attempts": 1}),
    )


def params(cluster, ws, out):
    ssm = client("ssm")
    faults = []
    want = {"munge-key": "SecureString", "slurm.conf": "String", "gres.conf": "String"}
    for leaf, kind in want.items():
        name = f"/kiln/{cluster}/{ws}/slurm/{leaf}"
        p = ssm.get_parameter(Name=name, WithDecryption=True)["Parameter"]
        if p["Type"] != kind:
            faults.append(f"{name} is a {p['Type']}, not a {kind}")
        tags = {t["Key"]: t["Value"] for t in
                ssm.list_tags_for_resource(ResourceType="Parameter", ResourceId=name)["TagList"]}
        if tags.get("kiln:cluster") != cluster or tags.get("kiln:workspace") != ws:
            faults.append(f"{name} lacks kiln's tags: {tags}")
        with open(os.path.join(out, leaf), "w") as f:
            f.write(p["Value"])
    return faults


def ssm_resources(cluster, ws):
    iam = client("iam")
    roles = iam.list_roles(PathPrefix=f"/kiln/{cluster}/{ws}/")["Roles"]
    for role in sorted(roles, key=lambda r: r["RoleName"]):
        doc = iam.get_role_policy(RoleName=role["RoleName"], PolicyName="kiln")["PolicyDocument"]
        if isinstance(doc, str):
            doc = json.loads(doc)
        found = []
        for st in doc["Statement"]:
            acts = st["Action"] if isinstance(st["Action"], list) else [st["Action"]]
            res = st["Resource"] if isinstance(st["Resource"], list) else [st["Resource"]]
            if any(a.startswith("ssm:") for a in acts) or any(":ssm:" in r for r in res):
                found += res
        print(role["RoleName"], ",".join(sorted(found)))
    return []


def kms_key(alias):
    kms = client("kms")
    key = kms.create_key(Description="munge key of a kiln cluster")["KeyMetadata"]
    kms.create_alias(AliasName=alias, TargetKeyId=key["KeyId"])
    print(key["Arn"])
    return []


def kms_use(cluster, ws):
    ssm = client("ssm")
    name = f"/kiln/{cluster}/{ws}/slurm/munge-key"
    ps = ssm.describe_parameters(
        ParameterFilters=[{"Key": "Name", "Option": "Equals", "Values": [name]}])["Parameters"]
    if len(ps) != 1:
        return [f"no parameter {name}"]
    print("munge-key", ps[0].get("KeyId"))
    iam = client("iam")
    for role in sorted(iam.list_roles(PathPrefix=f"/kiln/{cluster}/{ws}/")["Roles"],
                       key=lambda r: r["RoleName"]):
        doc = iam.get_role_policy(RoleName=role["RoleName"], PolicyName="kiln")["PolicyDocument"]
        if isinstance(doc, str):
            doc = json.loads(doc)
        for st in doc["Statement"]:
            if st.get("Sid") == "KilnSlurmKey":
                print(role["RoleName"], json.dumps(st, sort_keys=True, separators=(",", ":")))
    return []


def user_data(cluster, ws):
    ec2 = client("ec2")
    filters = [{"Name": "tag:kiln:cluster", "Values": [cluster]},
               {"Name": "tag:kiln:workspace", "Values": [ws]}]
    for r in ec2.describe_instances(Filters=filters)["Reservations"]:
        for i in r["Instances"]:
            a = ec2.describe_instance_attribute(InstanceId=i["InstanceId"], Attribute="userData")
            v = a.get("UserData", {}).get("Value")
            print(f"# {i['InstanceId']}")
            if v:
                sys.stdout.write(base64.b64decode(v).decode("utf-8", "replace"))
                print()
    return []


def group_instances(ec2, cluster, ws, group):
    filters = [{"Name": "tag:kiln:cluster", "Values": [cluster]},
               {"Name": "tag:kiln:workspace", "Values": [ws]},
               {"Name": "tag:kiln:address", "Values": [f"aws_instance_group.{group}"]}]
    return sorted((i for r in ec2.describe_instances(Filters=filters)["Reservations"]
                   for i in r["Instances"]), key=lambda i: i["InstanceId"])


def report_healthy(cluster, ws, group, n):
    ec2 = client("ec2")
    insts = group_instances(ec2, cluster, ws, group)[:n]
    for i in insts:
        ec2.create_tags(Resources=[i["InstanceId"]],
                        Tags=[{"Key": "kiln:health", "Value": "healthy: 8/8 GPUs, 32/32 EFA"}])
    return [] if len(insts) == n else [f"only {len(insts)} instances"]


def scheduler_script(cluster, ws, group, out):
    import yaml
    ec2 = client("ec2")
    filters = [{"Name": "tag:kiln:cluster", "Values": [cluster]},
               {"Name": "tag:kiln:workspace", "Values": [ws]},
               {"Name": "tag:kiln:address", "Values": [f"aws_instance_group.{group}"]}]
    insts = [i for r in ec2.describe_instances(Filters=filters)["Reservations"]
             for i in r["Instances"]]
    if not insts:
        return [f"no instance of aws_instance_group.{group}"]
    a = ec2.describe_instance_attribute(InstanceId=insts[0]["InstanceId"], Attribute="userData")
    doc = base64.b64decode(a["UserData"]["Value"]).decode()
    if not doc.startswith("#cloud-config\n"):
        return ["the user data is not a #cloud-config document"]
    files = {f["path"]: f["content"] for f in yaml.safe_load(doc).get("write_files", [])}
    boot = files.get("/var/lib/kiln/boot.sh", "")
    lines = boot.split("\n")
    head = [i for i, l in enumerate(lines) if l.startswith("cat >/var/lib/kiln/scheduler.sh <<'")]
    if len(head) != 1:
        return ["the boot script writes no scheduler part"]
    end = lines[head[0]].split("<<'")[1].rstrip("'")
    body = lines[head[0] + 1:]
    if end not in body:
        return ["the scheduler part has no end"]
    with open(out, "w") as f:
        f.write("\n".join(body[:body.index(end)]) + "\n")
    return []


def main(argv):
    if len(argv) == 5 and argv[1] == "params":
        faults = params(argv[2], argv[3], argv[4])
    elif len(argv) == 4 and argv[1] == "ssm-resources":
        faults = ssm_resources(argv[2], argv[3])
    elif len(argv) == 6 and argv[1] == "report-healthy":
        faults = report_healthy(argv[2], argv[3], argv[4], int(argv[5]))
    elif len(argv) == 6 and argv[1] == "scheduler-script":
        faults = scheduler_script(argv[2], argv[3], argv[4], argv[5])
    elif len(argv) == 3 and argv[1] == "kms-key":
        faults = kms_key(argv[2])
    elif len(argv) == 4 and argv[1] == "kms-use":
        faults = kms_use(argv[2], argv[3])
    elif len(argv) == 4 and argv[1] == "user-data":
        faults = user_data(argv[2], argv[3])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for f in faults:
        print(f)
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
