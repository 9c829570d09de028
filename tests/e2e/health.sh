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
	he_aws
}
