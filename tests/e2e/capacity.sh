# capacity.sh - end-to-end tests of GPU capacity (issue 16): bad capacity: input
# with its exact messages, a launch targeted at an On-Demand Capacity Reservation,
# spot with an on-demand fallback, a Capacity Block found, shown with its fee,
# refused without approval, bought once with it (also across a SIGKILL at the
# purchase), launched when active, and kiln iam-policy proven sufficient for a
# spec that buys one. Against moto with kiln's extension (tests/moto), boto3
# (capacity_inspect.py) checking what was really made. Sourced by run.sh after
# lib.sh and aws.sh; $KILN is the binary under test.

CAP_MOTO_TESTS="capacity: plan names a reservation in a zone the spec does not list, with the fix
capacity: plan names a reservation with too few instances available
capacity: apply launches the gang into the targeted reservation
capacity: boto3 finds the gang in the reservation
capacity: and plans no changes
capacity: plan names each member of a reservation group that does not fit (type, zone, expired), exactly
capacity: plan names a reservation group that does not exist, exactly
capacity: plan names the member of the reservation group the gang launches into
capacity: apply launches the gang into the reservation group, in the member's zone
capacity: boto3 finds the gang in the group's member reservation
capacity: kiln asks EC2 to launch the group's gang in its reservations only
capacity: the emulator refuses a reservations-only launch no group member fits, as EC2 does
capacity: the emulator launches on demand, echoing no preference, when none was sent
capacity: and plans no changes in the reservation group
capacity: plan names a scheduled member of the reservation group
capacity: apply waits for the group's member to be active instead of launching on demand, exactly
capacity: boto3 finds no instance launched on demand for the waiting group
capacity: once the member is active, apply launches the gang into it
capacity: boto3 finds the gang in the member that became active
capacity: plan picks the group's active member over a scheduled one listed first
capacity: apply launches the gang into the group's active member
capacity: boto3 finds the gang in the active member, not the scheduled one
capacity: plan names a scheduled member too small for the gang, exactly
capacity: an on-demand group moved into a reservation plans a replace, with the reason
capacity: apply launches the group again into the reservation
capacity: boto3 finds the new gang in the reservation and the old one gone
capacity: and plans no changes in the reservation
capacity: a larger count grows the group in place
capacity: boto3 finds the new node in the group's reservation too
capacity: another reservation plans a replace of capacity_reservation alone
capacity: spot with a fallback instead plans a replace by market, capacity unset
capacity: a spot group whose fallback is dropped plans an update in place, no replace
capacity: the update retags the instances and plans no changes after
capacity: a group that fills its reservation plans a replace, its own nodes' room counted
capacity: apply replaces the group inside its full reservation
capacity: boto3 finds the 2 nodes in the reservation
capacity: boto3 finds new instances in the reservation, not the old ones
capacity: plan names a reservation another cluster fills, with a fix that is not count 0, exactly
capacity: a group that fills its reservation group plans a replace, its own nodes' room counted
capacity: apply replaces the group inside its full reservation group
capacity: boto3 finds the 2 nodes in the reservation group
capacity: boto3 finds new instances in the reservation group, not the old ones
capacity: the plan prices spot and shows the on-demand fallback
capacity: with spot capacity switched off the gang launches on demand
capacity: boto3 finds the gang on demand
capacity: and plans no changes after the fallback
capacity: a fallen-back group whose fallback is dropped updates its tags in place
capacity: and plans no changes after the fallback is dropped
capacity: plan shows the block it would buy and the runner-up, with fees, and the upfront cost
capacity: the plan JSON has the upfront cost and validates against the schema
capacity: the plan JSON carries the offering it buys and the runner-up, exactly
capacity: the Markdown plan shows both offerings in a table
capacity: apply refuses to buy without approval, naming the fee
capacity: boto3 finds nothing bought after the refusal
capacity: apply --refresh=false refuses a purchase it read no offering for, even allowed, exactly
capacity: a saved plan made with --refresh=false buys nothing, exactly
capacity: boto3 finds nothing bought without a refresh
capacity: a saved plan with a trusted approval buys the block; the nodes wait for its start
capacity: the commit records the purchase in a Kiln-Purchase trailer
capacity: boto3 finds one block, scheduled, tagged for the workspace
capacity: a later apply before the start buys nothing more
capacity: the emulator refuses a launch into the scheduled block as EC2 documents it
capacity: once the block is active, apply launches the gang into it
capacity: boto3 finds the gang in the block, as capacity-block instances
capacity: and plans no changes in the block
capacity: status shows the block's window and when reap takes the cluster down
capacity: ttl extend cannot go past the block's end
capacity: an hour before the block ends, reap takes the cluster down
capacity: boto3 finds no instance left in the block after the reap
capacity: an apply killed by SIGKILL at the purchase bought the block once
capacity: the next apply adopts the block and buys nothing
capacity: boto3 finds one purchase after the kill
capacity: no offering after the start asked names the dates that exist
capacity: a purchase whose answer is lost after EC2 bought the block is found and recorded, not bought again
capacity: boto3 finds one purchase and one block after the lost answer
capacity: the state and the Kiln-Purchase trailer name the block the lost answer bought
capacity: a purchase whose answer is lost before EC2 bought anything fails, outcome unknown, exactly
capacity: boto3 finds no purchase after the unknown outcome
capacity: sprawl lists a kiln-tagged block no state records as an orphan
capacity: an apply stopped before its purchase, its lock taken over, buys nothing and names the new holder
capacity: boto3 finds one purchase after the paused holder
capacity: the next apply adopts the one block and buys nothing
capacity: a saved plan whose offering's fee changed since is refused as stale, exactly
capacity: a saved plan whose offering vanished since is refused as stale, exactly
capacity: boto3 finds nothing bought after the stale plans
capacity: kiln up --wait-timeout buys the block and exits 5 at once when it starts after the bound
capacity: the state records the block bought before the bound passed
capacity: boto3 finds the bounded block bought, no instance in it
capacity: boto3 finds the bounded block scheduled, the only one
capacity: kiln up --wait buys the block, waits for its start and launches the gang into it
capacity: boto3 finds the gang kiln up --wait launched in the block
capacity: once the block is active, a later apply launches what --wait-timeout left
capacity: without a ttl, reap leaves the cluster before the margin, exactly
capacity: boto3 still finds the gang in the block before the margin
capacity: without a ttl, reap takes the cluster down inside the margin, exactly
capacity: boto3 finds no instance left in the block reaped without a ttl
capacity: iam-policy names no capacity action for a spec without capacity
capacity: iam-policy names the block actions for a spec that buys one
capacity: iam-policy names the reservation read for a spec that targets one, and nothing to buy
capacity: iam-policy names the group's reads for a spec that targets a reservation group, and nothing to buy
capacity: iam-policy names no Resource Groups action for a spec that targets one reservation
capacity: a spec that buys a block applies with exactly the iam-policy permissions
capacity: boto3 finds the block bought under the least-privilege policy
capacity: a spec that targets a reservation group applies with exactly the iam-policy permissions
capacity: boto3 finds the gang in the group's reservation under the least-privilege policy"

cap_ctl() { # PATH JSON: the moto extension's control endpoint
	curl -sf -X POST -H 'Content-Type: application/json' -d "$2" \
		"$AWS_ENDPOINT_URL/_kiln/$1" >/dev/null
}

cap_poll() { # CMD...: until CMD succeeds, every 0.1s, for 20s at most
	cp_n=0
	while [ $cp_n -lt 200 ] && ! "$@"; do
		sleep 0.1
		cp_n=$((cp_n + 1))
	done
}

cap_inspect() { # NAME ARGS...
	cap_name=$1
	shift
	assert "$cap_name" "$AWS_PY" "$E2E_ROOT/tests/e2e/capacity_inspect.py" "$@"
}

cap_dir() { # CLUSTER CAPACITY-LINES...: a fresh directory with a one-group spec
	cap_d=$(mktemp -d "$E2E_TMP/cap.XXXXXX")
	cd "$cap_d" || exit 1
	cap_cluster=$1
	shift
	{
		printf 'kiln: 1\ncluster: %s\n' "$cap_cluster"
		printf 'provider: {name: aws, region: us-east-1, zone: [us-east-1a, us-east-1b]}\n'
		printf 'network: {cidr: 10.42.0.0/16, fabric: efa}\n'
		printf 'compute:\n  trainers:\n    gpu: H100:8\n    count: 2\n    image: ami-1e749f67\n'
		for l in "$@"; do printf '%s\n' "$l"; done
	} >kiln.yaml
}

# Bad input: the exact messages (no cloud needed; sim validates them the same).
cap_bad_input() {
	cap_d=$(mktemp -d "$E2E_TMP/cap.XXXXXX")
	cd "$cap_d" || exit 1
	printf 'kiln: 1\ncluster: c\nprovider: {name: sim}\ncompute:\n  trainers:\n    gpu: H100:8\n    count: 2\n    capacity:\n      block: {duration: 36h, start: soon}\n' >kiln.yaml
	check "capacity: validate names a block without max_upfront_usd, a duration EC2 does not sell and a bad start, exactly" 1 \
		--out "" \
		--err "kiln.yaml:9:14: error: compute.trainers.capacity.block needs max_upfront_usd
  hint: a purchase cannot be undone: set the most you will pay up front, in US dollars
kiln.yaml:9:25: error: compute.trainers.capacity.block.duration: Capacity Blocks are sold for 1 to 14 days, then whole weeks up to 182 days; got 1d12h
  hint: use whole days (24h, 2d ... 14d) or weeks (21d, 28d ... 182d)
kiln.yaml:9:37: error: compute.trainers.capacity.block.start must be asap or after TIME, got 'soon'
  hint: like start: after 2026-12-03T00:00Z (UTC), or start: asap" \
		-- "$KILN" validate kiln.yaml
	printf 'kiln: 1\ncluster: c\nprovider: {name: sim}\ncompute:\n  web:\n    instance_type: g6e.xlarge\n    capacity: {block: {duration: 7d, max_upfront_usd: 100}}\n  odcr:\n    instance_type: p5.48xlarge\n    capacity: {reservation: cr-12345}\n' >kiln.yaml
	check "capacity: validate refuses a block for a type not sold as blocks and a malformed reservation id, exactly" 1 \
		--out "" \
		--err "kiln.yaml:7:16: error: compute.web.capacity.block: g6e.xlarge is not sold as Capacity Blocks
  hint: Capacity Blocks are sold for p5.48xlarge, p5e.48xlarge, p5en.48xlarge, p4d.24xlarge, trn1.32xlarge; or use on-demand, spot or a reservation
kiln.yaml:10:29: error: compute.odcr.capacity.reservation: 'cr-12345' is not a capacity reservation id
  hint: write cr- and 17 hex digits, like cr-0123456789abcdef0" \
		-- "$KILN" validate kiln.yaml
	cd "$E2E_ROOT" || exit 1
}

# The same model on sim (examples/capacity-block.yaml), no account needed.
cap_sim() {
	cap_d=$(mktemp -d "$E2E_TMP/cap.XXXXXX")
	cd "$cap_d" || exit 1
	cp "$E2E_ROOT/examples/capacity-block.yaml" kiln.yaml
	cap_at="env KILN_SIM_READY_MS=20 KILN_NOW"
	check "capacity: on sim, the plan shows the block on offer and its fee up front" 0 \
		--out-has "+ sim_capacity_block.trainers  create" \
		--out-has "sim_capacity_block.trainers: duration_hours: buys the block on offer now: sim-1a, 2026-12-02T11:30:00Z to 2026-12-03T11:30:00Z, \$4719.36 up front (\$12.29/GPU-hour; simulated)" \
		--out-has "  Up front: \$4,719.36, paid once when bought (a Capacity Block cannot be cancelled)" \
		-- $cap_at=2026-12-02T00:00:00Z "$KILN" plan
	KILN_NOW=2026-12-02T00:00:00Z "$KILN" plan --json >plan.json 2>/dev/null
	assert "capacity: on sim, the plan JSON carries the offering it buys, and no runner-up" \
		python3 -c 'import json, sys
c = [r for r in json.load(open("plan.json"))["resource_changes"] if r["address"] == "sim_capacity_block.trainers"][0]["kiln"]
want = {"offering": {"id": "sim-cbo-sim-1a-20261202T1130-24h", "zone": "sim-1a", "instance_type": "p5.48xlarge", "count": 2,
		"start": "2026-12-02T11:30:00Z", "end": "2026-12-03T11:30:00Z", "duration_hours": 24,
		"upfront_usd": 4719.36, "usd_per_gpu_hour": 12.29}, "runner_up": None}
got = {k: c.get(k, "absent") for k in want}
print(got) if got != want else None
sys.exit(got != want)'
	check "capacity: on sim, the Markdown plan shows the offering in a table" 0 \
		--out-has "| Resource | | Offering | Zone | Instances | Start | End | Hours | Up front | Per GPU-hour |
| --- | --- | --- | --- | --- | --- | --- | ---: | ---: | ---: |
| sim_capacity_block.trainers | buys | sim-cbo-sim-1a-20261202T1130-24h | sim-1a | 2 × p5.48xlarge | 2026-12-02T11:30:00Z | 2026-12-03T11:30:00Z | 24 | \$4,719.36 | \$12.29 |
| | runner-up | none | | | | | | | |
" \
		-- env KILN_NOW=2026-12-02T00:00:00Z "$KILN" plan --markdown
	check "capacity: on sim, a saved plan made before the window moved is refused as stale" 1 \
		--err-has "kiln.offering.id is \"sim-cbo-sim-1a-20261202T1130-24h\" in the file, but \"sim-cbo-sim-1a-20261203T1130-24h\" now; nothing was changed" \
		-- sh -c 'KILN_NOW=2026-12-02T00:00:00Z "$1" plan --out plan.kiln >/dev/null 2>&1; KILN_NOW=2026-12-02T12:00:00Z "$1" apply plan.kiln --allow-purchase' sh "$KILN"
	check "capacity: on sim too, apply --refresh=false buys nothing, even allowed, exactly" 1 \
		--err "kiln: apply: this plan buys sim_capacity_block.trainers up front (which cannot be undone), but it was made with --refresh=false; kiln buys only from a plan that read the offering and its fee from the cloud; nothing was changed
  hint: plan without --refresh=false (kiln plan kiln.yaml --out plan.kiln), review the offering and fee it shows, then apply that plan" \
		-- $cap_at=2026-12-02T00:00:00Z "$KILN" apply --auto-approve --allow-purchase --refresh=false
	check "capacity: on sim, apply buys it with --allow-purchase; the nodes wait for its start" 1 \
		--out-has "sim_capacity_block.trainers: created [id cr-" \
		--err-has "compute.trainers waits for its Capacity Block cr-" \
		-- $cap_at=2026-12-02T00:00:00Z "$KILN" apply --auto-approve --allow-purchase
	check "capacity: on sim, once the block starts the nodes launch into it" 0 \
		--out-has "Apply complete: 1 created, 0 updated, 0 replaced, 0 deleted." \
		-- $cap_at=2026-12-02T12:00:00Z "$KILN" apply --auto-approve
	check "capacity: on sim, reap takes the cluster down an hour before the block ends" 0 \
		--out-has "default: reaped:" \
		-- $cap_at=2026-12-03T10:30:00Z "$KILN" reap
	# --wait has a bound a CI job can rely on (--wait-timeout, default 6h), exit 5 past it.
	cap_d=$(mktemp -d "$E2E_TMP/cap.XXXXXX")
	cd "$cap_d" || exit 1
	cp "$E2E_ROOT/examples/capacity-block.yaml" kiln.yaml
	check "capacity: on sim, up --wait-timeout exits 5 at once when the block starts after the bound, exactly" 5 \
		--out-has "sim_capacity_block.trainers: created [id cr-" \
		--err-has "kiln: up: sim_capacity_block.trainers (cr-" \
		--err-has ") starts at 2026-12-02T11:30:00Z, after the --wait-timeout of 1h: not waiting for it; it is bought and recorded in the state: run kiln apply (or kiln up --wait) again once it has started, or give --wait-timeout a longer bound" \
		-- $cap_at=2026-12-02T00:00:00Z "$KILN" up --auto-approve --allow-purchase --wait-timeout 1h
	check "capacity: on sim, up --wait-timeout exits 5 when the bound runs out before the nodes launch, exactly" 5 \
		--err-has "kiln: up: waiting for sim_capacity_block.trainers (from 2026-12-02T11:30:00Z): applying again in 1s (--wait)" \
		--err-has ", from 2026-12-02T11:30:00Z) within the --wait-timeout of 2s; it is bought and recorded in the state" \
		-- env KILN_WAIT_POLL_MS=300 $cap_at=2026-12-02T11:29:58Z "$KILN" up --auto-approve --wait-timeout 2s
	check "capacity: on sim, after the bound passed, a later apply launches the nodes into the recorded block" 0 \
		--out-has "Apply complete: 1 created, 0 updated, 0 replaced, 0 deleted." \
		-- $cap_at=2026-12-02T12:00:00Z "$KILN" apply --auto-approve
	check "capacity: a --wait-timeout that is not a duration is refused, exactly" 1 \
		--out "" \
		--err "kiln: up: --wait-timeout '5x' is not a duration; write a duration of at most 182d like 30m, 6h or 2d, or 0 to wait until the window ends" \
		-- "$KILN" up --wait-timeout 5x
	check "capacity: a --wait-timeout past the longest block names the limit, exactly" 1 \
		--out "" \
		--err "kiln: up: --wait-timeout '200d' is longer than 182d, the longest a Capacity Block runs; write at most 182d, or 0 to wait until the window ends" \
		-- "$KILN" up --wait-timeout 200d
	# A poll longer than the bound: one round, then exit 5 when the bound runs
	# out, not another apply after a whole poll.
	cap_d=$(mktemp -d "$E2E_TMP/cap.XXXXXX")
	cd "$cap_d" || exit 1
	cp "$E2E_ROOT/examples/capacity-block.yaml" kiln.yaml
	$cap_at=2026-12-02T00:00:00Z "$KILN" up --auto-approve --allow-purchase --wait-timeout 1h >/dev/null 2>&1
	check "capacity: on sim, --wait-timeout 2s with an 8s poll exits 5 when the bound runs out, exactly" 5 \
		--err-has "kiln: up: waiting for sim_capacity_block.trainers (from 2026-12-02T11:30:00Z): applying again in 2s (--wait)" \
		--err-has ", from 2026-12-02T11:30:00Z) within the --wait-timeout of 2s; it is bought and recorded in the state" \
		-- env KILN_WAIT_POLL_MS=8000 $cap_at=2026-12-02T11:29:58Z "$KILN" up --auto-approve --wait-timeout 2s
	cp "$E2E_OUT" wait.out
	assert "capacity: on sim, no second apply round ran after the bound" \
		sh -c '[ "$(grep -c "^Apply incomplete" wait.out)" -eq 1 ]'
	check "capacity: --wait-timeout 0s waits until the window ends, as 0 does" 0 \
		--out-has "Apply complete: 1 created, 0 updated, 0 replaced, 0 deleted." \
		-- env KILN_WAIT_POLL_MS=300 $cap_at=2026-12-02T12:00:00Z "$KILN" up --auto-approve --wait-timeout 0s
	# A saved plan's --wait applies again only what the plan covered: an edit of
	# the spec made while it waits stops it, unapplied.
	cap_d=$(mktemp -d "$E2E_TMP/cap.XXXXXX")
	cd "$cap_d" || exit 1
	cp "$E2E_ROOT/examples/capacity-block.yaml" kiln.yaml
	$cap_at=2026-12-02T00:00:00Z "$KILN" plan --out plan.kiln >/dev/null 2>&1
	KILN_WAIT_POLL_MS=2000 KILN_SIM_READY_MS=20 KILN_NOW=2026-12-02T00:00:00Z \
		"$KILN" apply plan.kiln --allow-purchase --wait-timeout 12h >wait.out 2>wait.err &
	cw_pid=$!
	cap_poll grep -q "applying again" wait.err
	printf '  scratch: {tier: object}\n' >>kiln.yaml
	cap_poll sh -c '! kill -0 "$1" 2>/dev/null' sh "$cw_pid"
	kill "$cw_pid" 2>/dev/null
	wait "$cw_pid"
	printf '%s\n' "$?" >wait.rc
	check "capacity: a saved plan's --wait stops when the spec changed while it waited, exactly" 0 \
		--out-has "kiln: apply: waiting for sim_capacity_block.trainers (from 2026-12-02T11:30:00Z): applying again in 2s (--wait)
kiln: apply: kiln.yaml changed while --wait waited: plan.kiln was made from " \
		--out-has "; --wait applies again only what that plan covered; nothing more was changed
  hint: what plan.kiln did is recorded: review the change (kiln plan kiln.yaml --out plan.kiln) and apply that plan, with --wait" \
		-- cat wait.err
	assert "capacity: and exits 1 without another round" sh -c '[ "$(cat wait.rc)" = 1 ] &&
		[ "$(grep -c "^Apply incomplete" wait.out)" -eq 1 ]'
	check "capacity: the edit made during the wait is not applied" 0 \
		--out-has "sim_capacity_block.trainers" \
		-- sh -c '"$1" state list && ! "$1" state list | grep -q scratch' sh "$KILN"
	# Without a ttl the block's end is still the hard expiry; the spec file gone, reap
	# destroys with the copy the apply recorded.
	cap_d=$(mktemp -d "$E2E_TMP/cap.XXXXXX")
	cd "$cap_d" || exit 1
	sed '/^ttl: /d' "$E2E_ROOT/examples/capacity-block.yaml" >kiln.yaml
	$cap_at=2026-12-02T00:00:00Z "$KILN" apply --auto-approve --allow-purchase >/dev/null 2>&1
	check "capacity: on sim without a ttl, up says when the block's end takes the cluster down" 0 \
		--out-has "Expires: no ttl, but kiln reap takes it down at 2026-12-03T10:30:00Z, an hour before sim_capacity_block.trainers ends." \
		-- $cap_at=2026-12-02T12:00:00Z "$KILN" up --auto-approve
	check "capacity: on sim without a ttl, ttl show names the block's end, exactly" 0 \
		--out "Workspace 'default' has no TTL, but kiln reap takes it down at 2026-12-03T10:30:00Z, an hour before sim_capacity_block.trainers ends." \
		-- $cap_at=2026-12-02T12:00:00Z "$KILN" ttl show
	check "capacity: on sim without a ttl, status points at the block's window" 0 \
		--out-has "Expires: no ttl; the capacity window below ends the cluster." \
		--out-has "kiln reap takes the cluster down at 2026-12-03T10:30:00Z (22h30m left), an hour before it ends." \
		-- $cap_at=2026-12-02T12:00:00Z "$KILN" status
	mv kiln.yaml moved.yaml
	check "capacity: on sim without a ttl, reap keeps the cluster until an hour before the block ends, exactly" 0 \
		--out "default: kept: expires in 1m (2026-12-03T10:30:00Z, an hour before sim_capacity_block.trainers ends)" \
		-- $cap_at=2026-12-03T10:29:00Z "$KILN" reap
	check "capacity: on sim without a ttl, reap takes the cluster down an hour before the block ends, exactly" 0 \
		--out "default: reaped: 4 deleted, 1 retained (expired 30s ago, an hour before sim_capacity_block.trainers ends), with the copy recorded at apply (kiln.yaml is not here)" \
		-- $cap_at=2026-12-03T10:30:30Z "$KILN" reap
	check "capacity: on sim, the state holds nothing after the reap without a ttl" 0 \
		--out "" -- "$KILN" state list
	# sim holds no reservations: a reservation and a reservation group launch alike.
	cap_d=$(mktemp -d "$E2E_TMP/cap.XXXXXX")
	cd "$cap_d" || exit 1
	printf 'kiln: 1\ncluster: c\nprovider: {name: sim}\ncompute:\n  one:\n    gpu: H100:8\n    count: 2\n    capacity: {reservation: cr-0123456789abcdef0}\n  pool:\n    gpu: H100:8\n    count: 2\n    capacity: {reservation_group: arn:aws:resource-groups:us-east-1:123456789012:group/pool}\n' >kiln.yaml
	check "capacity: on sim, a reservation and a reservation group launch alike" 0 \
		--out-has "sim_node_group.one: created" \
		--out-has "sim_node_group.pool: created" \
		--out-has "Apply complete: 3 created, 0 updated, 0 replaced, 0 deleted." \
		-- env KILN_SIM_READY_MS=20 "$KILN" apply --auto-approve
	cap_d=$(mktemp -d "$E2E_TMP/cap.XXXXXX")
	cd "$cap_d" || exit 1
	sed 's/^budget: {max_hourly_usd: 400}/budget: {max_hourly_usd: 400, max_upfront_usd: 1000}/' \
		"$E2E_ROOT/examples/capacity-block.yaml" >kiln.yaml
	check "capacity: the budget gate refuses a purchase above budget.max_upfront_usd, exactly" 3 \
		--err "kiln: apply: the plan has 1 error-level finding; nothing was changed
  KILN-COST-002 budget.max_upfront_usd: the plan buys \$4,719.36 up front, above budget.max_upfront_usd \$1,000.00
  hint: fix the spec and plan again, or waive a finding with a reason and an end date (waive: in kiln-spec(5)); kiln audit shows each fix" \
		-- $cap_at=2026-12-02T00:00:00Z "$KILN" apply --auto-approve --allow-purchase
	cd "$E2E_ROOT" || exit 1
}

# A change of capacity: on sim, as on EC2: a new reservation or market replaces
# the group, a fallback changes in place, and nothing flaps after.
cap_sim_change() {
	cap_d=$(mktemp -d "$E2E_TMP/cap.XXXXXX")
	cd "$cap_d" || exit 1
	printf 'kiln: 1\ncluster: moved\nprovider: {name: sim}\ncompute:\n  trainers:\n    gpu: H100:8\n    count: 2\n' >kiln.yaml
	KILN_SIM_READY_MS=20 "$KILN" apply --auto-approve >/dev/null 2>&1
	printf '    capacity: {reservation: cr-0123456789abcdef0}\n' >>kiln.yaml
	check "capacity: on sim, a group moved into a reservation plans a replace, with the reason" 2 \
		--out-has "  -/+ sim_node_group.trainers  replace: capacity forces replacement
      capacity:              null → \"reservation\"            (replace: as on EC2: a node goes into a reservation, a Capacity Block or the spot market only when it is launched, so the group is launched again into its new capacity)
      capacity_reservation:  null → \"cr-0123456789abcdef0\"   (replace: as on EC2: a node goes into a reservation only when it is launched, so the group is launched again into the new reservation)

" \
		-- "$KILN" plan --detailed-exitcode
	check "capacity: on sim, apply replaces the group and plans no changes after" 0 \
		--out-has "No changes." \
		-- sh -c 'KILN_SIM_READY_MS=20 "$1" apply --auto-approve >/dev/null 2>&1 && "$1" plan --detailed-exitcode' sh "$KILN"
	sed -i 's/^    capacity: .*/    capacity: {spot: {fallback: on-demand}}/' kiln.yaml
	KILN_SIM_READY_MS=20 "$KILN" apply --auto-approve >/dev/null 2>&1
	sed -i 's/^    capacity: .*/    capacity: spot/' kiln.yaml
	check "capacity: on sim, dropping the fallback is an update in place that settles" 0 \
		--out-has "No changes." \
		-- sh -c '"$1" plan | grep -qx "      spot_fallback:  true → null   (live: it only decides how later launches are made)" &&
			KILN_SIM_READY_MS=20 "$1" apply --auto-approve | grep -q "Apply complete: 0 created, 1 updated, 0 replaced, 0 deleted." &&
			"$1" plan --detailed-exitcode' sh "$KILN"
	cd "$E2E_ROOT" || exit 1
}

cap_odcr() {
	cap_ctl reset '{}'
	odcr=$("$AWS_PY" "$E2E_ROOT/tests/e2e/capacity_inspect.py" odcr p5.48xlarge us-east-1c 2)
	cap_dir odcr "    capacity: {reservation: $odcr}"
	check "capacity: plan names a reservation in a zone the spec does not list, with the fix" 1 \
		--err "kiln: plan: aws: compute.trainers.capacity.reservation: $odcr is in us-east-1c, which is not one of the spec's zones
  hint: set provider.zone: us-east-1c (the fabric and the nodes move to the reservation's zone)" \
		-- "$KILN" plan
	odcr=$("$AWS_PY" "$E2E_ROOT/tests/e2e/capacity_inspect.py" odcr p5.48xlarge us-east-1b 1)
	cap_dir odcr "    capacity: {reservation: $odcr}"
	check "capacity: plan names a reservation with too few instances available" 1 \
		--err "kiln: plan: aws: compute.trainers.capacity.reservation: $odcr has 1 instances available; the group needs 2
  hint: lower compute.trainers.count to 1, or free instances in the reservation" \
		-- "$KILN" plan
	odcr=$("$AWS_PY" "$E2E_ROOT/tests/e2e/capacity_inspect.py" odcr p5.48xlarge us-east-1b 2)
	cap_dir odcr "    capacity: {reservation: $odcr}"
	check "capacity: apply launches the gang into the targeted reservation" 0 \
		--out-has "aws_instance_group.trainers: created" \
		--out-has "Apply complete: 6 created, 0 updated, 0 replaced, 0 deleted." \
		-- "$KILN" apply --auto-approve
	cap_inspect "capacity: boto3 finds the gang in the reservation" in-reservation "$odcr" 2 none
	check "capacity: and plans no changes" 0 --out-has "No changes." -- "$KILN" plan --detailed-exitcode
	"$KILN" destroy --auto-approve >/dev/null 2>&1
	cd "$E2E_ROOT" || exit 1
}

cap_group() { # a Capacity Reservation group (reservation_group: ARN)
	cap_ctl reset '{}'
	cap_ctl clock '{"now": "2026-12-02T00:00:00Z"}'
	ci="$AWS_PY $E2E_ROOT/tests/e2e/capacity_inspect.py"
	wrong_type=$($ci odcr p4d.24xlarge us-east-1a 2)
	wrong_zone=$($ci odcr p5.48xlarge us-east-1c 2)
	ending=$($ci odcr p5.48xlarge us-east-1a 2 2026-12-02T01:00:00Z)
	cap_ctl clock '{"now": "2026-12-02T02:00:00Z"}'
	grp=$($ci group misfits "$wrong_type" "$wrong_zone" "$ending")
	grp_bad=$grp
	cap_dir group "    capacity: {reservation_group: $grp}"
	check "capacity: plan names each member of a reservation group that does not fit (type, zone, expired), exactly" 1 \
		--out "" \
		--err "kiln: plan: aws: compute.trainers.capacity.reservation_group: no reservation in arn:aws:resource-groups:us-east-1:123456789012:group/misfits takes 2 × p5.48xlarge in the spec's zones: $wrong_type is for p4d.24xlarge; $wrong_zone is in us-east-1c; $ending is expired
  hint: add a reservation for 2 × p5.48xlarge in one of the spec's zones to the group, or change compute.trainers.instance_type, its count or provider.zone" \
		-- "$KILN" plan
	cap_dir group "    capacity: {reservation_group: arn:aws:resource-groups:us-east-1:123456789012:group/nowhere}"
	check "capacity: plan names a reservation group that does not exist, exactly" 1 \
		--out "" \
		--err "kiln: plan: aws: compute.trainers.capacity.reservation_group: resource group arn:aws:resource-groups:us-east-1:123456789012:group/nowhere does not exist in us-east-1
  hint: check the ARN (aws resource-groups list-groups); resource groups are regional" \
		-- "$KILN" plan
	fits=$($ci odcr p5.48xlarge us-east-1b 2)
	grp=$($ci group pool "$wrong_type" "$fits")
	cap_dir group "    capacity: {reservation_group: $grp}"
	check "capacity: plan names the member of the reservation group the gang launches into" 0 \
		--out-has "aws_instance_group.trainers: reservation group $grp: the nodes launch into $fits (p5.48xlarge in us-east-1b)" \
		-- "$KILN" plan
	check "capacity: apply launches the gang into the reservation group, in the member's zone" 0 \
		--out-has "aws_instance_group.trainers: created" \
		--out-has "Apply complete: 6 created, 0 updated, 0 replaced, 0 deleted." \
		-- "$KILN" apply --auto-approve
	cap_inspect "capacity: boto3 finds the gang in the group's member reservation" in-reservation "$fits" 2 none
	cap_inspect "capacity: kiln asks EC2 to launch the group's gang in its reservations only" \
		preference group capacity-reservations-only
	cap_inspect "capacity: the emulator refuses a reservations-only launch no group member fits, as EC2 does" \
		group-launch "$grp_bad" capacity-reservations-only ReservationCapacityExceeded
	cap_inspect "capacity: the emulator launches on demand, echoing no preference, when none was sent" \
		group-launch "$grp_bad" -
	check "capacity: and plans no changes in the reservation group" 0 --out-has "No changes." \
		-- "$KILN" plan --detailed-exitcode
	"$KILN" destroy --auto-approve >/dev/null 2>&1
	# A member not active yet: EC2 would launch the gang on demand, so kiln waits.
	later=$($ci odcr p5.48xlarge us-east-1a 2 - 2026-12-03T00:00:00Z)
	grp=$($ci group later "$later")
	cap_dir group "    capacity: {reservation_group: $grp}"
	check "capacity: plan names a scheduled member of the reservation group" 0 \
		--out-has "aws_instance_group.trainers: reservation group $grp: the nodes launch into $later (p5.48xlarge in us-east-1a, scheduled)" \
		-- "$KILN" plan
	check "capacity: apply waits for the group's member to be active instead of launching on demand, exactly" 1 \
		--err-has "kiln: apply: aws_instance_group.trainers: create failed: aws: aws_instance_group.trainers waits for $later of its reservation group, which is scheduled from 2026-12-03T00:00:00Z (nodes launch into it once it is active: run kiln apply again then, or kiln up --wait)" \
		-- "$KILN" apply --auto-approve
	cap_inspect "capacity: boto3 finds no instance launched on demand for the waiting group" market group none 0
	cap_ctl clock '{"now": "2026-12-03T01:00:00Z"}'
	check "capacity: once the member is active, apply launches the gang into it" 0 \
		--out-has "Apply complete: 1 created, 0 updated, 0 replaced, 0 deleted." \
		-- "$KILN" apply --auto-approve
	cap_inspect "capacity: boto3 finds the gang in the member that became active" in-reservation "$later" 2 none
	"$KILN" destroy --auto-approve >/dev/null 2>&1
	# An active member that fits wins over a scheduled one listed first.
	sched=$($ci odcr p5.48xlarge us-east-1a 2 - 2026-12-09T00:00:00Z)
	active=$($ci odcr p5.48xlarge us-east-1b 2)
	grp=$($ci group mixed "$sched" "$active")
	cap_dir mixed "    capacity: {reservation_group: $grp}"
	check "capacity: plan picks the group's active member over a scheduled one listed first" 0 \
		--out-has "aws_instance_group.trainers: reservation group $grp: the nodes launch into $active (p5.48xlarge in us-east-1b)" \
		-- "$KILN" plan
	check "capacity: apply launches the gang into the group's active member" 0 \
		--out-has "Apply complete: 6 created, 0 updated, 0 replaced, 0 deleted." \
		-- "$KILN" apply --auto-approve
	cap_inspect "capacity: boto3 finds the gang in the active member, not the scheduled one" \
		in-reservation "$active" 2 none
	"$KILN" destroy --auto-approve >/dev/null 2>&1
	# A member not active yet must be large enough for the gang too.
	small=$($ci odcr p5.48xlarge us-east-1a 1 - 2026-12-09T00:00:00Z)
	grp=$($ci group small "$small")
	cap_dir small "    capacity: {reservation_group: $grp}"
	check "capacity: plan names a scheduled member too small for the gang, exactly" 1 \
		--out "" \
		--err "kiln: plan: aws: compute.trainers.capacity.reservation_group: no reservation in $grp takes 2 × p5.48xlarge in the spec's zones: $small is scheduled with room for 1
  hint: add a reservation for 2 × p5.48xlarge in one of the spec's zones to the group, or change compute.trainers.instance_type, its count or provider.zone" \
		-- "$KILN" plan
	cd "$E2E_ROOT" || exit 1
}

# A change of capacity: on a group that runs (issue 16): a node goes into its
# reservation or market only at launch, so the group is replaced, and the live
# view reads back what the instances were launched into.
cap_change() {
	cap_ctl reset '{}'
	cap_dir moved
	"$KILN" apply --auto-approve >/dev/null 2>&1
	odcr=$("$AWS_PY" "$E2E_ROOT/tests/e2e/capacity_inspect.py" odcr p5.48xlarge us-east-1a 3)
	printf '    capacity: {reservation: %s}\n' "$odcr" >>kiln.yaml
	check "capacity: an on-demand group moved into a reservation plans a replace, with the reason" 2 \
		--out-has "  -/+ aws_instance_group.trainers  replace: capacity forces replacement
      capacity:              null → \"reservation\"            (replace: EC2 puts an instance in a capacity reservation or a Capacity Block only when it launches it (RunInstances): the group is launched again into its new capacity)
      capacity_reservation:  null → \"$odcr\"   (replace: EC2 puts an instance in a capacity reservation only when it launches it (RunInstances): the group is launched again into the new reservation)

" \
		-- "$KILN" plan --detailed-exitcode
	check "capacity: apply launches the group again into the reservation" 0 \
		--out-has "Apply complete: 0 created, 0 updated, 1 replaced, 0 deleted." \
		-- "$KILN" apply --auto-approve
	cap_inspect "capacity: boto3 finds the new gang in the reservation and the old one gone" \
		cluster-in moved 2 "$odcr"
	check "capacity: and plans no changes in the reservation" 0 --out-has "No changes." \
		-- "$KILN" plan --detailed-exitcode
	sed -i 's/^    count: 2/    count: 3/' kiln.yaml
	check "capacity: a larger count grows the group in place" 0 \
		--out-has "Apply complete: 0 created, 1 updated, 0 replaced, 0 deleted." \
		-- "$KILN" apply --auto-approve
	cap_inspect "capacity: boto3 finds the new node in the group's reservation too" \
		cluster-in moved 3 "$odcr"
	odcr2=$("$AWS_PY" "$E2E_ROOT/tests/e2e/capacity_inspect.py" odcr p5.48xlarge us-east-1a 3)
	sed -i "s/$odcr/$odcr2/" kiln.yaml
	check "capacity: another reservation plans a replace of capacity_reservation alone" 2 \
		--out-has "  -/+ aws_instance_group.trainers  replace: capacity_reservation forces replacement
      capacity_reservation:  \"$odcr\" → \"$odcr2\"   (replace: EC2 puts an instance in a capacity reservation only when it launches it (RunInstances): the group is launched again into the new reservation)

" \
		-- "$KILN" plan --detailed-exitcode
	sed -i 's/^    capacity: .*/    capacity: {spot: {fallback: on-demand}}/' kiln.yaml
	check "capacity: spot with a fallback instead plans a replace by market, capacity unset" 2 \
		--out-has "  -/+ aws_instance_group.trainers  replace: market forces replacement
      market:                \"on-demand\" → \"spot\"            (replace: a node is bought on-demand or spot when it launches)
      capacity:              \"reservation\" → null            (replace: EC2 puts an instance in a capacity reservation or a Capacity Block only when it launches it (RunInstances): the group is launched again into its new capacity)
      capacity_reservation:  \"$odcr\" → null   (replace: EC2 puts an instance in a capacity reservation only when it launches it (RunInstances): the group is launched again into the new reservation)
      spot_fallback:         null → true                     (live: it only decides how later launches are made (a tag on the instances))

" \
		-- "$KILN" plan --detailed-exitcode
	"$KILN" apply --auto-approve >/dev/null 2>&1
	sed -i 's/^    capacity: .*/    capacity: spot/' kiln.yaml
	check "capacity: a spot group whose fallback is dropped plans an update in place, no replace" 2 \
		--out-has "  ~ aws_instance_group.trainers  update in place
      spot_fallback:  true → null   (live: it only decides how later launches are made (a tag on the instances))

" \
		-- "$KILN" plan --detailed-exitcode
	"$KILN" apply --auto-approve >/dev/null 2>&1
	check "capacity: the update retags the instances and plans no changes after" 0 \
		--out-has "No changes." \
		-- "$KILN" plan --detailed-exitcode
	"$KILN" destroy --auto-approve >/dev/null 2>&1
	cd "$E2E_ROOT" || exit 1
}

# A group that fills its reservation, replaced: the replace deletes the old
# nodes first, so their slots count free at plan time (one reservation, then
# a reservation group).
cap_replace_full() { # CLUSTER CAPACITY-LINE RESERVATION WHAT
	cap_dir "$1" "$2"
	"$KILN" apply --auto-approve >/dev/null 2>&1
	rf_old=$("$AWS_PY" "$E2E_ROOT/tests/e2e/capacity_inspect.py" ids "$1")
	printf '    disk: {size_gb: 300}\n' >>kiln.yaml
	check "capacity: a group that fills its $4 plans a replace, its own nodes' room counted" 2 \
		--out-has "  -/+ aws_instance_group.trainers  replace: disk_size_gb forces replacement" \
		-- "$KILN" plan --detailed-exitcode
	check "capacity: apply replaces the group inside its full $4" 0 \
		--out-has "Apply complete: 0 created, 0 updated, 1 replaced, 0 deleted." \
		-- "$KILN" apply --auto-approve
	cap_inspect "capacity: boto3 finds the 2 nodes in the $4" in-reservation "$3" 2 none
	assert "capacity: boto3 finds new instances in the $4, not the old ones" \
		sh -c '[ -n "$1" ] && [ "$1" != "$("$2" "$3" ids "$4")" ]' sh "$rf_old" "$AWS_PY" \
		"$E2E_ROOT/tests/e2e/capacity_inspect.py" "$1"
	"$KILN" destroy --auto-approve >/dev/null 2>&1
	cd "$E2E_ROOT" || exit 1
}

cap_replace() {
	cap_ctl reset '{}'
	rp_cr=$("$AWS_PY" "$E2E_ROOT/tests/e2e/capacity_inspect.py" odcr p5.48xlarge us-east-1a 2)
	cap_replace_full full "    capacity: {reservation: $rp_cr}" "$rp_cr" reservation
	# Another cluster's nodes fill it: nothing of them counts free, and the fix is not count 0.
	cap_dir taken "    capacity: {reservation: $rp_cr}"
	rp_taken=$cap_d
	"$KILN" apply --auto-approve >/dev/null 2>&1
	cap_dir other "    capacity: {reservation: $rp_cr}"
	check "capacity: plan names a reservation another cluster fills, with a fix that is not count 0, exactly" 1 \
		--out "" \
		--err "kiln: plan: aws: compute.trainers.capacity.reservation: $rp_cr has 0 instances available; the group needs 2
  hint: free instances in the reservation, or name one with 2 available" \
		-- "$KILN" plan
	cd "$rp_taken" || exit 1
	"$KILN" destroy --auto-approve >/dev/null 2>&1
	cd "$E2E_ROOT" || exit 1
	rp_cr=$("$AWS_PY" "$E2E_ROOT/tests/e2e/capacity_inspect.py" odcr p5.48xlarge us-east-1a 2)
	rp_grp=$("$AWS_PY" "$E2E_ROOT/tests/e2e/capacity_inspect.py" group full "$rp_cr")
	cap_replace_full fullgroup "    capacity: {reservation_group: $rp_grp}" "$rp_cr" "reservation group"
}

cap_spot() {
	cap_ctl reset '{}'
	cap_dir spot "    capacity:" "      spot: {fallback: on-demand}"
	check "capacity: the plan prices spot and shows the on-demand fallback" 0 \
		--out-has "Instance usage (p5.48xlarge, spot, typical price)" \
		--out-has "aws_instance_group.trainers: On-demand fallback (p5.48xlarge, 2 × \$98.32/h = \$196.64/h): what the group costs if EC2 has no spot capacity and it launches on demand instead" \
		-- "$KILN" cost
	cap_ctl spot '{"available": false}'
	check "capacity: with spot capacity switched off the gang launches on demand" 0 \
		--err-has "no spot capacity for 2 × p5.48xlarge in us-east-1a" \
		--err-has "launching on demand" \
		--out-has "Apply complete: 6 created, 0 updated, 0 replaced, 0 deleted." \
		-- "$KILN" apply --auto-approve
	cap_inspect "capacity: boto3 finds the gang on demand" market spot none 2
	check "capacity: and plans no changes after the fallback" 0 --out-has "No changes." \
		-- "$KILN" plan --detailed-exitcode
	sed -i 's/^    capacity:$/    capacity: spot/; /spot: {fallback/d' kiln.yaml
	check "capacity: a fallen-back group whose fallback is dropped updates its tags in place" 0 \
		--out-has "Apply complete: 0 created, 1 updated, 0 replaced, 0 deleted." \
		-- "$KILN" apply --auto-approve
	check "capacity: and plans no changes after the fallback is dropped" 0 \
		--out-has "No changes." \
		-- "$KILN" plan --detailed-exitcode
	"$KILN" destroy --auto-approve >/dev/null 2>&1
	cap_ctl spot '{"available": true}'
	cd "$E2E_ROOT" || exit 1
}

cap_windows() { # the two windows on offer: us-east-1a from Dec 3, us-east-1b from Dec 4
	cap_ctl reset '{}'
	cap_ctl clock '{"now": "2026-12-02T00:00:00Z"}'
	cap_ctl capacity-blocks '[{"instance_type": "p5.48xlarge", "zone": "us-east-1b", "start": "2026-12-04T11:30:00Z", "count": 4, "hourly_usd": 30},
		{"instance_type": "p5.48xlarge", "zone": "us-east-1a", "start": "2026-12-03T11:30:00Z", "count": 4, "hourly_usd": 31.464}]'
}

CAP_BLOCK='    capacity:
      block: {duration: 24h, start: after 2026-12-03T00:00Z, max_upfront_usd: 2000}'

cap_block() {
	cap_windows
	cap_dir block "$CAP_BLOCK"
	# A TTL longer than the block: the block's end is the harder limit.
	printf 'ttl: 72h\n' >>kiln.yaml
	check "capacity: plan shows the block it would buy and the runner-up, with fees, and the upfront cost" 0 \
		--out-has "+ aws_capacity_block.trainers  create" \
		--out-has "aws_capacity_block.trainers: buys the Capacity Block cb-f014fe44dea1ba96d in us-east-1a, 2026-12-03T11:30:00Z to 2026-12-04T11:30:00Z, \$1510.27 up front (\$3.93/GPU-hour)" \
		--out-has "aws_capacity_block.trainers: runner-up: cb-310c1acd32fae2003 in us-east-1b, 2026-12-04T11:30:00Z to 2026-12-05T11:30:00Z, \$1440.00 up front (\$3.75/GPU-hour)" \
		--out-has "  Up front: \$1,510.27, paid once when bought (a Capacity Block cannot be cancelled)" \
		-- "$KILN" plan
	"$KILN" plan --json >plan.json 2>/dev/null
	assert "capacity: the plan JSON has the upfront cost and validates against the schema" \
		sh -c 'python3 "$1/tests/check-plan-schema.py" plan.json &&
			python3 -c "import json,sys; c=json.load(open(\"plan.json\"))[\"kiln\"][\"cost\"]; sys.exit(c[\"upfront\"] != 1510.27)"' \
		sh "$E2E_ROOT"
	assert "capacity: the plan JSON carries the offering it buys and the runner-up, exactly" \
		python3 -c 'import json, sys
c = [r for r in json.load(open("plan.json"))["resource_changes"] if r["address"] == "aws_capacity_block.trainers"][0]["kiln"]
want = {"offering": {"id": "cb-f014fe44dea1ba96d", "zone": "us-east-1a", "instance_type": "p5.48xlarge", "count": 2,
		"start": "2026-12-03T11:30:00Z", "end": "2026-12-04T11:30:00Z", "duration_hours": 24,
		"upfront_usd": 1510.27, "usd_per_gpu_hour": 3.933},
	"runner_up": {"id": "cb-310c1acd32fae2003", "zone": "us-east-1b", "instance_type": "p5.48xlarge", "count": 2,
		"start": "2026-12-04T11:30:00Z", "end": "2026-12-05T11:30:00Z", "duration_hours": 24,
		"upfront_usd": 1440.0, "usd_per_gpu_hour": 3.75}}
got = {k: c.get(k) for k in want}
print(got) if got != want else None
sys.exit(got != want)'
	check "capacity: the Markdown plan shows both offerings in a table" 0 \
		--out-has "**Capacity Blocks**

| Resource | | Offering | Zone | Instances | Start | End | Hours | Up front | Per GPU-hour |
| --- | --- | --- | --- | --- | --- | --- | ---: | ---: | ---: |
| aws_capacity_block.trainers | buys | cb-f014fe44dea1ba96d | us-east-1a | 2 × p5.48xlarge | 2026-12-03T11:30:00Z | 2026-12-04T11:30:00Z | 24 | \$1,510.27 | \$3.93 |
| | runner-up | cb-310c1acd32fae2003 | us-east-1b | 2 × p5.48xlarge | 2026-12-04T11:30:00Z | 2026-12-05T11:30:00Z | 24 | \$1,440.00 | \$3.75 |
" \
		-- "$KILN" plan --markdown
	check "capacity: apply refuses to buy without approval, naming the fee" 1 \
		--err "kiln: apply: this plan buys capacity up front (\$1,510.27, which cannot be undone), and no approval covers it; nothing was changed
  hint: save the plan (kiln plan kiln.yaml --out plan.kiln), have it approved and apply it with --require-approvals N, or pass --allow-purchase" \
		-- "$KILN" apply --auto-approve
	cap_inspect "capacity: boto3 finds nothing bought after the refusal" purchases 0
	check "capacity: apply --refresh=false refuses a purchase it read no offering for, even allowed, exactly" 1 \
		--err "kiln: apply: this plan buys aws_capacity_block.trainers up front (which cannot be undone), but it was made with --refresh=false; kiln buys only from a plan that read the offering and its fee from the cloud; nothing was changed
  hint: plan without --refresh=false (kiln plan kiln.yaml --out plan.kiln), review the offering and fee it shows, then apply that plan" \
		-- "$KILN" apply --auto-approve --refresh=false --allow-purchase
	"$KILN" plan --refresh=false --out stale.kiln >/dev/null 2>&1
	check "capacity: a saved plan made with --refresh=false buys nothing, exactly" 1 \
		--err "kiln: apply: this plan buys aws_capacity_block.trainers up front (which cannot be undone), but it was made with --refresh=false; kiln buys only from a plan that read the offering and its fee from the cloud; nothing was changed
  hint: plan without --refresh=false (kiln plan kiln.yaml --out plan.kiln), review the offering and fee it shows, then apply that plan" \
		-- "$KILN" apply stale.kiln --allow-purchase
	cap_inspect "capacity: boto3 finds nothing bought without a refresh" purchases 0
	mkdir trusted
	openssl genpkey -algorithm ed25519 -out alice.key 2>/dev/null
	openssl pkey -in alice.key -pubout -out trusted/alice.pub 2>/dev/null
	"$KILN" plan --out plan.kiln >/dev/null 2>&1
	"$KILN" approve plan.kiln --key alice.key --signer alice >/dev/null 2>&1
	check "capacity: a saved plan with a trusted approval buys the block; the nodes wait for its start" 1 \
		--out-has "aws_capacity_block.trainers: created [id cr-" \
		--err-has "aws_instance_group.trainers waits for its Capacity Block cr-" \
		--err-has ", which is scheduled from 2026-12-03T11:30:00Z" \
		-- "$KILN" apply plan.kiln --require-approvals 1 --trusted-keys trusted
	assert "capacity: the commit records the purchase in a Kiln-Purchase trailer" \
		sh -c 'git --git-dir=.kiln/state.git log --all --format=%B | grep -qE "^Kiln-Purchase: cr-[0-9a-f]{17} 1510.27 USD$"'
	cap_inspect "capacity: boto3 finds one block, scheduled, tagged for the workspace" reservations default 1 scheduled
	check "capacity: a later apply before the start buys nothing more" 1 \
		--err-has "waits for its Capacity Block" \
		-- "$KILN" apply --auto-approve
	cap_inspect "capacity: the emulator refuses a launch into the scheduled block as EC2 documents it" \
		launch-refused cluster:block InvalidCapacityReservationState.PendingActivation
	cap_ctl clock '{"now": "2026-12-03T12:00:00Z"}'
	check "capacity: once the block is active, apply launches the gang into it" 0 \
		--out-has "aws_instance_group.trainers: created" \
		--out-has "Apply complete: 1 created, 0 updated, 0 replaced, 0 deleted." \
		-- "$KILN" apply --auto-approve
	cap_inspect "capacity: boto3 finds the gang in the block, as capacity-block instances" \
		in-reservation cluster:block 2 capacity-block
	check "capacity: and plans no changes in the block" 0 --out-has "No changes." \
		-- "$KILN" plan --detailed-exitcode
	check "capacity: status shows the block's window and when reap takes the cluster down" 0 \
		--out-has "Capacity: aws_capacity_block.trainers cr-" \
		--out-has ", active 2026-12-03T11:30:00Z to 2026-12-04T11:30:00Z; kiln reap takes the cluster down at 2026-12-04T10:30:00Z (22h30m left), an hour before it ends." \
		-- env KILN_NOW=2026-12-03T12:00:00Z "$KILN" status
	check "capacity: ttl extend cannot go past the block's end" 1 \
		--err-has "the TTL cannot go past 2026-12-04T10:30:00Z, when kiln reap takes the cluster down: an hour before aws_capacity_block.trainers ends at 2026-12-04T11:30:00Z" \
		-- env KILN_NOW=2026-12-03T12:00:00Z "$KILN" ttl extend 48h
	check "capacity: an hour before the block ends, reap takes the cluster down" 0 \
		--out-has "reaped" \
		-- env KILN_NOW=2026-12-04T10:31:00Z "$KILN" reap
	cap_inspect "capacity: boto3 finds no instance left in the block after the reap" \
		in-reservation cluster:block 0
	cd "$E2E_ROOT" || exit 1
}

cap_kill() {
	cap_windows
	cap_dir killed "$CAP_BLOCK"
	check "capacity: an apply killed by SIGKILL at the purchase bought the block once" 137 \
		-- env KILN_TEST_KILL_AT=purchase KILN_LOCK_LEASE=1s "$KILN" apply --auto-approve --allow-purchase
	check "capacity: the next apply adopts the block and buys nothing" 1 \
		--out-has "aws_capacity_block.trainers" \
		--err-has "waits for its Capacity Block" \
		-- "$KILN" apply --auto-approve --lock-timeout 10s
	cap_inspect "capacity: boto3 finds one purchase after the kill" purchases 1
	cap_dir late "$CAP_BLOCK"
	sed -i 's/after 2026-12-03T00:00Z/after 2026-12-10T00:00Z/' kiln.yaml
	check "capacity: no offering after the start asked names the dates that exist" 1 \
		--err "kiln: plan: aws: aws_capacity_block.trainers: no Capacity Block of 2 × p5.48xlarge for 24h after 2026-12-10T00:00:00Z in the spec's zones; offerings start at: 2026-12-03T11:30:00Z in us-east-1a, 2026-12-04T11:30:00Z in us-east-1b
  hint: move start: to one of those dates, list more zones under provider.zone, or change count or duration" \
		-- "$KILN" plan
	cd "$E2E_ROOT" || exit 1
}

# A saved plan holds the offering it showed: one whose fee changed, or that
# is gone, since the plan was made is refused before anything is bought.
cap_stale() {
	cap_windows
	cap_dir stale "$CAP_BLOCK"
	"$KILN" plan --out plan.kiln >/dev/null 2>&1
	cap_ctl capacity-blocks '[{"instance_type": "p5.48xlarge", "zone": "us-east-1b", "start": "2026-12-04T11:30:00Z", "count": 4, "hourly_usd": 30},
		{"instance_type": "p5.48xlarge", "zone": "us-east-1a", "start": "2026-12-03T11:30:00Z", "count": 4, "hourly_usd": 32}]'
	check "capacity: a saved plan whose offering's fee changed since is refused as stale, exactly" 1 \
		--err "kiln: apply: plan.kiln does not match the plan its spec and state give now: in the change of aws_capacity_block.trainers, kiln.offering.upfront_usd is 1510.27 in the file, but 1536.0 now; nothing was changed
  hint: kiln carries out a plan file only as kiln made it, and this one was edited or the cloud changed since it was made; make and review a new plan: kiln plan kiln.yaml --out plan.kiln" \
		-- "$KILN" apply plan.kiln --allow-purchase
	cap_ctl capacity-blocks '[{"instance_type": "p5.48xlarge", "zone": "us-east-1b", "start": "2026-12-04T11:30:00Z", "count": 4, "hourly_usd": 30}]'
	check "capacity: a saved plan whose offering vanished since is refused as stale, exactly" 1 \
		--err "kiln: apply: plan.kiln does not match the plan its spec and state give now: in the change of aws_capacity_block.trainers, kiln.offering.id is \"cb-f014fe44dea1ba96d\" in the file, but \"cb-310c1acd32fae2003\" now; nothing was changed
  hint: kiln carries out a plan file only as kiln made it, and this one was edited or the cloud changed since it was made; make and review a new plan: kiln plan kiln.yaml --out plan.kiln" \
		-- "$KILN" apply plan.kiln --allow-purchase
	cap_inspect "capacity: boto3 finds nothing bought after the stale plans" purchases 0
	cd "$E2E_ROOT" || exit 1
}

cap_wait() {
	cap_windows
	# The bound: this block starts 2026-12-03T11:30, past 1h from kiln's clock.
	cap_dir bounded "$CAP_BLOCK"
	cap_bounded=$cap_d
	check "capacity: kiln up --wait-timeout buys the block and exits 5 at once when it starts after the bound" 5 \
		--out-has "aws_capacity_block.trainers: created [id cr-" \
		--err-has ") starts at 2026-12-03T11:30:00Z, after the --wait-timeout of 1h: not waiting for it; it is bought and recorded in the state: run kiln apply (or kiln up --wait) again once it has started, or give --wait-timeout a longer bound" \
		-- env KILN_NOW=2026-12-02T00:00:00Z "$KILN" up --auto-approve --allow-purchase --wait-timeout 1h
	check "capacity: the state records the block bought before the bound passed" 0 \
		--out-has "aws_capacity_block.trainers" -- "$KILN" state list
	cap_inspect "capacity: boto3 finds the bounded block bought, no instance in it" \
		in-reservation cluster:bounded 0
	cap_inspect "capacity: boto3 finds the bounded block scheduled, the only one" \
		reservations default 1 scheduled
	cap_dir waited "$CAP_BLOCK"
	# Within the default bound (6h) of kiln's clock: it waits and launches.
	KILN_NOW=2026-12-03T11:00:00Z KILN_WAIT_POLL_MS=300 "$KILN" up --auto-approve --allow-purchase --wait >up.out 2>up.err &
	cap_pid=$!
	# Until the block is bought and the gang found waiting, then the block starts.
	cap_poll grep -q "applying again" up.err
	cap_ctl clock '{"now": "2026-12-03T12:00:00Z"}'
	wait $cap_pid
	printf '%s\n' "$?" >up.rc
	check "capacity: kiln up --wait buys the block, waits for its start and launches the gang into it" 0 \
		--out-has "0" \
		-- sh -c 'cat up.rc; grep -q "waiting for aws_capacity_block.trainers (from 2026-12-03T11:30:00Z): applying again" up.err &&
			grep -q "Apply complete: 1 created, 0 updated, 0 replaced, 0 deleted." up.out'
	cap_inspect "capacity: boto3 finds the gang kiln up --wait launched in the block" \
		in-reservation cluster:waited 2 capacity-block
	cap_waited=$cap_d
	cd "$cap_bounded" || exit 1
	check "capacity: once the block is active, a later apply launches what --wait-timeout left" 0 \
		--out-has "Apply complete: 1 created, 0 updated, 0 replaced, 0 deleted." \
		-- "$KILN" apply --auto-approve
	cd "$cap_waited" || exit 1
	# The spec sets no ttl: the block's end (2026-12-04T11:30:00Z) is the hard expiry.
	cap_ctl clock '{"now": "2026-12-04T10:29:00Z"}'
	check "capacity: without a ttl, reap leaves the cluster before the margin, exactly" 0 \
		--out "default: kept: expires in 1m (2026-12-04T10:30:00Z, an hour before aws_capacity_block.trainers ends)" \
		-- env KILN_NOW=2026-12-04T10:29:00Z "$KILN" reap
	cap_inspect "capacity: boto3 still finds the gang in the block before the margin" \
		in-reservation cluster:waited 2 capacity-block
	cap_ctl clock '{"now": "2026-12-04T10:31:00Z"}'
	check "capacity: without a ttl, reap takes the cluster down inside the margin, exactly" 0 \
		--out "default: reaped: 7 deleted, 0 retained (expired 1m ago, an hour before aws_capacity_block.trainers ends)" \
		-- env KILN_NOW=2026-12-04T10:31:00Z "$KILN" reap
	cap_inspect "capacity: boto3 finds no instance left in the block reaped without a ttl" \
		in-reservation cluster:waited 0
	cd "$E2E_ROOT" || exit 1
}

# A purchase whose answer is lost (a 5xx after EC2 did it) is sent once and
# the block it bought found by its kiln:purchase tag; lost before it was
# done, the outcome is unknown and nothing is bought again in the run.
cap_lost() {
	cap_windows
	cap_dir lost "$CAP_BLOCK"
	cap_ctl lost-answer '{"ec2:PurchaseCapacityBlock": "after"}'
	check "capacity: a purchase whose answer is lost after EC2 bought the block is found and recorded, not bought again" 1 \
		--out-has "aws_capacity_block.trainers: created [id cr-" \
		--err-has "kiln: warn: aws_capacity_block.trainers: the answer to PurchaseCapacityBlock was lost (ec2 PurchaseCapacityBlock: InternalError: " \
		--err-has "is found by its kiln:purchase tag and recorded: nothing was bought twice" \
		--err-has "waits for its Capacity Block" \
		-- "$KILN" apply --auto-approve --allow-purchase
	cap_inspect "capacity: boto3 finds one purchase and one block after the lost answer" purchases 1
	cap_lost_id=$("$AWS_PY" -c 'import json, os, urllib.request
print(json.load(urllib.request.urlopen(os.environ["AWS_ENDPOINT_URL"] + "/_kiln/capacity-blocks"))["purchases"][0]["reservation"])')
	check "capacity: the state and the Kiln-Purchase trailer name the block the lost answer bought" 0 \
		--out-has "Kiln-Purchase: $cap_lost_id 1510.27 USD" \
		-- sh -c '"$1" state show aws_capacity_block.trainers | grep -q "$2" && git --git-dir=.kiln/state.git log --all --format=%B' sh "$KILN" "$cap_lost_id"
	cap_windows
	cap_dir unknown "$CAP_BLOCK"
	cap_ctl lost-answer '{"ec2:PurchaseCapacityBlock": "before"}'
	check "capacity: a purchase whose answer is lost before EC2 bought anything fails, outcome unknown, exactly" 1 \
		--err-has "kiln: apply: aws_capacity_block.trainers: create failed: aws: aws_capacity_block.trainers: the answer to PurchaseCapacityBlock was lost (ec2 PurchaseCapacityBlock: InternalError: " \
		--err-has "), and no block tagged kiln:purchase kiln-" \
		--err-has " is found: whether it was bought is unknown; kiln buys nothing more in this run (wait a few minutes, then run kiln plan: it adopts a block bought for this address (kiln sprawl lists one no state records); apply again only when neither shows one)" \
		-- "$KILN" apply --auto-approve --allow-purchase
	cap_inspect "capacity: boto3 finds no purchase after the unknown outcome" purchases 0
	# A block kiln bought (its tags) that no state records: an orphan for sprawl.
	cap_windows
	cap_dir planted
	"$KILN" workspace new default >/dev/null 2>&1
	cap_planted=$("$AWS_PY" - <<'PY'
import os, boto3
ec2 = boto3.client("ec2", endpoint_url=os.environ["AWS_ENDPOINT_URL"], region_name="us-east-1")
o = ec2.describe_capacity_block_offerings(InstanceType="p5.48xlarge", InstanceCount=2,
                                         CapacityDurationHours=24)["CapacityBlockOfferings"][0]
tags = [{"Key": k, "Value": v} for k, v in {"kiln:cluster": "lost", "kiln:workspace": "default",
        "kiln:address": "aws_capacity_block.trainers", "kiln:upfront-fee": "1510.27 USD"}.items()]
print(ec2.purchase_capacity_block(CapacityBlockOfferingId=o["CapacityBlockOfferingId"],
      InstancePlatform="Linux/UNIX", TagSpecifications=[{"ResourceType": "capacity-reservation",
      "Tags": tags}])["CapacityReservation"]["CapacityReservationId"])
PY
)
	check "capacity: sprawl lists a kiln-tagged block no state records as an orphan" 0 \
		--out-has "Orphans (kiln tags, in no workspace's state): 1," \
		--out-has "  lost/default" \
		--out-has "    aws_capacity_block.trainers          $cap_planted" \
		-- "$KILN" sprawl --provider aws
	cd "$E2E_ROOT" || exit 1
}

cap_stopped() { # PID: the process is stopped (SIGSTOP)
	[ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = T ]
}

# Apply A stops (SIGSTOP) between its look for the block and its purchase;
# its lease runs out; B takes the lock over and buys the block (killed
# right after, still holding the lock); A goes on: it renews and checks its
# lock before buying, finds it taken and buys nothing.
cap_paused() {
	cap_windows
	cap_dir paused "$CAP_BLOCK"
	KILN_TEST_STOP_AT=purchase KILN_LOCK_LEASE=1s "$KILN" apply --auto-approve --allow-purchase >a.out 2>a.err &
	cap_a=$!
	cap_poll cap_stopped "$cap_a"
	sleep 2
	KILN_TEST_KILL_AT=purchase KILN_LOCK_LEASE=1s "$KILN" apply --auto-approve --allow-purchase --lock-timeout 20s >b.out 2>b.err
	kill -CONT "$cap_a"
	wait "$cap_a"
	printf '%s\n' "$?" >a.rc
	check "capacity: an apply stopped before its purchase, its lock taken over, buys nothing and names the new holder" 0 \
		--out-has "1" \
		--out-has "kiln: apply: aws_capacity_block.trainers: create failed: the lock on workspace 'default' was removed or taken over while this run held it: " \
		--out-has " holds it now (nothing was bought: the run that holds the lock now buys what the spec asks; see kiln log once it ends)" \
		-- sh -c 'cat a.rc a.err'
	cap_inspect "capacity: boto3 finds one purchase after the paused holder" purchases 1
	sleep 1
	check "capacity: the next apply adopts the one block and buys nothing" 1 \
		--err-has "waits for its Capacity Block" \
		-- sh -c '"$1" apply --auto-approve --lock-timeout 10s && exit 9; "$2" "$3/tests/e2e/capacity_inspect.py" purchases 1 >&2 || exit 9; exit 1' sh "$KILN" "$AWS_PY" "$E2E_ROOT"
	cd "$E2E_ROOT" || exit 1
}

cap_least_privilege() {
	cap_dir plain
	check "capacity: iam-policy names no capacity action for a spec without capacity" 0 \
		-- sh -c '"$1" iam-policy >p.json && ! grep -q Capacity p.json' sh "$KILN"
	cap_dir block "$CAP_BLOCK"
	"$KILN" iam-policy >policy.json 2>/dev/null
	check "capacity: iam-policy names the block actions for a spec that buys one" 0 \
		-- sh -c 'grep -q "ec2:PurchaseCapacityBlock" policy.json && grep -q "ec2:DescribeCapacityBlockOfferings" policy.json && grep -q "ec2:DescribeCapacityReservations" policy.json'
	cap_dir odcr "    capacity: {reservation: cr-0123456789abcdef0}"
	check "capacity: iam-policy names the reservation read for a spec that targets one, and nothing to buy" 0 \
		-- sh -c '"$1" iam-policy >p.json && grep -q "ec2:DescribeCapacityReservations" p.json && ! grep -q "ec2:PurchaseCapacityBlock" p.json' sh "$KILN"
	cap_dir group "    capacity: {reservation_group: arn:aws:resource-groups:us-east-1:123456789012:group/pool}"
	check "capacity: iam-policy names the group's reads for a spec that targets a reservation group, and nothing to buy" 0 \
		-- sh -c '"$1" iam-policy >p.json && grep -q "resource-groups:ListGroupResources" p.json && grep -q "ec2:DescribeCapacityReservations" p.json && ! grep -q "ec2:PurchaseCapacityBlock" p.json' sh "$KILN"
	cap_dir odcr "    capacity: {reservation: cr-0123456789abcdef0}"
	check "capacity: iam-policy names no Resource Groups action for a spec that targets one reservation" 0 \
		-- sh -c '"$1" iam-policy >p.json && ! grep -q "resource-groups:" p.json' sh "$KILN"
	cap_dir block "$CAP_BLOCK"
	"$KILN" iam-policy >policy.json 2>/dev/null
	lp_moto=$E2E_TMP/moto-cap-iam
	mkdir -p "$lp_moto"
	if ! out=$(INITIAL_NO_AUTH_ACTION_COUNT=3 sh "$E2E_ROOT/tests/moto/server.sh" start "$lp_moto" 2>&1); then
		printf '%s\n' "$out" >"$E2E_TMP/.moto"
		fail "capacity: a spec that buys a block applies with exactly the iam-policy permissions" "$E2E_TMP/.moto"
		return 0
	fi
	lp_ep=AWS_ENDPOINT_URL=http://127.0.0.1:$(cat "$lp_moto/moto.port")
	aws_py=$E2E_ROOT/tests/e2e/aws_inspect.py
	echo '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}' >admin.json
	lp_admin=$(env "$lp_ep" "$AWS_PY" "$aws_py" user admin admin.json)
	# shellcheck disable=SC2086
	lp_keys=$(env "$lp_ep" $lp_admin "$AWS_PY" "$aws_py" user kiln-ci policy.json)
	# The control endpoint is never authenticated: the windows and the clock.
	(
		AWS_ENDPOINT_URL=${lp_ep#AWS_ENDPOINT_URL=}
		cap_ctl clock '{"now": "2026-12-03T12:00:00Z"}'
		cap_ctl capacity-blocks '[{"instance_type": "p5.48xlarge", "zone": "us-east-1a", "start": "2026-12-04T11:30:00Z", "count": 4, "hourly_usd": 30}]'
	)
	# shellcheck disable=SC2086
	check "capacity: a spec that buys a block applies with exactly the iam-policy permissions" 1 \
		--out-has "aws_capacity_block.trainers: created [id cr-" \
		--err-has "waits for its Capacity Block" \
		-- env "$lp_ep" $lp_keys "$KILN" apply --auto-approve --allow-purchase
	# shellcheck disable=SC2086
	assert "capacity: boto3 finds the block bought under the least-privilege policy" \
		env "$lp_ep" $lp_admin "$AWS_PY" "$E2E_ROOT/tests/e2e/capacity_inspect.py" reservations default 1 scheduled
	# A reservation group, read and launched into with exactly its spec's policy.
	# shellcheck disable=SC2086
	lp_cr=$(env "$lp_ep" $lp_admin "$AWS_PY" "$E2E_ROOT/tests/e2e/capacity_inspect.py" odcr p5.48xlarge us-east-1a 2)
	# shellcheck disable=SC2086
	lp_grp=$(env "$lp_ep" $lp_admin "$AWS_PY" "$E2E_ROOT/tests/e2e/capacity_inspect.py" group pool "$lp_cr")
	cap_dir grouped "    capacity: {reservation_group: $lp_grp}"
	"$KILN" iam-policy >policy.json 2>/dev/null
	# shellcheck disable=SC2086
	lp_keys=$(env "$lp_ep" $lp_admin "$AWS_PY" "$aws_py" user kiln-group policy.json)
	# shellcheck disable=SC2086
	check "capacity: a spec that targets a reservation group applies with exactly the iam-policy permissions" 0 \
		--out-has "Apply complete: 6 created, 0 updated, 0 replaced, 0 deleted." \
		-- env "$lp_ep" $lp_keys "$KILN" apply --auto-approve
	# shellcheck disable=SC2086
	assert "capacity: boto3 finds the gang in the group's reservation under the least-privilege policy" \
		env "$lp_ep" $lp_admin "$AWS_PY" "$E2E_ROOT/tests/e2e/capacity_inspect.py" in-reservation "$lp_cr" 2 none
	sh "$E2E_ROOT/tests/moto/server.sh" stop "$lp_moto" >/dev/null 2>&1
	cd "$E2E_ROOT" || exit 1
}

capacity_tests() {
	cap_bad_input
	cap_sim
	cap_sim_change
	if ! AWS_PY=$(aws_find_python); then
		printf '%s\n' "$CAP_MOTO_TESTS" | while IFS= read -r t; do
			skip "$t" "no python3 here has moto 5 and boto3"
		done
		return 0
	fi
	PYTHON=$AWS_PY
	export PYTHON
	cap_moto=$E2E_TMP/moto-cap
	mkdir -p "$cap_moto"
	if ! out=$(sh "$E2E_ROOT/tests/moto/server.sh" start "$cap_moto" 2>&1); then
		printf '%s\n' "$out" >"$E2E_TMP/.moto"
		fail "capacity: moto's server starts on loopback" "$E2E_TMP/.moto"
		return 0
	fi
	eval "$out"
	(
		AWS_ENDPOINT_URL=http://127.0.0.1:$MOTO_PORT
		AWS_ACCESS_KEY_ID=AKIAKILNTESTKEY00000
		AWS_SECRET_ACCESS_KEY=kiln-e2e-secret
		AWS_REGION=us-east-1
		export AWS_ENDPOINT_URL AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_REGION
		unset AWS_PROFILE AWS_SESSION_TOKEN AWS_DEFAULT_REGION KILN_STATE KILN_WORKSPACE
		export KILN_AUTHOR="E2E <e2e@example.com>"
		# CAP_ONLY="cap_spot cap_block" runs some of them, for working on them.
		for cap_fn in ${CAP_ONLY:-cap_odcr cap_group cap_change cap_replace cap_spot cap_block cap_kill cap_lost cap_paused cap_stale cap_wait cap_least_privilege}; do
			"$cap_fn"
		done
		echo "$E2E_PASSED $E2E_FAILED" >"$E2E_TMP/.capacity-counts"
	)
	read -r E2E_PASSED E2E_FAILED <"$E2E_TMP/.capacity-counts"
	sh "$E2E_ROOT/tests/moto/server.sh" stop "$cap_moto" >/dev/null 2>&1
}
