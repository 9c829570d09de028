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

# kiln repair on sim: just the unhealthy node, all or nothing, one commit.
he_sim_repair() {
	he_new_dir examples/quickstart.yaml
	"$KILN" apply --auto-approve >/dev/null 2>&1
	python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" .kiln/sim report sim_node_group.trainers 0 \
		"unhealthy: 7 of 8 GPUs (nvidia-smi lists 7; p5.48xlarge has 8)"
	bad=$(he_sim_id trainers 0)
	good=$(he_sim_id trainers 1)
	check "health: repair nosuchgroup names the groups there are" 1 --out "" \
		--err "kiln: repair: 'nosuchgroup' is not a node group of this workspace; its node groups: trainers
  hint: name one of them, or none to repair every group" \
		-- "$KILN" repair nosuchgroup --auto-approve
	check "health: repair without a terminal and without --auto-approve refuses" 1 --out "" \
		--err "kiln: repair: standard input is not a terminal, so kiln cannot ask for approval; nothing was changed; pass --auto-approve" \
		-- "$KILN" repair
	python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" .kiln/sim nodes sim_node_group.trainers >before.txt
	head=$(git -C .kiln/state.git rev-parse refs/heads/default)
	check "health: a gang's replacement without capacity fails and touches nothing" 1 \
		--out-has "  ~ sim_node_group.trainers  replace 1 of 2 nodes" \
		--out-has "Repair incomplete: 0 nodes replaced in 0 groups." \
		--err-has "sim: InsufficientInstanceCapacity (simulated): 1 more × p5.48xlarge (H100) requested, 0 free in sim-1a" \
		-- env KILN_SIM_CAPACITY=H100=2 "$KILN" repair --auto-approve
	python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" .kiln/sim nodes sim_node_group.trainers >after.txt
	compare "health: and the group keeps its nodes" before.txt after.txt
	assert "health: and nothing is committed" \
		test "$(git -C .kiln/state.git rev-parse refs/heads/default)" = "$head"
	check "health: repair replaces just the unhealthy node and waits for the new one" 0 \
		--out-has "kiln repair: quickstart/default
  ~ sim_node_group.trainers  replace 1 of 2 nodes
      - $bad  unhealthy: 7 of 8 GPUs (nvidia-smi lists 7; p5.48xlarge has 8)

Repair: 1 node to replace in 1 group." \
		--out-has "sim_node_group.trainers: replaced $bad with i-" \
		--out-has "Repair complete: 1 node replaced in 1 group." \
		--out-has "  trainers: 2 of 2 nodes healthy" \
		-- env KILN_SIM_CAPACITY=H100=3 "$KILN" repair --auto-approve --health-timeout 1m
	python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" .kiln/sim nodes sim_node_group.trainers | cut -d' ' -f1 >now.txt
	assert "health: the sim holds the healthy node and a new one, not the bad one" \
		sh -c 'grep -qx "$1" now.txt && ! grep -qx "$2" now.txt && [ "$(wc -l <now.txt)" = 2 ]' sh "$good" "$bad"
	assert "health: the commit names the replaced id in a trailer" \
		sh -c 'git -C .kiln/state.git log -1 --format=%B refs/heads/default | grep -qx "Kiln-Replaced: sim_node_group.trainers $1"' sh "$bad"
	en_inspect "health: the sim and the state agree after the repair"
	head=$(git -C .kiln/state.git rev-parse refs/heads/default)
	check "health: with nothing unhealthy repair says so, exits 0" 0 \
		--out "Nothing to repair: no node of any group reported itself unhealthy." \
		-- "$KILN" repair --auto-approve
	assert "health: and commits nothing" \
		test "$(git -C .kiln/state.git rev-parse refs/heads/default)" = "$head"
	check "health: a plan after the repair has no changes" 0 --out-has "No changes." \
		-- "$KILN" plan --detailed-exitcode
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

# Against moto with IAM enforcement: a python "node" (health_node.py) tags its
# own instance with the credentials EC2 would give it, as the boot script does.
he_aws_reports() {
	he_im=$E2E_TMP/moto-health-iam
	mkdir -p "$he_im"
	if ! out=$(INITIAL_NO_AUTH_ACTION_COUNT=3 sh "$E2E_ROOT/tests/moto/server.sh" start "$he_im" 2>&1); then
		printf '%s\n' "$out" >"$E2E_TMP/.moto"
		fail "health: moto with IAM enforcement starts" "$E2E_TMP/.moto"
		return 0
	fi
	# shellcheck disable=SC2064
	trap "sh '$E2E_ROOT/tests/moto/server.sh' stop '$E2E_TMP/moto-health' >/dev/null 2>&1; sh '$E2E_ROOT/tests/moto/server.sh' stop '$he_im' >/dev/null 2>&1; rm -rf '$E2E_TMP'" EXIT
	he_new_dir tests/e2e/specs/aws-cluster.yaml
	he_ep=AWS_ENDPOINT_URL=http://127.0.0.1:$(cat "$he_im/moto.port")
	echo '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}' >admin.json
	he_admin=$(env "$he_ep" "$AWS_PY" "$E2E_ROOT/tests/e2e/aws_inspect.py" user admin admin.json)
	he_node="$AWS_PY $E2E_ROOT/tests/e2e/health_node.py"
	# The nodes report while apply waits: one healthy, one missing a GPU.
	# shellcheck disable=SC2086
	env "$he_ep" $he_admin $he_node tag e2e default trainers 0 "healthy: 8/8 GPUs, 32/32 EFA" >good.id 2>node0.err &
	he_pid0=$!
	# shellcheck disable=SC2086
	env "$he_ep" $he_admin $he_node tag e2e default trainers 1 \
		"unhealthy: 7 of 8 GPUs (nvidia-smi lists 7; p5.48xlarge has 8)" >bad.id 2>node1.err &
	he_pid1=$!
	# shellcheck disable=SC2086
	check "health: aws apply waits for the nodes' own reports and names the unhealthy one, exit 4" 4 \
		--out-has "Health: waiting up to 1m for the nodes to report (--health-timeout)." \
		--out-has "  login: 1 node cannot report its health: the group has no role, so its nodes have no credentials to tag themselves with their health" \
		--out-has "  trainers: 1 of 2 nodes healthy, 1 unhealthy: " \
		-- env "$he_ep" $he_admin "$KILN" apply --auto-approve --health-timeout 1m
	wait "$he_pid0" "$he_pid1"
	bad=$(cat bad.id)
	assert "health: the line names the instance that reported unhealthy, with its reason" \
		grep -qx "  trainers: 1 of 2 nodes healthy, 1 unhealthy: $bad (7 of 8 GPUs (nvidia-smi lists 7; p5.48xlarge has 8))" "$E2E_OUT"
	# shellcheck disable=SC2086
	assert "health: with its role's credentials a node tags itself kiln:health, and neither another instance nor another key" \
		env "$he_ep" $he_admin $he_node limits e2e default trainers
	# GPU metrics (issue 17): the trainers' role lets their CloudWatch agent publish
	# into CWAgent and nowhere else.
	# shellcheck disable=SC2086
	check "health: with its role's credentials a GPU node puts metrics into CWAgent and into no other namespace" 0 \
		--out "PutMetricData into CWAgent: allowed
PutMetricData into KilnOther: AccessDeniedException" -- env "$he_ep" $he_admin $he_node metrics e2e default trainers
	# The harness's own proof: the refusal is the namespace condition's, not the
	# emulation's (the same action without the condition may put anywhere).
	echo '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "cloudwatch:PutMetricData", "Resource": "*"}]}' >wide.json
	he_wide=$(env "$he_ep" $he_admin "$AWS_PY" "$E2E_ROOT/tests/e2e/aws_inspect.py" user wide wide.json)
	# shellcheck disable=SC2086
	check "health: moto's IAM emulation: PutMetricData without the namespace condition puts into any namespace" 0 \
		--out "allowed" -- env "$he_ep" $he_wide $he_node put-metric KilnOther
	# shellcheck disable=SC2086
	check "health: aws status shows each node's report" 0 \
		--out-has "  us-east-1a  running  unhealthy: 7 of 8 GPUs (nvidia-smi lists 7; p5.48xlarge has 8)" \
		--out-has "  us-east-1a  running  healthy: 8/8 GPUs" \
		--out-has "    health not reported: the group has no role, so its nodes have no credentials to tag themselves with their health" \
		-- env "$he_ep" $he_admin "$KILN" status
	# shellcheck disable=SC2086
	env "$he_ep" $he_admin "$KILN" state pull >.state.json 2>/dev/null
	# shellcheck disable=SC2086
	assert "health: boto3 finds the nodes recorded: ids, order, addresses (health as of the commit)" \
		env "$he_ep" $he_admin "$AWS_PY" "$E2E_ROOT/tests/e2e/aws_inspect.py" nodes .state.json e2e default trainers no-health
	sed -i 's/count: 2/count: 3/' kiln.yaml
	# shellcheck disable=SC2086
	check "health: a node that never reports is named after --health-timeout 5s, exit 4" 4 \
		--out-has "Health: waiting up to 5s for the nodes to report (--health-timeout)." \
		-- env "$he_ep" $he_admin "$KILN" apply --auto-approve --health-timeout 5s
	# shellcheck disable=SC2086
	late=$(env "$he_ep" $he_admin $he_node newest e2e default trainers)
	assert "health: the timeout line is exact" \
		grep -qx "  trainers: 1 of 3 nodes healthy, 1 unhealthy: $bad (7 of 8 GPUs (nvidia-smi lists 7; p5.48xlarge has 8)), 1 not reported after 5s: $late" "$E2E_OUT"
	good=$(cat good.id)
	# The replacement reports healthy as soon as it runs; the silent node stays silent.
	# shellcheck disable=SC2086
	env "$he_ep" $he_admin $he_node tag-new e2e default trainers "healthy: 8/8 GPUs, 32/32 EFA" \
		"$good" "$bad" "$late" >new.id 2>new.err &
	he_pid2=$!
	# shellcheck disable=SC2086
	check "health: aws repair replaces just the unhealthy instance; the silent one is named after the wait, exit 4" 4 \
		--out-has "      - $bad  unhealthy: 7 of 8 GPUs (nvidia-smi lists 7; p5.48xlarge has 8)" \
		--out-has "aws_instance_group.trainers: replaced $bad with i-" \
		--out-has "Repair complete: 1 node replaced in 1 group." \
		--out-has "  trainers: 2 of 3 nodes healthy, 1 not reported after 10s: $late" \
		--err-has "kiln: repair: the repair is recorded, but not every node is healthy (exit status 4)" \
		-- env "$he_ep" $he_admin "$KILN" repair --auto-approve --health-timeout 10s
	wait "$he_pid2"
	new=$(cat new.id)
	# shellcheck disable=SC2086
	assert "health: boto3 finds the unhealthy instance terminated" \
		sh -c 'env "$1" $2 $3 show "$4" | grep -Eq "^(shutting-down|terminated) "' sh "$he_ep" "$he_admin" "$he_node" "$bad"
	# shellcheck disable=SC2086
	assert "health: and the new one running with the group's tags" \
		sh -c 'env "$1" $2 $3 show "$4" | grep -qx "running kiln:address=aws_instance_group.trainers kiln:cluster=e2e kiln:workspace=default"' sh "$he_ep" "$he_admin" "$he_node" "$new"
	# shellcheck disable=SC2086
	assert "health: the others are untouched" \
		sh -c 'env "$1" $2 $3 show "$4" | grep -q "^running " && env "$1" $2 $3 show "$5" | grep -q "^running "' sh "$he_ep" "$he_admin" "$he_node" "$good" "$late"
	# shellcheck disable=SC2086
	assert "health: the new node boots with the group's user data and carries its kiln:user-data tag" \
		env "$he_ep" $he_admin "$AWS_PY" "$E2E_ROOT/tests/e2e/aws_inspect.py" expect e2e default user-data=trainers:efa
	# shellcheck disable=SC2086
	env "$he_ep" $he_admin "$KILN" state pull >.state.json 2>/dev/null
	# shellcheck disable=SC2086
	assert "health: boto3 finds the repaired group recorded as it is (health as of the commit)" \
		env "$he_ep" $he_admin "$AWS_PY" "$E2E_ROOT/tests/e2e/aws_inspect.py" nodes .state.json e2e default trainers no-health
	# shellcheck disable=SC2086
	check "health: and the next aws plan has no changes" 0 --out-has "No changes." \
		-- env "$he_ep" $he_admin "$KILN" plan --detailed-exitcode
	# A repair killed with SIGKILL once the replacement launched, before the bad
	# node is terminated: the next repair adopts that launch (same client token)
	# and names it (issue 33, finding 14).
	# shellcheck disable=SC2086
	env "$he_ep" $he_admin $he_node tag-new e2e default trainers "unhealthy: 6 of 8 GPUs" \
		"$good" "$late" "$bad" >/dev/null 2>&1
	# shellcheck disable=SC2086
	check "health: a repair killed by SIGKILL after its launch" 137 \
		-- env "$he_ep" $he_admin KILN_TEST_KILL_AT=replace KILN_LOCK_LEASE=1s "$KILN" repair --auto-approve --health-timeout 0
	# shellcheck disable=SC2086
	he_adopted=$(env "$he_ep" $he_admin $he_node newest e2e default trainers)
	# shellcheck disable=SC2086
	check "health: the next repair adopts the launch and names the node it adopted" 0 \
		--out-has "Repair complete: 1 node replaced in 1 group." \
		-- env "$he_ep" $he_admin "$KILN" repair --auto-approve --health-timeout 0 --lock-timeout 10s
	assert "health: the line names the replaced and the adopted instance" \
		grep -qx "aws_instance_group.trainers: replaced $new with $he_adopted" "$E2E_OUT"
	sh "$E2E_ROOT/tests/moto/server.sh" stop "$he_im" >/dev/null 2>&1
	cd "$E2E_ROOT" || exit 1
}

he_aws() {
	aws_moto_up "health: the aws tests" "$E2E_TMP/moto-health" || return 0
	he_aws_nodes
	he_aws_reports
	aws_moto_down "$E2E_TMP/moto-health"
}

health_tests() {
	he_sim_nodes
	he_sim_wait
	he_sim_repair
	he_aws
}
