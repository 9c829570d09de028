# report_aws.sh - kiln status's utilization on aws against moto: the
# diagnoses from synthetic series that boto3 publishes into moto's
# CloudWatch as the CloudWatch agent (CWAgent, by InstanceId) and FSx
# (AWS/FSx DataReadBytes) would, and GetMetricData batched: one call for 2
# nodes and one for 64. Sourced by run.sh after lib.sh and aws.sh
# (aws_find_python); called by report.sh's report_tests.

# rp_put WORKSPACE END UTILS [LUSTRE_PERCENT]: per-minute samples for the 10
# minutes before END, each node of the workspace's trainers (in launch order)
# taking the next of UTILS, and its Lustre stores reading at LUSTRE_PERCENT of
# what 250 MB/s/TiB provisions.
rp_put() {
	"$AWS_PY" - "$@" <<'EOF'
import boto3, datetime, sys
ws, end, utils = sys.argv[1], sys.argv[2], [float(u) for u in sys.argv[3].split(",") if u]
load = float(sys.argv[4]) if len(sys.argv) > 4 else None
kw = dict(region_name="us-east-1")
ec2, cw, fsx = boto3.client("ec2", **kw), boto3.client("cloudwatch", **kw), boto3.client("fsx", **kw)
f = [{"Name": "tag:kiln:workspace", "Values": [ws]},
     {"Name": "tag:kiln:address", "Values": ["aws_instance_group.trainers"]},
     {"Name": "instance-state-name", "Values": ["running", "pending"]}]
inst = sorted((i["LaunchTime"], i["InstanceId"])
              for r in ec2.describe_instances(Filters=f)["Reservations"] for i in r["Instances"])
end = datetime.datetime.fromisoformat(end.replace("Z", "+00:00"))
for k in range(1, 11):
    t = end - datetime.timedelta(minutes=k)
    data = [{"MetricName": "nvidia_smi_utilization_gpu",
             "Dimensions": [{"Name": "InstanceId", "Value": iid}],
             "Timestamp": t, "Value": utils[n % len(utils)], "Unit": "Percent"}
            for n, (_, iid) in enumerate(inst)]
    for i in range(0, len(data), 20):
        cw.put_metric_data(Namespace="CWAgent", MetricData=data[i:i + 20])
    if load is None:
        continue
    for fs in fsx.describe_file_systems()["FileSystems"]:
        tags = {x["Key"]: x["Value"] for x in fs.get("Tags", [])}
        if tags.get("kiln:workspace") != ws:
            continue
        prov = 250 * fs["StorageCapacity"] / 1024 * 1e6  # bytes a second provisioned
        cw.put_metric_data(Namespace="AWS/FSx", MetricData=[{
            "MetricName": "DataReadBytes",
            "Dimensions": [{"Name": "FileSystemId", "Value": fs["FileSystemId"]}],
            "Timestamp": t, "Value": prov * load / 100 * 60, "Unit": "Bytes"}])
EOF
}

report_moto() {
	if ! AWS_PY=$(aws_find_python); then
		fail "report: aws: a python3 with moto 5 and boto3 is installed"
		return 0
	fi
	# aws_moto_up sets PYTHON to it.
	rp_moto=$E2E_TMP/moto-report
	aws_moto_up "report: aws" "$rp_moto" || return 0
	KILN_POLL_MS=100
	export KILN_POLL_MS
	rp_dir=$(mktemp -d "$E2E_TMP/report.XXXXXX")
	cd "$rp_dir" || return
	cp "$E2E_ROOT/tests/e2e/specs/aws-cluster.yaml" kiln.yaml
	sed 's/^  checkpoints: .*/&\n  scratch:     {tier: lustre, capacity_gb: 1200, throughput_per_tib: 250, deletion: delete}/' \
		kiln.yaml >fs.yaml
	sed 's/count: 2/count: 64/' kiln.yaml >big.yaml
	"$KILN" up -w m --auto-approve >/dev/null 2>&1
	"$KILN" up fs.yaml -w fs --auto-approve >/dev/null 2>&1
	"$KILN" up big.yaml -w big --auto-approve >/dev/null 2>&1

	check "report: aws: no series published: no data, naming the agent" 0 \
		--out-has "  trainers         no data: no CWAgent nvidia_smi_utilization_gpu by InstanceId in CloudWatch for its nodes: the image has no CloudWatch agent (a node's /var/log/kiln-boot.log says so), or it is not publishing." \
		-- env KILN_NOW=2026-11-30T00:30:00Z "$KILN" status -w m
	rp_put m 2026-11-30T01:00:00Z 95,90
	check "report: aws: busy" 0 \
		--out-has "  trainers         busy: GPU utilization 92.5% (mean) over 2 nodes; GPU 92.5% mean, 90.0% to 95.0%." \
		-- env KILN_NOW=2026-11-30T01:00:00Z "$KILN" status -w m
	rp_put m 2026-11-30T02:00:00Z 3,4
	check "report: aws: idle" 0 \
		--out-has "  trainers         idle: every node under 10% GPU utilization for the last 15m (highest 4.0%, " \
		-- env KILN_NOW=2026-11-30T02:00:00Z "$KILN" status -w m
	rp_put m 2026-11-30T03:00:00Z 95,3
	check "report: aws: imbalanced" 0 \
		--out-has "  trainers         imbalanced: 1 of 2 nodes at 50% or more, 1 under 10% (" \
		--out-has "; GPU 49.0% mean, 3.0% to 95.0%." \
		-- env KILN_NOW=2026-11-30T03:00:00Z "$KILN" status -w m
	# 250 MB/s/TiB × 1200 GB / 1024 = 292.97 MB/s provisioned; 95% of it is 278.3.
	rp_put fs 2026-11-30T04:00:00Z 20,30 95
	check "report: aws: storage-bound, from AWS/FSx DataReadBytes, with the priced fix" 0 \
		--out-has "  trainers         storage-bound: GPU utilization 25.0% (mean) while aws_fsx_lustre.scratch moves 278.3 of the 293.0 MB/s the spec provisioned (95%)" \
		--out-has "fix: raise storage.scratch.throughput_per_tib from 250 to 500 (+\$" \
		-- env KILN_NOW=2026-11-30T04:00:00Z "$KILN" status fs.yaml -w fs
	rp_put big 2026-11-30T01:00:00Z 95
	KILN_NOW=2026-11-30T01:00:00Z "$KILN" status -w m --json >two.json 2>&1
	KILN_NOW=2026-11-30T01:00:00Z "$KILN" status big.yaml -w big --json >many.json 2>&1
	assert "report: aws: GetMetricData is batched: one call for 2 nodes and one for 64" python3 -c '
import json
two, many = (json.load(open(f))["utilization"] for f in ("two.json", "many.json"))
assert two["groups"][0]["nodes"] == 2 and many["groups"][0]["nodes"] == 64, (two, many)
assert many["groups"][0]["reporting"] == 64 and many["groups"][0]["diagnosis"] == "busy", many["groups"][0]
assert two["calls"] == 1 and many["calls"] == 1, (two["calls"], many["calls"])
'
	aws_moto_down "$rp_moto"
}
