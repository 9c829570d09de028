# health.sh - end-to-end tests of what kiln knows of each node (issue 14,
# health): the per-node live view `nodes` on sim and on aws against moto,
# checked with an independent reader (sim_inspect.py, boto3's
# aws_inspect.py). Sourced by run.sh after lib.sh; $KILN is the binary.

he_new_dir() { # SPEC: a fresh working directory holding SPEC as kiln.yaml
	he_dir=$(mktemp -d "$E2E_TMP/health.XXXXXX")
	cd "$he_dir" || exit 1
	cp "$E2E_ROOT/$1" kiln.yaml
}

# "ID PRIVATE_IP" of each recorded node of GROUP, in the recorded order.
he_state_nodes() { # TYPE.GROUP
	"$KILN" state pull 2>/dev/null | python3 -c '
import json, sys
res = json.load(sys.stdin)["resources"][sys.argv[1]]
for n in res["attrs"]["nodes"]:
    print(n["id"], n["private_ip"] or "-")' "$1"
}

he_sim_nodes() {
	he_new_dir examples/quickstart.yaml
	check "health: sim apply records each node of the group" 0 \
		--out-has "Apply complete: 5 created" -- "$KILN" apply --auto-approve
	he_state_nodes sim_node_group.trainers >got.txt
	python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" .kiln/sim nodes sim_node_group.trainers >want.txt
	compare "health: the recorded nodes are the sim's, oldest first, with addresses from 10.42.0.0/16" \
		want.txt got.txt
	assert "health: sim nodes have addresses of the spec's network and say they are simulated" \
		sh -c '"$1" state pull | python3 -c "
import json, sys
ns = json.load(sys.stdin)[\"resources\"][\"sim_node_group.trainers\"][\"attrs\"][\"nodes\"]
assert len(ns) == 2, ns
for i, n in enumerate(ns):
    assert n[\"index\"] == i and n[\"private_ip\"].startswith(\"10.42.\"), n
    assert n[\"simulated\"] is True and n[\"state\"] == \"running\", n
"' sh "$KILN"
	check "health: the node view is computed, not diffed: a second plan has no changes" 0 \
		--out-has "No changes." -- "$KILN" plan --detailed-exitcode
	cd "$E2E_ROOT" || exit 1
}

# The node at INDEX of GROUP in the sim (oldest first): its id.
he_sim_id() { # GROUP INDEX
	python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" .kiln/sim nodes "sim_node_group.$1" |
		sed -n "$(($2 + 1))p" | cut -d' ' -f1
}

# apply waits for the nodes it launched (sim: KILN_SIM_HEALTH_MS after they run).
he_sim_wait() {
	he_new_dir examples/quickstart.yaml
	sed -i '/^budget:/d' kiln.yaml
	check "health: the default wait ends as soon as every node reported healthy" 0 \
		--out-has "Health: waiting up to 20m for the nodes to report (--health-timeout)." \
		--out-has "  trainers: 2 of 2 nodes healthy" \
		-- env -u KILN_HEALTH_TIMEOUT "$KILN" apply --auto-approve
	sed -i 's/count: 2/count: 3/' kiln.yaml
	python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" .kiln/sim report sim_node_group.trainers 0 \
		"unhealthy: 7 of 8 GPUs (nvidia-smi lists 7; p5.48xlarge has 8)"
	bad=$(he_sim_id trainers 0)
	check "health: a grown group with an unhealthy node names it and exits 4" 4 \
		--out-has "  trainers: 2 of 3 nodes healthy, 1 unhealthy: $bad (7 of 8 GPUs (nvidia-smi lists 7; p5.48xlarge has 8))" \
		--err-has "kiln: apply: the apply is recorded, but not every node is healthy (exit status 4)
  hint: \`kiln status\` shows each node; \`kiln repair\` replaces the unhealthy ones" \
		-- "$KILN" apply --auto-approve --health-timeout 1m
	check "health: the state was committed before the wait: the next plan has no changes" 0 \
		--out-has "No changes." -- "$KILN" plan --detailed-exitcode
	sed -i 's/count: 3/count: 4/' kiln.yaml
	check "health: nodes that do not report in time are named after the timeout, exit 4" 4 \
		--out-has "Health: waiting up to 1s for the nodes to report (--health-timeout)." \
		--out-has "  trainers: 2 of 4 nodes healthy, 1 unhealthy: $bad (" \
		-- env KILN_SIM_HEALTH_MS=600000 "$KILN" apply --auto-approve --health-timeout 1s
	late=$(he_sim_id trainers 3)
	assert "health: the line names the node that did not report" \
		grep -qx "  trainers: 2 of 4 nodes healthy, 1 unhealthy: $bad (7 of 8 GPUs (nvidia-smi lists 7; p5.48xlarge has 8)), 1 not reported after 1s: $late" "$E2E_OUT"
	check "health: status shows each node with its health and reason" 0 \
		--out-has "    0 $bad  10.42.0." \
		--out-has "  sim-1a  running  unhealthy: 7 of 8 GPUs (nvidia-smi lists 7; p5.48xlarge has 8)" \
		--out-has "  sim-1a  running  healthy: 8/8 GPUs" \
		--out-has "    3 $late  10.42.0." \
		-- "$KILN" status
	assert "health: and says which node has not reported" \
		grep -q "^    3 $late  10\.42\.0\.[0-9]* (simulated)  sim-1a  running  not reported$" "$E2E_OUT"
	check "health: status --json gives each group's members and health" 0 \
		--out-has '"not_reported": [
          "'"$late"'"
        ],' \
		--out-has '"reason": "7 of 8 GPUs (nvidia-smi lists 7; p5.48xlarge has 8)"' \
		--out-has '"members": [' --out-has '"health_reason": "8/8 GPUs",' \
		-- "$KILN" status --json
	sed -i 's/count: 4/count: 5/' kiln.yaml
	check "health: --json gives the groups' health in one health event" 4 \
		--out-has '"@message":"trainers: 3 of 5 nodes healthy, 1 unhealthy: '"$bad"' (7 of 8 GPUs (nvidia-smi lists 7; p5.48xlarge has 8)), 1 not reported after 2s: '"$late"'"' \
		--out-has '"type":"health","hook":{"groups":[{"group":"trainers","address":"sim_node_group.trainers",' \
		--out-has '"unhealthy":[{"id":"'"$bad"'","reason":"7 of 8 GPUs (nvidia-smi lists 7; p5.48xlarge has 8)"}]' \
		--out-has '"timeout":"2s","healthy":false' \
		-- "$KILN" apply --auto-approve --json --health-timeout 2s
	sed -i 's/count: 5/count: 6/' kiln.yaml
	check "health: --health-timeout 0 does not wait" 0 --out-has "Apply complete" \
		-- env -u KILN_HEALTH_TIMEOUT "$KILN" apply --auto-approve --health-timeout 0
	assert "health: and says nothing of health" sh -c '! grep -q Health: "$1"' sh "$E2E_OUT"
	check "health: --health-timeout banana is refused before anything" 1 --out "" \
		--err "kiln: apply: --health-timeout 'banana' is not a duration; write a duration of at most 24h like 20m, 90s or 1h, or 0 not to wait" \
		-- "$KILN" apply --auto-approve --health-timeout banana
	check "health: KILN_HEALTH_TIMEOUT=banana is refused the same way" 1 --out "" \
		--err "kiln: up: KILN_HEALTH_TIMEOUT 'banana' is not a duration; write a duration of at most 24h like 20m, 90s or 1h, or 0 not to wait" \
		-- env KILN_HEALTH_TIMEOUT=banana "$KILN" up --auto-approve
	cd "$E2E_ROOT" || exit 1
	he_new_dir examples/quickstart.yaml
	sed -i '/    role: trainer/d; /^iam:/,$d' kiln.yaml
	check "health: a group without a role is said to be unable to report, not waited for" 0 \
		--out-has "  trainers: 2 nodes cannot report their health: the group has no role, so its nodes have no credentials to tag themselves with their health" \
		-- env KILN_SIM_HEALTH_MS=600000 "$KILN" apply --auto-approve --health-timeout 1m
	python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" .kiln/sim report sim_node_group.trainers 0 \
		"$(printf 'all good\033[2J')"
	check "health: a report that is neither healthy nor unhealthy is shown unreadable, escapes removed" 0 \
		--out-has "    health not reported: the group has no role, so its nodes have no credentials to tag themselves with their health" \
		--out-has "  running  unhealthy: unreadable health report: \"all good?[2J\"" \
		--out-has "  running  not reported (cannot report)" \
		-- "$KILN" status
	cd "$E2E_ROOT" || exit 1
}

he_aws_nodes() {
	he_new_dir tests/e2e/specs/aws-cluster.yaml
	check "health: aws apply records each instance of the groups" 0 \
		--out-has "Apply complete: 11 created" -- "$KILN" apply --auto-approve
	"$KILN" state pull >.state.json 2>/dev/null
	assert "health: boto3 finds the recorded nodes of the gang: ids, order, zone, addresses, state" \
		"$AWS_PY" "$E2E_ROOT/tests/e2e/aws_inspect.py" nodes .state.json e2e default trainers
	assert "health: boto3 finds the public node's public address recorded" \
		"$AWS_PY" "$E2E_ROOT/tests/e2e/aws_inspect.py" nodes .state.json e2e default login
	check "health: the aws node view is computed, not diffed: a second plan has no changes" 0 \
		--out-has "No changes." -- "$KILN" plan --detailed-exitcode
	"$KILN" destroy --auto-approve >/dev/null 2>&1
	cd "$E2E_ROOT" || exit 1
}

he_aws() {
	aws_moto_up "health: the aws tests" "$E2E_TMP/moto-health" || return 0
	he_aws_nodes
	aws_moto_down "$E2E_TMP/moto-health"
}

health_tests() {
	he_sim_nodes
	he_sim_wait
	he_aws
}
