# aws.sh - end-to-end tests of the aws provider against moto's server on
# loopback (tests/moto: moto with kiln's extension), with boto3 checking
# what was really made (aws_inspect.py). Sourced by run.sh after lib.sh;
# $KILN is the binary under test. Without moto or boto3 every test here is
# reported as skipped, by name.

AWS_TESTS="aws: the JSON plan of llm-pretrain validates against the schema
aws: the txt plan of llm-pretrain matches its golden
aws: the md plan of llm-pretrain matches its golden
aws: the json plan of llm-pretrain matches its golden
aws: the JSON plan of finetune validates against the schema
aws: the txt plan of finetune matches its golden
aws: the md plan of finetune matches its golden
aws: the json plan of finetune matches its golden
aws: plan of a fresh cluster lists every create
aws: apply creates every resource
aws: boto3 finds every resource recorded, none twice, none untagged
aws: boto3 finds the settings the spec asks for
aws: a second plan has no changes
aws: count, ingress, versioning and a role's intent and allow statements change in place
aws: boto3 finds the changed settings
aws: boto3 finds the role's allow statements after its store statements
aws: a plan after adding allow statements has no changes
aws: a new image replaces both groups
aws: drift made with boto3 is shown
aws: destroy leaves only the retained bucket
aws: no credentials is an error naming where kiln looked
aws: iam-policy prints the minimal policy
aws: iam-policy of every example and template passes the Parliament-style checks against AWS's service authorization data
aws: iam-policy grants no s3:PutBucketPolicy, since kiln writes no bucket policy
aws: iam-policy grants the role-in-profile actions on the instance profile alone
aws: plan refuses an image the region lacks, before anything is spent
aws: plan refuses a type offered in none of the zones
aws: plan warns of a zone that does not offer a type
aws: a public group on a multi-card EFA type is refused
aws: the example's first apply makes at most 46 API calls, pre-flight included
aws: the example's no-change plan makes at most 24 API calls
aws: without a scheduler, neither the apply nor the plan calls SSM
aws: a role's munge key ARN names the account IAM gave the role, not any account
aws: with a scheduler, the plan's refresh lists the workspace's parameters in one call, and their tags
aws: a spec that dropped its scheduler still finds its parameters, and deletes them
aws: with no capacity in the first zone the gang lands in the second
aws: without capacity for the first group in the first zone, the fabric and its storage land in the second
aws: boto3 finds the nodes, placement group, FSx and EFS mount target in the second zone, nothing in the first
aws: replacing every group keeps the nodes in the zone of the storage they mount
aws: boto3 finds the new nodes beside the storage in the second zone
aws: a later group without capacity does not move groups running in the cluster placement group
aws: a later group without capacity moves the groups this apply launched to the next zone
aws: boto3 finds every node, the FSx and the EFS mount target in the second zone after the move, nothing in the first
aws: and plans no changes after the move
aws: a later group without capacity in any zone fails naming the zones, and keeps the others in place
aws: boto3 finds no zone-bound storage made for nodes that could not all launch
aws: a fabric without capacity in any zone fails naming the zones
aws: with throttling and 5xx on a share of calls apply converges
aws: after the faults boto3 finds no duplicate
aws: a call throttled every time gives up naming the throttling, its attempts and its time
aws: a call throttled every time is sent KILN_HTTP_ATTEMPTS times, not again by the engine
aws: a call failing with 5xx every time gives up naming its attempts and its time
aws: a call failing with 5xx every time is sent KILN_HTTP_ATTEMPTS times, not again by the engine
aws: a create throttled every time is sent KILN_HTTP_ATTEMPTS times and not looked for
aws: a listing five types share, failing every time, is sent KILN_HTTP_ATTEMPTS times in all
aws: a call throttled every time stops at KILN_CALL_DEADLINE_MS, naming it
aws: the deadline bounds the attempts and the time
aws: 20 applies killed with SIGKILL converge with no duplicate or untagged resource
aws: a second state's plan refuses to create over the first one's cluster
aws: its destroy deletes nothing
aws: boto3 finds the first state's cluster whole after it
aws: takeover moves the whole cluster into the second state
aws: boto3 finds every resource recorded in the second state, under its lineage
aws: the second state plans no changes after the takeover
aws: the first state now refuses to plan over them
aws: the second state destroys them, keeping the retained bucket
aws: a truncated state blob fails plan at once, naming it and the repair
aws: a truncated state blob fails apply at once, naming it and the repair
aws: a truncated state blob leaves no lock
aws: with the blob restored, the plan has no changes and destroy completes
aws: the moto extension's own tests pass (tests/moto/test_harness.py)
aws: moto with IAM enforcement starts
aws: examples/llm-pretrain.yaml applies with exactly the iam-policy permissions
aws: boto3 finds the example's resources recorded, none twice, none untagged
aws: and plans no changes with them
aws: boto3 finds each role's exact statements: EFS mount actions on the file system's ARN, nothing for Lustre
aws: a role's intent on an nfs store changes its policy in place
aws: boto3 finds the role's new EFS statement
aws: and plans no changes after it
aws: and destroys with them, keeping the retained stores
aws: without ec2:CreateVpc the error names the action that was denied
aws: the moto servers are stopped"

aws_skip_all() { # WHY
	printf '%s\n' "$AWS_TESTS" | while IFS= read -r t; do skip "$t" "$1"; done
}

aws_new_dir() {
	aws_dir=$(mktemp -d "$E2E_TMP/aws.XXXXXX")
	cd "$aws_dir" || exit 1
	cp "$E2E_ROOT/tests/e2e/specs/aws-cluster.yaml" kiln.yaml
}

aws_ctl() { # PATH JSON: the moto extension's control endpoint
	curl -sf -X POST -H 'Content-Type: application/json' -d "$2" \
		"$AWS_ENDPOINT_URL/_kiln/$1" >/dev/null
}

aws_inspect() { # NAME ARGS...: aws_inspect.py holds
	aws_name=$1
	shift
	assert "$aws_name" "$AWS_PY" "$E2E_ROOT/tests/e2e/aws_inspect.py" "$@"
}

aws_agree() { # NAME [WORKSPACE]
	"$KILN" state pull -w "${2:-default}" >.state.json 2>/dev/null || echo '{"resources": {}}' >.state.json
	aws_inspect "$1" agree .state.json e2e "${2:-default}"
}

# Golden text, Markdown and JSON plans of the aws examples, from nothing,
# against moto (the image var names one moto knows). KILN_UPDATE_GOLDEN=1
# rewrites them.
aws_goldens() {
	for spec in examples/llm-pretrain.yaml examples/finetune.yaml; do
		name=$(basename "$spec" .yaml)
		aws_dir=$(mktemp -d "$E2E_TMP/aws.XXXXXX")
		cd "$aws_dir" || exit 1
		cp "$E2E_ROOT/$spec" kiln.yaml
		"$KILN" plan --var image=ami-1e749f67 >plan.txt 2>&1
		"$KILN" plan --var image=ami-1e749f67 --markdown >plan.md 2>&1
		"$KILN" plan --var image=ami-1e749f67 --json >plan.raw.json 2>&1
		assert "aws: the JSON plan of $name validates against the schema" \
			python3 "$E2E_ROOT/tests/check-plan-schema.py" plan.raw.json
		sed 's/"created": "[^"]*"/"created": "(time)"/' plan.raw.json >plan.json
		for ext in txt md json; do
			golden=$E2E_ROOT/tests/golden/engine/$name.$ext
			if [ -n "${KILN_UPDATE_GOLDEN:-}" ]; then
				cp "plan.$ext" "$golden"
			fi
			compare "aws: the $ext plan of $name matches its golden" "$golden" "plan.$ext"
		done
		cd "$E2E_ROOT" || exit 1
	done
}

# With one zone the file systems come before the nodes: both names are in
# the user data the nodes launch with.
aws_user_data_one_zone() {
	sed 's/zone: \[us-east-1a, us-east-1b\].*/zone: us-east-1a/' kiln.yaml >one-zone.yaml
	sed -i 's/fabric: none/fabric: efa/' one-zone.yaml
	check "aws: llm-pretrain in one zone applies" 0 --out-has "Apply complete: 15 created" \
		-- "$KILN" apply -w onezone --auto-approve --var image=ami-1e749f67 one-zone.yaml
	aws_inspect "aws: boto3 decodes the user data: Lustre and EFS by the names of the file systems kiln made" \
		expect llm-pretrain onezone user-data=trainers:mounts=scratch+home:local=/scratch:efa \
		user-data=login:mounts=home
	"$KILN" destroy -w onezone --auto-approve --var image=ami-1e749f67 one-zone.yaml >/dev/null 2>&1
}

aws_lifecycle() {
	aws_new_dir
	check "aws: plan of a fresh cluster lists every create" 2 \
		--out-has "kiln plan: e2e/default on aws" \
		--out-has "  + aws_instance_group.trainers  create" \
		--out-has "  + aws_placement_group.fabric  create" \
		--out-has "  + aws_iam_role.trainer  create" \
		--out-has "Plan: 11 to create, 0 to update, 0 to replace, 0 to delete, 0 to adopt." \
		-- "$KILN" plan --detailed-exitcode
	check "aws: apply creates every resource" 0 \
		--out-has "aws_instance_group.trainers: created [id ig/e2e/default/trainers@" \
		--out-has "Apply complete: 11 created, 0 updated, 0 replaced, 0 deleted." \
		-- "$KILN" apply --auto-approve
	aws_agree "aws: boto3 finds every resource recorded, none twice, none untagged"
	aws_inspect "aws: boto3 finds the settings the spec asks for" expect e2e default \
		group=trainers:count=2:efa=32:pg:profile:type=p5.48xlarge:zone=us-east-1a \
		group=login:count=1:type=m7i.xlarge \
		bucket=datasets:versioning=on bucket=checkpoints:versioning=on:expire=30 \
		sg-ingress=22/203.0.113.0/24 role=trainer:read=datasets:write=checkpoints
	check "aws: a second plan has no changes" 0 --out-has "No changes." \
		-- "$KILN" plan --detailed-exitcode
	# The node TTL (issue 29): a TTL given later reaches the running nodes' tag, and so
	# does ttl extend; each node reads it from its instance metadata.
	check "aws: apply --ttl records an expiry for the running cluster" 0 \
		--out-has "Expires: 2030-01-01T08:00:00Z (in 8h0m)" \
		-- env KILN_NOW=2030-01-01T00:00:00Z "$KILN" apply --ttl 8h --auto-approve
	aws_inspect "aws: boto3 finds the new expiry on every node's kiln:expires tag" expect e2e default \
		expires=trainers=2030-01-01T08:00:00Z expires=login=2030-01-01T08:00:00Z
	check "aws: ttl extend puts the new expiry on the nodes" 0 \
		--out-has "The nodes' kiln:expires tag says 2030-01-01T10:00:00Z" \
		-- env KILN_NOW=2030-01-01T01:00:00Z "$KILN" ttl extend 2h
	aws_inspect "aws: boto3 finds the extended expiry on every node" expect e2e default \
		expires=trainers=2030-01-01T10:00:00Z expires=login=2030-01-01T10:00:00Z
	sed -i 's/count: 2/count: 3/; s/port: 22, from: 203.0.113.0\/24/port: 2222, from: 198.51.100.0\/24/' kiln.yaml
	sed -i 's/expire_noncurrent_after: 30d, deletion: delete/versioning: false, deletion: delete/; s/checkpoints: {tier: object, versioning: true, /checkpoints: {tier: object, /' kiln.yaml
	sed -i 's|trainer: {read: \[datasets\], write: \[checkpoints\]}|trainer: {read: [datasets, checkpoints], allow: [{actions: [ecr:GetAuthorizationToken], resources: ["*"]}, {actions: [ecr:GetDownloadUrlForLayer, ecr:BatchGetImage], resources: ["arn:aws:ecr:us-east-1:123456789012:repository/train"]}]}|' kiln.yaml
	check "aws: count, ingress, versioning and a role's intent and allow statements change in place" 0 \
		--out-has "count:  2 → 3" \
		--out-has 'allow:  null → [{"actions":["ecr:BatchGetImage","ecr:GetDownloadUrlForLayer"],"resources":["arn:aws:ecr:us-east-1:123456789012:repository/train"]},{"actions":["ecr:GetAuthorizationToken"],"resources":["*"]}]' \
		--out-has "Apply complete: 0 created, 4 updated, 0 replaced, 0 deleted." \
		-- "$KILN" apply --auto-approve
	aws_inspect "aws: boto3 finds the changed settings" expect e2e default \
		group=trainers:count=3:efa:pg:profile user-data=trainers:efa bucket=checkpoints:versioning=off \
		sg-ingress=2222/198.51.100.0/24 role=trainer:read=datasets+checkpoints
	aws_inspect "aws: boto3 finds the role's allow statements after its store statements" \
		expect e2e default 'role-allow=trainer=[[["ecr:GetAuthorizationToken"], ["*"]], [["ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer"], ["arn:aws:ecr:us-east-1:123456789012:repository/train"]]]'
	check "aws: a plan after adding allow statements has no changes" 0 --out-has "No changes." \
		-- "$KILN" plan --detailed-exitcode
	check "aws: a new image replaces both groups" 0 \
		--out-has "-/+ aws_instance_group.trainers" \
		--out-has "Apply complete: 0 created, 0 updated, 2 replaced, 0 deleted." \
		-- "$KILN" apply --auto-approve --var image=ami-12c6146b
	"$AWS_PY" "$E2E_ROOT/tests/e2e/aws_inspect.py" drift e2e default versioning-off=datasets >/dev/null
	"$AWS_PY" "$E2E_ROOT/tests/e2e/aws_inspect.py" drift e2e default policy-add=trainer >/dev/null
	# A bucket's versioning suspended, and a statement added to a role's policy.
	check "aws: drift made with boto3 is shown" 2 \
		--out-has "~ aws_s3_bucket.datasets  changed outside kiln" \
		--out-has "versioning:  true → false" \
		--out-has "~ aws_iam_role.trainer  changed outside kiln" \
		--out-has '{"actions":["sts:GetCallerIdentity"],"resources":["*"]}]' \
		--out-has "~ aws_iam_role.trainer  update in place" \
		-- "$KILN" plan --detailed-exitcode --var image=ami-12c6146b
	check "aws: destroy leaves only the retained bucket" 0 \
		--out-has "aws_s3_bucket.datasets: released from state (retained)" \
		--out-has "Destroy complete: 0 created, 0 updated, 0 replaced, 10 deleted, 1 released" \
		-- "$KILN" destroy --auto-approve --var image=ami-12c6146b
	if [ "$E2E_RC" = 0 ]; then
		left=$("$AWS_PY" "$E2E_ROOT/tests/e2e/aws_inspect.py" left e2e default)
		if [ "$left" = "aws_s3_bucket.datasets kiln-e2e-default-datasets" ]; then
			:
		else
			fail "aws: destroy leaves only the retained bucket" /dev/null
			printf '#   left: %s\n' "$left"
		fi
	fi
	cd "$E2E_ROOT" || exit 1
}

aws_errors() {
	aws_new_dir
	check "aws: no credentials is an error naming where kiln looked" 1 \
		--err "kiln: plan: no AWS credentials found; looked in: the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY); profile 'default' in $aws_dir/.aws/credentials (no such file); profile 'default' in $aws_dir/.aws/config (no such file)
  hint: export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or run 'aws configure' to write ~/.aws/credentials" \
		-- env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY HOME="$aws_dir" "$KILN" plan
	# A workspace of their own: the lifecycle's retained bucket is another
	# state's (its lineage), and a plan over it would be refused for that.
	check "aws: plan refuses an image the region lacks, before anything is spent" 1 \
		--err "kiln: plan: aws: compute.login.image: ami-00000000 does not exist in region us-east-1
  hint: images are regional: use the AMI id of this region" \
		-- "$KILN" plan -w errors --var image=ami-00000000
	sed 's/zone: \[us-east-1a, us-east-1b\]/zone: [us-east-1y, us-east-1z]/' kiln.yaml >nozone.yaml
	check "aws: plan refuses a type offered in none of the zones" 1 \
		--err-has "kiln: plan: aws: compute.login: m7i.xlarge is not offered in us-east-1y, us-east-1z (of those, none)" \
		-- "$KILN" plan -w errors nozone.yaml
	sed 's/zone: \[us-east-1a, us-east-1b\]/zone: [us-east-1a, us-east-1z]/' kiln.yaml >onezone.yaml
	check "aws: plan warns of a zone that does not offer a type" 2 \
		--out-has "aws_instance_group.trainers: p5.48xlarge is not offered in us-east-1z; a launch that falls back there will fail" \
		-- "$KILN" plan -w errors --detailed-exitcode onezone.yaml
	sed 's/    role: trainer$/    role: trainer\n    public: true/' kiln.yaml >public.yaml
	check "aws: a public group on a multi-card EFA type is refused" 1 \
		--err "kiln: plan: aws: public.yaml:25:13: compute.trainers: public: true cannot go with EFA on the 32 network cards of p5.48xlarge (EC2 gives a public address only to an instance with one network interface)
  hint: reach the nodes through a public login group, as examples/llm-pretrain.yaml does" \
		-- "$KILN" plan -w errors public.yaml
	check "aws: iam-policy prints the minimal policy" 0 \
		--out-has '"ec2:RunInstances"' \
		--out-has '"Resource": "arn:aws:iam::*:role/kiln/e2e/default/*"' \
		--out-has '"iam:PassedToService": "ec2.amazonaws.com"' \
		-- env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY HOME="$aws_dir" "$KILN" iam-policy
	# Every action on the resource types AWS lists for it, "*" only where it lists none
	# (issue 33, finding 8): tests/check-iam-policy.py reads tests/iam-data.
	assert "aws: iam-policy of every example and template passes the Parliament-style checks against AWS's service authorization data" \
		python3 "$E2E_ROOT/tests/check-iam-policy.py" "$KILN"
	# kiln writes no bucket policy: its policy never lets CI rewrite one (issue 33, finding 10).
	check "aws: iam-policy grants no s3:PutBucketPolicy, since kiln writes no bucket policy" 0 \
		-- sh -c '! "$1" iam-policy "$2" | grep -q "s3:PutBucketPolicy"' sh "$KILN" "$E2E_ROOT/examples/llm-pretrain.yaml"
	# IAM authorizes putting a role in a profile on the profile alone (issue 33, finding 9).
	check "aws: iam-policy grants the role-in-profile actions on the instance profile alone" 0 \
		--out "arn:aws:iam::*:instance-profile/kiln/e2e/default/*" \
		-- sh -c '"$1" iam-policy | python3 -c "import json, sys
for s in json.load(sys.stdin)[\"Statement\"]:
    if \"iam:AddRoleToInstanceProfile\" in s[\"Action\"] or \"iam:RemoveRoleFromInstanceProfile\" in s[\"Action\"]:
        print(s[\"Resource\"])"' sh "$KILN"
	cd "$E2E_ROOT" || exit 1
}

aws_calls_at_most() { # OUT WANT FILE MAX: OUT has WANT, and the moto extension counted
	# at most MAX calls in FILE (all shown, by action, on failure)
	grep -q "$2" "$1" || { cat "$1"; return 1; }
	"$AWS_PY" -c '
import json, sys
c = json.load(open(sys.argv[1]))
print(c["total"], "calls:", json.dumps(c["by_action"], sort_keys=True))
sys.exit(0 if c["total"] <= int(sys.argv[2]) else 1)' "$3" "$4"
}

aws_ssm_calls() { # STEP...: each STEP's SSM calls by action, as JSON
	for aws_s in "$@"; do
		"$AWS_PY" -c 'import json, sys
c = json.load(open(sys.argv[1] + ".calls.json"))["by_action"]
print(sys.argv[1], json.dumps({a: n for a, n in sorted(c.items()) if a.startswith("ssm:")}))' "$aws_s"
	done
}

aws_counted() { # STEP CMD...: run CMD into STEP.out (its exit status last), moto's count into STEP.calls.json
	aws_step=$1
	shift
	curl -sf -X POST "$AWS_ENDPOINT_URL/_kiln/calls/reset" >/dev/null
	"$@" >"$aws_step.out" 2>&1
	echo "exit $?" >>"$aws_step.out"
	curl -sf "$AWS_ENDPOINT_URL/_kiln/calls" >"$aws_step.calls.json"
}

# The API calls the example costs (issue 5's targets; bench/bench.py prints them with
# wall time, and bench/README.md says what each is for). Counts, not timings. A
# spec without a scheduler asks SSM nothing; one with a scheduler lists its
# parameters (one GetParametersByPath), and a state that still records them
# after the spec dropped its scheduler reads them by id, to delete them.
aws_calls() {
	aws_dir=$(mktemp -d "$E2E_TMP/aws.XXXXXX")
	cd "$aws_dir" || exit 1
	sed 's/count: 16/count: 2/' "$E2E_ROOT/examples/llm-pretrain.yaml" >kiln.yaml
	aws_counted apply "$KILN" apply -w calls --auto-approve --var image=ami-1e749f67
	assert "aws: the example's first apply makes at most 46 API calls, pre-flight included" \
		aws_calls_at_most apply.out "^exit 0" apply.calls.json 46
	aws_counted plan "$KILN" plan -w calls --detailed-exitcode --var image=ami-1e749f67
	assert "aws: the example's no-change plan makes at most 24 API calls" \
		aws_calls_at_most plan.out "^exit 0" plan.calls.json 24
	check "aws: without a scheduler, neither the apply nor the plan calls SSM" 0 \
		--out "apply {}${NL}plan {}" -- aws_ssm_calls apply plan
	sed 's/^compute:/scheduler: {type: slurm, controller: login}\n\ncompute:/' kiln.yaml >slurm.yaml
	"$KILN" apply -w calls --auto-approve --var image=ami-1e749f67 slurm.yaml >slurm-apply.out 2>&1
	# The role's ARN said the account: the munge key's ARN names it (issue 33, finding 11).
	check "aws: a role's munge key ARN names the account IAM gave the role, not any account" 0 \
		--out "arn:aws:ssm:us-east-1:123456789012:parameter/kiln/llm-pretrain/calls/slurm/munge-key" \
		-- "$AWS_PY" -c 'import boto3
d = boto3.client("iam", region_name="us-east-1").get_role_policy(RoleName="kiln-llm-pretrain-calls-trainer", PolicyName="kiln")["PolicyDocument"]
print(*[r for s in d["Statement"] if s.get("Sid") == "KilnSsmRead" for r in s["Resource"]])'
	aws_counted slurm-plan "$KILN" plan -w calls --detailed-exitcode --var image=ami-1e749f67 slurm.yaml
	check "aws: with a scheduler, the plan's refresh lists the workspace's parameters in one call, and their tags" 0 \
		--out "slurm-plan {\"ssm:GetParametersByPath\": 1, \"ssm:ListTagsForResource\": 3}" \
		-- aws_ssm_calls slurm-plan
	check "aws: a spec that dropped its scheduler still finds its parameters, and deletes them" 0 \
		--out-has "aws_ssm_parameter.munge_key: deleted" \
		--out-has "aws_ssm_parameter.slurm_conf: deleted" \
		--out-has "aws_ssm_parameter.gres_conf: deleted" \
		-- "$KILN" apply -w calls --auto-approve --var image=ami-1e749f67 kiln.yaml
	"$KILN" destroy -w calls --auto-approve --var image=ami-1e749f67 >/dev/null 2>&1
	cd "$E2E_ROOT" || exit 1
}

aws_capacity() {
	aws_new_dir
	aws_ctl capacity '[{"instance_type": "p5.48xlarge", "zone": "us-east-1a", "max": 0}]'
	check "aws: with no capacity in the first zone the gang lands in the second" 0 \
		--out-has "Apply complete: 11 created" \
		--err-has "aws_instance_group.trainers: no capacity for 2 × p5.48xlarge in us-east-1a; the group moves to us-east-1b" \
		-- "$KILN" apply -w cap --auto-approve
	aws_ctl capacity '[]'
	"$KILN" destroy -w cap --auto-approve >/dev/null 2>&1
	cd "$E2E_ROOT" || exit 1
	aws_zones
}

# The whole fabric in one zone, storage included: the llm-pretrain example
# (a Lustre file system and an EFS file system) with capacity taken away
# from one type in a zone or everywhere.
aws_zones() {
	aws_dir=$(mktemp -d "$E2E_TMP/aws.XXXXXX")
	cd "$aws_dir" || exit 1
	sed 's/count: 16/count: 2/' "$E2E_ROOT/examples/llm-pretrain.yaml" >kiln.yaml
	aws_ctl capacity '[{"instance_type": "p5.48xlarge", "zone": "us-east-1a", "max": 0}]'
	check "aws: without capacity for the first group in the first zone, the fabric and its storage land in the second" 0 \
		--out-has "Apply complete: 16 created" \
		--err-has "aws_instance_group.trainers: no capacity for 2 × p5.48xlarge in us-east-1a; the group moves to us-east-1b" \
		-- "$KILN" apply -w first --auto-approve --var image=ami-1e749f67
	aws_inspect "aws: boto3 finds the nodes, placement group, FSx and EFS mount target in the second zone, nothing in the first" \
		expect llm-pretrain first zone=us-east-1b group=trainers:count=2:pg:zone=us-east-1b group=login:count=1:zone=us-east-1b
	aws_inspect "aws: boto3 decodes the user data: EFS by the name of the file system kiln made, Lustre (made after the nodes) looked up at boot, the local NVMe, EFA" \
		expect llm-pretrain first user-data=trainers:mounts=scratch+home:find=scratch:local=/scratch:efa \
		user-data=login:mounts=home
	# Issue 14's "done when": the very document EC2 holds for a trainer node,
	# read back with boto3, is accepted by cloud-init and, run in the boot
	# sandbox (tests/e2e/boot_sandbox.sh), mounts the three tiers and reports
	# the node healthy.
	"$AWS_PY" "$E2E_ROOT/tests/e2e/aws_inspect.py" user-data llm-pretrain first trainers >"$aws_dir/ud.yaml"
	check "aws: cloud-init accepts the user data EC2 holds for a trainer" 0 \
		-- cloud-init schema --config-file "$aws_dir/ud.yaml"
	check "aws: the user data EC2 holds for a trainer boots in the sandbox" 0 \
		-- "$E2E_ROOT/tests/e2e/boot_sandbox.sh" "$aws_dir/ud.yaml" "$aws_dir/sb"
	assert "aws: ... it mounts the local NVMe, the Lustre and the EFS file system kiln made" \
		sh -c 'test "$(cut -d" " -f2 "$1/etc/fstab" | tr "\n" " ")" = "/scratch /fsx /home " &&
			grep -q "^fs-[0-9a-f]*\.efs\.us-east-1\.amazonaws\.com:/ /home nfs4 " "$1/etc/fstab"' sh "$aws_dir/sb"
	assert "aws: ... and the node reports itself healthy" \
		grep -qF '"Value":"healthy: 8/8 GPUs, 32/32 EFA"' "$aws_dir/sb/var/log/calls"
	# Capacity is back in the first zone, but the file systems hold data in the second.
	aws_ctl capacity '[]'
	check "aws: replacing every group keeps the nodes in the zone of the storage they mount" 0 \
		--out-has "Apply complete: 0 created, 0 updated, 2 replaced, 0 deleted." \
		-- "$KILN" apply -w first --auto-approve --var image=ami-12c6146b
	aws_inspect "aws: boto3 finds the new nodes beside the storage in the second zone" \
		expect llm-pretrain first zone=us-east-1b group=trainers:count=2:pg:zone=us-east-1b
	aws_ctl capacity '[{"instance_type": "m7i.xlarge", "zone": "us-east-1a", "max": 0}]'
	check "aws: a later group without capacity does not move groups running in the cluster placement group" 1 \
		--err-has "aws: aws_instance_group.login: no capacity for 1 × m7i.xlarge in us-east-1a, where aws_instance_group.trainers (launched by this apply) already runs in the cluster placement group; a cluster placement group holds one zone, so the fabric cannot move while they run (try again later, or replace those groups together (kiln apply --replace ADDRESS for each): launched into an empty placement group, the fabric takes the first zone with room for it)" \
		-- "$KILN" apply -w pinned --auto-approve --var image=ami-1e749f67
	# Without a placement group (fabric: none) the groups this apply launched move.
	sed -i "s/fabric: efa/fabric: none/" kiln.yaml
	check "aws: a later group without capacity moves the groups this apply launched to the next zone" 0 \
		--out-has "Apply complete: 15 created" \
		--err-has "aws_instance_group.login: no capacity for 1 × m7i.xlarge in us-east-1a; the fabric moves to us-east-1b with aws_instance_group.trainers (launched by this apply)" \
		--err-has "aws_instance_group.trainers: moved from us-east-1a to us-east-1b with aws_instance_group.login: its 2 instances in us-east-1a terminated" \
		-- "$KILN" apply -w later --auto-approve --var image=ami-1e749f67
	aws_inspect "aws: boto3 finds every node, the FSx and the EFS mount target in the second zone after the move, nothing in the first" \
		expect llm-pretrain later zone=us-east-1b group=trainers:count=2:zone=us-east-1b group=login:count=1:zone=us-east-1b
	aws_inspect "aws: boto3 finds the moved nodes launched with the same user data (no EFA environment without the fabric)" \
		expect llm-pretrain later user-data=trainers:mounts=scratch+home:find=scratch:local=/scratch \
		user-data=login:mounts=home
	check "aws: and plans no changes after the move" 0 --out-has "No changes." \
		-- "$KILN" plan -w later --detailed-exitcode --var image=ami-1e749f67
	aws_ctl capacity '[{"instance_type": "m7i.xlarge", "max": 0}]'
	check "aws: a later group without capacity in any zone fails naming the zones, and keeps the others in place" 1 \
		--err-has "kiln: apply: aws_instance_group.login: create failed: aws: aws_instance_group.login: no capacity for 1 × m7i.xlarge in us-east-1a or us-east-1b; aws_instance_group.trainers (launched by this apply) stays in us-east-1a (try again later, add a zone to provider.zone, or choose another instance type)" \
		-- "$KILN" apply -w nowhere --auto-approve --var image=ami-1e749f67
	aws_inspect "aws: boto3 finds no zone-bound storage made for nodes that could not all launch" \
		expect llm-pretrain nowhere zone=us-east-1a:no-storage group=trainers:count=2:zone=us-east-1a
	aws_ctl capacity '[]'
	aws_user_data_one_zone
	aws_ctl capacity '[{"instance_type": "p5.48xlarge", "max": 0}]'
	check "aws: a fabric without capacity in any zone fails naming the zones" 1 \
		--err-has "kiln: apply: aws_instance_group.trainers: create failed: aws: aws_instance_group.trainers: no capacity for 2 × p5.48xlarge in us-east-1a or us-east-1b (try again later, add a zone to provider.zone, or choose another instance type)" \
		-- "$KILN" apply -w none --auto-approve --var image=ami-1e749f67
	aws_ctl capacity '[]'
	"$KILN" destroy -w first --auto-approve --var image=ami-12c6146b >/dev/null 2>&1
	for ws in pinned later nowhere none; do
		"$KILN" destroy -w "$ws" --auto-approve --var image=ami-1e749f67 >/dev/null 2>&1
	done
	cd "$E2E_ROOT" || exit 1
}

# A quarter of the requests faulted: one retry layer (http.c) with 10
# attempts per request, where 4 would give up on about one request in 250
# (before issue 32 the engine's 8 retries of 4 attempts each hid that).
aws_faults() {
	aws_new_dir
	aws_ctl faults '{"throttle": 0.15, "error5xx": 0.1, "error5xx_after": 0.2, "seed": 11}'
	check "aws: with throttling and 5xx on a share of calls apply converges" 0 \
		--out-has "Apply complete: 11 created" \
		-- env KILN_HTTP_ATTEMPTS=10 KILN_HTTP_BACKOFF_MS=5 KILN_RETRY_BASE_MS=5 "$KILN" apply -w faults --auto-approve
	aws_ctl faults '{}'
	aws_agree "aws: after the faults boto3 finds no duplicate" faults
	"$KILN" destroy -w faults --auto-approve >/dev/null 2>&1
	cd "$E2E_ROOT" || exit 1
}

aws_attempts() { # CALLS_FILE ACTION MAX [MIN]: moto counted MIN (default 1) to MAX requests of ACTION
	"$AWS_PY" -c '
import json, sys
c = json.load(open(sys.argv[1]))
n = c["by_action"].get(sys.argv[2], 0)
print(sys.argv[2], n, "requests; all:", json.dumps(c["by_action"], sort_keys=True))
sys.exit(0 if int(sys.argv[4]) <= n <= int(sys.argv[3]) else 1)' "$1" "$2" "$3" "${4:-1}"
}

aws_create_gave_up() { # OUT CALLS_FILE: CreateVpc gave up throttled after 4 requests, no look
	grep -q "aws_vpc.main: create failed: aws: ec2 CreateVpc: RequestLimitExceeded: .*(throttled: gave up after 4 attempts in " "$1" ||
		{ cat "$1"; return 1; }
	aws_attempts "$2" ec2:CreateVpc 4 4 && aws_attempts "$2" ec2:DescribeVpcs 1 1
}

aws_deadline_held() { # CALLS_FILE SECONDS: more than one ListBuckets, far fewer than 100, within 10 s
	aws_attempts "$1" s3:ListBuckets 99 2 && echo "in $2 s" && [ "$2" -le 10 ]
}

# One layer retries (issue 32): under 100% injected throttling or 5xx a
# logical call is sent KILN_HTTP_ATTEMPTS times in all (before, 4 × the
# engine's 8 = 32, and a create's lost-answer looks on top), gives up with
# an error naming the throttling, the attempts and the time, and stops at
# the call's deadline (KILN_CALL_DEADLINE_MS) however many attempts remain.
aws_retries() {
	aws_dir=$(mktemp -d "$E2E_TMP/aws.XXXXXX")
	cd "$aws_dir" || exit 1
	cat >kiln.yaml <<-'EOF'
		kiln: 1
		cluster: retries
		provider: {name: aws, region: us-east-1, zone: us-east-1a}
		network: {cidr: 10.44.0.0/16}
		storage:
		  data: {tier: object, deletion: delete}
	EOF
	curl -sf -X POST "$AWS_ENDPOINT_URL/_kiln/calls/reset" >/dev/null
	aws_ctl faults '{"throttle": 1.0, "services": ["s3"]}'
	check "aws: a call throttled every time gives up naming the throttling, its attempts and its time" 1 \
		--err-has "kiln: plan: aws: s3 ListAllMyBuckets: SlowDown: Please reduce your request rate. (request " \
		--err-has ") (throttled: gave up after 4 attempts in " \
		--err-has "  hint: AWS is throttling this account's requests and kiln slowed down to the rate it allows; run it again later" \
		-- "$KILN" plan -w retries
	curl -sf "$AWS_ENDPOINT_URL/_kiln/calls" >throttled.calls.json
	assert "aws: a call throttled every time is sent KILN_HTTP_ATTEMPTS times, not again by the engine" \
		aws_attempts throttled.calls.json s3:ListBuckets 4 4
	curl -sf -X POST "$AWS_ENDPOINT_URL/_kiln/calls/reset" >/dev/null
	aws_ctl faults '{"error5xx": 1.0, "services": ["s3"]}'
	check "aws: a call failing with 5xx every time gives up naming its attempts and its time" 1 \
		--err-has "kiln: plan: aws: s3 ListAllMyBuckets: InternalError: We encountered an internal error. Please try again. (request " \
		--err-has ") (gave up after 4 attempts in " \
		-- env KILN_HTTP_BACKOFF_MS=5 "$KILN" plan -w retries
	curl -sf "$AWS_ENDPOINT_URL/_kiln/calls" >5xx.calls.json
	assert "aws: a call failing with 5xx every time is sent KILN_HTTP_ATTEMPTS times, not again by the engine" \
		aws_attempts 5xx.calls.json s3:ListBuckets 4 4
	# A create without a token (CreateVpc): throttling means it was not done,
	# so it is neither looked for (DescribeVpcs is the refresh's alone) nor
	# sent again by the engine.
	curl -sf -X POST "$AWS_ENDPOINT_URL/_kiln/calls/reset" >/dev/null
	aws_ctl faults '{"throttle": 1.0, "actions": ["ec2:CreateVpc"]}'
	"$KILN" apply -w retries --auto-approve >create.out 2>&1
	curl -sf "$AWS_ENDPOINT_URL/_kiln/calls" >create.calls.json
	assert "aws: a create throttled every time is sent KILN_HTTP_ATTEMPTS times and not looked for" \
		aws_create_gave_up create.out create.calls.json
	# The refresh's VPC listing serves five types: one that gave up is
	# shared with the other four, not sent again by each (was 5 x 32).
	curl -sf -X POST "$AWS_ENDPOINT_URL/_kiln/calls/reset" >/dev/null
	aws_ctl faults '{"error5xx": 1.0, "actions": ["ec2:DescribeVpcs"]}'
	env KILN_HTTP_BACKOFF_MS=5 "$KILN" plan -w retries >listing.out 2>&1
	curl -sf "$AWS_ENDPOINT_URL/_kiln/calls" >listing.calls.json
	assert "aws: a listing five types share, failing every time, is sent KILN_HTTP_ATTEMPTS times in all" \
		aws_attempts listing.calls.json ec2:DescribeVpcs 4 4
	curl -sf -X POST "$AWS_ENDPOINT_URL/_kiln/calls/reset" >/dev/null
	aws_ctl faults '{"throttle": 1.0, "services": ["s3"]}'
	aws_t0=$(date +%s)
	check "aws: a call throttled every time stops at KILN_CALL_DEADLINE_MS, naming it" 1 \
		--err-has "kiln: plan: aws: s3 ListAllMyBuckets: SlowDown: Please reduce your request rate. (request " \
		--err-has ", at the call's deadline of 2.0 s)" \
		-- env KILN_HTTP_ATTEMPTS=100 KILN_CALL_DEADLINE_MS=2000 "$KILN" plan -w retries
	aws_t1=$(date +%s)
	curl -sf "$AWS_ENDPOINT_URL/_kiln/calls" >deadline.calls.json
	assert "aws: the deadline bounds the attempts and the time" \
		aws_deadline_held deadline.calls.json "$((aws_t1 - aws_t0))"
	aws_ctl faults '{}'
	"$KILN" destroy -w retries --auto-approve >/dev/null 2>&1
	cd "$E2E_ROOT" || exit 1
}

aws_crashes() {
	aws_new_dir
	ok=1
	for run in $(seq 1 20); do
		KILN_LOCK_LEASE=1s "$KILN" apply -w crash --auto-approve --lock-timeout 10s \
			>/dev/null 2>&1 &
		pid=$!
		sleep "0.$(shuf -i 0-9 -n 1)$(shuf -i 0-9 -n 1)"
		kill -KILL $pid 2>/dev/null
		wait $pid 2>/dev/null
	done
	"$KILN" apply -w crash --auto-approve --lock-timeout 10s >"$E2E_TMP/.crash" 2>&1 || ok=0
	"$KILN" state pull -w crash >.state.json 2>>"$E2E_TMP/.crash" || ok=0
	if [ $ok = 1 ] && "$AWS_PY" "$E2E_ROOT/tests/e2e/aws_inspect.py" agree .state.json e2e crash >>"$E2E_TMP/.crash" 2>&1 &&
		"$KILN" plan -w crash --detailed-exitcode >>"$E2E_TMP/.crash" 2>&1; then
		pass "aws: 20 applies killed with SIGKILL converge with no duplicate or untagged resource"
	else
		fail "aws: 20 applies killed with SIGKILL converge with no duplicate or untagged resource" "$E2E_TMP/.crash"
	fi
	"$KILN" destroy -w crash --auto-approve >/dev/null 2>&1
	cd "$E2E_ROOT" || exit 1
}

# A truncated object in the state repository (libgit2 1.5.1 alone loops
# forever on it) stops plan and apply at once, before any call to the cloud.
aws_damaged() {
	aws_new_dir
	"$KILN" apply -w damaged --auto-approve >"$E2E_TMP/.damaged" 2>&1
	cp -a .kiln/state.git good.git
	oid=$(git --git-dir=good.git rev-parse damaged:state.json)
	obj=objects/$(echo "$oid" | cut -c1-2)/$(echo "$oid" | cut -c3-)
	size=$(($(wc -c <"good.git/$obj") - 4))
	chmod u+w ".kiln/state.git/$obj"
	truncate -s "$size" ".kiln/state.git/$obj"
	msg="the state repository .kiln/state.git is damaged: blob $oid ($obj) is truncated: its file ends after $size bytes, before the end of its compressed content ($(git --git-dir=good.git cat-file -s "$oid") bytes announced)"
	hint="\`git --git-dir=.kiln/state.git fsck\` lists every damaged object; restore them from a backup or a clone of this repository"
	check "aws: a truncated state blob fails plan at once, naming it and the repair" 1 \
		--err "$(printf 'kiln: plan: %s\n  hint: %s' "$msg" "$hint")" \
		-- timeout 20 "$KILN" plan -w damaged
	check "aws: a truncated state blob fails apply at once, naming it and the repair" 1 \
		--err "$(printf 'kiln: apply: %s\n  hint: %s' "$msg" "$hint")" \
		-- timeout 20 "$KILN" apply -w damaged --auto-approve
	assert "aws: a truncated state blob leaves no lock" \
		sh -c '! git --git-dir=.kiln/state.git rev-parse -q --verify refs/kiln/locks/damaged'
	cp "good.git/$obj" ".kiln/state.git/$obj"
	if "$KILN" plan -w damaged --detailed-exitcode >>"$E2E_TMP/.damaged" 2>&1 &&
		"$KILN" destroy -w damaged --auto-approve >>"$E2E_TMP/.damaged" 2>&1; then
		pass "aws: with the blob restored, the plan has no changes and destroy completes"
	else
		fail "aws: with the blob restored, the plan has no changes and destroy completes" "$E2E_TMP/.damaged"
	fi
	cd "$E2E_ROOT" || exit 1
}

# kiln's own least-privilege policy is enough, and every action in it is
# needed: moto checks signatures and IAM policies after the first 3 requests
# (the ones that make the user).
aws_least_privilege() {
	lp_moto=$E2E_TMP/moto-iam
	mkdir -p "$lp_moto"
	if ! out=$(INITIAL_NO_AUTH_ACTION_COUNT=3 sh "$E2E_ROOT/tests/moto/server.sh" start "$lp_moto" 2>&1); then
		printf '%s\n' "$out" >"$E2E_TMP/.moto"
		fail "aws: moto with IAM enforcement starts" "$E2E_TMP/.moto"
		return 0
	fi
	pass "aws: moto with IAM enforcement starts"
	lp_port=$(cat "$lp_moto/moto.port")
	aws_dir=$(mktemp -d "$E2E_TMP/aws.XXXXXX")
	cd "$aws_dir" || exit 1
	sed 's/count: 16/count: 2/' "$E2E_ROOT/examples/llm-pretrain.yaml" >kiln.yaml
	"$KILN" iam-policy --var image=ami-1e749f67 >policy.json
	aws_py=$E2E_ROOT/tests/e2e/aws_inspect.py
	lp_ep=AWS_ENDPOINT_URL=http://127.0.0.1:$lp_port
	# The first three requests (not checked) make an administrator for boto3.
	echo '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}' >admin.json
	lp_admin=$(env "$lp_ep" "$AWS_PY" "$aws_py" user admin admin.json)
	# shellcheck disable=SC2086
	lp_keys=$(env "$lp_ep" $lp_admin "$AWS_PY" "$aws_py" user kiln-ci policy.json)
	# shellcheck disable=SC2086
	check "aws: examples/llm-pretrain.yaml applies with exactly the iam-policy permissions" 0 \
		--out-has "Apply complete: 16 created, 0 updated, 0 replaced, 0 deleted." \
		-- env "$lp_ep" $lp_keys "$KILN" apply --auto-approve --var image=ami-1e749f67
	# shellcheck disable=SC2086
	env "$lp_ep" $lp_keys "$KILN" state pull >.state.json 2>/dev/null
	# shellcheck disable=SC2086
	assert "aws: boto3 finds the example's resources recorded, none twice, none untagged" \
		env "$lp_ep" $lp_admin "$AWS_PY" "$aws_py" agree .state.json llm-pretrain default
	# shellcheck disable=SC2086
	check "aws: and plans no changes with them" 0 --out-has "No changes." \
		-- env "$lp_ep" $lp_keys "$KILN" plan --detailed-exitcode --var image=ami-1e749f67
	# The trainer reads home (nfs) and writes scratch (lustre: no IAM action, but
	# its nodes find the file system, made after them, at boot); login writes home.
	lp_trainer='[[["s3:GetObject"], "objects:datasets"], [["s3:ListBucket"], "bucket:datasets"], [["s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload"], "objects:checkpoints"], [["s3:ListBucket"], "bucket:checkpoints"], [["fsx:DescribeFileSystems"], ["*"]]'
	lp_login='[[["s3:GetObject"], "objects:checkpoints"], [["s3:ListBucket"], "bucket:checkpoints"], [["elasticfilesystem:ClientMount", "elasticfilesystem:ClientWrite"], "efs:home"]]'
	# shellcheck disable=SC2086
	assert "aws: boto3 finds each role's exact statements: EFS mount actions on the file system's ARN, for Lustre only the lookup at boot" \
		env "$lp_ep" $lp_admin "$AWS_PY" "$aws_py" expect llm-pretrain default \
		"role-exact=trainer=$lp_trainer, [[\"elasticfilesystem:ClientMount\"], \"efs:home\"]]" \
		"role-exact=login=$lp_login"
	sed -i 's/trainer: {read: \[datasets, home\], write: \[checkpoints, scratch\]}/trainer: {read: [datasets], write: [checkpoints, scratch, home]}/' kiln.yaml
	# shellcheck disable=SC2086
	check "aws: a role's intent on an nfs store changes its policy in place" 0 \
		--out-has "~ aws_iam_role.trainer  update in place" \
		--out-has 'nfs_write:  null → ["home"]' \
		--out-has "+ elasticfilesystem:ClientWrite  arn:aws:elasticfilesystem:us-east-1:" \
		--out-has "Apply complete: 0 created, 1 updated, 0 replaced, 0 deleted." \
		-- env "$lp_ep" $lp_keys "$KILN" apply --auto-approve --var image=ami-1e749f67
	# shellcheck disable=SC2086
	assert "aws: boto3 finds the role's new EFS statement" \
		env "$lp_ep" $lp_admin "$AWS_PY" "$aws_py" expect llm-pretrain default \
		"role-exact=trainer=$lp_trainer, [[\"elasticfilesystem:ClientMount\", \"elasticfilesystem:ClientWrite\"], \"efs:home\"]]"
	# shellcheck disable=SC2086
	check "aws: and plans no changes after it" 0 --out-has "No changes." \
		-- env "$lp_ep" $lp_keys "$KILN" plan --detailed-exitcode --var image=ami-1e749f67
	# shellcheck disable=SC2086
	check "aws: and destroys with them, keeping the retained stores" 0 \
		--out-has "Destroy complete: 0 created, 0 updated, 0 replaced, 13 deleted, 3 released" \
		-- env "$lp_ep" $lp_keys "$KILN" destroy --auto-approve --var image=ami-1e749f67
	# The policy of workspace less: its SSM parameters' path is the workspace's.
	"$KILN" iam-policy -w less --var image=ami-1e749f67 >policy-less.json
	# shellcheck disable=SC2086
	lp_keys=$(env "$lp_ep" $lp_admin "$AWS_PY" "$aws_py" user kiln-ci-less policy-less.json ec2:CreateVpc)
	# shellcheck disable=SC2086
	check "aws: without ec2:CreateVpc the error names the action that was denied" 1 \
		--err-has "aws_vpc.main: create failed: aws: ec2:CreateVpc was denied to the credentials from the environment (AWS_ACCESS_KEY_ID): UnauthorizedOperation: You are not authorized to perform this operation." \
		--err-has "allow ec2:CreateVpc for them; \`kiln iam-policy SPEC\` prints every action kiln needs for a spec" \
		-- env "$lp_ep" $lp_keys "$KILN" apply -w less --auto-approve --var image=ami-1e749f67
	sh "$E2E_ROOT/tests/moto/server.sh" stop "$lp_moto" >/dev/null 2>&1
	cd "$E2E_ROOT" || exit 1
}

# The Python that has moto 5 and boto3: python3, or pyenv's when python3 is
# the system's (CI runs as root with /root/.pyenv installed). Empty if none.
# Two state repositories, one account (issue 20, item 1): each resource
# names its state's lineage; the other state never adopts or deletes it;
# kiln state takeover moves it, with the tagging call of its service.
aws_ownership() {
	aws_new_dir
	aws_a=$aws_dir
	"$KILN" apply -w own --auto-approve >/dev/null 2>&1
	la=$("$KILN" state pull -w own | python3 -c 'import json, sys; print(json.load(sys.stdin)["lineage"])')
	aws_new_dir
	aws_b=$aws_dir
	check "aws: a second state's plan refuses to create over the first one's cluster" 1 \
		--err-has "kiln: plan: 11 resources this plan would create already exist in cluster 'e2e', workspace 'own', owned by another state (lineage $la): aws_iam_role.trainer, aws_instance_group.login, aws_instance_group.trainers and 8 more" \
		-- "$KILN" plan -w own
	check "aws: its destroy deletes nothing" 0 \
		--out-has "  ! aws_instance_group.trainers ig/e2e/own/trainers@$la (state lineage $la, by " \
		--out-has "Nothing to destroy." \
		-- "$KILN" destroy -w own --auto-approve
	cd "$aws_a" || exit 1
	aws_agree "aws: boto3 finds the first state's cluster whole after it" own
	cd "$aws_b" || exit 1
	check "aws: takeover moves the whole cluster into the second state" 0 \
		--out-has "took over aws_vpc.main (vpc-" \
		--out-has "took over aws_instance_group.trainers (ig/e2e/own/trainers@" \
		--out-has "took over aws_iam_role.trainer (kiln-e2e-own-trainer) from state lineage $la" \
		--out-has "took over aws_s3_bucket.datasets (kiln-e2e-own-datasets)" \
		-- "$KILN" state takeover -w own
	aws_agree "aws: boto3 finds every resource recorded in the second state, under its lineage" own
	check "aws: the second state plans no changes after the takeover" 0 \
		--out-has "No changes." -- "$KILN" plan -w own
	cd "$aws_a" || exit 1
	check "aws: the first state now refuses to plan over them" 1 \
		--err-has "11 resources this plan would create already exist in cluster 'e2e', workspace 'own', owned by another state" \
		-- "$KILN" plan -w own
	cd "$aws_b" || exit 1
	"$KILN" destroy -w own --auto-approve >/dev/null 2>&1
	assert "aws: the second state destroys them, keeping the retained bucket" \
		sh -c '[ "$("$1" "$2" left e2e own)" = "aws_s3_bucket.datasets kiln-e2e-own-datasets" ]' \
		sh "$AWS_PY" "$E2E_ROOT/tests/e2e/aws_inspect.py"
	cd "$E2E_ROOT" || exit 1
}

aws_find_python() {
	for py in python3 "${PYENV_ROOT:-$HOME/.pyenv}/shims/python3" \
		"${PYENV_ROOT:-$HOME/.pyenv}"/versions/*/bin/python3 /root/.pyenv/versions/*/bin/python3; do
		if command -v "$py" >/dev/null 2>&1 &&
			"$py" -c 'import boto3, moto.server, sys; sys.exit(int(moto.__version__.split(".")[0]) < 5)' \
				>/dev/null 2>&1; then
			command -v "$py"
			return 0
		fi
	done
	return 1
}

# aws_moto_up LABEL DIR: moto's server started in DIR (stopped on exit) and
# the AWS_* environment pointing at it, with AWS_PY and PYTHON set; returns 1
# after reporting "LABEL" skipped or failed when it cannot be. aws_moto_down
# DIR stops it and unsets what aws_moto_up set.
aws_moto_up() {
	if ! AWS_PY=$(aws_find_python); then
		skip "$1" "no python3 here has moto 5 and boto3"
		return 1
	fi
	PYTHON=$AWS_PY
	export PYTHON
	mkdir -p "$2"
	if ! out=$(sh "$E2E_ROOT/tests/moto/server.sh" start "$2" 2>&1); then
		printf '%s\n' "$out" >"$E2E_TMP/.moto"
		fail "$1: moto's server starts on loopback" "$E2E_TMP/.moto"
		return 1
	fi
	eval "$out"
	# shellcheck disable=SC2064
	trap "sh '$E2E_ROOT/tests/moto/server.sh' stop '$2' >/dev/null 2>&1; rm -rf '$E2E_TMP'" EXIT
	AWS_ENDPOINT_URL=http://127.0.0.1:$MOTO_PORT
	AWS_ACCESS_KEY_ID=AKIAKILNTESTKEY00000
	AWS_SECRET_ACCESS_KEY=kiln-e2e-secret
	AWS_REGION=us-east-1
	export AWS_ENDPOINT_URL AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_REGION
	unset AWS_PROFILE AWS_SESSION_TOKEN AWS_DEFAULT_REGION
}

aws_moto_down() {
	sh "$E2E_ROOT/tests/moto/server.sh" stop "$1" >/dev/null 2>&1
	trap 'rm -rf "$E2E_TMP"' EXIT
	unset AWS_ENDPOINT_URL AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_REGION PYTHON
}

aws_tests() {
	if ! AWS_PY=$(aws_find_python); then
		aws_skip_all "no python3 here has moto 5 and boto3: $(sh tests/moto/server.sh available 2>&1)"
		return 0
	fi
	AWS_MOTO_DIR=$E2E_TMP/moto
	aws_moto_up "aws" "$AWS_MOTO_DIR" || return 0
	# Stop the servers whatever happens; nothing but loopback is ever called.
	trap 'sh "$E2E_ROOT/tests/moto/server.sh" stop "$AWS_MOTO_DIR" >/dev/null 2>&1; sh "$E2E_ROOT/tests/moto/server.sh" stop "$E2E_TMP/moto-iam" >/dev/null 2>&1; rm -rf "$E2E_TMP"' EXIT
	aws_goldens
	aws_lifecycle
	aws_errors
	aws_calls
	aws_capacity
	aws_faults
	aws_retries
	aws_crashes
	aws_ownership
	aws_damaged
	# The extension's own checks: each AWS behaviour it emulates, against boto3.
	assert "aws: the moto extension's own tests pass (tests/moto/test_harness.py)" \
		"$AWS_PY" "$E2E_ROOT/tests/moto/test_harness.py"
	sh "$E2E_ROOT/tests/moto/server.sh" stop "$AWS_MOTO_DIR" >/dev/null 2>&1
	aws_least_privilege
	# Every server this run started is gone (CI must leave nothing running).
	sleep 0.5
	assert "aws: the moto servers are stopped" sh -c '! pgrep -f "kiln_moto.py --port-file $1" >/dev/null' sh "$E2E_TMP"
	trap 'rm -rf "$E2E_TMP"' EXIT
	unset AWS_ENDPOINT_URL AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_REGION PYTHON
}
