# ownership.sh - whose a live resource is (issue 20, item 1). Every create
# tags its state's lineage (kiln:lineage) and who made it (kiln:owner); plan,
# apply and destroy touch only what carries their state's lineage, or, made
# before lineages, what their state records; `kiln state takeover` is the one
# way to move the rest, and it commits. Two working directories with their
# own state repositories share one simulated cloud (KILN_SIM_DIR), as two
# engineers or a CI runner with the default .kiln/state.git share an account.
# Sourced by run.sh after lib.sh; $KILN is the binary under test.

ow_lineage() { # the lineage of the workspace's state (default, or $1)
	"$KILN" state pull -w "${1:-default}" 2>/dev/null |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["lineage"])'
}

ow_tags() { # WORKSPACE: "ADDRESS LINEAGE OWNER" of each sim resource of it
	python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" "$KILN_SIM_DIR" lineages "$1"
}

ow_dirs() { # $ow/a and $ow/b, each with the quickstart and a state of its own, one cloud
	ow=$(mktemp -d "$E2E_TMP/ow.XXXXXX")
	mkdir "$ow/a" "$ow/b"
	cp "$E2E_ROOT/examples/quickstart.yaml" "$ow/a/kiln.yaml"
	cp "$E2E_ROOT/examples/quickstart.yaml" "$ow/b/kiln.yaml"
	KILN_SIM_DIR=$ow/cloud
	export KILN_SIM_DIR
}

OW_HINT="  hint: kiln never changes, adopts or deletes another state's resources: use the state that owns them (--state URL, KILN_STATE), or another workspace (-w NAME) or cluster name; to move them into this state, run kiln state takeover (see kiln-state(1))"

ow_two_states() {
	ow_dirs

	cd "$ow/a" || exit 1
	check "ownership: the first state applies" 0 --out-has "Apply complete: 5 created" \
		-- "$KILN" apply --auto-approve
	la=$(ow_lineage)
	ow_tags default >tags.txt
	assert "ownership: every resource it made carries its lineage and its author" \
		awk -v l="$la" 'NF < 4 || $2 != l || $3 != "E2E" || $4 != "e2e@example.com" { bad = 1 } END { exit bad || NR != 5 }' tags.txt

	cd "$ow/b" || exit 1
	check "ownership: a second state's plan refuses to create over the first one's resources" 1 \
		--out "" \
		--err "kiln: plan: 5 resources this plan would create already exist in cluster 'quickstart', workspace 'default', owned by another state (lineage $la): sim_bucket.checkpoints, sim_network.main, sim_node_group.trainers and 2 more
$OW_HINT" \
		-- "$KILN" plan
	check "ownership: its apply refuses the same way and creates nothing" 1 \
		--err-has "5 resources this plan would create already exist" \
		-- "$KILN" apply --auto-approve
	check "ownership: its destroy lists the first state's resources and deletes nothing" 0 \
		--out-has "Another state's resources here (never changed, adopted or deleted by this one; kiln state takeover moves them)" \
		--out-has "  ! sim_network.main vpc-" \
		--out-has "(state lineage $la, by E2E e2e@example.com " \
		--out-has "Nothing to destroy." \
		-- "$KILN" destroy --auto-approve
	assert "ownership: and leaves no commit in either state" \
		sh -c '! git --git-dir .kiln/state.git rev-parse -q --verify refs/heads/default >/dev/null &&
			[ "$(git --git-dir ../a/.kiln/state.git rev-list --count default)" = 1 ]'
	"$KILN" plan --destroy --json >destroy.json 2>/dev/null
	assert "ownership: the JSON plan lists them as kiln.foreign, with lineage and owner" \
		python3 -c '
import json, sys
f = json.load(open("destroy.json"))["kiln"]["foreign"]
assert [x["address"] for x in f] == ["sim_bucket.checkpoints", "sim_network.main",
    "sim_node_group.trainers", "sim_role.trainer", "sim_role_policy.trainer"], f
assert all(x["lineage"] == sys.argv[1] and x["owner"].startswith("E2E e2e@example.com ") for x in f), f' "$la"
	assert "ownership: that plan validates against the schema" \
		python3 "$E2E_ROOT/tests/check-plan-schema.py" destroy.json
	check "ownership: the Markdown plan lists them too" 0 \
		--out-has "**Another state's resources here (never changed, adopted or deleted by this one; kiln state takeover moves them)**" \
		--out-has "- sim_network.main vpc-" \
		-- "$KILN" plan --destroy --markdown
	cd "$ow/a" || exit 1
	check "ownership: the first state still plans no changes" 0 \
		--out-has "No changes. Live resources match the spec and the recorded state." \
		-- "$KILN" plan

	# kiln state takeover: bad input first, each refused with nothing changed.
	cd "$ow/b" || exit 1
	check "ownership: takeover refuses an address no other state owns" 1 \
		--err "kiln: state: sim_network.nope is not a resource another state owns in this scope
  hint: kiln plan lists them under \"Another state's resources here\"" \
		-- "$KILN" state takeover sim_network.nope
	check "ownership: takeover refuses a lineage that owns nothing here" 1 \
		--err "kiln: state: no resource of this scope carries lineage 0000
  hint: kiln plan lists each resource's lineage; \"none\" takes those made before lineages" \
		-- "$KILN" state takeover --from 0000
	check "ownership: --from is refused on another state command" 1 \
		--err "kiln: state: --from is for kiln state takeover; see 'kiln help state'" \
		-- "$KILN" state list --from x
	check "ownership: takeover with no spec names the fix" 1 \
		--err "kiln: state: no --spec given and ./kiln.yaml does not exist; name the cluster's spec with --spec FILE" \
		-- sh -c 'cd "$1" && exec "$2" state takeover' sh "$ow" "$KILN"
	ow_tags default >before.txt
	assert "ownership: the refused takeovers retagged nothing" \
		awk -v l="$la" '$2 != l { bad = 1 } END { exit bad }' before.txt

	check "ownership: takeover moves one resource into this state" 0 \
		--out-has "took over sim_network.main (vpc-" \
		--out-has ") from state lineage $la" \
		--out-has "State: commit " \
		-- "$KILN" state takeover sim_network.main
	lb=$(ow_lineage)
	assert "ownership: and records it in a commit with a Kiln-Takeover trailer" \
		sh -c 'git --git-dir .kiln/state.git log -1 --format=%B default >msg.txt &&
			grep -q "^state takeover: 1 resource quickstart/default\$" msg.txt &&
			grep -q "^Kiln-Takeover: sim_network.main vpc-[0-9a-f]* from lineage $1 by E2E e2e@example.com " msg.txt' sh "$la"
	assert "ownership: the resource now carries this state's lineage" \
		sh -c 'grep -q "^sim_network.main $1 " "$2"' sh "$lb" "$(ow_tags default >after.txt; echo after.txt)"
	check "ownership: the rest are taken with a bare takeover" 0 \
		--out-has "took over sim_node_group.trainers (ng-" \
		--out-has "took over sim_bucket.checkpoints (bkt-" \
		-- "$KILN" state takeover
	check "ownership: after it, this state plans no changes" 0 \
		--out-has "No changes." -- "$KILN" plan
	check "ownership: a takeover with nothing left says so" 0 \
		--out "Nothing to take over: every live resource of quickstart/default is this state's." \
		-- "$KILN" state takeover
	cd "$ow/a" || exit 1
	check "ownership: the first state now refuses to plan over them" 1 \
		--err "kiln: plan: 5 resources this plan would create already exist in cluster 'quickstart', workspace 'default', owned by another state (lineage $lb): sim_bucket.checkpoints, sim_network.main, sim_node_group.trainers and 2 more
$OW_HINT" \
		-- "$KILN" plan
	check "ownership: and its destroy deletes none of them" 0 \
		--out-has "0 deleted" -- "$KILN" destroy --auto-approve
	cd "$ow/b" || exit 1
	check "ownership: the state that took them over still plans no changes" 0 \
		--out-has "No changes." -- "$KILN" plan
	check "ownership: and destroys them" 0 \
		--out-has "Destroy complete: 0 created, 0 updated, 0 replaced, 4 deleted, 1 released" \
		-- "$KILN" destroy --auto-approve
	cd "$E2E_ROOT" || exit 1
}

# kiln sprawl looks at the whole account: another state repository's
# cluster is not its orphan, so --destroy never reaches it.
ow_sprawl() {
	ow_dirs
	cd "$ow/a" || exit 1
	"$KILN" apply --auto-approve >/dev/null 2>&1
	cd "$ow/b" || exit 1
	"$KILN" workspace new default >/dev/null 2>&1
	check "ownership: sprawl in another state repository finds no orphan in the first one's cluster" 0 \
		--out-has "Orphans (kiln tags, in no workspace's state): 0, \$0.00/hour" \
		--out-has "  (and 5 owned by a state this repository does not hold, by their kiln:lineage: not orphans, left alone)" \
		-- "$KILN" sprawl --provider sim
	check "ownership: and its --destroy deletes nothing" 0 \
		--out-has "No orphans to delete." -- "$KILN" sprawl --provider sim --destroy --auto-approve
	cd "$ow/a" || exit 1
	check "ownership: the first state's cluster is whole after it" 0 \
		--out-has "No changes." -- "$KILN" plan
	cd "$E2E_ROOT" || exit 1
}

# Made before lineages: adopted only by the state that records them.
ow_legacy() {
	ow_dirs
	cd "$ow/a" || exit 1
	"$KILN" apply --auto-approve -w old >/dev/null 2>&1
	python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" "$KILN_SIM_DIR" unlineage old
	check "ownership: what a state records from before lineages is still its own" 0 \
		--out-has "No changes." -- "$KILN" plan -w old
	cd "$ow/b" || exit 1
	check "ownership: another state refuses to plan over untagged resources it does not record" 1 \
		--err "kiln: plan: 5 resources this plan would create already exist in cluster 'quickstart', workspace 'old', made before kiln tagged its state's lineage and recorded by no state here: sim_bucket.checkpoints, sim_network.main, sim_node_group.trainers and 2 more
$OW_HINT" \
		-- "$KILN" plan -w old
	check "ownership: its plan says they carry no lineage" 0 \
		--out-has "  ! sim_network.main vpc-" \
		--out-has "(no lineage tag: made before kiln tagged lineages, and no state here records it)" \
		-- "$KILN" plan -w old --destroy
	check "ownership: takeover --from none claims them" 0 \
		--out-has "took over sim_network.main (vpc-" \
		--out-has ") from no state (no lineage tag)" \
		-- "$KILN" state takeover -w old --from none
	lb=$(ow_lineage old)
	ow_tags old >tags.txt
	assert "ownership: each now carries the claiming state's lineage" \
		awk -v l="$lb" '$2 != l { bad = 1 } END { exit bad || NR != 5 }' tags.txt
	cd "$ow/a" || exit 1
	check "ownership: the state that recorded them no longer plans over them" 1 \
		--err-has "owned by another state (lineage $lb)" -- "$KILN" plan -w old
	cd "$E2E_ROOT" || exit 1
}

# A first apply killed before its commit: its lock (and its journal) keep
# the lineage its resources carry, so the next apply finishes them.
ow_killed_first_apply() {
	ow=$(mktemp -d "$E2E_TMP/ow.XXXXXX")
	cd "$ow" || exit 1
	cp "$E2E_ROOT/tests/specs/valid/sim-llm-pretrain.yaml" kiln.yaml
	KILN_SIM_DIR=$ow/.kiln/sim
	export KILN_SIM_DIR
	KILN_LOCK_LEASE=1s KILN_SIM_LATENCY_MS=100 "$KILN" apply --auto-approve >out.txt 2>&1 &
	pid=$!
	i=0
	while ! grep -q "created \[id" out.txt && [ $i -lt 200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	kill -KILL $pid
	wait $pid 2>/dev/null
	rm -rf .kiln/journal # the cloud's tags and the lock are all there is
	check "ownership: a plan after a first apply killed before its commit adopts what it made" 2 \
		--out-has "to adopt." -- "$KILN" plan --detailed-exitcode
	check "ownership: the next apply takes over the dead lock and finishes the cluster" 0 \
		--out-has "Apply complete:" -- "$KILN" apply --auto-approve --lock-timeout 10s
	"$KILN" state pull >.state.json 2>/dev/null
	assert "ownership: with nothing duplicated, and every resource under the state's lineage" \
		python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" .kiln/sim .state.json
	cd "$E2E_ROOT" || exit 1
}

ownership_tests() {
	(
		unset KILN_SIM_DIR KILN_SIM_FAIL_RATE KILN_SIM_CAPACITY KILN_SIM_LATENCY_MS KILN_STATE \
			KILN_WORKSPACE KILN_STATE_KEY KILN_STATE_KEY_FILE
		export KILN_AUTHOR="E2E <e2e@example.com>" KILN_SIM_READY_MS=20
		ow_two_states
		ow_sprawl
		ow_legacy
		ow_killed_first_apply
		echo "$E2E_PASSED $E2E_FAILED" >"$E2E_TMP/.ownership-counts"
	)
	read -r E2E_PASSED E2E_FAILED <"$E2E_TMP/.ownership-counts"
}
