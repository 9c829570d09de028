# scale.sh - end-to-end tests of EC2's rate limits and big gangs (issue 30): the
# emulator's documented buckets (tests/moto/ec2_buckets.py) refuse what EC2 refuses;
# a gang larger than the RunInstances instance bucket launches in all-or-nothing
# chunks, every instance tagged and none twice, with no throttling surfacing; a chunk
# failing for capacity leaves no node running and says why; an apply killed by
# SIGKILL between chunks converges with no orphan; the attempts of one throttled call
# stay bounded. Against moto with kiln's extension, boto3 (scale_inspect.py) checking
# what was really made. moto makes an instance in tens of milliseconds, so these run
# with an instance bucket of 50 on both sides (the emulator's resource_buckets,
# KILN_AWS_LAUNCH_BUCKET): the same code path as 1,000. SCALE_FULL=1 adds the
# 2,000-node gang at EC2's documented sizes (minutes of moto's time). Sourced by
# run.sh after lib.sh and aws.sh; $KILN is the binary under test.

SCALE_MOTO_TESTS="scale: the emulator refuses a RunInstances larger than the instance bucket with 503 RequestLimitExceeded
scale: a gang of 120 launches in 3 chunks of at most 50
scale: boto3 finds 120 instances, each tagged, none twice
scale: RunInstances was called at most 4 times: the fewest (3), and one retry when the emulator's clock drifted from kiln's under load
scale: the emulator's buckets refused at most one request (a drift of the two clocks on a loaded machine): kiln waited for its tokens
scale: and plans no changes
scale: destroy terminates the gang
scale: boto3 finds no instance left after the destroy
scale: a chunk failing for capacity fails the gang and says the chunks before it were terminated
scale: boto3 finds no node of the failed gang running
scale: an apply killed by SIGKILL after its first chunk
scale: boto3 finds the first chunk's 50 instances, tagged
scale: the next apply adopts them and launches the rest
scale: boto3 finds 120 instances after the convergence, none twice
scale: and plans no changes after the convergence
scale: a chunk the emulator keeps throttling gives up after its bounded attempts, undoing the chunk before it
scale: RunInstances was sent at most 1 + 4 times
scale: boto3 finds no node of the throttled gang running
scale: a 2,000-node gang at EC2's documented bucket sizes launches in 2 chunks, tagged, none twice"

scale_ctl() { # PATH JSON
	curl -sf -X POST -H 'Content-Type: application/json' -d "$2" \
		"$AWS_ENDPOINT_URL/_kiln/$1" >/dev/null
}

scale_inspect() { # NAME ARGS...
	scale_name=$1
	shift
	assert "$scale_name" "$AWS_PY" "$E2E_ROOT/tests/e2e/scale_inspect.py" "$@"
}

# scale_fresh CLUSTER COUNT [RESOURCE_BUCKETS]: moto emptied, the buckets on (the clock
# 10 times fast), and a directory with a one-group spec.
scale_fresh() {
	scale_ctl reset '{}'
	scale_ctl rate-limits "{\"enabled\": true, \"time_scale\": 10, \"resource_buckets\": ${3:-{\"RunInstances\": [50, 2]\}}}"
	scale_d=$(mktemp -d "$E2E_TMP/scale.XXXXXX")
	cd "$scale_d" || exit 1
	printf 'kiln: 1\ncluster: %s\nprovider: {name: aws, region: us-east-1, zone: us-east-1a}\n' "$1" >kiln.yaml
	printf 'network: {cidr: 10.50.0.0/16}\ncompute:\n  workers:\n    instance_type: m7i.xlarge\n' >>kiln.yaml
	printf '    count: %s\n    gang: true\n    image: ami-1e749f67\n' "$2" >>kiln.yaml
}

scale_gang() {
	scale_ctl reset '{}'
	scale_ctl rate-limits '{"enabled": true}'
	scale_inspect "scale: the emulator refuses a RunInstances larger than the instance bucket with 503 RequestLimitExceeded" \
		refuses-big 2000
	scale_fresh gang 120
	check "scale: a gang of 120 launches in 3 chunks of at most 50" 0 \
		--out-has "Apply complete: 4 created, 0 updated, 0 replaced, 0 deleted." \
		--err-has "aws_instance_group.workers: launching 120 instances in 3 chunks of at most 50" \
		-- "$KILN" apply --auto-approve --health-timeout 0 --log-level info
	scale_inspect "scale: boto3 finds 120 instances, each tagged, none twice" gang gang aws_instance_group.workers 120
	scale_inspect "scale: RunInstances was called at most 4 times: the fewest (3), and one retry when the emulator's clock drifted from kiln's under load" calls RunInstances le 4
	scale_inspect "scale: the emulator's buckets refused at most one request (a drift of the two clocks on a loaded machine): kiln waited for its tokens" throttled 1
	check "scale: and plans no changes" 0 --out-has "No changes." -- "$KILN" plan --detailed-exitcode
	check "scale: destroy terminates the gang" 0 --out-has "Destroy complete" \
		-- "$KILN" destroy --auto-approve
	scale_inspect "scale: boto3 finds no instance left after the destroy" gang gang aws_instance_group.workers 0
	cd "$E2E_ROOT" || exit 1
}

scale_capacity() {
	scale_fresh short 120
	scale_ctl capacity '[{"instance_type": "m7i.xlarge", "zone": "us-east-1a", "max": 80}]'
	check "scale: a chunk failing for capacity fails the gang and says the chunks before it were terminated" 1 \
		--err-has "kiln: warn: aws_instance_group.workers: chunk 2 of 3 failed (aws: ec2 RunInstances: InsufficientInstanceCapacity: We currently do not have sufficient m7i.xlarge capacity in the Availability Zone you requested (us-east-1a)." \
		--err-has "): terminated the 50 instances the chunks before it launched, so no part of the gang runs" \
		--err-has "kiln: apply: aws_instance_group.workers: create failed: aws: aws_instance_group.workers: no capacity for 120 × m7i.xlarge in us-east-1a" \
		-- "$KILN" apply --auto-approve --health-timeout 0
	scale_inspect "scale: boto3 finds no node of the failed gang running" gang short aws_instance_group.workers 0
	scale_ctl capacity '[]'
	cd "$E2E_ROOT" || exit 1
}

scale_kill() {
	scale_fresh killed 120
	check "scale: an apply killed by SIGKILL after its first chunk" 137 \
		-- env KILN_TEST_KILL_AT=chunk KILN_LOCK_LEASE=1s "$KILN" apply --auto-approve --health-timeout 0
	scale_inspect "scale: boto3 finds the first chunk's 50 instances, tagged" gang killed aws_instance_group.workers 50
	check "scale: the next apply adopts them and launches the rest" 0 \
		--out-has "Apply complete" \
		-- "$KILN" apply --auto-approve --health-timeout 0 --lock-timeout 10s
	scale_inspect "scale: boto3 finds 120 instances after the convergence, none twice" gang killed aws_instance_group.workers 120
	check "scale: and plans no changes after the convergence" 0 --out-has "No changes." \
		-- "$KILN" plan --detailed-exitcode
	"$KILN" destroy --auto-approve >/dev/null 2>&1
	cd "$E2E_ROOT" || exit 1
}

# kiln believes the instance bucket refills a thousand times faster than the
# emulator's does: its second chunk is throttled again and again.
scale_bounded() {
	scale_fresh throttled 120 '{"RunInstances": [50, 0.01]}'
	check "scale: a chunk the emulator keeps throttling gives up after its bounded attempts, undoing the chunk before it" 1 \
		--err-has "RequestLimitExceeded: Request limit exceeded." \
		--err-has "(throttled: gave up after " \
		--err-has "the 50 instances of the chunks before it were terminated: no part of the gang runs" \
		-- env KILN_AWS_RATE_SCALE=1000 KILN_HTTP_BACKOFF_MS=5 "$KILN" apply --auto-approve --health-timeout 0
	scale_inspect "scale: RunInstances was sent at most 1 + 4 times" calls RunInstances le 5
	scale_inspect "scale: boto3 finds no node of the throttled gang running" gang throttled aws_instance_group.workers 0
	cd "$E2E_ROOT" || exit 1
}

scale_full() {
	if [ "${SCALE_FULL:-}" != 1 ]; then
		skip "scale: a 2,000-node gang at EC2's documented bucket sizes launches in 2 chunks, tagged, none twice" \
			"SCALE_FULL=1 runs it (moto needs minutes for 2,000 instances)"
		return 0
	fi
	scale_fresh full 2000 '{}'
	scale_ctl rate-limits '{"enabled": true, "time_scale": 100}'
	KILN_AWS_LAUNCH_BUCKET=1000 KILN_AWS_RATE_SCALE=100 KILN_HTTP_TIMEOUT_MS=1800000 \
		"$KILN" apply --auto-approve --health-timeout 0 >apply.out 2>apply.err
	scale_inspect "scale: a 2,000-node gang at EC2's documented bucket sizes launches in 2 chunks, tagged, none twice" \
		gang full aws_instance_group.workers 2000
	cd "$E2E_ROOT" || exit 1
}

scale_tests() {
	if ! AWS_PY=$(aws_find_python); then
		printf '%s\n' "$SCALE_MOTO_TESTS" | while IFS= read -r t; do
			skip "$t" "no python3 here has moto 5 and boto3"
		done
		return 0
	fi
	scale_moto=$E2E_TMP/moto-scale
	mkdir -p "$scale_moto"
	if ! out=$(sh "$E2E_ROOT/tests/moto/server.sh" start "$scale_moto" 2>&1); then
		printf '%s\n' "$out" >"$E2E_TMP/.moto"
		fail "scale: moto's server starts on loopback" "$E2E_TMP/.moto"
		return 0
	fi
	eval "$out"
	(
		AWS_ENDPOINT_URL=http://127.0.0.1:$MOTO_PORT
		AWS_ACCESS_KEY_ID=AKIAKILNTESTKEY00000
		AWS_SECRET_ACCESS_KEY=kiln-e2e-secret
		AWS_REGION=us-east-1
		KILN_AWS_LAUNCH_BUCKET=50
		KILN_AWS_RATE_SCALE=10
		export AWS_ENDPOINT_URL AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_REGION
		export KILN_AWS_LAUNCH_BUCKET KILN_AWS_RATE_SCALE
		unset AWS_PROFILE AWS_SESSION_TOKEN AWS_DEFAULT_REGION KILN_STATE KILN_WORKSPACE
		export KILN_AUTHOR="E2E <e2e@example.com>"
		for scale_fn in ${SCALE_ONLY:-scale_gang scale_capacity scale_kill scale_bounded scale_full}; do
			"$scale_fn"
		done
		echo "$E2E_PASSED $E2E_FAILED" >"$E2E_TMP/.scale-counts"
	)
	read -r E2E_PASSED E2E_FAILED <"$E2E_TMP/.scale-counts"
	sh "$E2E_ROOT/tests/moto/server.sh" stop "$scale_moto" >/dev/null 2>&1
}
