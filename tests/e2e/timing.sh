# timing.sh - end-to-end tests of created and ready edges (issue 18): with
# the sim's aws timing profile, where a file system takes minutes, what
# needs only its create call's answer starts before it is ready (the order
# of events in apply --json), what needs it ready waits, and an apply
# killed with SIGKILL after such early starts converges with no duplicate.
# Behaviour, not timings: no test reads a clock. Sourced by run.sh after
# lib.sh; $KILN is the binary.

ti_new_dir() { # SPEC: a fresh working directory holding SPEC as kiln.yaml
	ti_dir=$(mktemp -d "$E2E_TMP/timing.XXXXXX")
	cd "$ti_dir" || exit 1
	cp "$E2E_ROOT/$1" kiln.yaml
}

# Python over an apply --json event stream (file $1): seq(TYPE, ADDR) is the
# line number of that event, or fails the check when there is none.
ti_events() { # FILE PYTHON
	python3 -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
def seq(kind, addr):
    for i, e in enumerate(lines):
        if e.get("type") == kind and e.get("hook", {}).get("resource", {}).get("addr") == addr:
            return i
    raise SystemExit("no %s event for %s" % (kind, addr))
exec(sys.argv[2])' "$1" "$2"
}

# The sim's aws profile, compressed: FSx for Lustre 600 s -> 3 s, nodes 60 s -> 0.3 s.
ti_profile() {
	KILN_SIM_PROFILE=aws KILN_SIM_TIME_SCALE=0.005 KILN_HEALTH_TIMEOUT=0 "$@"
}

# The same settings exported into the current (sub)shell.
ti_profile_env() {
	KILN_SIM_PROFILE=aws KILN_SIM_TIME_SCALE=0.005 KILN_HEALTH_TIMEOUT=0
	export KILN_SIM_PROFILE KILN_SIM_TIME_SCALE KILN_HEALTH_TIMEOUT
}

ti_order() {
	ti_new_dir tests/specs/valid/sim-llm-pretrain.yaml
	check "timing: an apply under the aws profile completes" 0 \
		--out-has '"type":"apply_complete"' \
		-- ti_profile "$KILN" apply --auto-approve --json
	cp "$E2E_OUT" events.json
	assert "timing: the node launch starts before the Lustre file system it mounts is ready" \
		ti_events events.json '
assert seq("apply_progress", "sim_lustre.scratch") < seq("apply_start", "sim_node_group.trainers")
assert seq("apply_start", "sim_node_group.trainers") < seq("apply_complete", "sim_lustre.scratch")'
	assert "timing: the role policy naming the NFS file system starts before it is ready" \
		ti_events events.json '
for p in ("sim_role_policy.trainer", "sim_role_policy.login"):
    assert seq("apply_progress", "sim_nfs.home") < seq("apply_start", p)
    assert seq("apply_start", p) < seq("apply_complete", "sim_nfs.home")'
	assert "timing: a policy still waits for its role to be ready (a ready edge)" \
		ti_events events.json '
assert seq("apply_complete", "sim_role.trainer") < seq("apply_start", "sim_role_policy.trainer")'
	"$KILN" state pull >.state.json 2>/dev/null
	assert "timing: the sim holds each resource once, as recorded" \
		python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" .kiln/sim .state.json
	cd "$E2E_ROOT" || exit 1
}

# kiln graph --plan: each node filled by the plan's action, with its hourly cost.
ti_graph_plan() {
	ti_gp_saved=$PWD
	ti_gp_dir=$(mktemp -d "$E2E_TMP/graph.XXXXXX")
	cd "$ti_gp_dir" || return
	sed 's/^  checkpoints: .*/  checkpoints: {tier: object}\n  scratch: {tier: lustre, capacity_gb: 4800, throughput_per_tib: 250}/' \
		"$E2E_ROOT/examples/quickstart.yaml" >kiln.yaml
	check "timing: graph --plan fills each node by its action and names its hourly cost" 0 \
		--out-has '    "sim_node_group.trainers" [label = "sim_node_group.trainers\ncreate, $196.68/h", style = "filled", fillcolor = "#c7e9c0"];' \
		--out-has '    "sim_bucket.checkpoints" [label = "sim_bucket.checkpoints\ncreate, $0.00/h + use", style = "filled", fillcolor = "#c7e9c0"];' \
		--out-has '    "legend: create" [label = "create", shape = "box", style = "filled", fillcolor = "#c7e9c0"];' \
		-- "$KILN" graph --plan
	KILN_SIM_READY_MS=0 "$KILN" apply --auto-approve >/dev/null 2>&1
	sed -i 's/count: 2/count: 4/; /scratch:/d' kiln.yaml
	# 4 nodes at 98.3419/h each (rounded from 393.3677); the Lustre store, gone from the
	# spec, is deleted: 4800 GB at its catalog price, 1.38/h before the plan.
	check "timing: graph --plan draws an update, a delete and what stays" 0 \
		--out-has '"sim_node_group.trainers" [label = "sim_node_group.trainers\nupdate, $393.37/h", style = "filled", fillcolor = "#fff2a8"];' \
		--out-has '"sim_lustre.scratch" [label = "sim_lustre.scratch\ndelete, $1.38/h", style = "filled", fillcolor = "#fcc5c0"];' \
		--out-has '"sim_network.main" [label = "sim_network.main\nno-op", style = "filled", fillcolor = "#ffffff"];' \
		-- "$KILN" graph --plan
	if command -v dot >/dev/null 2>&1; then
		assert "timing: dot reads the plan's overlay" sh -c '"$1" graph --plan | dot -Tsvg >/dev/null' sh "$KILN"
	fi
	check "timing: graph --plan refuses a bad --refresh, naming the values" 1 --out "" \
		--err "kiln: graph: --refresh 'maybe' is not true or false; write --refresh=true or --refresh=false" \
		-- "$KILN" graph --plan --refresh maybe
	cd "$ti_gp_saved" || return
}

# kiln graph draws what needs only created dashed, what needs ready plain.
ti_graph() {
	check "timing: graph dashes the aws mount target's edge to the nodes, not to its file system" 0 \
		--out-has '"aws_efs_mount_target.home" -> "aws_efs.home";' \
		--out-has '"aws_efs_mount_target.home" -> "aws_instance_group.trainers" [label = "created", style = "dashed"];' \
		--out-has '"aws_fsx_lustre.scratch" -> "aws_instance_group.trainers" [label = "created", style = "dashed"];' \
		--out-has '"aws_fsx_import.scratch" -> "aws_fsx_lustre.scratch";' \
		--out-has '"aws_iam_role.trainer" -> "aws_efs.home" [label = "created", style = "dashed"];' \
		-- "$KILN" graph examples/llm-pretrain.yaml
	check "timing: graph clusters the resources by tier and has a legend for both kinds of edge" 0 \
		--out-has '  subgraph "cluster_network" {
    label = "network";
    "aws_internet_gateway.main";' \
		--out-has '  subgraph "cluster_compute" {
    label = "compute";
    "aws_instance_group.login";
    "aws_instance_group.trainers";
  }' \
		--out-has '    "aws_efs_mount_target.home";' --out-has '    label = "IAM";' \
		--out-has '    "legend: A" -> "legend: B" [label = "A needs B ready"];' \
		--out-has '    "legend: C" -> "legend: D" [label = "created: C needs D only created", style = "dashed"];' \
		-- "$KILN" graph examples/llm-pretrain.yaml
	if command -v dot >/dev/null 2>&1; then
		assert "timing: Graphviz's dot reads kiln graph's DOT, clusters and legend included" sh -c \
			'"$1" graph examples/llm-pretrain.yaml | dot -Tsvg | grep -q "<title>cluster_storage</title>"' sh "$KILN"
	else
		fail "timing: Graphviz's dot is installed (scripts/deps.sh --install adds graphviz)" /dev/null
	fi
	ti_graph_plan
	check "timing: the plan lists what a resource needs only created" 0 \
		--out-has '"created_only": [' \
		-- sh -c 'd=$(mktemp -d) && cp tests/specs/valid/sim-llm-pretrain.yaml "$d/kiln.yaml" && cd "$d" && "$1" plan --json | python3 -c "
import json, sys
p = json.load(sys.stdin)
rc = {r[\"address\"]: r[\"kiln\"] for r in p[\"resource_changes\"]}
print(json.dumps(rc[\"sim_node_group.trainers\"], indent=1))
assert rc[\"sim_node_group.trainers\"][\"created_only\"] == [\"sim_lustre.scratch\", \"sim_nfs.home\"]
assert \"created_only\" not in rc[\"sim_network.main\"]
"' sh "$KILN"
}

# Killed after the nodes started early, while the file system is still
# coming up: the next apply replays the journal and makes nothing twice.
ti_kill() {
	ti_new_dir tests/specs/valid/sim-llm-pretrain.yaml
	# exec: $! is kiln itself, not a subshell around it, so the SIGKILL
	# below reaches kiln (killing only the subshell left kiln to finish the
	# apply, and the next one found nothing to do).
	(
		KILN_LOCK_LEASE=1s
		export KILN_LOCK_LEASE
		ti_profile_env
		exec "$KILN" apply --auto-approve --json >events.json 2>&1
	) &
	pid=$!
	i=0
	while ! grep -q '"apply_start".*sim_node_group.trainers' events.json && [ $i -lt 400 ]; do
		sleep 0.02
		i=$((i + 1))
	done
	comm=$(cat "/proc/$pid/comm" 2>/dev/null)
	kill -KILL $pid 2>/dev/null
	wait $pid 2>/dev/null
	assert "timing: the SIGKILL went to kiln itself (not a shell around it)" test "$comm" = kiln
	assert "timing: the apply was killed after the node launch started, before Lustre was ready" \
		ti_events events.json '
seq("apply_start", "sim_node_group.trainers")
assert not any(e.get("type") == "apply_complete" and
               e.get("hook", {}).get("resource", {}).get("addr") == "sim_lustre.scratch"
               for e in lines), "Lustre was ready before the kill"'
	check "timing: the apply after the SIGKILL completes" 0 --out-has "Apply complete:" \
		-- ti_profile "$KILN" apply --auto-approve --lock-timeout 10s
	"$KILN" state pull >.state.json 2>/dev/null
	assert "timing: after the SIGKILL the sim holds each resource once, as recorded" \
		python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" .kiln/sim .state.json
	check "timing: and a plan after it has no changes" 0 --out-has "No changes." \
		-- ti_profile "$KILN" plan --detailed-exitcode
	cd "$E2E_ROOT" || exit 1
}

ti_aws_agree() { # NAME WORKSPACE: boto3 finds what the workspace records, once each, tagged
	"$KILN" state pull -w "$2" >.state.json 2>/dev/null || echo '{"resources": {}}' >.state.json
	aws_inspect "$1" agree .state.json timing "$2"
}

# On aws against moto: FSx takes 3 s to be AVAILABLE (the extension's
# knob), so what needs it only created visibly starts first.
ti_aws_order() {
	ti_new_dir tests/e2e/specs/aws-timing.yaml
	aws_ctl fsx '{"available_after_seconds": 3}'
	check "timing: aws: an apply of nodes, Lustre and EFS completes against moto" 0 \
		-- env KILN_POLL_MS=200 KILN_HEALTH_TIMEOUT=0 "$KILN" apply -w order --auto-approve --json
	cp "$E2E_OUT" events.json
	assert "timing: aws: the node launch starts before the Lustre file system it mounts is AVAILABLE" \
		ti_events events.json '
assert seq("apply_progress", "aws_fsx_lustre.scratch") < seq("apply_start", "aws_instance_group.trainers")
assert seq("apply_start", "aws_instance_group.trainers") < seq("apply_complete", "aws_fsx_lustre.scratch")'
	assert "timing: aws: the data repository association and the mount target wait for their file system" \
		ti_events events.json '
assert seq("apply_complete", "aws_fsx_lustre.scratch") < seq("apply_start", "aws_fsx_import.scratch")
assert seq("apply_complete", "aws_efs.home") < seq("apply_start", "aws_efs_mount_target.home")'
	aws_ctl fsx '{}'
	ti_aws_agree "timing: aws: boto3 finds every resource recorded, none twice, none untagged" order
	check "timing: aws: and destroys them" 0 --out-has "Destroy complete:" \
		-- env KILN_POLL_MS=200 "$KILN" destroy -w order --auto-approve
	cd "$E2E_ROOT" || exit 1
}

# EC2 does not see a new instance profile for a while (IAM is eventually
# consistent): the launch is retried, the reason in the debug trace, and
# the apply does not fail.
ti_aws_iam() {
	ti_new_dir tests/e2e/specs/aws-timing.yaml
	aws_ctl iam '{"profile_visible_after_seconds": 2}'
	check "timing: aws: a launch EC2 refuses for an instance profile it does not see yet is retried" 0 \
		--out-has "Apply complete:" \
		--err-has "aws_instance_group.trainers: RunInstances refused: " \
		--err-has "is not visible to EC2 yet (IAM is eventually consistent); retry 1 after" \
		-- env KILN_POLL_MS=200 KILN_HEALTH_TIMEOUT=0 KILN_LOG_LEVEL=debug "$KILN" apply -w iam --auto-approve
	assert "timing: aws: moto refused the first launch, as EC2 would" \
		sh -c 'curl -sf "$1/_kiln/iam" | python3 -c "import json, sys; assert json.load(sys.stdin)[\"refused\"] >= 1"' \
		sh "$AWS_ENDPOINT_URL"
	aws_ctl iam '{}'
	ti_aws_agree "timing: aws: after the retries boto3 finds one group, recorded, none twice" iam
	check "timing: aws: and destroys it all" 0 --out-has "Destroy complete:" \
		-- env KILN_POLL_MS=200 "$KILN" destroy -w iam --auto-approve
	cd "$E2E_ROOT" || exit 1
}

ti_aws() {
	ti_moto=$E2E_TMP/moto-timing
	aws_moto_up "timing: aws" "$ti_moto" || return 0
	ti_aws_order
	ti_aws_iam
	aws_moto_down "$ti_moto"
}

timing_tests() {
	ti_order
	ti_graph
	ti_kill
	ti_aws
}
