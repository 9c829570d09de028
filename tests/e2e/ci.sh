# ci.sh - the CI examples run end to end: examples/ci/github-actions.yml and
# examples/ci/gitlab-ci.yml, unchanged, through tests/e2e/ci_run.py (which runs
# a job's steps with bash and emulates the few actions they use), against moto
# on loopback, with a bare git repository as the state remote (file://).
# Sourced by run.sh after aws.sh (for aws_find_python); E2E_ONLY=ci runs it.
#
# A fixture repository plays the team's: main holds the workflow and the
# trusted keys, a pull-request branch adds kiln.yaml (examples/llm-pretrain.yaml
# with 2 nodes and an image moto knows). Three workspaces of one state remote:
#   sandbox  KILN_REQUIRE_APPROVALS=0: plan, comment, artifact, apply, two
#            applies at once, a push with nothing pending
#   default  the documented flow: approvals by two trusted keys, one approval
#            refused, a key the pull request adds itself not trusted
#   gitlab   the GitLab file's merge request and default branch pipelines
# Nothing is skipped: a missing tool or command is a failed test, by name.

# The refusal of a plan with one approval of two (apply's own message).
ci_refusal() { # FILE N_VALID
	printf 'kiln: apply: %s is not approved: %s valid approval%s from trusted keys, 2 required (--require-approvals 2); nothing was changed' \
		"$1" "$2" "$([ "$2" = 1 ] || echo s)"
}

CI_PLAN_ROLE=arn:aws:iam::123456789012:role/kiln-plan
CI_APPLY_ROLE=arn:aws:iam::123456789012:role/kiln-apply
CI_SUMMARY="Plan: 16 to create, 0 to update, 0 to replace, 0 to delete, 0 to adopt."

ci_git() { # git in the fixture repository, as a developer
	env GIT_AUTHOR_NAME=dev GIT_AUTHOR_EMAIL=dev@example.com GIT_COMMITTER_NAME=dev \
		GIT_COMMITTER_EMAIL=dev@example.com git -C "$CI_DIR/infra" "$@"
}

# ci_github JOB EVENT SHA BEFORE NAME [VAR=VALUE...]: run a job of the
# workflow; the run's files are under $CI_DIR/runs/NAME. Sets ci_rc (0 the job
# succeeded or was skipped, 1 it failed, 2 the runner could not run it).
ci_github() {
	cj_job=$1 cj_event=$2 cj_sha=$3 cj_before=$4 cj_name=$5
	shift 5
	cj_run=$CI_DIR/runs/$cj_name
	mkdir -p "$cj_run"
	cj_vars=$(jq -n --arg state "file://$CI_DIR/state.git" --arg plan "$CI_PLAN_ROLE" \
		--arg apply "$CI_APPLY_ROLE" \
		'{KILN_STATE_URL: $state, KILN_PLAN_ROLE_ARN: $plan, KILN_APPLY_ROLE_ARN: $apply, AWS_REGION: "us-east-1"}')
	for kv in "$@"; do
		cj_vars=$(printf '%s' "$cj_vars" | jq --arg k "${kv%%=*}" --arg v "${kv#*=}" '.[$k] = $v')
	done
	if [ "$cj_event" = pull_request ]; then
		cj_ref=refs/pull/7/merge
		cj_ev=$(jq -n --arg sha "$cj_sha" '{number: 7, pull_request: {number: 7, head: {sha: $sha, repo: {full_name: "example/infra"}}}}')
	else
		cj_ref=refs/heads/main
		cj_ev=$(jq -n --arg before "$cj_before" --arg sha "$cj_sha" '{before: $before, after: $sha}')
	fi
	jq -n --arg sha "$cj_sha" --arg event "$cj_event" --arg ref "$cj_ref" --argjson ev "$cj_ev" \
		--argjson vars "$cj_vars" --arg repo "$CI_DIR/infra" --arg run "$cj_run" \
		--arg arts "$CI_DIR/runs/${CI_ARTIFACTS:-$cj_name}.artifacts" \
		--arg plan "$CI_PLAN_ROLE" --arg apply "$CI_APPLY_ROLE" --arg home "$cj_run/home" \
		--arg comments "${CI_COMMENTS:-$cj_run/comments.json}" --arg key "$CI_STATE_KEY" '{
		github: {event_name: $event, sha: $sha, ref: $ref, repository: "example/infra",
			run_id: "4242", actor: "octocat", server_url: "https://github.com", event: $ev},
		vars: $vars,
		secrets: {KILN_STATE_READ_TOKEN: "", KILN_STATE_TOKEN: "", KILN_STATE_KEY: $key},
		env: {HOME: $home},
		repo: $repo, workdir: ($run + "/work"), artifacts: $arts, out: $run, timeout: 300,
		comments: $comments,
		roles: {
			($plan): {AWS_ACCESS_KEY_ID: "AKIAKILNCIPLAN000000", AWS_SECRET_ACCESS_KEY: "plan-secret"},
			($apply): {AWS_ACCESS_KEY_ID: "AKIAKILNCIAPPLY00000", AWS_SECRET_ACCESS_KEY: "apply-secret"}
		}}' >"$cj_run/context.json"
	mkdir -p "$cj_run/home" "$CI_DIR/runs/${CI_ARTIFACTS:-$cj_name}.artifacts"
	"$AWS_PY" "$E2E_ROOT/tests/e2e/ci_run.py" github "$CI_DIR/infra/.github/workflows/kiln.yml" \
		"$cj_job" "$cj_run/context.json" >"$cj_run/run.log" 2>&1
	ci_rc=$?
}

# ci_step NAME FIELD: a field (outcome, exit, log...) of the step NAME of the last run.
ci_step() {
	jq -r --arg n "$1" --arg f "$2" '[.steps[] | select(.name == $n)][0][$f] // "none"' \
		"$cj_run/result.json" 2>/dev/null || echo "no result.json"
}

# ci_expect NAME WANT_RC [CHECK...]: the last run exited WANT_RC (- for any
# verdict of the job, 0 or 1: never 2, the runner's own failure) and each CHECK
# (STEP=OUTCOME, STEP~TEXT: the step's log has TEXT, STEP!TEXT: it has not)
# holds; on failure the run log is shown.
ci_expect() {
	ce_name=$1 ce_want=$2
	shift 2
	: >"$E2E_TMP/.ci"
	if [ "$ce_want" = - ]; then
		case $ci_rc in 0 | 1) ;; *) printf 'the runner exited %s: it could not run the job\n' "$ci_rc" >>"$E2E_TMP/.ci" ;; esac
	elif [ "$ci_rc" != "$ce_want" ]; then
		printf 'the runner exited %s, want %s\n' "$ci_rc" "$ce_want" >>"$E2E_TMP/.ci"
	fi
	for c in "$@"; do
		case $c in
		*=*)
			got=$(ci_step "${c%%=*}" outcome)
			[ "$got" = "${c#*=}" ] || printf 'step %s: outcome %s, want %s\n' "${c%%=*}" "$got" "${c#*=}" >>"$E2E_TMP/.ci"
			;;
		*~*)
			log=$(ci_step "${c%%~*}" log)
			grep -qF -- "${c#*~}" "$log" 2>/dev/null ||
				printf 'step %s: its log lacks: %s\n' "${c%%~*}" "${c#*~}" >>"$E2E_TMP/.ci"
			;;
		*!*)
			log=$(ci_step "${c%%!*}" log)
			if [ ! -f "$log" ] || grep -qF -- "${c#*!}" "$log"; then
				printf 'step %s: its log has (or no log): %s\n' "${c%%!*}" "${c#*!}" >>"$E2E_TMP/.ci"
			fi
			;;
		esac
	done
	if [ -s "$E2E_TMP/.ci" ]; then
		printf -- '--- run log (%s):\n' "$cj_run/run.log" >>"$E2E_TMP/.ci"
		tail -n 60 "$cj_run/run.log" >>"$E2E_TMP/.ci"
		fail "$ce_name" "$E2E_TMP/.ci"
		return 1
	fi
	pass "$ce_name"
}

ci_commits() { # WORKSPACE: commits on the workspace's branch of the state remote
	git --git-dir="$CI_DIR/state.git" rev-list --count "refs/heads/$1" 2>/dev/null || echo 0
}

# One bare state remote, keys, the fixture repository and its first commit.
ci_setup() {
	CI_DIR=$E2E_TMP/ci
	mkdir -p "$CI_DIR/bin" "$CI_DIR/keys" "$CI_DIR/runs"
	ln -sf "$KILN" "$CI_DIR/bin/kiln"
	git init -q --bare "$CI_DIR/state.git"
	CI_STATE_KEY=$(openssl rand -base64 32)
	for k in alice bob mallory; do
		openssl genpkey -algorithm ed25519 -out "$CI_DIR/keys/$k.pem" 2>/dev/null &&
			chmod 600 "$CI_DIR/keys/$k.pem" &&
			openssl pkey -in "$CI_DIR/keys/$k.pem" -pubout -out "$CI_DIR/keys/$k.pub" 2>/dev/null
	done
	git init -q -b main "$CI_DIR/infra"
	mkdir -p "$CI_DIR/infra/.github/workflows" "$CI_DIR/infra/approvals/trusted-keys"
	cp examples/ci/github-actions.yml "$CI_DIR/infra/.github/workflows/kiln.yml"
	cp examples/ci/gitlab-ci.yml "$CI_DIR/infra/.gitlab-ci.yml"
	cp "$CI_DIR/keys/alice.pub" "$CI_DIR/keys/bob.pub" "$CI_DIR/infra/approvals/trusted-keys/"
	printf '.kiln/\n' >"$CI_DIR/infra/.gitignore"
	ci_git add -A && ci_git commit -q -m "CI: kiln workflow and trusted keys"
	CI_BASE=$(ci_git rev-parse HEAD)
	ci_git checkout -q -b grow
	sed 's/count: 16/count: 2/; s/image: ami-0123456789abcdef0 /image: ami-1e749f67 /' \
		examples/llm-pretrain.yaml >"$CI_DIR/infra/kiln.yaml"
	ci_git add kiln.yaml && ci_git commit -q -m "llm-pretrain on 2 nodes"
	CI_PR=$(ci_git rev-parse HEAD)
}

# ci_merge BRANCH_COMMIT MSG: merge into main (a merge commit); prints the new head.
ci_merge() {
	ci_git checkout -q main && ci_git merge -q --no-ff -m "$2" "$1" && ci_git rev-parse HEAD
}

# ci_on_branch FROM NAME: a new branch from FROM, checked out.
ci_on_branch() {
	ci_git checkout -q -B "$2" "$1"
}

# --- what the runner cannot show: queueing, permissions, where secrets go ---
ci_structure() {
	assert "ci: github: applies and the scheduled reap queue in one concurrency group, never cancelled; OIDC only where needed" \
		"$AWS_PY" -c '
import re, sys, yaml
wf = yaml.safe_load(open(sys.argv[1]))
apply, plan = wf["jobs"]["apply"], wf["jobs"]["plan"]
assert apply["concurrency"]["group"].startswith("kiln-apply-"), apply["concurrency"]
assert apply["concurrency"]["cancel-in-progress"] is False
assert apply["permissions"] == {"contents": "read", "id-token": "write"}, apply["permissions"]
assert wf["permissions"] == {"contents": "read"}
# Secrets reach only the steps that need them: none at workflow level, and
# the pull request job sees the read token alone.
assert "secrets." not in yaml.safe_dump(wf["env"]), wf["env"]
assert set(re.findall(r"secrets\.(\w+)", yaml.safe_dump(plan))) == {"KILN_STATE_READ_TOKEN"}
assert set(re.findall(r"secrets\.(\w+)", yaml.safe_dump(apply))) == {"KILN_STATE_TOKEN", "KILN_STATE_KEY"}
assert wf["env"]["KILN_IN_AUTOMATION"] == "1"
# The scheduled reap queues with the applies and holds the same secrets.
reap = wf["jobs"]["reap"]
assert wf[True]["schedule"][0]["cron"] and "schedule" in reap["if"], reap["if"]
assert reap["concurrency"] == apply["concurrency"], reap["concurrency"]
assert set(re.findall(r"secrets\.(\w+)", yaml.safe_dump(reap))) == {"KILN_STATE_TOKEN", "KILN_STATE_KEY"}
assert "kiln reap --lock-timeout" in yaml.safe_dump(reap)
' examples/ci/github-actions.yml
	assert "ci: gitlab: kiln-apply and the scheduled kiln-reap run in a resource_group; only they get the write token" \
		"$AWS_PY" -c '
import sys, yaml
gl = yaml.safe_load(open(sys.argv[1]))
assert gl["kiln-apply"]["resource_group"] == "kiln-production"
assert gl["kiln-apply"]["variables"]["KILN_STATE_TOKEN"] == "$KILN_STATE_WRITE_TOKEN"
assert gl["kiln-plan"]["variables"]["KILN_STATE_TOKEN"] == "$KILN_STATE_READ_TOKEN"
assert gl["variables"]["KILN_IN_AUTOMATION"] == "1"
assert gl["kiln-audit"]["artifacts"]["when"] == "always"
assert gl["kiln-reap"]["rules"] == [{"if": "$CI_PIPELINE_SOURCE == \"schedule\""}]
assert gl["kiln-reap"]["resource_group"] == "kiln-production"
assert gl["kiln-reap"]["variables"]["KILN_STATE_TOKEN"] == "$KILN_STATE_WRITE_TOKEN"
assert any("kiln reap" in line for line in gl["kiln-reap"]["script"])
' examples/ci/gitlab-ci.yml
}

# --- sandbox: KILN_REQUIRE_APPROVALS=0, what works without kiln approve ---
ci_sandbox() {
	export KILN_WORKSPACE=sandbox
	CI_COMMENTS=$CI_DIR/sb-comments.json
	ci_github plan pull_request "$CI_PR" "" sb-pr KILN_REQUIRE_APPROVALS=0
	# The job's verdict depends on kiln audit, checked in the default workspace.
	ci_expect "ci: github pull_request: install, credentials, validate and plan run" - \
		"Install kiln=success" "aws-actions/configure-aws-credentials@v4=success" "Validate=success" \
		"Plan=success" "Install kiln~kiln 0.1.0" "Comment on the pull request=success" "Keep the plan=success"
	assert "ci: github pull_request: plan exits 2 (changes): the step's output changes=true" \
		jq -e '[.steps[] | select(.name == "Plan")][0].outputs.changes == "true"' "$cj_run/result.json"
	assert "ci: github pull_request: the PR comment is the Markdown plan with its summary line" \
		sh -c 'jq -e --arg s "**$2**" "length == 1 and (.[0].body | startswith(\"<!-- kiln-plan -->\n### kiln plan: llm-pretrain/sandbox (aws)\") and contains(\$s))" "$1"' \
		sh "$CI_COMMENTS" "$CI_SUMMARY"
	assert "ci: github pull_request: the comment tells how to approve, naming the run" \
		grep -qF 'gh run download 4242 -n kiln-plan' "$CI_COMMENTS"
	assert "ci: github pull_request: the job summary has the plan" grep -qF "**$CI_SUMMARY**" "$cj_run/summary.md"
	assert "ci: github pull_request: artifact kiln-plan holds plan.kiln and plan.md" \
		sh -c 'test -s "$1/plan.md" && jq -e ".kiln_plan_file == 1 and .plan.kiln.workspace == \"sandbox\"" "$1/plan.kiln"' \
		sh "$CI_DIR/runs/sb-pr.artifacts/kiln-plan"
	assert "ci: github pull_request: the plan changed nothing (no state yet)" \
		test "$(ci_commits sandbox)" = 0
	# A second push to the pull request edits the one comment.
	ci_github plan pull_request "$CI_PR" "" sb-pr2 KILN_REQUIRE_APPROVALS=0
	assert "ci: github pull_request: a rerun edits its comment instead of adding one" \
		jq -e 'length == 1 and (.[0].id == 1)' "$CI_COMMENTS"
	unset CI_COMMENTS

	# The artifact, unsigned, committed as the approved plan and merged.
	ci_on_branch main sb-approve
	ci_git merge -q --ff-only "$CI_PR"
	cp "$CI_DIR/runs/sb-pr.artifacts/kiln-plan/plan.kiln" "$CI_DIR/infra/approvals/plan.kiln"
	ci_git add approvals/plan.kiln && ci_git commit -q -m "kiln: the sandbox plan"
	sb_merge=$(ci_merge sb-approve "Merge sandbox")
	# Two runs of the apply job at once: the lock queues them, one applies,
	# the other then finds its plan stale (or gives up on the lock): no fork.
	(CI_ARTIFACTS=sb-push ci_github apply push "$sb_merge" "$CI_BASE" sb-push-a KILN_REQUIRE_APPROVALS=0; exit $ci_rc) &
	pa=$!
	sleep 0.3
	(CI_ARTIFACTS=sb-push ci_github apply push "$sb_merge" "$CI_BASE" sb-push-b KILN_REQUIRE_APPROVALS=0; exit $ci_rc) &
	pb=$!
	wait $pa
	ra=$?
	wait $pb
	rb=$?
	: >"$E2E_TMP/.ci"
	for r in a b; do
		jq -r --arg r "$r" '"run \($r): \(.status): " + ([.steps[] | "\(.name)=\(.outcome)"] | join(", "))' \
			"$CI_DIR/runs/sb-push-$r/result.json" >>"$E2E_TMP/.ci" 2>&1
	done
	won=0 lost=0
	for r in a b; do
		log=$(jq -r '[.steps[] | select(.name == "Apply the approved plan")][0].log' "$CI_DIR/runs/sb-push-$r/result.json" 2>/dev/null)
		cat "$log" >>"$E2E_TMP/.ci" 2>/dev/null
		if grep -qF "Apply complete: 16 created, 0 updated, 0 replaced, 0 deleted." "$log" 2>/dev/null; then
			won=$((won + 1))
		elif grep -qE "is stale: it was made from state commit|lock" "$log" 2>/dev/null; then
			lost=$((lost + 1))
		fi
	done
	if [ "$won" = 1 ] && [ "$lost" = 1 ] && [ "$((ra + rb))" = 1 ]; then
		pass "ci: github push: of two applies at once one applies, the other is refused cleanly"
	else
		printf 'applied: %s runs, refused (stale or lock): %s, runner exits %s %s\n' "$won" "$lost" "$ra" "$rb" >>"$E2E_TMP/.ci"
		fail "ci: github push: of two applies at once one applies, the other is refused cleanly" "$E2E_TMP/.ci"
	fi
	# Else the second started after the first had finished, and nothing raced.
	assert "ci: github push: the two apply steps overlapped in time (the lock was contended)" \
		jq -s -e '[.[] | .steps[] | select(.name == "Apply the approved plan")] | length == 2 and
			.[0].started < .[1].finished and .[1].started < .[0].finished' \
		"$CI_DIR/runs/sb-push-a/result.json" "$CI_DIR/runs/sb-push-b/result.json"
	assert "ci: github push: the state remote has one linear history for sandbox, no lock left" \
		sh -c 'test "$(git --git-dir="$1" rev-list --count --merges refs/heads/sandbox)" = 0 &&
			! git --git-dir="$1" rev-parse -q --verify refs/kiln/locks/sandbox >/dev/null &&
			git --git-dir="$1" log --format=%B -n 1 refs/heads/sandbox | grep -q "^apply: 16 created"' sh "$CI_DIR/state.git"
	assert "ci: github push: the state commit is authored by the GitHub actor" \
		sh -c 'test "$(git --git-dir="$1" log -n 1 --format="%an <%ae>" refs/heads/sandbox)" = "octocat <octocat@users.noreply.github.com>"' \
		sh "$CI_DIR/state.git"
	aws_inspect "ci: github push: boto3 finds the sandbox's instances and buckets" \
		expect llm-pretrain sandbox group=trainers:count=2:type=p5.48xlarge group=login:count=1 \
		bucket=datasets bucket=checkpoints

	# A later push that changes no approved plan: nothing pending, no apply.
	ci_on_branch main sb-docs
	echo "# infra" >"$CI_DIR/infra/README.md"
	ci_git add README.md && ci_git commit -q -m "README"
	sb_docs=$(ci_merge sb-docs "Merge docs")
	before=$(ci_commits sandbox)
	ci_github apply push "$sb_docs" "$sb_merge" sb-push-docs KILN_REQUIRE_APPROVALS=0
	ci_expect "ci: github push without a new approved plan checks that nothing is pending" 0 \
		"Apply the approved plan=skipped" "Check that nothing is pending=success" \
		"Check that nothing is pending~Nothing pending"
	assert "ci: github push without a new approved plan commits nothing" test "$(ci_commits sandbox)" = "$before"
	ci_github plan push "$sb_docs" "$sb_merge" sb-push-noplan KILN_REQUIRE_APPROVALS=0
	ci_expect "ci: github push: the plan job is skipped" 0
	assert "ci: github push: the plan job ran no step" jq -e '.status == "skipped" and (.steps | length) == 0' "$cj_run/result.json"
	unset KILN_WORKSPACE
}

# --- the documented flow: two approvals from trusted keys ---
ci_approved() {
	ci_github plan pull_request "$CI_PR" "" pr
	ci_expect "ci: github pull_request: plan, comment, artifact, audit and SARIF, job succeeds" 0 \
		"Plan=success" "Comment on the pull request=success" "Keep the plan=success" \
		"Audit=success" "Upload SARIF=success" "Fail on audit findings=skipped"
	assert "ci: github pull_request: the uploaded SARIF is 2.1.0 with runs[] from kiln" \
		jq -e '.version == "2.1.0" and (.runs | length) >= 1 and (.runs[0].tool.driver.name | test("kiln"))' \
		"$cj_run/sarif/kiln.sarif"
	assert "ci: github pull_request: the comment says the plan is not approved yet" \
		grep -qF 'Not approved yet.' "$cj_run/comments.json"
	plan=$CI_DIR/runs/pr.artifacts/kiln-plan/plan.kiln
	mkdir -p "$CI_DIR/signed"
	cp "$plan" "$CI_DIR/signed/one.kiln"
	check "ci: alice approves the plan artifact" 0 \
		-- "$KILN" approve "$CI_DIR/signed/one.kiln" --key "$CI_DIR/keys/alice.pem" --signer alice
	cp "$CI_DIR/signed/one.kiln" "$CI_DIR/signed/two.kiln"
	check "ci: bob approves it too" 0 \
		-- "$KILN" approve "$CI_DIR/signed/two.kiln" --key "$CI_DIR/keys/bob.pem" --signer bob
	cp "$CI_DIR/signed/one.kiln" "$CI_DIR/signed/mallory.kiln"
	check "ci: mallory (an untrusted key) approves alice's copy" 0 \
		-- "$KILN" approve "$CI_DIR/signed/mallory.kiln" --key "$CI_DIR/keys/mallory.pem" --signer mallory

	# One approval: refused, nothing created.
	ci_on_branch main one
	cp "$CI_DIR/signed/one.kiln" "$CI_DIR/infra/approvals/plan.kiln"
	ci_git add approvals/plan.kiln && ci_git commit -q -m "kiln: approve (alice)"
	base=$(ci_git rev-parse main)
	m1=$(ci_merge one "Merge one approval")
	ci_github apply push "$m1" "$base" push-one
	ci_expect "ci: github push: a plan with 1 of 2 approvals is refused with apply's message" 1 \
		"Apply the approved plan=failure" \
		"Apply the approved plan~$(ci_refusal approvals/plan.kiln 1)"
	assert "ci: github push: after the refusal the state remote has no default workspace" \
		test "$(ci_commits default)" = 0
	assert "ci: github push: after the refusal boto3 finds nothing of llm-pretrain/default" \
		sh -c 'test -z "$(env AWS_ENDPOINT_URL="$1" "$2" "$3" left llm-pretrain default)"' \
		sh "$AWS_ENDPOINT_URL" "$AWS_PY" "$E2E_ROOT/tests/e2e/aws_inspect.py"

	# A pull request that adds its own key: the keys of the commit before the push count.
	ci_on_branch main selfish
	cp "$CI_DIR/keys/mallory.pub" "$CI_DIR/infra/approvals/trusted-keys/"
	cp "$CI_DIR/signed/mallory.kiln" "$CI_DIR/infra/approvals/plan.kiln"
	ci_git add -A approvals && ci_git commit -q -m "kiln: approve (alice, mallory), trust mallory"
	base=$(ci_git rev-parse main)
	m2=$(ci_merge selfish "Merge selfish")
	ci_github apply push "$m2" "$base" push-selfish
	ci_expect "ci: github push: a key added by the same push does not count" 1 \
		"Apply the approved plan=failure" \
		"Apply the approved plan~$(ci_refusal approvals/plan.kiln 1)"
	# Undo mallory's key (a later review would), then the two approvals.
	ci_on_branch main two
	git -C "$CI_DIR/infra" rm -q approvals/trusted-keys/mallory.pub
	cp "$CI_DIR/signed/two.kiln" "$CI_DIR/infra/approvals/plan.kiln"
	ci_git add -A approvals && ci_git commit -q -m "kiln: approve (alice, bob)"
	base=$(ci_git rev-parse main)
	m3=$(ci_merge two "Merge two approvals")
	ci_github plan pull_request "$(ci_git rev-parse two)" "" pr-approved
	assert "ci: github pull_request: with the signed plan committed the comment says it is current" \
		grep -qF 'is current (same spec, same state commit)' "$cj_run/comments.json"
	assert "ci: github pull_request: and lists its 2 approvals" \
		grep -qF 'Approvals: 2 (2 with a valid signature' "$cj_run/comments.json"
	ci_github apply push "$m3" "$base" push-two
	ci_expect "ci: github push: the plan with 2 trusted approvals is applied" 0 \
		"Apply the approved plan=success" \
		"Apply the approved plan~Apply complete: 16 created, 0 updated, 0 replaced, 0 deleted."
	assert "ci: github push: the state branch default was pushed to the remote, by octocat" \
		sh -c 'git --git-dir="$1" log -n 1 --format="%an %s" refs/heads/default | grep -qx "octocat apply: 16 created, 0 updated, 0 replaced, 0 deleted (llm-pretrain/default)"' \
		sh "$CI_DIR/state.git"
	assert "ci: github push: the state commit records both approvals" \
		sh -c 'test "$(git --git-dir="$1" log -n 1 --format=%B refs/heads/default | grep -c "^Kiln-Approval: ")" = 2' \
		sh "$CI_DIR/state.git"
	aws_inspect "ci: github push: boto3 finds the applied instances and buckets" \
		expect llm-pretrain default group=trainers:count=2:efa:pg:profile:type=p5.48xlarge group=login:count=1 \
		bucket=datasets:versioning=on bucket=checkpoints:versioning=on
}

# --- an error-level audit finding: SARIF uploaded, comment posted, job failed ---
ci_findings() {
	ci_on_branch "$CI_PR" open-ssh
	sed -i 's|port: 22, from: 203.0.113.0/24|port: 22, from: 0.0.0.0/0|' "$CI_DIR/infra/kiln.yaml"
	ci_git commit -q -am "open SSH to the world"
	ci_github plan pull_request "$(ci_git rev-parse HEAD)" "" pr-ssh
	ci_expect "ci: github pull_request: audit exits 3, the SARIF is uploaded, then the job fails" 1 \
		"Plan=success" "Comment on the pull request=success" "Keep the plan=success" \
		"Audit=failure" "Upload SARIF=success" "Fail on audit findings=failure" \
		"Fail on audit findings~kiln audit exited 3"
	assert "ci: github pull_request: the SARIF has an error-level result" \
		jq -e '[.runs[].results[] | select(.level == "error")] | length >= 1' "$cj_run/sarif/kiln.sarif"
	assert "ci: github pull_request: the audit step ended 3 and the job is failed" \
		jq -e '.status == "failure" and ([.steps[] | select(.name == "Audit")][0] | .exit == 3 and .conclusion == "success")' \
		"$cj_run/result.json"
}

# --- a plan that fails: the job fails, the comment says so ---
ci_plan_fails() {
	ci_on_branch "$CI_PR" bad-image
	sed -i 's/image: ami-1e749f67 /image: ami-00000000 /' "$CI_DIR/infra/kiln.yaml"
	ci_git commit -q -am "an image the region lacks"
	ci_github plan pull_request "$(ci_git rev-parse HEAD)" "" pr-bad
	ci_expect "ci: github pull_request: a plan error (exit 1) fails the job, before any upload" 1 \
		"Plan=failure" "Plan~ami-00000000 does not exist in region us-east-1" \
		"Compose the comment=success" "Keep the plan=skipped" "Audit=skipped" "Upload SARIF=skipped"
	assert "ci: github pull_request: the comment says the plan failed" \
		grep -qF '### kiln plan failed' "$cj_run/comments.json"
}

# --- GitLab: merge request pipeline and default branch pipeline ---
ci_gitlab_job() { # JOB SHA BEFORE SOURCE NAME [VAR=VALUE...]
	cg_job=$1 cg_sha=$2 cg_before=$3 cg_source=$4 cj_name=$5
	shift 5
	cj_run=$CI_DIR/runs/$cj_name
	mkdir -p "$cj_run/home"
	cg_vars=$(jq -n --arg sha "$cg_sha" --arg before "$cg_before" --arg source "$cg_source" \
		--arg state "file://$CI_DIR/state.git" --arg api "http://127.0.0.1:$CI_GL_PORT/api/v4" \
		--arg plan "$CI_PLAN_ROLE" --arg apply "$CI_APPLY_ROLE" --arg home "$cj_run/home" \
		--arg key "$CI_STATE_KEY" '{
		CI_COMMIT_SHA: $sha, CI_COMMIT_BEFORE_SHA: $before, CI_PIPELINE_SOURCE: $source,
		CI_DEFAULT_BRANCH: "main", CI_PIPELINE_ID: "77", CI_JOB_ID: "991",
		CI_JOB_URL: "https://gitlab.example.com/infra/-/jobs/991", CI_PROJECT_ID: "12",
		CI_API_V4_URL: $api, GITLAB_USER_LOGIN: "tanuki", GITLAB_USER_EMAIL: "tanuki@example.com",
		KILN_STATE_URL: $state, KILN_STATE_KEY: $key, KILN_STATE_READ_TOKEN: "", KILN_STATE_WRITE_TOKEN: "",
		KILN_GITLAB_TOKEN: "glpat-ci-e2e", KILN_PLAN_ROLE_ARN: $plan, KILN_APPLY_ROLE_ARN: $apply,
		KILN_WORKSPACE: "gitlab", HOME: $home}')
	if [ "$cg_source" = merge_request_event ]; then
		cg_vars=$(printf '%s' "$cg_vars" | jq '. + {CI_MERGE_REQUEST_IID: "5"}')
	else
		cg_vars=$(printf '%s' "$cg_vars" | jq '. + {CI_COMMIT_BRANCH: "main"}')
	fi
	for kv in "$@"; do
		cg_vars=$(printf '%s' "$cg_vars" | jq --arg k "${kv%%=*}" --arg v "${kv#*=}" '.[$k] = $v')
	done
	jq -n --argjson v "$cg_vars" --arg repo "$CI_DIR/infra" --arg run "$cj_run" \
		--arg arts "$CI_DIR/runs/gl-$cg_sha.artifacts" \
		'{variables: $v, repo: $repo, workdir: ($run + "/work"), artifacts: $arts, out: $run, timeout: 300}' \
		>"$cj_run/context.json"
	mkdir -p "$CI_DIR/runs/gl-$cg_sha.artifacts"
	"$AWS_PY" "$E2E_ROOT/tests/e2e/ci_run.py" gitlab "$CI_DIR/infra/.gitlab-ci.yml" "$cg_job" \
		"$cj_run/context.json" >"$cj_run/run.log" 2>&1
	ci_rc=$?
}

ci_gitlab() {
	# The fake GitLab API takes the MR note; the aws shim swaps the ID token for keys.
	"$AWS_PY" "$E2E_ROOT/tests/e2e/ci_run.py" gitlab-api "$CI_DIR/gl.port" "$CI_DIR/gl-notes.json" \
		glpat-ci-e2e >"$CI_DIR/gl.log" 2>&1 &
	CI_GL_PID=$!
	i=0
	while [ ! -s "$CI_DIR/gl.port" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	CI_GL_PORT=$(cat "$CI_DIR/gl.port" 2>/dev/null)
	cat >"$CI_DIR/bin/aws" <<EOF
#!/bin/sh
# aws sts assume-role-with-web-identity, as the GitLab jobs call it, and nothing else.
[ "\$1 \$2" = "sts assume-role-with-web-identity" ] || { echo "aws shim: \$* is not emulated" >&2; exit 2; }
role= token=
while [ \$# -gt 0 ]; do
	case \$1 in --role-arn) role=\$2; shift ;; --web-identity-token) token=\$2; shift ;; esac
	shift
done
[ -n "\$token" ] || { echo "aws shim: no web identity token" >&2; exit 254; }
case \$role in
$CI_PLAN_ROLE) printf 'AKIAKILNGLPLAN000000\tgl-plan-secret\tgl-plan-session\n' ;;
$CI_APPLY_ROLE) printf 'AKIAKILNGLAPPLY00000\tgl-apply-secret\tgl-apply-session\n' ;;
*) echo "aws shim: AccessDenied: cannot assume role '\$role'" >&2; exit 254 ;;
esac
EOF
	chmod +x "$CI_DIR/bin/aws"
	ci_on_branch main gl-mr
	echo "# plans come from GitLab too" >>"$CI_DIR/infra/README.md"
	ci_git commit -q -am "README: GitLab"
	gl_mr=$(ci_git rev-parse HEAD)
	ci_gitlab_job kiln-plan "$gl_mr" 0000000000000000000000000000000000000000 merge_request_event gl-plan
	ci_expect "ci: gitlab merge request: kiln-plan plans and exits 0" 0
	assert "ci: gitlab merge request: the MR note is the Markdown plan with its summary line" \
		sh -c 'jq -e --arg s "**$2**" "length == 1 and .[0].mr == 5 and (.[0].body | startswith(\"<!-- kiln-plan -->\n### kiln plan: llm-pretrain/gitlab (aws)\") and contains(\$s))" "$1"' \
		sh "$CI_DIR/gl-notes.json" "$CI_SUMMARY"
	assert "ci: gitlab merge request: plan.kiln and plan.md are the job's artifacts" \
		sh -c 'test -s "$1/plan.md" && jq -e ".plan.kiln.workspace == \"gitlab\"" "$1/plan.kiln"' \
		sh "$CI_DIR/runs/gl-$gl_mr.artifacts/kiln-plan"
	ci_gitlab_job kiln-plan "$gl_mr" 0000000000000000000000000000000000000000 merge_request_event gl-plan2
	assert "ci: gitlab merge request: a rerun edits its note" jq -e 'length == 1' "$CI_DIR/gl-notes.json"
	ci_gitlab_job kiln-audit "$gl_mr" 0000000000000000000000000000000000000000 merge_request_event gl-audit
	ci_expect "ci: gitlab merge request: kiln-audit exits 0" 0
	assert "ci: gitlab merge request: kiln.sarif and a Code Quality report are kept" \
		sh -c 'jq -e ".version == \"2.1.0\"" "$1/kiln.sarif" && jq -e "type == \"array\" and all(.[]; .check_name and .fingerprint and .location.path and (.severity | IN(\"info\",\"minor\",\"major\",\"critical\",\"blocker\")))" "$1/gl-code-quality-report.json"' \
		sh "$CI_DIR/runs/gl-$gl_mr.artifacts/kiln-audit"
	ci_gitlab_job kiln-apply "$gl_mr" 0000000000000000000000000000000000000000 merge_request_event gl-apply-mr
	assert "ci: gitlab merge request: kiln-apply does not run" jq -e '.status == "skipped"' "$cj_run/result.json"

	plan=$CI_DIR/runs/gl-$gl_mr.artifacts/kiln-plan/plan.kiln
	cp "$plan" "$CI_DIR/signed/gl.kiln"
	"$KILN" approve "$CI_DIR/signed/gl.kiln" --key "$CI_DIR/keys/alice.pem" --signer alice >/dev/null 2>&1
	"$KILN" approve "$CI_DIR/signed/gl.kiln" --key "$CI_DIR/keys/bob.pem" --signer bob >/dev/null 2>&1
	cp "$CI_DIR/signed/gl.kiln" "$CI_DIR/infra/approvals/plan.kiln"
	ci_git add approvals/plan.kiln && ci_git commit -q -m "kiln: approve the gitlab plan"
	base=$(ci_git rev-parse main)
	mg=$(ci_merge gl-mr "Merge gitlab")
	ci_gitlab_job kiln-plan "$mg" "$base" push gl-main-plan
	assert "ci: gitlab default branch: kiln-plan does not run" jq -e '.status == "skipped"' "$cj_run/result.json"
	ci_gitlab_job kiln-apply "$mg" "$base" push gl-main-apply
	ci_expect "ci: gitlab default branch: kiln-apply applies the plan with 2 trusted approvals" 0 \
		"script~Apply complete: 16 created, 0 updated, 0 replaced, 0 deleted."
	assert "ci: gitlab default branch: the state branch gitlab was pushed, by the GitLab user" \
		sh -c 'git --git-dir="$1" log -n 1 --format="%an <%ae>" refs/heads/gitlab | grep -qx "tanuki <tanuki@example.com>"' \
		sh "$CI_DIR/state.git"
	aws_inspect "ci: gitlab default branch: boto3 finds the instances" \
		expect llm-pretrain gitlab group=trainers:count=2 group=login:count=1
	kill "$CI_GL_PID" 2>/dev/null
	wait "$CI_GL_PID" 2>/dev/null
}

# --- the scheduled reap: every workspace applied above, past its TTL ---
ci_reap() {
	main=$(ci_git rev-parse main)
	# llm-pretrain's ttl is 72h: in 2030 every workspace is long expired.
	KILN_NOW=2030-01-01T00:00:00Z ci_github reap schedule "$main" "" gh-reap
	ci_expect "ci: github schedule: the reap job destroys every expired workspace" 0 \
		"Reap expired workspaces=success" \
		"Reap expired workspaces~default: reaped: " \
		"Reap expired workspaces~gitlab: reaped: " \
		"Reap expired workspaces~sandbox: reaped: "
	ci_github apply push "$main" "$main" gh-reap-push
	assert "ci: github push: the apply job does not run the reap" \
		sh -c '[ "$(jq -r "[.steps[] | select(.name == \"Reap expired workspaces\")] | length" "$1")" = 0 ]' \
		sh "$cj_run/result.json"
	for ws in default gitlab sandbox; do
		"$AWS_PY" "$E2E_ROOT/tests/e2e/aws_inspect.py" left llm-pretrain "$ws" \
			>"$CI_DIR/left-$ws.txt" 2>&1
		# The bucket is retained by default; scratch Lustre with no deletion: goes
		# with the cluster (issue 29: scratch is scratch, kiln-spec(5)).
		assert "ci: after the reap, no instance, role, placement group or scratch Lustre of $ws is left in moto; its retained bucket is" \
			sh -c '! grep -E "^aws_(instance_group|placement_group|iam_role|internet_gateway|fsx_lustre)" "$1" && grep -q "^aws_s3_bucket\.datasets " "$1"' \
			sh "$CI_DIR/left-$ws.txt"
	done
	KILN_NOW=2030-01-01T00:00:00Z ci_gitlab_job kiln-reap "$main" "$main" schedule gl-reap
	ci_expect "ci: gitlab schedule: kiln-reap finds nothing left to reap" 0 \
		"script~gitlab: kept: no ttl"
}

# --- the runner itself: a wrong verdict here would make every test above lie ---
ci_git_self() {
	env GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com GIT_COMMITTER_NAME=t \
		GIT_COMMITTER_EMAIL=t@example.com git -C "$E2E_TMP/ci-self/repo" "$@"
}

ci_runner_selftest() {
	d=$E2E_TMP/ci-self
	mkdir -p "$d/repo"
	git init -q "$d/repo"
	cat >"$d/repo/wf.yml" <<'EOF'
on: push
env:
  FROM_WORKFLOW: ${{ vars.V || 'fallback' }}
jobs:
  steps:
    runs-on: ubuntu-24.04
    steps:
      - uses: actions/checkout@v4
      - id: out
        name: outputs
        run: |
          echo "n=${{ github.event_name }}-$FROM_WORKFLOW" >>"$GITHUB_OUTPUT"
          echo "LATER=yes" >>"$GITHUB_ENV"
          mkdir -p bin && printf '#!/bin/sh\necho tool-ran\n' >bin/tool && chmod +x bin/tool
          echo "$PWD/bin" >>"$GITHUB_PATH"
      - id: soft
        name: soft
        continue-on-error: true
        run: exit 3
      - name: after soft
        env:
          N: ${{ steps.out.outputs.n }}
          SOFT: ${{ steps.soft.outcome }}/${{ steps.soft.conclusion }}
        run: echo "n=$N later=$LATER soft=$SOFT $(tool)"
      - name: pipefail off by default
        run: false | true
      - name: hard
        shell: bash
        run: false | true
      - name: skipped after a failure
        run: echo never
      - name: on failure
        if: failure()
        run: echo failure-ran
      - name: only on push
        if: ${{ always() && github.event_name == 'PUSH' }}
        run: echo push-ran
      - name: not on pull_request
        if: always() && github.event_name == 'pull_request'
        run: echo never
  unknown:
    runs-on: ubuntu-24.04
    steps:
      - uses: some/action@v1
EOF
	cat >"$d/repo/gl.yml" <<'EOF'
variables:
  A: file-a
  B: $A-b
.base:
  script: [echo base]
job:
  extends: .base
  rules:
    - if: $CI_PIPELINE_SOURCE == "push" && $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH
  before_script: [echo "before $A $B $PROJECT"]
  script:
    - echo one >a.txt
    - false | true
    - echo "never"
  after_script: [echo "after $CI_JOB_STATUS"]
  artifacts:
    when: always
    paths: [a.txt]
mr-only:
  rules:
    - if: $CI_PIPELINE_SOURCE == "merge_request_event"
  script: [exit 1]
EOF
	ci_git_self add wf.yml gl.yml
	ci_git_self commit -q -m "runner self-test"
	sha=$(git -C "$d/repo" rev-parse HEAD)
	for job in steps unknown; do
		jq -n --arg sha "$sha" --arg d "$d" --arg job "$job" \
			'{github: {event_name: "push", sha: $sha}, vars: {}, secrets: {}, repo: ($d + "/repo"),
			  workdir: ($d + "/" + $job + "/work"), artifacts: ($d + "/arts"), out: ($d + "/" + $job)}' \
			>"$d/$job.json"
	done
	check "ci runner: a failed step fails the job (exit 1)" 1 \
		--out-has "n=push-fallback later=yes soft=failure/success tool-ran" \
		--out-has "failure-ran" --out-has "push-ran" \
		-- "$AWS_PY" "$E2E_ROOT/tests/e2e/ci_run.py" github "$d/repo/wf.yml" steps "$d/steps.json"
	assert "ci runner: outcome, conclusion and skipping as GitHub has them" \
		jq -e '[.steps[] | "\(.name)=\(.outcome)/\(.conclusion)"] == [
		"actions/checkout@v4=success/success", "outputs=success/success", "soft=failure/success",
		"after soft=success/success", "pipefail off by default=success/success",
		"hard=failure/failure", "skipped after a failure=skipped/skipped", "on failure=success/success",
		"only on push=success/success", "not on pull_request=skipped/skipped"] and .status == "failure"' \
		"$d/steps/result.json"
	check "ci runner: an action it does not emulate is an error of the runner (exit 2)" 2 \
		--out-has "ci_run: cannot run unknown: the action some/action@v1 is not emulated" \
		-- "$AWS_PY" "$E2E_ROOT/tests/e2e/ci_run.py" github "$d/repo/wf.yml" unknown "$d/unknown.json"
	for job in job mr-only; do
		jq -n --arg sha "$sha" --arg d "$d" --arg job "$job" \
			'{variables: {CI_COMMIT_SHA: $sha, CI_PIPELINE_SOURCE: "push", CI_COMMIT_BRANCH: "main",
			  CI_DEFAULT_BRANCH: "main", PROJECT: "proj", A: "project-a"}, repo: ($d + "/repo"),
			  workdir: ($d + "/gl-" + $job + "/work"), artifacts: ($d + "/gl-arts"), out: ($d + "/gl-" + $job)}' \
			>"$d/gl-$job.json"
	done
	check "ci runner: gitlab: project variables win, after_script runs after a failure" 1 \
		--out-has "before project-a project-a-b proj" --out-has "after failed" \
		-- "$AWS_PY" "$E2E_ROOT/tests/e2e/ci_run.py" gitlab "$d/repo/gl.yml" job "$d/gl-job.json"
	assert "ci runner: gitlab: the script stops at a failing pipeline; artifacts when: always are kept" \
		sh -c '! grep -q "^never" "$1" && test "$(cat "$2")" = one' sh "$d/gl-job/steps/01-script.log" \
		"$d/gl-arts/job/a.txt"
	check "ci runner: gitlab: a job whose rules do not match is skipped" 0 --out-has "job mr-only: skipped" \
		-- "$AWS_PY" "$E2E_ROOT/tests/e2e/ci_run.py" gitlab "$d/repo/gl.yml" mr-only "$d/gl-mr-only.json"
}

# --- automation mode: no hints, and never a prompt without a terminal ---
ci_automation() {
	d=$CI_DIR/auto
	mkdir -p "$d"
	cp "$CI_DIR/infra/kiln.yaml" "$d/kiln.yaml" 2>/dev/null || git -C "$CI_DIR/infra" show "$CI_PR:kiln.yaml" >"$d/kiln.yaml"
	cd "$d" || exit 1
	export KILN_WORKSPACE=auto AWS_ACCESS_KEY_ID=AKIAKILNTESTKEY00000 AWS_SECRET_ACCESS_KEY=kiln-e2e-secret
	check "ci: plan --out ends with the kiln apply hint at a terminal's side" 2 \
		--out-has "Saved the plan to p.kiln; apply exactly this plan with:" \
		-- "$KILN" plan --out p.kiln --detailed-exitcode
	for mode in CI=true KILN_IN_AUTOMATION=1; do
		check "ci: with $mode plan --out prints no kiln apply hint" 2 \
			-- env "$mode" "$KILN" plan --out p.kiln --detailed-exitcode
		assert "ci: with $mode the plan output has no 'kiln apply' line" \
			sh -c '! grep -q "kiln apply\|Saved the plan" "$1"' sh "$E2E_OUT"
	done
	check "ci: with CI=true apply without --auto-approve refuses at once, stdin /dev/null" 1 \
		--out "" \
		--err "kiln: apply: standard input is not a terminal, so kiln cannot ask for approval; nothing was changed; review with \`kiln plan --out plan.kiln\`, then \`kiln apply plan.kiln\`; or pass --auto-approve" \
		-- env CI=true timeout 20 "$KILN" apply
	check "ci: with KILN_IN_AUTOMATION=1 destroy without --auto-approve refuses too" 1 \
		--err-has "standard input is not a terminal, so kiln cannot ask for approval; nothing was changed" \
		-- env KILN_IN_AUTOMATION=1 timeout 20 "$KILN" destroy
	assert "ci: the refused apply and destroy made no state repository" test ! -e .kiln/state.git
	unset KILN_WORKSPACE AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY
	cd "$E2E_ROOT" || exit 1
}

ci_tests() {
	missing=
	for tool in git jq openssl node curl timeout; do
		command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
	done
	if ! AWS_PY=$(aws_find_python); then
		missing="$missing python3-with-moto5-and-boto3"
	elif ! "$AWS_PY" -c 'import yaml' 2>/dev/null; then
		missing="$missing pyyaml"
	fi
	if [ -n "$missing" ]; then
		printf 'the CI tests need:%s\n' "$missing" >"$E2E_TMP/.ci"
		fail "ci: the tools the CI tests need are installed" "$E2E_TMP/.ci"
		return 0
	fi
	pass "ci: the tools the CI tests need are installed"
	ci_runner_selftest
	ci_structure
	PYTHON=$AWS_PY
	export PYTHON
	CI_MOTO=$E2E_TMP/moto-ci
	if ! out=$(sh "$E2E_ROOT/tests/moto/server.sh" start "$CI_MOTO" 2>&1); then
		printf '%s\n' "$out" >"$E2E_TMP/.moto"
		fail "ci: moto's server starts on loopback" "$E2E_TMP/.moto"
		return 0
	fi
	eval "$out"
	trap 'sh "$E2E_ROOT/tests/moto/server.sh" stop "$CI_MOTO" >/dev/null 2>&1; [ -n "${CI_GL_PID:-}" ] && kill "$CI_GL_PID" 2>/dev/null; rm -rf "$E2E_TMP"' EXIT
	# Jobs get AWS keys only from their credentials step; the endpoint is the runner's.
	AWS_ENDPOINT_URL=http://127.0.0.1:$MOTO_PORT
	AWS_REGION=us-east-1
	KILN_POLL_MS=100
	export AWS_ENDPOINT_URL AWS_REGION KILN_POLL_MS
	unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_PROFILE AWS_SESSION_TOKEN AWS_DEFAULT_REGION \
		KILN_STATE KILN_WORKSPACE KILN_STATE_KEY KILN_STATE_KEY_FILE
	ci_path=$PATH
	ci_setup
	PATH=$CI_DIR/bin:$PATH
	ci_sandbox
	ci_plan_fails
	ci_findings
	ci_approved
	ci_gitlab
	ci_reap
	ci_automation
	PATH=$ci_path
	sh "$E2E_ROOT/tests/moto/server.sh" stop "$CI_MOTO" >/dev/null 2>&1
	sleep 0.3
	assert "ci: the moto server and the fake GitLab API are stopped" \
		sh -c '! pgrep -f "kiln_moto.py --port-file $1" >/dev/null && ! kill -0 "$2" 2>/dev/null' sh "$CI_MOTO" "${CI_GL_PID:-0}"
	trap 'rm -rf "$E2E_TMP"' EXIT
	unset AWS_ENDPOINT_URL AWS_REGION KILN_POLL_MS PYTHON
}
