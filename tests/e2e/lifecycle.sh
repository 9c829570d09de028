# lifecycle.sh - end-to-end tests of ephemeral clusters on the sim provider:
# kiln up with a TTL, status, ttl show and extend, reap (kept, dry run,
# destroyed with retained stores kept, two reaps at once destroying once),
# down, and bad input with the exact messages; then up, status and reap on
# aws against moto (aws_find_python from aws.sh). Sourced by run.sh after
# lib.sh and aws.sh; $KILN is the binary under test. The clock is KILN_NOW.

lc_new_dir() { # SPEC: a fresh working directory holding SPEC as kiln.yaml
	lc_dir=$(mktemp -d "$E2E_TMP/lifecycle.XXXXXX")
	cd "$lc_dir" || exit 1
	cp "$E2E_ROOT/$1" kiln.yaml
}

# Teardown that tells the truth (issue 29): scratch Lustre goes with the cluster, what a
# destroy keeps is named with its cost and the command that deletes exactly it, in down's
# output and in status after; --include-retained deletes that one and nothing else.
lc_teardown() {
	lc_new_dir tests/e2e/specs/sim-teardown.yaml
	check "teardown: the plan says lustre scratch is deleted with the cluster, and why" 2 \
		--out-has "lustre is scratch: deleted with the cluster, as the spec gives no deletion: (write deletion: retain to keep it; its data reaches an object store only through an import the spec declares)" \
		--out-has "object stores are retained when the cluster is destroyed, as the spec gives no deletion: (kiln down names them and their cost)" \
		-- "$KILN" plan --detailed-exitcode
	check "teardown: up" 0 --out-has "Apply complete: 6 created" -- "$KILN" up --auto-approve
	check "teardown: down deletes the Lustre and the network, and names the bucket it keeps with its cost and the command" 0 \
		--out-has "Destroy complete: 0 created, 0 updated, 0 replaced, 5 deleted, 1 released (retained, not deleted)." \
		--out-has "Still billing (kept by deletion: retain):
  sim_bucket.checkpoints: \$0.00 an hour, \$0.00 a month and what it stores (not priced: kiln cannot see its size)
    delete it, data and all: kiln destroy --include-retained sim_bucket.checkpoints" \
		-- "$KILN" down --auto-approve
	check "teardown: only the bucket is left in the sim" 0 --out 1 -- python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" .kiln/sim count
	check "teardown: status after down names the retained bucket, its cost and the command" 0 \
		--out-has "Retained, still billing (a destroy kept them; not in the state): \$0.00 an hour, \$0.00 a month:" \
		--out-has "    delete it, data and all: kiln destroy --include-retained sim_bucket.checkpoints" \
		-- "$KILN" status
	check "teardown: --include-retained of something that is not there is refused" 1 --out "" \
		--err "kiln: destroy: --include-retained sim_bucket.checkpoint: no such resource in the spec, the state or the cloud
  hint: did you mean 'sim_bucket.checkpoints'? 'kiln graph' lists the addresses" \
		-- "$KILN" destroy --include-retained sim_bucket.checkpoint --auto-approve
	"$KILN" up --auto-approve >/dev/null 2>&1
	check "teardown: --include-retained of a store that is not retained is refused" 1 --out "" \
		--err "kiln: destroy: --include-retained sim_lustre.scratch: it is not a retained store
  hint: it names a store kept by deletion: retain; what is not retained is deleted by destroy without it" \
		-- "$KILN" destroy --include-retained sim_lustre.scratch --auto-approve
	"$KILN" down --auto-approve >/dev/null 2>&1
	check "teardown: destroy --include-retained deletes exactly the bucket" 0 \
		--out-has "sim_bucket.checkpoints: deleted [id bkt-" \
		--out-has "Destroy complete: 0 created, 0 updated, 0 replaced, 1 deleted." \
		-- "$KILN" destroy --include-retained sim_bucket.checkpoints --auto-approve
	check "teardown: nothing is left billing" 0 --out 0 -- python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" .kiln/sim count

	# A retained Lustre: named with its price; the network it stands in is kept for it.
	sed -i 's|mount: /fsx}|mount: /fsx, deletion: retain}|' kiln.yaml
	"$KILN" up --auto-approve >/dev/null 2>&1
	check "teardown: down names a retained Lustre with its hourly and monthly price" 0 \
		--out-has "  sim_lustre.scratch: \$0.35 an hour, \$252.00 a month
    delete it, data and all: kiln destroy --include-retained sim_lustre.scratch" \
		--out-has "  sim_network.main: \$0.00 an hour, \$0.00 a month
    kept for the retained stores that stand in it; it goes with them" \
		-- "$KILN" down --auto-approve
	check "teardown: status sums what is still billing" 0 \
		--out-has "Retained, still billing (a destroy kept them; not in the state): \$0.35 an hour, \$252.00 a month:" \
		--out-has "  sim_lustre.scratch (fs-" -- "$KILN" status
	cd "$E2E_ROOT" || exit 1
}

lc_py() { # PYTHON...: run a check over .state.json and .kiln/sim
	"$KILN" state pull >.state.json 2>/dev/null || echo '{"resources": {}}' >.state.json
	python3 -c "$1"
}

lifecycle_tests() {
	lc_saved_dir=$PWD
	export KILN_AUTHOR="Ann Ops <ann@example.com>"
	lc_new_dir examples/quickstart.yaml

	# --- bad input, before anything exists ---
	check "lifecycle: up --ttl with a bad duration names it" 1 --out "" \
		--err "kiln: up: --ttl '8x' is not a duration; write it like 8h, 90m or 2d" \
		-- "$KILN" up --ttl 8x --auto-approve
	check "lifecycle: up --ttl 0s is refused" 1 --out "" \
		--err "kiln: up: --ttl must be longer than 0s and at most 365d, not '0s'; drop --ttl (and ttl: in the spec) for a cluster that lives until \`kiln down\`" \
		-- "$KILN" up --ttl 0s --auto-approve
	check "lifecycle: reap on a missing state repository" 1 --out "" \
		--err "kiln: reap: there is no state repository at $lc_dir/nope
  hint: run reap where apply runs, or select the state repository with --state URL or KILN_STATE" \
		-- "$KILN" reap --state "$lc_dir/nope"
	check "lifecycle: status before any apply says so" 1 --out "" \
		--err "kiln: status: workspace 'default' has no cluster yet: nothing has been applied; bring it up with \`kiln up\`" \
		-- "$KILN" status
	assert "lifecycle: the refusals created nothing" sh -c '[ ! -e .kiln/sim ] && [ ! -e nope ]'

	# --- up with a TTL ---
	check "lifecycle: up --ttl 8h applies and prints the hourly cost and the TTL's end" 0 \
		--out-has "Apply complete: 5 created, 0 updated, 0 replaced, 0 deleted." \
		--out-has "Cost: \$196.68 an hour." \
		--out-has "Expires: 2026-11-30T08:00:00Z (in 8h0m); kiln reap destroys it after." \
		-- env KILN_NOW=2026-11-30T00:00:00Z "$KILN" up --ttl 8h --auto-approve
	assert "lifecycle: the state records the expiry, who set it and the spec" lc_py '
import json
x = json.load(open(".state.json"))["expiry"]
want = {"ttl_seconds": 28800, "expires": "2026-11-30T08:00:00Z", "set_by": "Ann Ops <ann@example.com>",
        "set_at": "2026-11-30T00:00:00Z", "set_how": "--ttl", "spec": "kiln.yaml",
        "spec_text": open("kiln.yaml").read()}
assert x == want, x
assert json.load(open(".state.json"))["created"] == "2026-11-30T00:00:00Z"'
	assert "lifecycle: every resource created carries the kiln:expires tag" lc_py '
import glob, json
docs = [json.load(open(p)) for p in glob.glob(".kiln/sim/r/*.json")]
assert len(docs) == 5, len(docs)
for d in docs:
    assert d["tags"]["kiln:expires"] == "2026-11-30T08:00:00Z", d["tags"]'
	check "lifecycle: a later apply keeps the expiry (the spec ttl is also 8h)" 0 \
		--out-has "Nothing to apply." \
		-- env KILN_NOW=2026-11-30T01:00:00Z "$KILN" apply --auto-approve
	check "lifecycle: ttl show after the later apply: unchanged" 0 \
		--out "Workspace 'default' expires 2026-11-30T08:00:00Z (in 7h0m).
Set by Ann Ops <ann@example.com> at 2026-11-30T00:00:00Z (--ttl)." \
		-- env KILN_NOW=2026-11-30T01:00:00Z "$KILN" ttl show

	# --- status ---
	lc_nodes=$(python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" .kiln/sim nodes sim_node_group.trainers |
		awk '{ printf "    %d %s  %s (simulated)  sim-1a  running  healthy: 8/8 GPUs\n", NR - 1, $1, $2 }')
	check "lifecycle: status shows groups, nodes, storage, cost so far and time left" 0 \
		--out "Cluster quickstart/default: 5 resources (state commit $(git -C .kiln/state.git rev-parse refs/heads/default | cut -c1-12)).
Node groups:
  trainers         2 of 2 nodes running, p5.48xlarge (sim_node_group.trainers)
$lc_nodes
Storage:
  checkpoints      sim_bucket.checkpoints, deletion: retain
Cost: \$196.68 an hour; \$295.03 so far, up 1h30m since 2026-11-30T00:00:00Z.
Expires: 2026-11-30T08:00:00Z (6h30m left).
Utilization (last 15m, simulated):
  trainers         no data: sim publishes no GPU metrics unless KILN_SIM_GPU_UTIL is set (kiln-sim(7))." \
		-- env KILN_NOW=2026-11-30T01:30:00Z "$KILN" status
	check "lifecycle: status --json" 0 \
		--out-has '"left_seconds": 23400' --out-has '"cost_so_far": 295.0257' \
		--out-has '"nodes": 2' --out-has '"pending_changes": 0' \
		-- env KILN_NOW=2026-11-30T01:30:00Z "$KILN" status --json --refresh=false

	# --- reap keeps what has not expired ---
	check "lifecycle: reap before the expiry keeps the workspace" 0 \
		--out "default: kept: expires in 7h0m (2026-11-30T08:00:00Z)" \
		-- env KILN_NOW=2026-11-30T01:00:00Z "$KILN" reap

	# --- ttl extend ---
	check "lifecycle: the nodes carry the expiry the apply set" 0 --out "2026-11-30T08:00:00Z" \
		-- python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" .kiln/sim tag sim_node_group.trainers kiln:expires
	check "lifecycle: ttl extend 4h pushes the expiry out from the current one, and onto the nodes' tag" 0 \
		--out "Workspace 'default' expires 2026-11-30T12:00:00Z (in 10h0m).
Set by Bo Lead <bo@example.com> at 2026-11-30T02:00:00Z (ttl extend).
The nodes' kiln:expires tag says 2026-11-30T12:00:00Z (5 resources asked)." \
		-- env KILN_NOW=2026-11-30T02:00:00Z KILN_AUTHOR="Bo Lead <bo@example.com>" \
		"$KILN" ttl extend 4h
	check "lifecycle: the node group's kiln:expires tag is the extended expiry (the nodes read it)" 0 \
		--out "2026-11-30T12:00:00Z" \
		-- python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" .kiln/sim tag sim_node_group.trainers kiln:expires
	check "lifecycle: the extension is a commit naming who made it" 0 \
		--out-has "ttl extend: +4h, expires 2026-11-30T12:00:00Z (quickstart/default)" \
		-- "$KILN" log
	check "lifecycle: reap after the old expiry keeps the extended workspace" 0 \
		--out "default: kept: expires in 3h0m (2026-11-30T12:00:00Z)" \
		-- env KILN_NOW=2026-11-30T09:00:00Z "$KILN" reap
	check "lifecycle: ttl extend with a bad duration" 1 --out "" \
		--err "kiln: ttl: '4y' is not a duration; write it like 4h, 90m or 2d (at most 365d)" \
		-- "$KILN" ttl extend 4y

	# --- reap --dry-run, then two reaps at once ---
	check "lifecycle: reap --dry-run names what it would destroy and changes nothing" 0 \
		--out "default: would reap: 5 resources (expired 1h0m ago)" \
		-- env KILN_NOW=2026-11-30T13:00:00Z "$KILN" reap --dry-run
	assert "lifecycle: the dry run left all 5 resources" \
		sh -c '[ "$(python3 "$1" .kiln/sim count)" = 5 ]' sh "$E2E_ROOT/tests/e2e/sim_inspect.py"
	(KILN_NOW=2026-11-30T13:00:00Z "$KILN" reap >reap1.out 2>reap1.err; echo $? >reap1.rc) &
	lc_p1=$!
	(KILN_NOW=2026-11-30T13:00:00Z "$KILN" reap >reap2.out 2>reap2.err; echo $? >reap2.rc) &
	lc_p2=$!
	wait "$lc_p1" "$lc_p2"
	assert "lifecycle: both concurrent reaps exit 0" \
		sh -c '[ "$(cat reap1.rc)" = 0 ] && [ "$(cat reap2.rc)" = 0 ] || { cat reap1.* reap2.*; exit 1; }'
	assert "lifecycle: exactly one of them reaped, keeping the retained store" \
		sh -c '[ "$(cat reap1.out reap2.out | grep -c "^default: reaped: 4 deleted, 1 retained (expired 1h0m ago)$")" = 1 ] || { cat reap1.* reap2.*; exit 1; }'
	assert "lifecycle: the other one skipped it (locked, already reaped, or no ttl left)" \
		sh -c 'cat reap1.out reap2.out | grep -Eq "^default: (skipped: locked by |skipped: already reaped|kept: no ttl)" || { cat reap1.* reap2.*; exit 1; }'
	assert "lifecycle: the log shows one destroy commit" \
		sh -c '[ "$("$1" log | grep -c " destroy: ")" = 1 ]' sh "$KILN"
	assert "lifecycle: nothing is left in the sim but the retained bucket" lc_py '
import glob, json
docs = [json.load(open(p)) for p in glob.glob(".kiln/sim/r/*.json")]
assert [d["tags"]["kiln:address"] for d in docs] == ["sim_bucket.checkpoints"], docs
st = json.load(open(".state.json"))
assert st["resources"] == {} and "expiry" not in st and "created" not in st, st'
	check "lifecycle: a reap afterwards finds no ttl" 0 --out "default: kept: no ttl" \
		-- env KILN_NOW=2026-11-30T14:00:00Z "$KILN" reap
	check "lifecycle: ttl extend without a TTL names the fix" 1 --out "" \
		--err "kiln: ttl: workspace 'default' has no TTL to extend
  hint: set one with \`kiln apply --ttl DURATION\` or \`ttl:\` in the spec" \
		-- "$KILN" ttl extend 1h

	# --- the spec's ttl, and --json ---
	check "lifecycle: up without --ttl takes the spec's ttl" 0 \
		--out-has "Expires: 2026-11-30T22:00:00Z (in 8h0m); kiln reap destroys it after." \
		-- env KILN_NOW=2026-11-30T14:00:00Z "$KILN" up --auto-approve
	check "lifecycle: reap --json, with approvals required (a TTL is not held back by them)" 0 \
		--out-has '"outcome": "reaped"' --out-has '"deleted": 4' --out-has '"retained": 1' \
		--out-has '"failed": 0' --out-has '"now": "2026-11-30T23:00:00Z"' \
		-- env KILN_NOW=2026-11-30T23:00:00Z KILN_REQUIRE_APPROVALS=2 "$KILN" reap --json

	# --- reap without the spec it needs ---
	check "lifecycle: up again" 0 --out-has "Apply complete:" \
		-- env KILN_NOW=2026-12-01T00:00:00Z "$KILN" up --auto-approve
	check "lifecycle: apply --ttl with nothing to change still records the new expiry" 0 \
		--out-has "Nothing to apply." \
		--out-has "records the new expiry." \
		--out-has "Expires: 2026-12-01T05:00:00Z (in 4h0m); kiln reap destroys it after." \
		-- env KILN_NOW=2026-12-01T01:00:00Z "$KILN" apply --ttl 4h --auto-approve
	check "lifecycle: ttl show --json has the new expiry" 0 \
		--out-has '"expires": "2026-12-01T05:00:00Z"' --out-has '"set_how": "--ttl"' \
		--out-has '"left_seconds": 14400' \
		-- env KILN_NOW=2026-12-01T01:00:00Z "$KILN" ttl show --json
	check "lifecycle: apply --ttl put the new expiry on the nodes' tag too" 0 --out "2026-12-01T05:00:00Z" \
		-- python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" .kiln/sim tag sim_node_group.trainers kiln:expires
	check "lifecycle: ttl extend with a spec that does not open commits, and says the tags are old" 1 \
		--out-has "expires 2026-12-01T06:00:00Z" \
		--err "nope.yaml: error: cannot read nope.yaml: No such file or directory
kiln: ttl: the expiry is committed, but the nodes' kiln:expires tag is still the old one: nope.yaml did not open
  hint: run kiln ttl extend again with --spec FILE naming the workspace's spec: until then its nodes power themselves off at the old expiry plus the grace" \
		-- env KILN_NOW=2026-12-01T01:00:00Z "$KILN" ttl extend 1h --spec nope.yaml
	check "lifecycle: ... and the tag stays as it was" 0 --out "2026-12-01T05:00:00Z" \
		-- python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" .kiln/sim tag sim_node_group.trainers kiln:expires
	check "lifecycle: ttl extend again puts it right" 0 \
		--out-has "The nodes' kiln:expires tag says 2026-12-01T07:00:00Z (5 resources asked)." \
		-- env KILN_NOW=2026-12-01T01:00:00Z "$KILN" ttl extend 1h
	# A state written before kiln kept a copy of the spec with the expiry.
	"$KILN" state pull | python3 -c '
import json, sys
d = json.load(sys.stdin)
del d["expiry"]["spec_text"]
d["serial"] += 1
json.dump(d, open("old-state.json", "w"))'
	check "lifecycle: a state without the spec copy is pushed" 0 -- "$KILN" state push old-state.json
	mv kiln.yaml kiln.yaml.away
	check "lifecycle: reap without the spec file or its copy fails and says how to go on" 1 \
		--out "default: failed: the spec kiln.yaml recorded at apply is not readable here, and the state holds no copy of it; run reap where apply runs, or kiln destroy SPEC -w default" \
		-- env KILN_NOW=2026-12-01T09:00:00Z "$KILN" reap
	mv kiln.yaml.away kiln.yaml
	check "lifecycle: a bad KILN_NOW is named" 1 --out "" \
		--err "kiln: reap: KILN_NOW 'tomorrow' is not an RFC 3339 time
  hint: write it like 2027-01-31T12:00:00Z, or unset it" \
		-- env KILN_NOW=tomorrow "$KILN" reap

	# --- down ---
	check "lifecycle: down destroys, keeping the retained store" 0 \
		--out-has "Destroy complete: 0 created, 0 updated, 0 replaced, 4 deleted" \
		-- "$KILN" down --auto-approve
	assert "lifecycle: after down only the retained buckets are left" lc_py '
import glob, json
docs = [json.load(open(p)) for p in glob.glob(".kiln/sim/r/*.json")]
assert {d["tags"]["kiln:address"] for d in docs} == {"sim_bucket.checkpoints"}, docs'
	lc_teardown
	check "lifecycle: kiln help up lists apply's options" 0 \
		--out-has "Usage: kiln up [SPEC] [-w WS] [--ttl DURATION] [OPTIONS]" \
		--out-has "--require-approvals N" -- "$KILN" help up
	# --- status reads what runs, not only what was recorded ---
	lc_new_dir examples/quickstart.yaml
	check "lifecycle: up from the spec's ttl, in a fresh directory" 0 --out-has "Apply complete:" \
		-- env KILN_NOW=2026-11-30T00:00:00Z "$KILN" up --auto-approve
	python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" .kiln/sim rm sim_node_group.trainers
	check "lifecycle: status after the node group was deleted outside kiln shows no node running" 0 \
		--out-has "  trainers         0 of 2 nodes running, deleted outside kiln (sim_node_group.trainers)" \
		--out-has "Pending: 1 changes between the spec and what runs; \`kiln plan\` shows them." \
		-- env KILN_NOW=2026-11-30T01:00:00Z "$KILN" status
	check "lifecycle: status --refresh=false shows what was recorded" 0 \
		--out-has "  trainers         2 of 2 nodes running, p5.48xlarge (sim_node_group.trainers)" \
		-- env KILN_NOW=2026-11-30T01:00:00Z "$KILN" status --refresh=false

	lc_templates_flow sim-demo
	lifecycle_moto
	unset KILN_AUTHOR
	cd "$lc_saved_dir" || exit 1
}

# up with a TTL, status and reap on aws, against moto on loopback: the
# kiln:expires tag as boto3 sees it, and nothing left but the retained bucket.
lifecycle_moto() {
	if ! AWS_PY=$(aws_find_python); then
		fail "lifecycle: aws: a python3 with moto 5 and boto3 is installed"
		return 0
	fi
	# aws_moto_up sets PYTHON to it.
	lc_moto=$E2E_TMP/moto-lifecycle
	aws_moto_up "lifecycle: aws" "$lc_moto" || return 0
	KILN_POLL_MS=100
	export KILN_POLL_MS
	lc_new_dir tests/e2e/specs/aws-cluster.yaml
	check "lifecycle: aws: up --ttl 2h creates the cluster with its expiry" 0 \
		--out-has "Apply complete: 11 created, 0 updated, 0 replaced, 0 deleted." \
		--out-has "Expires: 2026-11-30T02:00:00Z (in 2h0m); kiln reap destroys it after." \
		-- env KILN_NOW=2026-11-30T00:00:00Z "$KILN" up -w lc --ttl 2h --auto-approve
	assert "lifecycle: aws: boto3 finds kiln:expires on the instances, the VPC and the buckets" \
		"$AWS_PY" -c '
import boto3
kw = dict(region_name="us-east-1")
ec2, s3 = boto3.client("ec2", **kw), boto3.client("s3", **kw)
f = [{"Name": "tag:kiln:cluster", "Values": ["e2e"]}, {"Name": "tag:kiln:workspace", "Values": ["lc"]}]
inst = [i for r in ec2.describe_instances(Filters=f)["Reservations"] for i in r["Instances"]]
vpcs = ec2.describe_vpcs(Filters=f)["Vpcs"]
assert len(inst) == 3 and len(vpcs) == 1, (len(inst), len(vpcs))
for x in inst + vpcs:
    tags = {t["Key"]: t["Value"] for t in x["Tags"]}
    assert tags.get("kiln:expires") == "2026-11-30T02:00:00Z", tags
n = 0
for b in s3.list_buckets()["Buckets"]:
    tags = {t["Key"]: t["Value"] for t in s3.get_bucket_tagging(Bucket=b["Name"])["TagSet"]}
    if tags.get("kiln:workspace") == "lc":
        assert tags.get("kiln:expires") == "2026-11-30T02:00:00Z", tags
        n += 1
assert n == 2, n
'
	check "lifecycle: aws: status shows the groups and the time left" 0 \
		--out-has "  trainers         2 of 2 nodes running, p5.48xlarge (aws_instance_group.trainers)" \
		--out-has "  login            1 of 1 nodes running, m7i.xlarge (aws_instance_group.login)" \
		--out-has "Expires: 2026-11-30T02:00:00Z (1h0m left)." \
		-- env KILN_NOW=2026-11-30T01:00:00Z "$KILN" status -w lc
	check "lifecycle: aws: reap after the expiry destroys it, keeping the retained bucket" 0 \
		--out "lc: reaped: 10 deleted, 1 retained (expired 1h0m ago)" \
		-- env KILN_NOW=2026-11-30T03:00:00Z "$KILN" reap
	"$AWS_PY" "$E2E_ROOT/tests/e2e/aws_inspect.py" left e2e lc >left.txt 2>&1
	assert "lifecycle: aws: boto3 finds nothing of the workspace but the retained bucket" \
		sh -c '[ "$(cut -d" " -f1 "$1")" = aws_s3_bucket.datasets ] || { cat "$1"; exit 1; }' sh left.txt
	for lc_t in llm-pretrain finetune inference; do
		lc_templates_flow "$lc_t" --var image=ami-1e749f67
	done
	sh "$E2E_ROOT/tests/moto/server.sh" stop "$lc_moto" >/dev/null 2>&1
	trap 'rm -rf "$E2E_TMP"' EXIT
	unset AWS_ENDPOINT_URL AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_REGION KILN_POLL_MS PYTHON
}

# lc_templates_flow TEMPLATE [--var ...]: kiln init --template TEMPLATE in a
# fresh directory, then up with a TTL, status, and reap once the TTL has
# passed: nothing of the workspace is left but the stores its plan retained
# (and, on aws, the network a retained file system still sits in). sim, or
# aws against the moto server lifecycle_moto started.
lc_templates_flow() {
	lc_t=$1
	shift
	lc_dir=$(mktemp -d "$E2E_TMP/template.XXXXXX")
	cd "$lc_dir" || exit 1
	# The state key init makes stays with this flow, not the tests after it.
	lc_config=$XDG_CONFIG_HOME
	XDG_CONFIG_HOME=$lc_dir.config
	check "lifecycle: init --template $lc_t" 0 -- "$KILN" init --template "$lc_t"
	"$KILN" plan --json -w tpl "$@" >plan.json 2>plan.err
	check "lifecycle: $lc_t: up --ttl 2h creates it" 0 --out-has "Apply complete: " \
		--out-has "Expires: 2026-11-30T02:00:00Z (in 2h0m); kiln reap destroys it after." \
		-- env KILN_NOW=2026-11-30T00:00:00Z "$KILN" up -w tpl --ttl 2h --auto-approve "$@"
	check "lifecycle: $lc_t: status names the cluster and shows the time left" 0 \
		--out-has "Cluster $lc_t/tpl: " \
		--out-has "Expires: 2026-11-30T02:00:00Z (1h0m left)." \
		-- env KILN_NOW=2026-11-30T01:00:00Z "$KILN" status -w tpl "$@"
	# The spec is gone by the time the TTL runs out: the copy in the state serves.
	mv kiln.yaml kiln.yaml.gone
	check "lifecycle: $lc_t: reap after the TTL destroys it, with the spec copy the state holds" 0 \
		--out-has "tpl: reaped: " \
		--out-has " (expired 1h0m ago), with the copy recorded at apply (kiln.yaml is not here)" \
		-- env KILN_NOW=2026-11-30T03:00:00Z "$KILN" reap "$@"
	if [ -d .kiln/sim ]; then
		python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" .kiln/sim ids | awk '{print $2}' >left.txt
	else
		"$AWS_PY" "$E2E_ROOT/tests/e2e/aws_inspect.py" left "$lc_t" tpl | awk '{print $1}' >left.txt
	fi
	assert "lifecycle: $lc_t: nothing is left but the retained stores" python3 -c '
import json, sys
plan = json.load(open("plan.json"))
retained = {c["address"] for c in plan["resource_changes"]
            if (c["change"]["after"] or {}).get("deletion") == "retain"}
left = set(open("left.txt").read().split())
stores = {a for a in left if a.split(".")[0] in (
    "sim_bucket", "sim_lustre", "sim_nfs", "aws_s3_bucket", "aws_fsx_lustre", "aws_efs")}
assert stores == retained, ("left stores", sorted(stores), "retained", sorted(retained))
files = any(a.split(".")[0] in ("aws_fsx_lustre", "aws_efs") for a in retained)
network = ("aws_vpc", "aws_subnet", "aws_security_group", "aws_internet_gateway",
           "aws_fsx_import", "aws_efs_mount_target")
rest = left - stores
assert not rest or (files and all(a.split(".")[0] in network for a in rest)), sorted(rest)
assert not any(a.split(".")[0] in ("aws_instance_group", "sim_node_group", "aws_iam_role",
    "sim_role", "aws_placement_group") for a in left), sorted(left)
'
	XDG_CONFIG_HOME=$lc_config
	cd "$E2E_ROOT" || exit 1
}
