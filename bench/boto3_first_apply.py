"""The fewest-call boto3 sequence that makes what kiln's first apply of
examples/llm-pretrain.yaml (2 nodes) makes, against moto's server with
kiln's extension: the yardstick bench.py times kiln's first apply against
(issue 18). One call per resource and setting, in dependency order, and a
poll of FSx and of its association every 0.1 s until AVAILABLE (moto's
extension answers CREATING to the first describe). Prints the wall time
and the calls made, as JSON. Usage: boto3_first_apply.py ENDPOINT
"""
import json
import sys
import time

import boto3

END = sys.argv[1]
KW = dict(endpoint_url=END, region_name="us-east-1", aws_access_key_id="AKIAKILNBENCH0000000",
          aws_secret_access_key="bench")
calls = 0


def c(client, op, **args):
    global calls
    calls += 1
    return getattr(client, op)(**args)


def main():
    ec2, iam, s3 = (boto3.client(s, **KW) for s in ("ec2", "iam", "s3"))
    fsx, efs = boto3.client("fsx", **KW), boto3.client("efs", **KW)
    t0 = time.perf_counter()
    vpc = c(ec2, "create_vpc", CidrBlock="10.42.0.0/16")["Vpc"]["VpcId"]
    subnets = [c(ec2, "create_subnet", VpcId=vpc, CidrBlock=f"10.42.{i}.0/24",
                 AvailabilityZone=z)["Subnet"]["SubnetId"]
               for i, z in enumerate(("us-east-1a", "us-east-1b"))]
    sg = c(ec2, "create_security_group", GroupName="b", Description="b", VpcId=vpc)["GroupId"]
    c(ec2, "authorize_security_group_ingress", GroupId=sg, IpPermissions=[
        {"IpProtocol": "tcp", "FromPort": 22, "ToPort": 22,
         "IpRanges": [{"CidrIp": "203.0.113.0/24"}]}])
    igw = c(ec2, "create_internet_gateway")["InternetGateway"]["InternetGatewayId"]
    c(ec2, "attach_internet_gateway", InternetGatewayId=igw, VpcId=vpc)
    rt = c(ec2, "describe_route_tables",
           Filters=[{"Name": "vpc-id", "Values": [vpc]}])["RouteTables"][0]["RouteTableId"]
    c(ec2, "create_route", RouteTableId=rt, DestinationCidrBlock="0.0.0.0/0", GatewayId=igw)
    c(ec2, "create_placement_group", GroupName="b-fabric", Strategy="cluster")
    for b in ("b-datasets", "b-checkpoints"):
        c(s3, "create_bucket", Bucket=b)
        c(s3, "put_bucket_versioning", Bucket=b, VersioningConfiguration={"Status": "Enabled"})
    c(s3, "put_bucket_lifecycle_configuration", Bucket="b-checkpoints", LifecycleConfiguration={
        "Rules": [{"ID": "n", "Status": "Enabled", "Filter": {"Prefix": ""},
                   "NoncurrentVersionExpiration": {"NoncurrentDays": 30}}]})
    fs = c(efs, "create_file_system", CreationToken="b-home", Encrypted=True)["FileSystemId"]
    trust = json.dumps({"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"},
        "Action": "sts:AssumeRole"}]})
    policy = json.dumps({"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::b-datasets/*"}]})
    for r in ("b-trainer", "b-login"):
        c(iam, "create_role", RoleName=r, AssumeRolePolicyDocument=trust)
        c(iam, "put_role_policy", RoleName=r, PolicyName="p", PolicyDocument=policy)
        c(iam, "create_instance_profile", InstanceProfileName=r)
        c(iam, "add_role_to_instance_profile", InstanceProfileName=r, RoleName=r)
    for name, itype, n, pg in (("trainers", "p5.48xlarge", 2, True),
                               ("login", "m7i.xlarge", 1, False)):
        args = dict(ImageId="ami-1e749f67", InstanceType=itype, MinCount=n, MaxCount=n,
                    SubnetId=subnets[0], SecurityGroupIds=[sg],
                    IamInstanceProfile={"Name": "b-" + ("trainer" if pg else "login")})
        if pg:
            args["Placement"] = {"GroupName": "b-fabric"}
        c(ec2, "run_instances", **args)
    c(efs, "create_mount_target", FileSystemId=fs, SubnetId=subnets[0], SecurityGroups=[sg])
    lfs = c(fsx, "create_file_system", FileSystemType="LUSTRE", StorageCapacity=4800,
            SubnetIds=[subnets[0]], SecurityGroupIds=[sg],
            LustreConfiguration={"DeploymentType": "PERSISTENT_2",
                                 "PerUnitStorageThroughput": 250})["FileSystem"]["FileSystemId"]
    while c(fsx, "describe_file_systems",
            FileSystemIds=[lfs])["FileSystems"][0]["Lifecycle"] != "AVAILABLE":
        time.sleep(0.1)
    dra = c(fsx, "create_data_repository_association", FileSystemId=lfs,
            FileSystemPath="/datasets", DataRepositoryPath="s3://b-datasets")
    aid = dra["Association"]["AssociationId"]
    while c(fsx, "describe_data_repository_associations",
            AssociationIds=[aid])["Associations"][0]["Lifecycle"] != "AVAILABLE":
        time.sleep(0.1)
    print(json.dumps({"wall": time.perf_counter() - t0, "calls": calls}))


main()
