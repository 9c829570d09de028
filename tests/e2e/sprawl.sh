# sprawl.sh - end-to-end tests of `kiln sprawl`: orphans (a `kiln state rm`,
# a workspace deleted from the state repository) and GPU groups without kiln
# tags on the sim provider, with their hourly cost, text and JSON, --destroy
# (exactly the orphans, stores kept unless --include-stores; sim_inspect.py
# confirms), bad input; and against moto, instances made with boto3: one
# tagged for a cluster no state holds, one untagged GPU instance. Sourced by
# run.sh after lib.sh and aws.sh; $KILN is the binary under test.

sp_ids() { # the sim's resources, "ID ADDRESS" per line
	python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" .kiln/sim ids
}

sp_bad_input() {
	sp_dir=$(mktemp -d "$E2E_TMP/sprawl.XXXXXX")
	cd "$sp_dir" || exit 1
	check "sprawl: an unknown provider is named" 1 --out "" \
		--err "kiln: sprawl: 'gcp' is not a provider kiln knows; use --provider aws or --provider sim" \
		-- "$KILN" sprawl --provider gcp
	check "sprawl: without a state repository it says how to make or find one" 1 --out "" \
		--err "kiln: sprawl: there is no state repository at .kiln/state.git${NL}  hint: \`kiln workspace new default\` creates one; --state or KILN_STATE selects another" \
		-- "$KILN" sprawl --provider sim
	check "sprawl: --adopt and --destroy together are refused" 1 --out "" \
		--err "kiln: sprawl: --adopt and --destroy cannot be combined; run one, then the other" \
		-- "$KILN" sprawl --provider sim --adopt --destroy
	check "sprawl: --include-stores needs --destroy" 1 --out "" \
		--err "kiln: sprawl: --include-stores only applies to --destroy; add --destroy" \
		-- "$KILN" sprawl --provider sim --include-stores
	check "sprawl: takes no spec operand" 1 --out "" \
		--err "kiln: sprawl: unexpected operand 'kiln.yaml'; kiln sprawl looks at a whole cloud account and takes no spec" \
		-- "$KILN" sprawl --provider sim kiln.yaml
	check "sprawl: --help names every option" 0 --out-has "--include-stores" \
		--out-has "--auto-approve" --out-has "--adopt records each orphan" \
		-- "$KILN" sprawl --help
}

sp_sim() {
	sp_dir=$(mktemp -d "$E2E_TMP/sprawl.XXXXXX")
	cd "$sp_dir" || exit 1
	cp "$E2E_ROOT/examples/quickstart.yaml" kiln.yaml
	"$KILN" apply --auto-approve >/dev/null 2>&1
	check "sprawl: a cluster whose state records everything has no orphans" 0 \
		--out-has "sim (simulated), region sim-local-1; state .kiln/state.git: 1 workspace" \
		--out-has "Orphans (kiln tags, in no workspace's state): 0, \$0.00/hour" \
		--out-has "GPU instances without kiln tags: 0, \$0.00/hour" \
		--out-has "Total: \$0.00/hour (\$0.00/month at 730 hours)" \
		-- "$KILN" sprawl --provider sim
	check "sprawl: without --provider it looks in the cloud the workspaces record" 0 \
		--out-has "sim (simulated), region sim-local-1; state .kiln/state.git: 1 workspace" \
		-- "$KILN" sprawl
	ng=$(sp_ids | awk '$2 == "sim_node_group.trainers" {print $1}')
	"$KILN" state rm sim_node_group.trainers >/dev/null 2>&1
	check "sprawl: after state rm the node group is an orphan with its hourly cost" 0 \
		--out-has "Orphans (kiln tags, in no workspace's state): 1, \$196.68/hour" \
		--out-has "  quickstart/default" \
		--out-has "    sim_node_group.trainers              $ng     \$196.68/hour     workspace 'default' does not record it" \
		--out-has "Total: \$196.68/hour (\$143,579.20/month at 730 hours)" \
		-- "$KILN" sprawl --provider sim
	check "sprawl: --json" 0 -- "$KILN" sprawl --provider sim --json
	cp "$E2E_OUT" sprawl.json
	assert "sprawl: --json has the orphan, its cost and reason, and no live attrs (secrets)" \
		python3 - sprawl.json "$ng" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert set(r) == {"provider", "simulated", "region", "state", "workspaces", "currency",
                  "catalog", "orphans", "unmanaged", "orphans_hourly", "unmanaged_hourly",
                  "hourly_total", "monthly_total", "other_states"}, sorted(r)
assert r["other_states"] == 0, r
assert r["provider"] == "sim" and r["simulated"] is True and r["workspaces"] == ["default"]
assert r["catalog"]["provider"] == "aws" and r["currency"] == "USD"
[o] = r["orphans"]
assert o["id"] == sys.argv[2] and o["cluster"] == "quickstart" and o["workspace"] == "default"
assert o["address"] == "sim_node_group.trainers" and o["type"] == "sim_node_group"
assert o["reason"] == "workspace 'default' does not record it" and o["unpriced"] == []
assert abs(o["hourly"] - 196.68) < 0.01 and "attrs" not in o, o
assert abs(r["hourly_total"] - o["hourly"]) < 1e-9 and r["unmanaged"] == []
assert abs(r["monthly_total"] - 730 * r["hourly_total"]) < 1e-6
PY
	# The orphan loses its kiln tags: a GPU group launched outside kiln.
	python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" .kiln/sim untag sim_node_group.trainers
	check "sprawl: a GPU group without kiln tags is listed as unmanaged with its cost" 0 \
		--out-has "Orphans (kiln tags, in no workspace's state): 0, \$0.00/hour" \
		--out-has "GPU instances without kiln tags: 1, \$196.68/hour" \
		--out-has "    $ng     p5.48xlarge      16 x H100   sim-1a         \$196.68/hour" \
		-- "$KILN" sprawl --provider sim
	# A second workspace, then deleted from the state repository: all of it is orphaned.
	KILN_WORKSPACE=other "$KILN" apply --auto-approve >/dev/null 2>&1
	for a in $("$KILN" state list -w other); do "$KILN" state rm -w other "$a" >/dev/null 2>&1; done
	"$KILN" workspace delete other >/dev/null 2>&1
	check "sprawl: a deleted workspace's resources are orphans, grouped under it" 0 \
		--out-has "Orphans (kiln tags, in no workspace's state): 5, \$196.68/hour" \
		--out-has "  quickstart/other" \
		--out-has "workspace 'other' does not exist in the state repository" \
		--out-has "    sim_bucket.checkpoints " --out-has "priced by use" \
		--out-has "GPU instances without kiln tags: 1, \$196.68/hour" \
		--out-has "Total: \$393.37/hour" \
		-- "$KILN" sprawl --provider sim
	sp_ids | sort >before.ids
	check "sprawl: --destroy without a terminal and without --auto-approve refuses" 1 \
		--err "kiln: sprawl: standard input is not a terminal, so kiln cannot ask for approval; nothing was deleted; review with \`kiln sprawl\`, then pass --destroy --auto-approve" \
		-- "$KILN" sprawl --provider sim --destroy
	sp_ids | sort >after.ids
	compare "sprawl: the refused --destroy deleted nothing" before.ids after.ids
	check "sprawl: --destroy deletes the orphans but keeps the store" 0 \
		--out-has "keeping quickstart/other sim_bucket.checkpoints (" \
		--out-has "deleted quickstart/other sim_node_group.trainers (" \
		--out-has "deleted quickstart/other sim_network.main (" \
		--out-has "sprawl: 4 deleted, 0 failed, 1 kept" \
		-- "$KILN" sprawl --provider sim --destroy --auto-approve
	# Left: default's four recorded resources, the untagged group, other's bucket.
	sp_ids | awk '{print $2}' | sort >left
	printf '%s\n' - sim_bucket.checkpoints sim_bucket.checkpoints sim_network.main \
		sim_role.trainer sim_role_policy.trainer >want
	compare "sprawl: exactly the orphans went (sim_inspect)" want left
	"$KILN" state pull >.state.json 2>/dev/null
	sp_ids >final.ids
	assert "sprawl: every resource default records is still there, by id" \
		python3 - .state.json final.ids <<'PY'
import json, sys
rec = {r["id"] for r in json.load(open(sys.argv[1]))["resources"].values()}
have = {line.split()[0] for line in open(sys.argv[2])}
assert len(rec) == 4 and rec <= have, (rec, have)
PY
	check "sprawl: --destroy --include-stores --json deletes the store and says so" 0 \
		-- "$KILN" sprawl --provider sim --destroy --include-stores --auto-approve --json
	cp "$E2E_OUT" destroy.json
	assert "sprawl: the --destroy JSON lists what was deleted, failed and kept" \
		python3 - destroy.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
[d] = r["destroyed"]
assert d["address"] == "sim_bucket.checkpoints" and d["workspace"] == "other", d
assert d["id"].startswith("bkt-") and r["failed"] == [] and r["kept"] == []
PY
	check "sprawl: nothing is orphaned after" 0 \
		--out-has "Orphans (kiln tags, in no workspace's state): 0, \$0.00/hour" \
		-- "$KILN" sprawl --provider sim
	check "sprawl: --destroy with nothing orphaned deletes nothing" 0 \
		--out-has "No orphans to delete." -- "$KILN" sprawl --provider sim --destroy
}

sp_hold_default() { # DURATION: trainers orphaned, and default locked that long by a state rm (pid: sp_pid)
	"$KILN" state rm sim_node_group.trainers >/dev/null 2>&1
	KILN_TEST_LOCK_HOLD=$1 "$KILN" state rm sim_role.trainer >/dev/null 2>&1 &
	sp_pid=$!
	for sp_i in $(seq 1 100); do
		git --git-dir=.kiln/state.git rev-parse -q --verify refs/kiln/locks/default >/dev/null && break
		sleep 0.1
	done
}

# --adopt: orphans go back into the workspaces their tags name, one commit each.
sp_adopt() {
	sp_dir=$(mktemp -d "$E2E_TMP/sprawl.XXXXXX")
	cd "$sp_dir" || exit 1
	cp "$E2E_ROOT/examples/quickstart.yaml" kiln.yaml
	"$KILN" apply --auto-approve >/dev/null 2>&1
	KILN_WORKSPACE=other "$KILN" apply --auto-approve >/dev/null 2>&1
	for a in $("$KILN" state list -w other); do "$KILN" state rm -w other "$a" >/dev/null 2>&1; done
	"$KILN" workspace delete other >/dev/null 2>&1
	"$KILN" state rm sim_node_group.trainers >/dev/null 2>&1
	check "sprawl: --adopt records each orphan in its workspace, one commit each" 0 \
		--out-has "adopted quickstart/default sim_node_group.trainers (ng-" \
		--out-has "recorded 1 in workspace 'default' (commit " \
		--out-has "adopted quickstart/other sim_network.main (vpc-" \
		--out-has "adopted quickstart/other sim_bucket.checkpoints (bkt-" \
		--out-has "recorded 5 in workspace 'other' (commit " \
		--out-has "sprawl: 6 adopted, 0 failed, 0 not adopted" \
		-- "$KILN" sprawl --provider sim --adopt
	check "sprawl: --adopt made the deleted workspace again" 0 --out "* default${NL}  other" \
		-- "$KILN" workspace list
	check "sprawl: the adoption is one commit in the workspace's log" 0 \
		--out-has "sprawl adopt: 5 adopted (quickstart/other)" -- "$KILN" log -w other
	check "sprawl: the adopted workspace plans no changes against its spec" 0 \
		--out-has "No changes." -- "$KILN" plan -w other --detailed-exitcode
	check "sprawl: the workspace that lost one resource plans no changes either" 0 \
		--out-has "No changes." -- "$KILN" plan --detailed-exitcode
	for ws in default other; do
		"$KILN" state pull -w "$ws" >"$ws.json" 2>/dev/null
	done
	sp_ids >live.ids
	assert "sprawl: after --adopt the two states hold every sim resource, each once (sim_inspect)" \
		python3 - default.json other.json live.ids <<'PY'
import collections, json, sys
rec = collections.Counter(r["id"] for f in sys.argv[1:3]
                          for r in json.load(open(f))["resources"].values())
live = {line.split()[0] for line in open(sys.argv[3])}
assert set(rec) == live and max(rec.values()) == 1 and len(live) == 10, (rec, live)
PY
	check "sprawl: nothing is orphaned after --adopt" 0 \
		--out-has "Orphans (kiln tags, in no workspace's state): 0, \$0.00/hour" \
		-- "$KILN" sprawl --provider sim
	"$KILN" state rm -w other sim_role.trainer sim_network.main >/dev/null 2>&1
	check "sprawl: --adopt --json" 0 -- "$KILN" sprawl --provider sim --adopt --json
	cp "$E2E_OUT" adopt.json
	assert "sprawl: the --adopt JSON lists what was adopted and the commit" \
		python3 - adopt.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert sorted(a["address"] for a in r["adopted"]) == ["sim_network.main", "sim_role.trainer"], r
assert r["failed"] == [] and r["skipped"] == [], r
[c] = r["commits"]
assert c["workspace"] == "other" and c["adopted"] == 2 and len(c["commit"]) == 40, c
PY
	# A locked workspace may be mid-apply: its orphans are reported, never deleted.
	sp_hold_default 30s
	check "sprawl: an orphan of a locked workspace says an apply may still record it" 0 \
		--out-has "workspace 'default' does not record it; the workspace is locked by " \
		-- "$KILN" sprawl --provider sim
	check "sprawl: --destroy keeps the orphans of a locked workspace" 0 \
		--out-has "keeping quickstart/default sim_node_group.trainers (ng-" \
		--out-has "its workspace is locked; run again when the lock is released" \
		--out-has "No orphans to delete." \
		-- "$KILN" sprawl --provider sim --destroy --auto-approve
	check "sprawl: --adopt into a locked workspace fails and says who holds it" 1 \
		--err-has "kiln: sprawl: workspace 'default' is locked by " \
		-- "$KILN" sprawl --provider sim --adopt
	kill "$sp_pid" 2>/dev/null
	wait "$sp_pid" 2>/dev/null
	assert "sprawl: the node group outlived the refused destroy" sh -c \
		'python3 "$1/tests/e2e/sim_inspect.py" .kiln/sim ids | grep -c " sim_node_group.trainers$" | grep -qx 2' \
		sh "$E2E_ROOT"
}

# SIG PATTERN NAME FLAGS...: a slow sprawl FLAGS (one call at a time, a 1 s
# lease) in the background, output in NAME.out and NAME.err, sent SIG once
# NAME.out shows PATTERN (20 s at most); its exit status in sp_rc.
sp_signal_after() {
	sp_sig=$1 sp_pat=$2 sp_name=$3
	shift 3
	KILN_LOCK_LEASE=1s KILN_SIM_LATENCY_MS=400 "$KILN" sprawl --provider sim --parallelism 1 \
		"$@" >"$sp_name.out" 2>"$sp_name.err" &
	sp_pid=$!
	sp_i=0
	while ! grep -qs "$sp_pat" "$sp_name.out" && [ $sp_i -lt 400 ]; do
		sleep 0.05
		sp_i=$((sp_i + 1))
	done
	kill "-$sp_sig" "$sp_pid"
	wait "$sp_pid" 2>/dev/null
	sp_rc=$?
}

sp_forget_other() { # workspace other applied, then forgotten by state rm (and deleted, with "delete")
	KILN_WORKSPACE=other "$KILN" apply --auto-approve >/dev/null 2>&1
	for a in $("$KILN" state list -w other); do "$KILN" state rm -w other "$a" >/dev/null 2>&1; done
	if [ "${1:-}" = delete ]; then "$KILN" workspace delete other >/dev/null 2>&1; fi
}

# Adopt and destroy run through the operation: its lock (--lock-timeout), its
# journal, its commit, its parallelism and its interrupts.
sp_operation() {
	sp_dir=$(mktemp -d "$E2E_TMP/sprawl.XXXXXX")
	cd "$sp_dir" || exit 1
	cp "$E2E_ROOT/examples/quickstart.yaml" kiln.yaml
	"$KILN" apply --auto-approve >/dev/null 2>&1
	check "sprawl: --parallelism outside 1 to 1024 is refused" 1 --out "" \
		--err "kiln: sprawl: --parallelism '0' is not a number from 1 to 1024; use a number from 1 to 1024" \
		-- "$KILN" sprawl --provider sim --destroy --parallelism 0
	# A lock held for 2 s: --adopt waits for it, as apply does.
	sp_hold_default 2s
	check "sprawl: --adopt waits for a held lock up to --lock-timeout" 0 \
		--out-has "adopted quickstart/default sim_node_group.trainers (ng-" \
		--out-has "recorded 1 in workspace 'default' (commit " \
		-- "$KILN" sprawl --provider sim --adopt --lock-timeout 30s
	wait "$sp_pid"
	assert "sprawl: the adoption's commit carries the operation's trailers" sh -c \
		'git --git-dir=.kiln/state.git log -1 --format=%B default >msg &&
		 grep -qx "sprawl adopt: 1 adopted (quickstart/default)" msg &&
		 grep -qx "Kiln-Operation: sprawl adopt" msg && grep -qx "Kiln-Result: complete" msg &&
		 grep -q "^Kiln-Burn: 196" msg'

	# An adoption killed mid-way: its journal holds what it read, and the
	# next --adopt replays it (taking over the dead run's lock) and commits all.
	sp_forget_other delete
	sp_signal_after KILL "adopted quickstart/other" adopt --adopt
	assert "sprawl: an adoption killed mid-way leaves a journal of what it read" sh -c \
		'grep -q "\"address\"" .kiln/journal/other-*.jsonl'
	check "sprawl: the next --adopt replays the killed one's journal" 0 \
		--err-has "recorded by an interrupted apply" \
		--out-has "recorded " --out-has "sprawl: " \
		-- "$KILN" sprawl --provider sim --adopt --lock-timeout 20s
	check "sprawl: its commit says what came from the journal" 0 \
		--out-has "recorded from an interrupted apply's journal (quickstart/other)" \
		-- "$KILN" log -w other
	"$KILN" state pull -w other >other.json 2>/dev/null
	sp_ids >live.ids
	assert "sprawl: after the killed and the replayed adoption other holds its five, each once" \
		python3 - other.json live.ids <<'PY'
import json, sys
rec = {a: r["id"] for a, r in json.load(open(sys.argv[1]))["resources"].items()}
live = dict(line.split() for line in open(sys.argv[2]))
assert len(rec) == 5 and all(live.get(i) == a for a, i in rec.items()), (rec, live)
PY
	assert "sprawl: the replayed journal is gone once committed" sh -c \
		'! ls .kiln/journal/other-*.jsonl 2>/dev/null'

	# A destroy killed mid-way leaves its journal and its lock to take over;
	# the next --destroy takes both and finishes.
	sp_forget_other
	sp_signal_after KILL "deleted quickstart/other" destroy --destroy --include-stores --auto-approve
	assert "sprawl: a destroy killed mid-way leaves its journal" sh -c \
		'ls .kiln/journal/other-*.jsonl >/dev/null'
	sleep 1.5
	check "sprawl: a dead destroy's lapsed lock is taken over, not kept as locked" 0 \
		--out-has "deleted quickstart/other sim_network.main (" \
		-- "$KILN" sprawl --provider sim --destroy --include-stores --auto-approve --lock-timeout 20s
	assert "sprawl: the killed destroy's journal is replaced and gone" sh -c \
		'! ls .kiln/journal/other-*.jsonl 2>/dev/null'
	check "sprawl: nothing of other is orphaned after" 0 \
		--out-has "Orphans (kiln tags, in no workspace's state): 0, \$0.00/hour" \
		-- "$KILN" sprawl --provider sim

	# SIGINT: the deletion in flight finishes and is committed; nothing more starts.
	sp_forget_other
	sp_signal_after INT "deleted quickstart/other" int --destroy --include-stores --auto-approve
	assert "sprawl: SIGINT ends --destroy with exit 1" test "$sp_rc" = 1
	assert "sprawl: SIGINT says what it does" grep -q "starting nothing new" int.err
	assert "sprawl: after SIGINT it says it stopped as asked" grep -qx \
		"kiln: sprawl: stopped by SIGINT, as asked: what was deleted is recorded, and nothing more was started; run \`kiln sprawl\` to see what remains" \
		int.err
	assert "sprawl: an interrupted destroy commits what it did" sh -c \
		'git --git-dir=.kiln/state.git log -1 --format=%B other >msg &&
		 grep -q "^sprawl destroy: [1-4] deleted; [1-4] not done (quickstart/other)$" msg &&
		 grep -qx "Kiln-Result: partial (interrupted)" msg'
	assert "sprawl: the lock is released after SIGINT" sh -c \
		'! git --git-dir=.kiln/state.git rev-parse -q --verify refs/kiln/locks/other'
	check "sprawl: what SIGINT left is still an orphan" 0 --out-has "  quickstart/other" \
		-- "$KILN" sprawl --provider sim
}

# Against moto: instances made with boto3, never by kiln.
sp_aws() {
	if ! AWS_PY=$(aws_find_python); then
		skip "sprawl: aws against moto" "no python3 here has moto 5 and boto3"
		return 0
	fi
	PYTHON=$AWS_PY
	export PYTHON
	sp_moto=$E2E_TMP/sprawl-moto
	aws_moto_up sprawl "$sp_moto" || return 0
	sp_dir=$(mktemp -d "$E2E_TMP/sprawl.XXXXXX")
	cd "$sp_dir" || exit 1
	"$KILN" workspace new default >/dev/null 2>&1
	"$AWS_PY" - >ids <<'PY'
import os, boto3
ec2 = boto3.client("ec2", endpoint_url=os.environ["AWS_ENDPOINT_URL"], region_name="us-east-1")
def run(itype, tags):
    kw = dict(ImageId="ami-1e749f67", InstanceType=itype, MinCount=1, MaxCount=1)
    if tags:
        kw["TagSpecifications"] = [{"ResourceType": "instance",
                                    "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}]
    return ec2.run_instances(**kw)["Instances"][0]["InstanceId"]
print(run("p4d.24xlarge", {"kiln:cluster": "x", "kiln:workspace": "y",
                           "kiln:address": "aws_instance_group.lost"}))
print(run("g5.xlarge", {"team": "research"}))
print(run("m7i.xlarge", {}))
vpc = ec2.create_vpc(CidrBlock="10.9.0.0/16", TagSpecifications=[{"ResourceType": "vpc",
      "Tags": [{"Key": "kiln:cluster", "Value": "x"}, {"Key": "kiln:workspace", "Value": "y"},
               {"Key": "kiln:address", "Value": "aws_vpc.main"}]}])["Vpc"]["VpcId"]
print(vpc)
# A bucket and a role of the same lost workspace, named and tagged as kiln names them.
kw = dict(endpoint_url=os.environ["AWS_ENDPOINT_URL"], region_name="us-east-1")
s3, iam = boto3.client("s3", **kw), boto3.client("iam", **kw)
tags = [{"Key": "kiln:cluster", "Value": "x"}, {"Key": "kiln:workspace", "Value": "y"}]
s3.create_bucket(Bucket="kiln-x-y-data")
s3.put_bucket_tagging(Bucket="kiln-x-y-data", Tagging={"TagSet": tags + [
    {"Key": "kiln:address", "Value": "aws_s3_bucket.data"}]})
s3.create_bucket(Bucket="kiln-untagged-data")  # a kiln- name without tags: not kiln's
iam.create_role(RoleName="kiln-x-y-trainer", Path="/kiln/x/y/",
                AssumeRolePolicyDocument='{"Version":"2012-10-17","Statement":[]}', Tags=tags)
iam.put_role_policy(RoleName="kiln-x-y-trainer", PolicyName="kiln",
                    PolicyDocument='{"Version":"2012-10-17","Statement":[{"Effect":"Allow",'
                    '"Action":"s3:GetObject","Resource":"arn:aws:s3:::kiln-x-y-data/*"}]}')
PY
	g5=$(sed -n 2p ids)
	vpc=$(sed -n 4p ids)
	check "sprawl: aws: an instance tagged for a cluster no state holds is an orphan" 0 \
		--out-has "aws, region us-east-1; state .kiln/state.git: 1 workspace" \
		--out-has "  x/y" \
		--out-has "    aws_instance_group.lost              ig/x/y/lost" \
		--out-has "    aws_vpc.main                         $vpc" \
		--out-has "    aws_s3_bucket.data                   kiln-x-y-data            priced by use" \
		--out-has "    aws_iam_role.trainer                 kiln-x-y-trainer         free" \
		--out-has "workspace 'y' does not exist in the state repository" \
		-- "$KILN" sprawl --provider aws
	assert "sprawl: aws: a kiln- bucket without kiln tags is no orphan" \
		sh -c '! grep -q kiln-untagged-data "$1"' sh "$E2E_OUT"
	check "sprawl: aws: an untagged GPU instance is listed with its hourly cost" 0 \
		--out-has "GPU instances without kiln tags: 1, \$1.01/hour" \
		--out-has "    $g5      g5.xlarge        1 x A10G   us-east-1a     \$1.01/hour" \
		-- "$KILN" sprawl --provider aws
	check "sprawl: aws: --json" 0 -- "$KILN" sprawl --provider aws --json
	cp "$E2E_OUT" aws.json
	assert "sprawl: aws: --json prices the orphaned instance from the catalog, not the CPU one" \
		"$AWS_PY" - aws.json "$g5" "$vpc" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
by = {o["id"]: o for o in r["orphans"]}
assert set(by) == {"ig/x/y/lost", "kiln-x-y-data", "kiln-x-y-trainer", sys.argv[3]}, by
assert by["ig/x/y/lost"]["hourly"] > 20, by["ig/x/y/lost"]
[u] = r["unmanaged"]
assert u["id"] == sys.argv[2] and u["attrs"]["instance_type"] == "g5.xlarge", u
assert u["attrs"]["gpu"] == "A10G" and u["attrs"]["gpus"] == 1 and abs(u["hourly"] - 1.006) < 0.01
PY
	check "sprawl: aws: --destroy deletes the orphans" 0 \
		--out-has "deleted x/y aws_instance_group.lost (ig/x/y/lost)" \
		--out-has "deleted x/y aws_vpc.main ($vpc)" \
		--out-has "deleted x/y aws_iam_role.trainer (kiln-x-y-trainer)" \
		--out-has "keeping x/y aws_s3_bucket.data (kiln-x-y-data): a store; --include-stores deletes it" \
		--out-has "sprawl: 3 deleted, 0 failed, 1 kept" \
		-- "$KILN" sprawl --provider aws --destroy --auto-approve
	assert "sprawl: aws: boto3 sees the orphans gone and the others running" \
		"$AWS_PY" - ids <<'PY'
import os, sys, boto3
ids = open(sys.argv[1]).read().split()
ec2 = boto3.client("ec2", endpoint_url=os.environ["AWS_ENDPOINT_URL"], region_name="us-east-1")
st = {i["InstanceId"]: i["State"]["Name"] for r in ec2.describe_instances()["Reservations"]
      for i in r["Instances"]}
assert st[ids[0]] in ("shutting-down", "terminated"), st
assert st[ids[1]] == "running" and st[ids[2]] == "running", st
assert not ec2.describe_vpcs(Filters=[{"Name": "vpc-id", "Values": [ids[3]]}])["Vpcs"]
kw = dict(endpoint_url=os.environ["AWS_ENDPOINT_URL"], region_name="us-east-1")
roles = [r["RoleName"] for r in boto3.client("iam", **kw).list_roles()["Roles"]]
assert "kiln-x-y-trainer" not in roles, roles
buckets = [b["Name"] for b in boto3.client("s3", **kw).list_buckets()["Buckets"]]
assert "kiln-x-y-data" in buckets, buckets
PY
	sh "$E2E_ROOT/tests/moto/server.sh" stop "$sp_moto" >/dev/null 2>&1
	trap 'rm -rf "$E2E_TMP"' EXIT
	unset AWS_ENDPOINT_URL AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_REGION PYTHON
}

sprawl_tests() {
	sp_bad_input
	sp_sim
	sp_adopt
	sp_operation
	sp_aws
	cd "$E2E_ROOT" || exit 1
}
