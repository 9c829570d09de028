# engine.sh - end-to-end tests of the engine on the sim provider: plan
# (text, JSON checked against tests/plan-schema.json, Markdown, saved plans),
# apply, update, replace, delete, drift, destroy, graph, faults (transient
# errors, capacity), interrupts and processes killed with SIGKILL. Sourced by
# run.sh after lib.sh; $KILN is the binary under test. An independent reader
# (sim_inspect.py) checks what the sim really holds.

en_new_dir() { # SPEC: a fresh working directory holding SPEC as kiln.yaml
	en_dir=$(mktemp -d "$E2E_TMP/engine.XXXXXX")
	cd "$en_dir" || exit 1
	cp "$E2E_ROOT/$1" kiln.yaml
}

en_await_create() { # TRIES: until a background apply's out.txt shows a create (0.05 s a try)
	i=0
	while ! grep -qs "created \[id" out.txt && [ $i -lt "$1" ]; do
		sleep 0.05
		i=$((i + 1))
	done
}

en_inspect() { # NAME: the sim and the state agree, with no duplicate
	"$KILN" state pull >.state.json 2>/dev/null || echo '{"resources": {}}' >.state.json
	assert "$1" python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" .kiln/sim .state.json
}

en_schema() { # NAME FILE: FILE is a plan document the schema accepts
	assert "$1" python3 "$E2E_ROOT/tests/check-plan-schema.py" "$2"
}

en_lifecycle() {
	en_new_dir examples/quickstart.yaml
	check "engine: plan on a fresh directory shows creates and exits 2" 2 \
		--out-has "kiln plan: quickstart/default on sim — a simulation: nothing real is created or billed" \
		--out-has "  + sim_node_group.trainers  create" \
		--out-has "instance_type:    \"p5.48xlarge\"" \
		--out-has "sim_node_group.trainers: instance_type: cheapest with 8× H100: p5.48xlarge at \$98.32/h" \
		--out-has "Plan: 5 to create, 0 to update, 0 to replace, 0 to delete, 0 to adopt." \
		-- "$KILN" plan --detailed-exitcode
	assert "engine: plan creates nothing (no state repository, no sim directory)" \
		sh -c '[ ! -e .kiln/state.git ] && [ ! -e .kiln/sim ]'
	check "engine: apply without a terminal and without --auto-approve refuses" 1 --out "" \
		--err "kiln: apply: standard input is not a terminal, so kiln cannot ask for approval; nothing was changed; review with \`kiln plan --out plan.kiln\`, then \`kiln apply plan.kiln\`; or pass --auto-approve" \
		-- "$KILN" apply
	check "engine: destroy without a terminal hints a destroy plan, not a plain one" 1 --out "" \
		--err "kiln: destroy: standard input is not a terminal, so kiln cannot ask for approval; nothing was changed; review with \`kiln plan --destroy --out destroy.kiln\`, then \`kiln apply destroy.kiln\`; or pass --auto-approve" \
		-- "$KILN" destroy
	check "engine: down without a terminal hints a destroy plan too" 1 --out "" \
		--err "kiln: down: standard input is not a terminal, so kiln cannot ask for approval; nothing was changed; review with \`kiln plan --destroy --out destroy.kiln\`, then \`kiln apply destroy.kiln\`; or pass --auto-approve" \
		-- "$KILN" down
	check "engine: apply creates every resource in dependency order" 0 \
		--out-has "sim_network.main: created [id vpc-" \
		--out-has "sim_node_group.trainers: create: waiting for ng-" \
		--out-has "Apply complete: 5 created, 0 updated, 0 replaced, 0 deleted." \
		-- "$KILN" apply --auto-approve
	en_inspect "engine: after apply the sim holds exactly what the state records"
	check "engine: the apply is one commit in the log" 0 \
		--out-has "apply: 5 created, 0 updated, 0 replaced, 0 deleted (quickstart/default)" \
		-- "$KILN" log
	check "engine: the commit carries the plan and spec digests" 0 \
		--out-has "Kiln-Plan-Digest: sha256:" --out-has "Kiln-Spec-Digest: sha256:" \
		--out-has "Kiln-Result: complete" \
		-- "$KILN" show default
	check "engine: plan after apply shows no changes and exits 0" 0 \
		--out-has "No changes. Live resources match the spec and the recorded state." \
		-- "$KILN" plan --detailed-exitcode
	check "engine: a second apply has nothing to do" 0 --out-has "Nothing to apply." \
		-- "$KILN" apply --auto-approve
	check "engine: the join token is not recorded in plaintext without a key" 0 \
		--out-has '"join_token":"(sensitive)"' -- "$KILN" state show sim_node_group.trainers

	sed -i 's/count: 2/count: 3/' kiln.yaml
	check "engine: a changed count is an update in place with its policy" 2 \
		--out-has "  ~ sim_node_group.trainers  update in place" \
		--out-has "count:  2 → 3   (live: nodes are added or removed in place)" \
		--out-has "Plan: 0 to create, 1 to update, 0 to replace, 0 to delete, 0 to adopt." \
		-- "$KILN" plan --detailed-exitcode
	check "engine: apply updates it" 0 --out-has "Apply complete: 0 created, 1 updated" \
		-- "$KILN" apply --auto-approve
	assert "engine: the sim has 3 nodes in the group" sh -c \
		'"$1" state show sim_node_group.trainers --json | grep -q "\"count\": 3"' sh "$KILN"

	sed -i 's/    role: trainer/    role: trainer\n    image: img-2/' kiln.yaml
	check "engine: a force-new attribute is a replace naming it" 2 \
		--out-has "  -/+ sim_node_group.trainers  replace: image forces replacement" \
		--out-has 'image:  null → "img-2"   (replace: ' \
		-- "$KILN" plan --detailed-exitcode
	old_id=$("$KILN" state show sim_node_group.trainers --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
	check "engine: apply replaces it" 0 --out-has "0 created, 0 updated, 1 replaced, 0 deleted" \
		-- "$KILN" apply --auto-approve
	new_id=$("$KILN" state show sim_node_group.trainers --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
	assert "engine: the replacement has a new id" test "$old_id" != "$new_id"
	en_inspect "engine: after the replace the old group is gone from the sim"

	python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" .kiln/sim set sim_node_group.trainers count 7
	check "engine: drift made in the sim is shown even with the spec unchanged" 2 \
		--out-has "Drift: live resources that differ from the recorded state" \
		--out-has "  ~ sim_node_group.trainers  changed outside kiln" \
		--out-has "count:  3 → 7" \
		--out-has "1 drifted." \
		-- "$KILN" plan --detailed-exitcode
	check "engine: --refresh=false trusts the state and sees no drift" 0 \
		--out-has "No changes." -- "$KILN" plan --detailed-exitcode --refresh=false
	check "engine: apply puts the drifted count back" 0 --out-has "1 updated" \
		-- "$KILN" apply --auto-approve
	python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" .kiln/sim rm sim_role_policy.trainer
	check "engine: a resource deleted outside kiln is drift and is created again" 2 \
		--out-has "  - sim_role_policy.trainer  deleted outside kiln" \
		--out-has "  + sim_role_policy.trainer  create" \
		-- "$KILN" plan --detailed-exitcode
	"$KILN" apply --auto-approve >/dev/null 2>&1

	check "engine: plan --json is one document" 0 -- "$KILN" plan --json
	cp "$E2E_OUT" plan.json
	en_schema "engine: the JSON plan validates against tests/plan-schema.json" plan.json
	check "engine: --json and --markdown together are refused" 1 \
		--err "kiln: plan: --json and --markdown cannot be combined; pick one" \
		-- "$KILN" plan --json --markdown

	# Saved plans: applied as made, refused once stale.
	sed -i 's/count: 3/count: 1/' kiln.yaml
	check "engine: plan --markdown is a pull-request comment" 0 \
		--out-has "### kiln plan: quickstart/default (sim)" --out-has "| update | 1 |" \
		--out-has '```diff' -- "$KILN" plan --markdown
	check "engine: plan --out saves a plan file" 0 --out-has "Saved the plan to p1.kiln" \
		-- "$KILN" plan --out p1.kiln
	assert "engine: the plan file is private (0600)" sh -c '[ "$(stat -c %a p1.kiln)" = 600 ]'
	check "engine: plan --out a directory is refused, naming it and the fix" 1 --out "" \
		--err "kiln: plan: cannot write plan file .: it is a directory
  hint: give the name of a file, such as ./plan.kiln" \
		-- "$KILN" plan --out .
	check "engine: an empty -w is refused, not taken for default" 1 --out "" \
		--err "kiln: plan: the workspace name given to -w is empty; give a workspace name, such as -w staging, or drop -w for the default workspace" \
		-- "$KILN" plan -w ""
	check "engine: an empty KILN_WORKSPACE is refused, not taken for default" 1 --out "" \
		--err "kiln: plan: KILN_WORKSPACE is set but empty; set it to a workspace name, or unset it for the default workspace (unset KILN_WORKSPACE)" \
		-- env KILN_WORKSPACE= "$KILN" plan
	check "engine: an empty KILN_WORKSPACE is refused by apply PLANFILE too" 1 --out "" \
		--err "kiln: apply: KILN_WORKSPACE is set but empty; set it to a workspace name, or unset it for the default workspace (unset KILN_WORKSPACE)" \
		-- env KILN_WORKSPACE= "$KILN" apply p1.kiln
	check "engine: an empty KILN_WORKSPACE still lets --help answer" 0 \
		--out-has "Usage: kiln plan" -- env KILN_WORKSPACE= "$KILN" plan --help
	check "engine: show renders a plan file" 0 \
		--out-has "~ sim_node_group.trainers  update in place" -- "$KILN" show p1.kiln
	cp p1.kiln p2.kiln
	check "engine: apply PLANFILE applies it without asking" 0 \
		--out-has "Apply complete: 0 created, 1 updated" -- "$KILN" apply p1.kiln
	check "engine: a plan file made before another apply is refused as stale" 1 \
		--err-has "kiln: apply: p2.kiln is stale: it was made from state commit " \
		--err-has "but workspace 'default' is now at " \
		-- "$KILN" apply p2.kiln
	# Another state repository manages a cluster of its own (another sim
	# cloud): over this one's resources it would be refused for ownership.
	"$KILN" workspace new -w default --state other.git >/dev/null 2>&1
	KILN_SIM_DIR=other-sim "$KILN" apply --auto-approve --state other.git >/dev/null 2>&1
	KILN_SIM_DIR=other-sim "$KILN" plan --state other.git --out p5.kiln >/dev/null 2>&1
	other=$(git --git-dir=other.git rev-parse refs/heads/default)
	check "engine: a plan file made with another state repository says so, not \"applied since\"" 1 \
		--out "" --err "kiln: apply: p5.kiln was made with another state repository: its state commit ${other%"${other#????????????}"} is not in .kiln/state.git
  hint: apply it with the state it was made from (--state or KILN_STATE), or make and review a plan here: kiln plan kiln.yaml --out p5.kiln" \
		-- "$KILN" apply p5.kiln
	rm -rf other.git p5.kiln
	"$KILN" plan --out p3.kiln >/dev/null 2>&1
	sed -i 's/count: 1/count: 2/' kiln.yaml
	check "engine: a plan file whose spec changed is refused as stale" 1 \
		--err-has "kiln: apply: p3.kiln is stale: the spec kiln.yaml changed since the plan was made" \
		-- "$KILN" apply p3.kiln
	printf 'x' >>p3.kiln
	check "engine: a modified plan file is refused" 1 --err-has "p3.kiln" -- "$KILN" apply p3.kiln

	# A plan file edited with its digest computed again: what it says must be
	# what the spec and the state give, or nothing is done.
	"$KILN" plan --out p4.kiln >/dev/null 2>&1
	cp p4.kiln p5.kiln
	sed '0,/"count": 2/s//"count": 3/' p4.kiln >p7.kiln
	python3 "$E2E_ROOT/tests/e2e/approve_py.py" edit p4.kiln sim_role.trainer \
		change.actions '["delete"]'
	check "engine: a plan file edited to delete a resource the spec declares is refused" 1 \
		--out "" \
		--err "kiln: apply: p4.kiln does not match the plan its spec and state give now: in the change of sim_role.trainer, change.actions is [\"delete\"] in the file, but [\"no-op\"] now; nothing was changed
  hint: kiln carries out a plan file only as kiln made it, and this one was edited or the cloud changed since it was made; make and review a new plan: kiln plan kiln.yaml --out p4.kiln" \
		-- "$KILN" apply p4.kiln
	assert "engine: the refused plan file deleted nothing" \
		sh -c 'python3 "$0" .kiln/sim ids | grep -q " sim_role.trainer$"' \
		"$E2E_ROOT/tests/e2e/sim_inspect.py"
	python3 "$E2E_ROOT/tests/e2e/approve_py.py" edit p5.kiln sim_node_group.trainers \
		change.after.count 7
	check "engine: a plan file with an edited value is refused, naming the value" 1 \
		--err-has "kiln: apply: p5.kiln does not match the plan its spec and state give now: in the change of sim_node_group.trainers, change.after.count is 7 in the file, but 2 now; nothing was changed" \
		-- "$KILN" apply p5.kiln
	check "engine: the refusal of an edited plan file does not print its digest" 1 \
		--err "kiln: apply: p7.kiln has been modified since kiln wrote it: its contents do not match its digest
  hint: a plan file must not be edited; make a new one with kiln plan --out FILE" \
		-- "$KILN" apply p7.kiln
	assert "engine: (no sha256 in the refusal)" sh -c '! grep -q sha256 "$0"' "$E2E_ERR"
	"$KILN" plan --out p6.kiln >/dev/null 2>&1
	check "engine: apply PLANFILE -w another workspace is refused" 1 --out "" \
		--err "kiln: apply: p6.kiln was made for workspace 'default', not 'staging'; drop -w, or make a plan for that workspace" \
		-- "$KILN" apply -w staging p6.kiln
	check "engine: apply PLANFILE refuses KILN_WORKSPACE naming another workspace, as -w" 1 \
		--out "" \
		--err "kiln: apply: p6.kiln was made for workspace 'default', not 'staging' (KILN_WORKSPACE); unset KILN_WORKSPACE, or make a plan for that workspace" \
		-- env KILN_WORKSPACE=staging "$KILN" apply p6.kiln
	check "engine: an unedited plan file made again from its spec and state applies" 0 \
		--out-has "Apply complete: 0 created, 1 updated" -- "$KILN" apply p6.kiln

	check "engine: graph prints the DAG in DOT" 0 \
		--out-has 'digraph' --out-has '"sim_node_group.trainers" -> "sim_network.main"' \
		-- "$KILN" graph
	check "engine: an unknown --target is named with a suggestion" 1 \
		--err "kiln: plan: --target sim_node_group.trainer: no such resource in the spec, the state or the cloud${NL}  hint: did you mean 'sim_node_group.trainers'? 'kiln graph' lists the addresses" \
		-- "$KILN" plan --target sim_node_group.trainer

	sed -i '/^  trainers:/,/^$/d' kiln.yaml
	sed -i 's/^compute:$/compute: {}/' kiln.yaml
	check "engine: a group removed from the spec is deleted" 2 \
		--out-has "  - sim_node_group.trainers  delete" \
		-- "$KILN" plan --detailed-exitcode
	check "engine: destroy deletes in reverse order and releases the retained bucket" 0 \
		--out-has "sim_bucket.checkpoints: released from state (retained)" \
		--out-has "Destroy complete:" \
		-- "$KILN" destroy --auto-approve
	check "engine: after destroy the state is empty" 0 --out "" -- "$KILN" state list
	assert "engine: after destroy only the retained bucket is left in the sim" sh -c \
		'[ "$(python3 "$1" .kiln/sim count)" = 1 ] && ls .kiln/sim/r | grep -q ^bkt-' sh \
		"$E2E_ROOT/tests/e2e/sim_inspect.py"
	cd "$E2E_ROOT" || exit 1
}

# A hand-edited state: its deps must have an order, and its resources its provider's types.
en_state_shape() {
	en_new_dir examples/quickstart.yaml
	check "engine: state shape: the quickstart applies" 0 -- "$KILN" apply --auto-approve
	"$KILN" state pull >good.json
	en_count=$(python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" .kiln/sim count)
	en_edit() { # FILE PYTHON: good.json edited by PYTHON (d is the document), forged as the head
		python3 -c 'import json, sys
d = json.load(open("good.json"))
exec(sys.argv[1])
print(json.dumps(d))' "$2" >"$1"
		st_forge_head .kiln/state.git "$(cat "$1")"
		en_head=$(git --git-dir=.kiln/state.git rev-parse --short=7 refs/heads/default)
	}
	en_hint="  hint: \`kiln log -p -w default\` shows how it changed; point refs/heads/default in .kiln/state.git back at the last good commit (git update-ref)"
	en_edit self.json 'd["resources"]["sim_role.trainer"]["deps"] = ["sim_role.trainer"]'
	check "engine: state shape: destroy refuses a resource that depends on itself" 1 --out "" \
		--err "kiln: destroy: state.json of workspace 'default' (commit $en_head): resource sim_role.trainer depends on itself (its deps list sim_role.trainer)
$en_hint" \
		-- "$KILN" destroy --auto-approve
	assert "engine: state shape: the refused destroy deleted nothing" \
		test "$(python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" .kiln/sim count)" = "$en_count"
	en_edit loop.json 'd["resources"]["sim_role.trainer"]["deps"] = ["sim_node_group.trainers"]'
	check "engine: state shape: plan refuses resources that depend on each other in a loop" 1 \
		--out "" \
		--err "kiln: plan: state.json of workspace 'default' (commit $en_head): resources depend on each other in a loop: sim_node_group.trainers -> sim_role.trainer -> sim_node_group.trainers
$en_hint" \
		-- "$KILN" plan
	en_edit provider.json 'd["provider"] = "aws"'
	check "engine: state shape: a state naming another provider than its resources' is refused" 1 \
		--out "" \
		--err "kiln: destroy: state.json of workspace 'default' (commit $en_head): the state names provider 'aws', but resource sim_bucket.checkpoints is of type sim_bucket, which 'aws' does not have
$en_hint" \
		-- "$KILN" destroy --auto-approve
	en_edit unknown.json 'd["provider"] = "gcp"'
	check "engine: state shape: a state naming a provider kiln does not have is refused" 1 \
		--out "" \
		--err "kiln: state: state.json of workspace 'default' (commit $en_head): provider 'gcp' is not built into this kiln
$en_hint" \
		-- "$KILN" state list
	assert "engine: state shape: nothing was deleted by any refused run" \
		test "$(python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" .kiln/sim count)" = "$en_count"
	en_edit aws.json 'd["provider"] = "aws"; d["resources"] = {"aws_vpc.main": {"type": "aws_vpc", "id": "vpc-0123456789abcdef0", "attrs": {}}}'
	check "engine: state shape: a spec on another provider than the recorded resources is refused" 1 \
		--out "" \
		--err "kiln: plan: workspace 'default' records 1 resource on provider 'aws' (state.json of commit $en_head), but the spec names provider 'sim'
  hint: use another workspace (-w NAME) for the cluster on 'sim', or destroy this one first with a spec naming provider 'aws'; \`kiln log -p -w default\` shows who changed the state" \
		-- "$KILN" plan
	en_edit empty.json 'd["provider"] = "aws"; d["resources"] = {}'
	check "engine: state shape: a state that records nothing takes the spec's provider" 0 \
		-- "$KILN" apply --auto-approve
	assert "engine: state shape: the apply recorded provider sim" sh -c \
		'"$1" state pull | grep -qx "  \"provider\": \"sim\","' sh "$KILN"
	cd "$E2E_ROOT" || exit 1
}

# The spec's deps and the state's recorded deps that order two replacements both ways:
# the plan is refused when it is made, naming them, and nothing is touched.
en_plan_cycle() {
	en_new_dir examples/quickstart.yaml
	check "engine: plan cycle: the quickstart applies" 0 -- "$KILN" apply --auto-approve
	"$KILN" state pull >good.json
	en_count=$(python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" .kiln/sim count)
	python3 -c 'import json
d = json.load(open("good.json"))
r = d["resources"]
r["sim_network.main"]["deps"] = ["sim_node_group.trainers"]
r["sim_node_group.trainers"]["deps"] = ["sim_role.trainer", "sim_role_policy.trainer"]
print(json.dumps(d))' >cycle.json
	st_forge_head .kiln/state.git "$(cat cycle.json)"
	en_cycle="the plan's operations wait for each other in a cycle (each waits for the next): sim_network.main (replace: delete old) -> sim_node_group.trainers (replace: delete old) -> sim_network.main (replace: delete old)
  hint: the deps the state records and the deps the spec gives order them both ways; \`kiln log -p\` shows how the state's deps changed: point the workspace back at its last good commit, or change the spec so one no longer needs the next"
	check "engine: plan cycle: plan refuses the plan, naming the operations in the cycle" 1 \
		--out "" --err "kiln: plan: $en_cycle" \
		-- "$KILN" plan --replace sim_network.main
	check "engine: plan cycle: apply refuses it the same way" 1 \
		--out "" --err "kiln: apply: $en_cycle" \
		-- "$KILN" apply --auto-approve --replace sim_network.main
	assert "engine: plan cycle: nothing was deleted or created" \
		test "$(python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" .kiln/sim count)" = "$en_count"
	check "engine: plan cycle: without the replacement the same state plans no changes" 0 \
		--out-has "No changes." -- "$KILN" plan --detailed-exitcode
	cd "$E2E_ROOT" || exit 1
}

en_errors() {
	en_new_dir examples/quickstart.yaml
	sed -i 's/gpu: H100:8/gpu: B200:8/' kiln.yaml
	check "engine: a GPU the catalog lacks is an error listing the models it has" 1 \
		--err-has "has no GPU model 'B200'; it has: A10G, A100, H100, H200, L4, L40S" \
		-- "$KILN" plan
	en_new_dir examples/llm-pretrain.yaml
	check "engine: an aws spec with no credentials names where kiln looked" 1 \
		--err-has "kiln: plan: no AWS credentials found; looked in: the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)" \
		-- env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_PROFILE HOME="$en_dir" "$KILN" plan
	cd "$E2E_ROOT" || exit 1
	check "engine: plan from standard input is refused" 1 \
		--err "kiln: plan: plan reads a spec file, not standard input; write the spec to a file: plans are bound to the file's digest" \
		-- "$KILN" plan -
	check "engine: a bad --parallelism is refused" 1 \
		--err "kiln: apply: --parallelism '0' is not a number from 1 to 1024; use a number from 1 to 1024" \
		-- "$KILN" apply --parallelism 0 examples/quickstart.yaml
}

# A sim spec needs no permission: stdout is still a policy document a linter
# reads (an empty one), and the reason is on stderr (issue 31).
en_iam_policy_sim() {
	en_new_dir examples/quickstart.yaml
	check "engine: iam-policy on a sim spec prints an empty policy and the reason on stderr" 0 \
		--out '{
  "Version": "2012-10-17",
  "Statement": []
}' \
		--err "kiln: iam-policy: the sim provider is simulated and needs no cloud permission; the policy has no statement" \
		-- "$KILN" iam-policy
	check "engine: iam-policy's empty policy is JSON a pipeline reads" 0 \
		--out "2012-10-17 0" \
		-- sh -c '"$1" iam-policy 2>/dev/null | python3 -c "import json, sys; d = json.load(sys.stdin); print(d[\"Version\"], len(d[\"Statement\"]))"' sh "$KILN"
	cd "$E2E_ROOT" || exit 1
}

# On a terminal (script(1) provides one): apply asks, and progress is live lines.
en_tty() {
	if ! command -v script >/dev/null 2>&1; then
		skip "engine: apply on a terminal" "script(1) is not installed"
		return
	fi
	en_new_dir examples/quickstart.yaml
	printf 'no\n' >answer
	check "engine: on a terminal apply asks, and anything but yes changes nothing" 1 \
		--out-has "Do you want to apply this plan to quickstart/default? Only 'yes' is accepted:" \
		--out-has "kiln: apply: not approved; nothing was changed" \
		--stdin answer -- script -qec "$KILN apply" /dev/null
	assert "engine: the refused apply created nothing" test ! -e .kiln/sim/r
	printf 'yes\n' >answer
	check "engine: on a terminal yes applies, with live progress lines" 0 \
		--out-has "Apply complete: 5 created" --out-has "${ESC}[1A${ESC}[2K" \
		--stdin answer -- env KILN_SIM_READY_MS=700 script -qec "$KILN apply" /dev/null
	cd "$E2E_ROOT" || exit 1
}

en_json_events() {
	en_new_dir examples/quickstart.yaml
	check "engine: apply --json streams one event per line" 0 \
		-- "$KILN" apply --auto-approve --json
	cp "$E2E_OUT" events.jsonl
	assert "engine: every event is JSON with @level, @message, @timestamp and type, in order" \
		python3 - events.jsonl <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
evs = [json.loads(l) for l in lines]
assert all({"@level", "@message", "@timestamp", "@module", "type"} <= set(e) for e in evs), evs
types = [e["type"] for e in evs]
assert types[0] == "version" and types[1] == "change_summary", types
assert evs[0]["hook"]["ui"] == "1.1" and evs[0]["hook"]["kiln"], evs[0]
assert types.count("apply_start") == 5 and types.count("apply_complete") == 5, types
assert types[-1] == "change_summary" and "commit" in evs[-1]["hook"], evs[-1]
starts = [e["hook"]["resource"]["addr"] for e in evs if e["type"] == "apply_start"]
assert starts.index("sim_network.main") < starts.index("sim_node_group.trainers"), starts
PY
	"$KILN" destroy --auto-approve >/dev/null 2>&1
	"$KILN" up --auto-approve --json --ttl 2h --health-timeout 0 >up.jsonl 2>/dev/null
	assert "engine: up --json ends with up_summary: the hourly cost and the expiry" \
		python3 - up.jsonl <<'PY'
import datetime, json, sys
evs = [json.loads(l) for l in open(sys.argv[1]).read().splitlines()]
last = evs[-1]
assert last["type"] == "up_summary", last
h = last["hook"]
assert h["workspace"] == "default" and h["hourly_usd"] > 0, h
left = datetime.datetime.fromisoformat(h["expires"].replace("Z", "+00:00")) - datetime.datetime.now(datetime.timezone.utc)
assert 1.9 * 3600 < left.total_seconds() <= 2 * 3600, left
assert last["@message"].startswith("Cost: ") and "USD an hour; expires " in last["@message"], last
PY
	cd "$E2E_ROOT" || exit 1
}

# With fewer workers than ready operations, the longest remaining path goes first.
en_critical_path() {
	en_new_dir tests/specs/critical-path.yaml
	check "engine: apply --parallelism 1 of the critical-path spec" 0 \
		-- "$KILN" apply --auto-approve --json --parallelism 1
	cp "$E2E_OUT" events.jsonl
	assert "engine: what the longest path hangs from starts first, what nothing waits on last" \
		python3 - events.jsonl <<'PY'
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1]).read().splitlines()]
starts = [e["hook"]["resource"]["addr"] for e in evs if e["type"] == "apply_start"]
want = ["sim_bucket.zdata", "sim_role.trainer", "sim_network.main", "sim_role_policy.trainer",
        "sim_bucket.a1", "sim_bucket.a2", "sim_bucket.a3", "sim_bucket.a4", "sim_bucket.a5",
        "sim_bucket.a6", "sim_node_group.trainers"]
assert starts == want, starts
PY
	cd "$E2E_ROOT" || exit 1
}

en_faults() {
	en_new_dir tests/specs/valid/sim-llm-pretrain.yaml
	check "engine: with 30% transient failures apply converges through retries" 0 \
		--out-has "Apply complete: 12 created" \
		-- env KILN_SIM_FAIL_RATE=0.3 KILN_SIM_SEED=7 KILN_RETRY_BASE_MS=1 KILN_RETRY_MAX=30 \
		"$KILN" apply --auto-approve
	en_inspect "engine: after the faulty apply there is no duplicate and nothing untracked"
	check "engine: and the next plan has no changes" 0 --out-has "No changes." \
		-- "$KILN" plan --detailed-exitcode

	en_new_dir tests/specs/valid/sim-llm-pretrain.yaml
	check "engine: a gang larger than the capacity fails with the cloud's reason" 1 \
		--err-has "sim_node_group.trainers: create failed: sim: InsufficientInstanceCapacity (simulated): 16 × p5.48xlarge (H100) requested, 8 free in sim-1a, 8 free in sim-1b" \
		--out-has "Apply incomplete:" \
		-- env KILN_SIM_CAPACITY=H100=8 "$KILN" apply --auto-approve
	assert "engine: the failed gang left no node in the sim" sh -c \
		'! ls .kiln/sim/r | grep -q "^ng-.*" || ! grep -l "\"sim_node_group.trainers\"" .kiln/sim/r/ng-*.json' 
	en_inspect "engine: what succeeded beside the failed gang is recorded"
	check "engine: the next plan shows exactly what remains" 2 \
		--out-has "Plan: 1 to create, 0 to update, 0 to replace, 0 to delete, 0 to adopt." \
		-- "$KILN" plan --detailed-exitcode
	check "engine: with capacity back the gang lands in the second zone" 0 \
		--out-has "Apply complete: 1 created" \
		-- env KILN_SIM_CAPACITY=H100=8 KILN_SIM_CAPACITY=H100=16 "$KILN" apply --auto-approve
	cd "$E2E_ROOT" || exit 1
}

# A reader (plan, status) beside an apply under way must not replay that
# apply's journal as an interrupted one's (issue 32): it says the workspace is
# locked and shows the state from before that apply. Each of the apply's calls
# takes a second, so that it is still under way when both readers have run
# (at 300 ms it had committed before the plan on a loaded 2-core machine).
en_reader_beside_apply() {
	en_new_dir tests/specs/valid/sim-llm-pretrain.yaml
	KILN_SIM_LATENCY_MS=1000 "$KILN" apply --auto-approve >out.txt 2>err.txt &
	pid=$!
	en_await_create 600
	assert "engine: the slow apply has a journal while it runs" \
		sh -c 'ls .kiln/journal/default-*.jsonl >/dev/null'
	# A first apply: until it commits, the workspace has no cluster to show.
	check "engine: status beside an apply under way says its journal is not replayed" 1 \
		--err-has "its journal is the record of a run under way, not replayed; this shows the state before that run" \
		--err-has "kiln: status: workspace 'default' has no cluster yet: nothing has been applied" \
		-- "$KILN" status --no-ssh
	assert "engine: status beside an apply under way replays nothing" \
		sh -c '! grep -q "recorded by an interrupted apply" "$1"' sh "$E2E_ERR"
	check "engine: plan beside an apply under way names the lock's holder" 0 \
		--err-has "kiln: warn: workspace 'default' is locked by " \
		-- "$KILN" plan
	assert "engine: plan beside an apply under way replays nothing" \
		sh -c '! grep -q "recorded by an interrupted apply" "$1"' sh "$E2E_ERR"
	wait $pid
	rc=$?
	assert "engine: the apply beside the readers completes" test $rc = 0
	en_inspect "engine: after readers beside an apply the sim and the state agree"
	cd "$E2E_ROOT" || exit 1
}

en_interrupts() {
	en_new_dir tests/specs/valid/sim-llm-pretrain.yaml
	KILN_SIM_LATENCY_MS=150 "$KILN" apply --auto-approve >out.txt 2>err.txt &
	pid=$!
	# Interrupt once the first operations are under way (the refresh comes before).
	en_await_create 200
	kill -INT $pid
	wait $pid
	rc=$?
	assert "engine: SIGINT ends apply with exit 1" test $rc = 1
	assert "engine: SIGINT says what it does" grep -q "starting nothing new" err.txt
	assert "engine: after SIGINT the hint does not ask to fix a cause" \
		grep -qx '  hint: stopped by SIGINT, as asked: what was done is recorded; run `kiln plan` to see what remains' err.txt
	assert "engine: after SIGINT no \"fix the cause\"" sh -c '! grep -q "fix the cause" err.txt'
	assert "engine: an interrupted apply commits what it did" sh -c \
		'"$1" log | grep -q "apply: .*not done"' sh "$KILN"
	check "engine: the lock is released after SIGINT" 0 --out-has "default" -- "$KILN" workspace list
	en_inspect "engine: after SIGINT the sim and the state agree"
	check "engine: apply after SIGINT finishes the job" 0 --out-has "Apply complete:" \
		-- "$KILN" apply --auto-approve
	en_inspect "engine: and the sim holds each resource once"

	# A writer killed while moving the branch leaves refs/heads/WS.lock; the
	# next holder of the workspace lock removes it instead of failing forever.
	en_new_dir examples/quickstart.yaml
	"$KILN" apply --auto-approve >/dev/null 2>&1
	touch -d '1 minute ago' .kiln/state.git/refs/heads/default.lock
	sed -i 's/count: 2/count: 1/' kiln.yaml
	check "engine: a branch lock file left by a killed writer is removed, and the apply commits" 0 \
		--out-has "Apply complete: 0 created, 1 updated" \
		--err-has "kiln: warn: removed .kiln/state.git/refs/heads/default.lock, left by a process that died while writing refs/heads/default" \
		-- "$KILN" apply --auto-approve
	# One just left (a writer killed a moment ago) is removed once 2 s old.
	touch .kiln/state.git/refs/heads/default.lock
	sed -i 's/count: 1/count: 2/' kiln.yaml
	check "engine: a branch lock file just left by a killed writer is removed too" 0 \
		--out-has "Apply complete: 0 created, 1 updated" \
		--err-has "kiln: warn: removed .kiln/state.git/refs/heads/default.lock" \
		-- "$KILN" apply --auto-approve
	# One a live process keeps renewing is reported, not removed.
	(while :; do
		touch .kiln/state.git/refs/heads/default.lock
		sleep 0.2
	done) &
	toucher=$!
	sed -i 's/count: 2/count: 1/' kiln.yaml
	check "engine: a branch lock file a live process keeps is reported, not removed" 1 \
		--err-has "default.lock stayed locked for seconds while kiln held the repository: another process is writing refs/heads/default" \
		-- "$KILN" apply --auto-approve
	kill $toucher
	wait $toucher 2>/dev/null
	rm -f .kiln/state.git/refs/heads/default.lock

	# A saved plan must not be applied over an apply that was killed after
	# changing the cloud: the head did not move, but the journal did.
	en_new_dir tests/specs/valid/sim-llm-pretrain.yaml
	"$KILN" plan --out p.kiln >/dev/null 2>&1
	KILN_LOCK_LEASE=1s KILN_SIM_LATENCY_MS=100 "$KILN" apply p.kiln >out.txt 2>&1 &
	pid=$!
	i=0
	while ! grep -q "created \[id" out.txt && [ $i -lt 200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	kill -KILL $pid
	wait $pid 2>/dev/null
	check "engine: a saved plan is stale once a killed apply journaled changes" 1 \
		--err-has "p.kiln is stale: an interrupted apply changed workspace 'default' after the plan was made" \
		-- "$KILN" apply p.kiln --lock-timeout 10s
	"$KILN" plan --out p2.kiln >/dev/null 2>&1
	check "engine: a plan made over the journal applies" 0 --out-has "Apply complete:" \
		-- "$KILN" apply p2.kiln --lock-timeout 10s
	en_inspect "engine: and the sim holds each resource once after it"

	# SIGKILL at random points: the next plan adopts (or the journal
	# replays) what was created; nothing is duplicated or left untracked.
	n=0
	adopted=0
	bad=0
	while [ $n -lt 20 ]; do
		n=$((n + 1))
		en_new_dir tests/specs/valid/sim-llm-pretrain.yaml
		KILN_LOCK_LEASE=1s KILN_SIM_LATENCY_MS=25 KILN_SIM_READY_MS=50 \
			"$KILN" apply --auto-approve >/dev/null 2>&1 &
		pid=$!
		sleep "0.$(awk -v n=$n 'BEGIN { srand(n); printf "%02d", 5 + int(rand() * 60) }')"
		kill -KILL $pid 2>/dev/null
		wait $pid 2>/dev/null
		# Half the runs lose the journal too: then the cloud's tags are all there is.
		if [ $((n % 2)) = 0 ]; then rm -rf .kiln/journal; fi
		"$KILN" plan --json >plan.json 2>/dev/null
		if grep -q '"importing"' plan.json; then adopted=$((adopted + 1)); fi
		if ! "$KILN" apply --auto-approve --lock-timeout 10s >apply.txt 2>&1; then
			bad=$((bad + 1))
			echo "run $n: apply after SIGKILL failed:" >&2
			cat apply.txt >&2
		fi
		"$KILN" state pull >.state.json 2>/dev/null
		if ! python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" .kiln/sim .state.json >inspect.txt; then
			bad=$((bad + 1))
			echo "run $n:" >&2
			cat inspect.txt >&2
		fi
	done
	assert "engine: 20 applies killed with SIGKILL converge with no duplicate or untracked resource" \
		test $bad = 0
	assert "engine: some killed applies were recovered by adoption (tags), not only by the journal" \
		test $adopted -gt 0
	cd "$E2E_ROOT" || exit 1
}

# Golden text, Markdown and JSON plans of every sim example, from nothing.
# KILN_UPDATE_GOLDEN=1 rewrites them.
en_goldens() {
	for spec in examples/quickstart.yaml tests/specs/valid/sim-llm-pretrain.yaml; do
		name=$(basename "$spec" .yaml)
		en_new_dir "$spec"
		"$KILN" plan >plan.txt 2>&1
		"$KILN" plan --markdown >plan.md 2>&1
		"$KILN" plan --json >plan.raw.json 2>&1
		en_schema "engine: the JSON plan of $name validates against the schema" plan.raw.json
		sed 's/"created": "[^"]*"/"created": "(time)"/' plan.raw.json >plan.json
		for ext in txt md json; do
			golden=$E2E_ROOT/tests/golden/engine/$name.$ext
			if [ -n "${KILN_UPDATE_GOLDEN:-}" ]; then
				mkdir -p "$(dirname "$golden")"
				cp "plan.$ext" "$golden"
			fi
			compare "engine: the $ext plan of $name matches its golden" "$golden" "plan.$ext"
		done
	done
	cd "$E2E_ROOT" || exit 1
}

# A role's allow: statements: shown in the plan, compiled into the policy
# document after the store statements, unchanged by a reorder, updated in
# place when edited, and drift when edited in the sim.
en_allow() {
	en_new_dir tests/e2e/specs/sim-allow.yaml
	check "engine: plan shows a role's allow statements, sorted" 2 \
		--out-has "  + sim_role_policy.trainer  create" \
		--out-has 'allow:  [{"actions":["ecr:BatchGetImage","ecr:GetDownloadUrlForLayer"],"resources":["arn:aws:ecr:us-east-1:123456789012:repository/train"]},{"actions":["ecr:GetAuthorizationToken"],"resources":["*"]}]' \
		-- "$KILN" plan --detailed-exitcode
	check "engine: apply creates the role with its allow statements" 0 \
		--out-has "Apply complete: 3 created, 0 updated, 0 replaced, 0 deleted." \
		-- "$KILN" apply --auto-approve
	assert "engine: the policy document holds the allow statements after the store's" sh -c \
		'"$1" state show sim_role_policy.trainer --json | python3 -c "
import json, sys
doc = json.loads(json.load(sys.stdin)[\"attrs\"][\"policy_document\"])
st = doc[\"Statement\"]
assert [s.get(\"Sid\") for s in st] == [\"ObjectRead\", None, None], st
assert st[1] == {\"Action\": [\"ecr:BatchGetImage\", \"ecr:GetDownloadUrlForLayer\"], \"Effect\": \"Allow\", \"Resource\": [\"arn:aws:ecr:us-east-1:123456789012:repository/train\"]}, st[1]
assert st[2] == {\"Action\": [\"ecr:GetAuthorizationToken\"], \"Effect\": \"Allow\", \"Resource\": [\"*\"]}, st[2]
"' sh "$KILN"
	check "engine: plan after applying allow shows no changes" 0 --out-has "No changes." \
		-- "$KILN" plan --detailed-exitcode
	sed -i 's/\[ecr:GetDownloadUrlForLayer, ecr:BatchGetImage\]/[ecr:BatchGetImage, ecr:GetDownloadUrlForLayer, ecr:BatchGetImage]/' kiln.yaml
	check "engine: reordered or repeated allow actions are no change" 0 --out-has "No changes." \
		-- "$KILN" plan --detailed-exitcode
	sed -i 's/\[ecr:GetAuthorizationToken\]/[ecr:GetAuthorizationToken, sts:GetCallerIdentity]/' kiln.yaml
	check "engine: an edited allow statement is an update in place" 2 \
		--out-has "  ~ sim_role_policy.trainer  update in place" \
		--out-has '{"actions":["ecr:GetAuthorizationToken","sts:GetCallerIdentity"],"resources":["*"]}]   (live: a policy document is rewritten in place)' \
		--out-has "Plan: 0 to create, 1 to update, 0 to replace, 0 to delete, 0 to adopt." \
		-- "$KILN" plan --detailed-exitcode
	check "engine: apply rewrites the policy in place" 0 \
		--out-has "Apply complete: 0 created, 1 updated, 0 replaced, 0 deleted." \
		-- "$KILN" apply --auto-approve
	python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" .kiln/sim set sim_role_policy.trainer allow \
		'[{"actions":["sim:*"],"resources":["*"]}]'
	check "engine: an allow statement edited in the sim is drift" 2 \
		--out-has "  ~ sim_role_policy.trainer  changed outside kiln" \
		--out-has 'allow:  [{"actions":["ecr:BatchGetImage","ecr:GetDownloadUrlForLayer"],"resources":["arn:aws:ecr:us-east-1:123456789012:repository/train"]},{"actions":["ecr:GetAuthorizationToken","sts:GetCallerIdentity"],"resources":["*"]}] → [{"actions":["sim:*"],"resources":["*"]}]' \
		-- "$KILN" plan --detailed-exitcode
	cd "$E2E_ROOT" || exit 1
}

# A damaged sim directory: a document without its index marker is a clear
# error naming both and the fix; an address entry missing (which the sim
# repairs by design) or a document gone (deleted outside kiln) never leaves an
# IAM delta beside "No changes".
en_damaged_sim() {
	en_new_dir examples/quickstart.yaml
	"$KILN" apply --auto-approve >/dev/null 2>&1
	bkt=$(cd .kiln/sim/idx/quickstart/default/sim_bucket && ls)
	rm ".kiln/sim/idx/quickstart/default/sim_bucket/$bkt"
	check "engine: a document without its index marker is a damaged sim, named with the fix" 1 --out "" \
		--err "kiln: plan: sim: the simulated cloud is damaged: sim_bucket $bkt (sim_bucket.checkpoints in quickstart/default) has its document .kiln/sim/r/$bkt.json but no index marker .kiln/sim/idx/quickstart/default/sim_bucket/$bkt, so no list would show it
  hint: put the marker back (an empty file will do): touch '.kiln/sim/idx/quickstart/default/sim_bucket/$bkt'; or restore the sim directory from a copy" \
		-- "$KILN" plan
	check "engine: damaged sim, --refresh=false: no changes and no IAM delta" 0 \
		--out-has "No changes." -- "$KILN" plan --refresh=false --detailed-exitcode
	assert "engine: damaged sim, --refresh=false: no role is said to gain or lose anything" \
		sh -c '! grep -q "granted" "$1"' sh "$E2E_OUT"
	touch ".kiln/sim/idx/quickstart/default/sim_bucket/$bkt"
	check "engine: the hint's touch repairs it" 0 --out-has "No changes." \
		-- "$KILN" plan --detailed-exitcode
	rm .kiln/sim/a/quickstart/default/sim_bucket%2Echeckpoints
	check "engine: a missing address entry: no changes" 0 --out-has "No changes." \
		-- "$KILN" plan --detailed-exitcode
	assert "engine: a missing address entry: no IAM delta" sh -c '! grep -q "granted" "$1"' sh "$E2E_OUT"
	python3 "$E2E_ROOT/tests/e2e/sim_inspect.py" .kiln/sim rm sim_bucket.checkpoints
	check "engine: a bucket deleted outside kiln, --refresh=false: no changes" 0 \
		--out-has "No changes." -- "$KILN" plan --refresh=false --detailed-exitcode
	assert "engine: ... and no IAM delta beside them" sh -c '! grep -q "granted" "$1"' sh "$E2E_OUT"
	assert "engine: the free resources are counted alike with and without refresh" sh -c '
		a=$("$1" plan 2>/dev/null | grep "free resources")
		b=$("$1" plan --refresh=false 2>/dev/null | grep "free resources")
		[ -n "$a" ] && [ "$a" = "$b" ]' sh "$KILN"
	cd "$E2E_ROOT" || exit 1
}

engine_tests() {
	(
		unset KILN_SIM_DIR KILN_SIM_FAIL_RATE KILN_SIM_CAPACITY KILN_SIM_LATENCY_MS KILN_STATE \
			KILN_WORKSPACE KILN_STATE_KEY KILN_STATE_KEY_FILE
		export KILN_AUTHOR="E2E <e2e@example.com>" KILN_SIM_READY_MS=20
		en_goldens
		en_lifecycle
		en_allow
		en_errors
		en_iam_policy_sim
		en_state_shape
		en_plan_cycle
		en_json_events
		en_critical_path
		en_tty
		en_faults
		en_interrupts
		en_reader_beside_apply
		en_damaged_sim
		echo "$E2E_PASSED $E2E_FAILED" >"$E2E_TMP/.engine-counts"
	)
	read -r E2E_PASSED E2E_FAILED <"$E2E_TMP/.engine-counts"
}
