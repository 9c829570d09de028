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

# rp_ce DAY=CLUSTER:SERVICE:USD,... : Cost Explorer results queued in moto for
# the next GetCostAndUsage (moto answers what /moto-api/static/ce/
# cost-and-usage-results holds, in order, and the same answer again to the
# same parameters: each check asks for another window, by KILN_NOW), grouped
# by kiln:cluster and SERVICE as kiln asks; and the cost-allocation tags' status.
rp_ce() { # TAGS_JSON DAY=ROWS...
	"$AWS_PY" - "$@" <<'EOF'
import json, os, sys, urllib.request
ep = os.environ["AWS_ENDPOINT_URL"]
days = []
for arg in sys.argv[2:]:
    day, rows = arg.split("=", 1)
    y, m, d = map(int, day.split("-"))
    import datetime
    nxt = (datetime.date(y, m, d) + datetime.timedelta(days=1)).isoformat()
    groups = []
    for r in rows.split(","):
        cluster, service, usd = r.split(":")
        groups.append({"Keys": ["kiln:cluster$" + cluster, service],
                       "Metrics": {"UnblendedCost": {"Amount": usd, "Unit": "USD"}}})
    days.append({"TimePeriod": {"Start": day, "End": nxt}, "Groups": groups, "Estimated": False})
def post(path, body):
    urllib.request.urlopen(urllib.request.Request(ep + path, data=json.dumps(body).encode(),
        method="POST", headers={"Content-Type": "application/json"})).read()
post("/moto-api/static/ce/cost-and-usage-results", {"results": [{"ResultsByTime": days}]})
post("/_kiln/ce-tags", json.loads(sys.argv[1]))
EOF
}

# kiln report --actual against moto's Cost Explorer: a sim lifetime of the
# quickstart cluster (16 GPUs, $196.6838 an hour from 2026-12-01T12:00Z to
# 2026-12-02T06:00Z: 12 h and 6 h), the bill queued in moto, the figures and
# the warning when kiln:workspace is not an activated cost-allocation tag.
report_actual_moto() {
	if ! AWS_PY=$(aws_find_python); then
		fail "report: --actual: a python3 with moto 5 and boto3 is installed"
		return 0
	fi
	rp_moto=$E2E_TMP/moto-actual
	aws_moto_up "report: --actual" "$rp_moto" || return 0
	rp_dir=$(mktemp -d "$E2E_TMP/report.XXXXXX")
	cd "$rp_dir" || return
	rp_apply 2026-12-01T12:00:00Z 2
	KILN_NOW=2026-12-02T06:00:00Z "$KILN" destroy --auto-approve >/dev/null 2>&1
	rp_ce '{"kiln:cluster": "Active", "kiln:workspace": "Inactive"}' \
		"2026-12-01=quickstart:Amazon Elastic Compute Cloud - Compute:2400.50,quickstart:EC2 - Other:12.25,:Amazon Simple Storage Service:3" \
		"2026-12-02=quickstart:Amazon Elastic Compute Cloud - Compute:1100"
	check "report: --actual: the bill beside the estimate, the variance by day and kind with the services, and the tag not activated with its fix" 0 \
		--out-has "quickstart           2026-12-01 all           2360.21      2412.75       +52.54" \
		--out-has "                                compute       2360.21      2400.50       +40.29" \
		--out-has "                                storage          0.00        12.25       +12.25" \
		--out-has "                                                             12.25  EC2 - Other" \
		--out-has "quickstart           2026-12-02 all           1180.10      1100.00       -80.10" \
		--out-has "quickstart           total      all           3540.31      3512.75       -27.56" \
		--out-has "billed without a kiln:cluster tag value: 3.00" \
		--err "kiln: report: warning: the tag kiln:workspace is not activated as a cost-allocation tag, so the bill cannot be grouped by it; activate them as cost-allocation tags: aws ce update-cost-allocation-tags-status --cost-allocation-tags-status TagKey=kiln:cluster,Status=Active TagKey=kiln:workspace,Status=Active (or Billing console, Cost allocation tags); costs are grouped by them from then on, not before" \
		-- env KILN_NOW=2026-12-03T00:00:00Z "$KILN" report --actual
	rp_ce '{"kiln:cluster": "Active", "kiln:workspace": "Active"}' \
		"2026-12-01=quickstart:Amazon Elastic Compute Cloud - Compute:2360.2056" \
		"2026-12-02=quickstart:Amazon Elastic Compute Cloud - Compute:1180.1028"
	KILN_NOW=2026-12-04T00:00:00Z "$KILN" report --actual --format json >actual.json 2>actual.err
	assert "report: --actual --format json: billed equals the estimate to the cent, no warning with both tags active" python3 -c '
import json, sys
d = json.load(open("actual.json"))
assert open("actual.err").read() == "", open("actual.err").read()
days = {x["date"]: x for x in d["days"]}
assert abs(days["2026-12-01"]["estimate"] - 2360.2056) < 1e-4, days
assert abs(days["2026-12-01"]["variance"]) < 1e-4 and abs(days["2026-12-02"]["variance"]) < 1e-4, days
assert d["tags"] == {"kiln:cluster": "Active", "kiln:workspace": "Active"}, d["tags"]
assert (d["from"], d["to"]) == ("2026-12-01", "2026-12-05"), d
'
	rp_ce '{}' "2026-12-01=quickstart:Amazon Elastic Compute Cloud - Compute:1"
	check "report: --actual: tags never billed are named as not yet known" 0 \
		--err-has "kiln: report: warning: the tag kiln:cluster is not yet known (never billed) as a cost-allocation tag" \
		-- env KILN_NOW=2026-12-05T00:00:00Z "$KILN" report --actual
	check "report: --actual: --format csv is refused" 1 \
		--err "kiln: report: --actual has no --format csv; use --format text or json" \
		-- "$KILN" report --actual --format csv
	check "report: --region without --actual is refused" 1 \
		--err "kiln: report: --region only applies to --actual; add --actual" \
		-- "$KILN" report --region us-east-1
	check "report: --actual on the sim provider: it has no bill" 1 \
		--err "kiln: report: the sim provider has no bill to read
  hint: --actual reads a real cloud's billing; drop it for the ledger's estimate alone" \
		-- "$KILN" report --actual --provider sim
	check "report: --actual --provider names one kiln knows" 1 \
		--err "kiln: report: 'gcp' is not a provider kiln knows; --provider aws or --provider sim" \
		-- "$KILN" report --actual --provider gcp
	"$KILN" iam-policy "$E2E_ROOT/tests/e2e/specs/aws-cluster.yaml" >plain.json 2>/dev/null
	"$KILN" iam-policy "$E2E_ROOT/tests/e2e/specs/aws-cluster.yaml" --report-actual >actual-policy.json 2>/dev/null
	assert "report: iam-policy --report-actual adds exactly the two Cost Explorer actions, on \"*\"; without it, none" python3 -c '
import json
def actions(f):
    out = {}
    for st in json.load(open(f))["Statement"]:
        for a in ([st["Action"]] if isinstance(st["Action"], str) else st["Action"]):
            out.setdefault(a, []).append(st["Resource"])
    return out
plain, actual = actions("plain.json"), actions("actual-policy.json")
extra = set(actual) - set(plain)
assert extra == {"ce:GetCostAndUsage", "ce:ListCostAllocationTags"}, extra
assert not any(a.startswith("ce:") for a in plain), plain
assert all(actual[a] == ["*"] for a in extra), {a: actual[a] for a in extra}
assert all(actual[a] == plain[a] for a in plain), "the rest of the policy changed"
'
	aws_moto_down "$rp_moto"
}
