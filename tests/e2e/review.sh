# review.sh - end-to-end tests of what a reviewer reads in a plan: the cost
# (hand-computed from the catalog, so a wrong unit or a missing component
# fails), the IAM delta (granted and revoked pairs, widening), and how both
# appear in text, JSON and Markdown. Sourced by run.sh after lib.sh; $KILN
# is the binary under test. Uses the sim provider, and the aws examples with
# --refresh=false (no API call).

rv_new_dir() { # SPEC: a fresh working directory holding SPEC as kiln.yaml
	rv_dir=$(mktemp -d "$E2E_TMP/review.XXXXXX")
	cd "$rv_dir" || exit 1
	cp "$E2E_ROOT/$1" kiln.yaml
}

# rv_json NAME FILE PYTHON: PYTHON (with d = the JSON document in FILE) must not raise.
rv_json() {
	assert "$1" python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
$3
" "$2"
}

rv_cost() {
	rv_new_dir examples/llm-pretrain.yaml
	check "review: kiln cost --json of llm-pretrain without calling the cloud" 0 \
		-- env AWS_ACCESS_KEY_ID=unused AWS_SECRET_ACCESS_KEY=unused \
		"$KILN" cost --refresh=false --json
	cp "$E2E_OUT" cost.json
	# 16 x p5.48xlarge on-demand ($98.32), 16 x 1024 GB gp3 ($0.08/GB-month), one
	# m7i.xlarge ($0.2016) with 200 GB gp3 and a public IPv4 ($0.005/h), 4800 GB of
	# Lustre at 250 MB/s/TiB ($0.21/GB-month); a month is 730 hours; TTL 72h.
	rv_json "review: llm-pretrain costs what the catalog says, component by component" cost.json '
hourly = 16 * 98.32 + 16 * 1024 * 0.08 / 730 + 0.2016 + 200 * 0.08 / 730 + 0.005 + 4800 * 0.21 / 730
assert abs(d["hourly_after"] - hourly) < 0.0001, (d["hourly_after"], hourly)
assert d["hourly_before"] == 0 and abs(d["hourly_delta"] - hourly) < 0.0001
assert abs(d["monthly_after"] - hourly * 730) < 0.01
assert d["ttl_hours"] == 72 and abs(d["ttl_projected"] - hourly * 72) < 0.01
assert d["currency"] == "USD"
assert d["catalog"] == {"provider": "aws", "region": "us-east-1", "date": "2026-11-01"}
names = sorted((c["address"], c["name"]) for c in d["components"])
assert names == [
    ("aws_fsx_lustre.scratch", "Lustre storage (SSD, 250 MB/s per TiB)"),
    ("aws_instance_group.login", "Instance usage (m7i.xlarge, on-demand)"),
    ("aws_instance_group.login", "Public IPv4 addresses"),
    ("aws_instance_group.login", "Root volumes (gp3, 1 × 200 GB)"),
    ("aws_instance_group.trainers", "Instance usage (p5.48xlarge, on-demand)"),
    ("aws_instance_group.trainers", "Root volumes (gp3, 16 × 1024 GB)"),
], names
gpu = [c for c in d["components"] if c["name"].startswith("Instance usage (p5")][0]
assert gpu["quantity"] == 16 and gpu["unit_price"] == 98.32 and gpu["unit"] == "instance-hour"
assert sorted(u["address"] for u in d["unpriced"]) == [
    "aws_efs.home", "aws_s3_bucket.checkpoints", "aws_s3_bucket.datasets"]
assert d["free"] == 10, d["free"]
'
	check "review: kiln cost prints the table with totals, TTL and what is not priced" 0 \
		--out-has "aws_instance_group.trainers  Instance usage (p5.48xlarge, on-demand)        16   \$98.32/instance-hour  \$1,573.12  \$1,148,377.60" \
		--out-has "Total                                                                                                  \$1,576.52  \$1,150,863.14" \
		--out-has "Change: +\$1,576.52/h (\$0.00 → \$1,576.52), \$1,150,863.14 a month" \
		--out-has "  TTL 72h: \$113,509.79 if the cluster runs its whole TTL" \
		--out-has "    • aws_s3_bucket.datasets: S3 storage and requests: billed by use (GB stored, requests), which the spec does not say" \
		-- env AWS_ACCESS_KEY_ID=unused AWS_SECRET_ACCESS_KEY=unused \
		"$KILN" cost --refresh=false
	rv_new_dir examples/finetune.yaml
	check "review: a spec outside the catalog's region says its prices may differ" 0 \
		--out-has "Cost (USD; aws catalog of 2026-11-01, us-east-1 prices; us-west-2 may be priced differently)" \
		-- env AWS_ACCESS_KEY_ID=unused AWS_SECRET_ACCESS_KEY=unused \
		"$KILN" cost --refresh=false

	rv_new_dir examples/quickstart.yaml
	check "review: the plan shows the hourly change, the month and the TTL projection" 2 \
		--out-has "Cost (USD; aws catalog of 2026-11-01, us-east-1 prices)" \
		--out-has "  +\$196.68/h (\$0.00 → \$196.68), \$143,579.20 a month" \
		--out-has "  TTL 8h: \$1,573.47 if the cluster runs its whole TTL" \
		--out-has "  sim_node_group.trainers  \$0.00 → \$196.68/h  (+\$196.68)" \
		-- "$KILN" plan --detailed-exitcode
	check "review: the Markdown plan has the cost with the TTL" 2 \
		--out-has "**+\$196.68/h (\$0.00 → \$196.68)**, \$143,579.20 a month; over the TTL of 8h: **\$1,573.47**" \
		--out-has "| \`sim_node_group.trainers\` | create | \$0.00 | \$196.68 |" \
		-- "$KILN" plan --markdown --detailed-exitcode
	check "review: apply the quickstart" 0 -- "$KILN" apply --auto-approve
	check "review: after apply the cost before equals the cost after" 0 \
		--out-has "  \$0.00/h (\$196.68 → \$196.68), \$143,579.20 a month" \
		-- "$KILN" plan
	sed -i 's/count: 2/count: 4/' kiln.yaml
	check "review: doubling the nodes doubles the instance cost" 0 \
		--out-has "  +\$196.68/h (\$196.68 → \$393.37), \$287,158.40 a month" \
		--out-has "  sim_node_group.trainers  \$196.68 → \$393.37/h  (+\$196.68)" \
		-- "$KILN" plan
	check "review: kiln cost of a saved plan reads the plan file" 0 \
		-- "$KILN" plan --out plan.kiln
	check "review: kiln cost PLANFILE prints that plan's cost" 0 \
		--out-has "Change: +\$196.68/h (\$196.68 → \$393.37), \$287,158.40 a month" \
		-- "$KILN" cost plan.kiln
	check "review: a destroy plan costs nothing after it and has no TTL projection" 0 \
		--out-has "  -\$196.68/h (\$196.68 → \$0.00), \$0.00 a month" \
		-- "$KILN" plan --destroy
	check "review: kiln cost of a missing spec names the file" 1 \
		--err-has "nope.yaml" -- "$KILN" cost nope.yaml
	cp plan.kiln old.kiln
	echo '{"cost": null}' >strip.json
	python3 "$E2E_ROOT/tests/e2e/audit_reseal.py" old.kiln strip.json
	check "review: kiln cost of a plan saved without a cost says to make it again" 1 \
		--err "kiln: cost: old.kiln holds no cost: it was saved by a kiln older than \`kiln cost\`; make the plan again with \`kiln plan --out\`" \
		-- "$KILN" cost old.kiln
	cd "$E2E_ROOT" || exit 1
}

rv_iam() {
	rv_new_dir examples/quickstart.yaml
	check "review: a new role's grants are listed, ARNs not made yet as the pattern they will match" 2 \
		--out-has "  sim_role_policy.trainer (role trainer): 8 granted, 0 revoked" \
		--out-has "    + sim:PutObject     arn:sim:s3:::quickstart-checkpoints-*/*  (new role)" \
		-- "$KILN" plan --detailed-exitcode
	check "review: the JSON plan holds the delta" 2 -- "$KILN" plan --json --detailed-exitcode
	cp "$E2E_OUT" plan.json
	en_schema "review: the plan with cost and IAM delta matches the schema" plan.json
	rv_json "review: iam_delta names the role, its grants and what it holds after" plan.json '
(r,) = d["kiln"]["iam_delta"]
assert r["address"] == "sim_role_policy.trainer" and r["role"] == "trainer", r
assert len(r["granted"]) == 8 and r["revoked"] == [] and len(r["after"]) == 8
assert {g["widening"] for g in r["granted"]} == {"new role"}
assert {g["action"] for g in r["granted"]} == {
    "sim:DeleteObject", "sim:GetObject", "sim:ListBucket", "sim:PutObject"}
'
	check "review: the Markdown plan has the IAM table" 2 \
		--out-has "**<code>sim_role_policy.trainer</code>**: 8 granted, 0 revoked" \
		--out-has "| + | <code>sim:PutObject</code> | <code>arn:sim:s3:::quickstart-checkpoints-*/*</code> | new role |" \
		-- "$KILN" plan --markdown --detailed-exitcode
	check "review: apply the quickstart with its role" 0 -- "$KILN" apply --auto-approve
	"$KILN" plan >out.txt 2>&1
	assert "review: after apply the plan has no IAM section" sh -c '! grep -q "IAM permissions" out.txt'
	"$KILN" plan --json >after.json 2>/dev/null
	rv_json "review: after apply the delta of the role is empty but after is complete" after.json '
(r,) = d["kiln"]["iam_delta"]
assert r["granted"] == [] and r["revoked"] == [] and len(r["after"]) == 8
assert all(p["resource"].startswith("arn:sim:s3:::quickstart-checkpoints-") for p in r["after"])
'
	python3 - <<'PY'
s = open("kiln.yaml").read()
s = s.replace("checkpoints: {tier: object, versioning: true, expire_noncurrent_after: 30d}",
              "checkpoints: {tier: object, versioning: true, expire_noncurrent_after: 30d}\n"
              "  datasets: {tier: object}")
s = s.replace("trainer: {write: [checkpoints]}", "trainer: {read: [checkpoints, datasets]}")
open("kiln.yaml", "w").write(s)
PY
	check "review: narrowing write to read revokes, a new store is a new resource" 0 \
		--out-has "  sim_role_policy.trainer (role trainer): 4 granted, 4 revoked; widens the role" \
		--out-has "    + sim:GetObject     arn:sim:s3:::quickstart-datasets-*    (new resource)" \
		--out-has "    - sim:PutObject     arn:sim:s3:::quickstart-checkpoints-" \
		-- "$KILN" plan
	cp "$E2E_ROOT/examples/quickstart.yaml" kiln.yaml
	sed -i 's/trainer: {write: \[checkpoints\]}/trainer:\n      write: [checkpoints]\n      allow:\n        - {actions: ["sim:GetObject"], resources: ["arn:sim:s3:::*"]}\n        - {actions: ["sim:DescribeNodeGroups"], resources: ["*"]}/' kiln.yaml
	check "review: an allow statement over a held bucket is a broader resource, a new action is flagged" 0 \
		--out-has "  sim_role_policy.trainer (role trainer): 2 granted, 0 revoked; widens the role" \
		--out-has "    + sim:DescribeNodeGroups  *               (new action)" \
		--out-has "    + sim:GetObject           arn:sim:s3:::*  (broader resource)" \
		-- "$KILN" plan
	check "review: destroying revokes every permission the role holds" 0 \
		--out-has "  sim_role_policy.trainer (role trainer): 0 granted, 8 revoked" \
		-- "$KILN" plan --destroy

	rv_new_dir examples/llm-pretrain.yaml
	check "review: the aws roles' grants name exact bucket ARNs, and an EFS file system not made yet as known after apply" 0 \
		--out-has "  aws_iam_role.trainer (role trainer): 10 granted, 0 revoked" \
		--out-has "    + cloudwatch:PutMetricData       *                                                     (new role)" \
		--out-has "    + ec2:CreateTags                 arn:aws:ec2:*:*:instance/*                            (new role)" \
		--out-has "    + fsx:DescribeFileSystems        *                                                     (new role)" \
		--out-has "    + s3:PutObject                   arn:aws:s3:::kiln-llm-pretrain-default-checkpoints/*  (new role)" \
		--out-has "    + s3:GetObject                   arn:aws:s3:::kiln-llm-pretrain-default-checkpoints/*  (new role)" \
		--out-has "    + elasticfilesystem:ClientWrite  (known after apply: aws_efs.home)                     (new role)" \
		-- env AWS_ACCESS_KEY_ID=unused AWS_SECRET_ACCESS_KEY=unused \
		"$KILN" plan --refresh=false
	cd "$E2E_ROOT" || exit 1
}

rv_gate() {
	rv_new_dir examples/quickstart.yaml
	sed -i 's/max_hourly_usd: 400/max_hourly_usd: 150/' kiln.yaml
	check "review: a plan over budget is an error-level finding in the plan" 2 \
		--out-has "  error    KILN-COST-001   the plan costs \$196.68/h, above budget.max_hourly_usd \$150.00/h" \
		-- "$KILN" plan --detailed-exitcode
	check "review: apply refuses a plan over budget, naming the finding, and exits 3" 3 --out "" \
		--err "kiln: apply: the plan has 1 error-level finding; nothing was changed
  KILN-COST-001 budget.max_hourly_usd: the plan costs \$196.68/h, above budget.max_hourly_usd \$150.00/h
  hint: fix the spec and plan again, or waive a finding with a reason and an end date (waive: in kiln-spec(5)); kiln audit shows each fix" \
		-- sh -c '"$0" apply --auto-approve >/dev/null' "$KILN"
	assert "review: the refused apply created nothing" sh -c '[ ! -e .kiln/sim ]'
	check "review: a saved plan over budget is refused too" 3 \
		--err-has "kiln: apply: plan.kiln has 1 error-level finding; nothing was changed" \
		-- sh -c '"$0" plan --out plan.kiln >/dev/null && "$0" apply plan.kiln' "$KILN"
	echo '{"findings": null, "findings_summary": null}' >strip.json
	python3 "$E2E_ROOT/tests/e2e/audit_reseal.py" plan.kiln strip.json
	check "review: a saved plan without findings (an older kiln's) is audited when applied" 3 \
		--err-has "KILN-COST-001 budget.max_hourly_usd: the plan costs \$196.68/h" \
		-- "$KILN" apply plan.kiln
	assert "review: the refused plans created nothing" sh -c '[ ! -e .kiln/sim ]'
	cat >>kiln.yaml <<'YAML'
waive:
  - {rule: KILN-COST-001, reason: "capacity test for the launch, signed off by finance", until: 2099-12-31}
YAML
	check "review: a waived budget finding lets the apply run" 0 \
		--out-has "Apply complete: 5 created, 0 updated, 0 replaced, 0 deleted." \
		-- "$KILN" apply --auto-approve
	sed -i '/^waive:/,$d' kiln.yaml
	check "review: destroy is never held back by findings" 0 \
		--out-has "Destroy complete" -- "$KILN" destroy --auto-approve
	cd "$E2E_ROOT" || exit 1
}

# The exit status of apply, up, destroy and plan in each situation kiln(1),
# kiln-apply(1) and the README list (issue 31): one row a situation, in an
# order that walks one workspace through them. A row is
# SITUATION|STATUS|COMMAND, COMMAND run by sh with $0 the kiln under test.
rv_exit_table() {
	rv_new_dir examples/quickstart.yaml
	sed 's/max_hourly_usd: 400/max_hourly_usd: 150/' kiln.yaml >over.yaml
	sed 's/count: 2/count: 3/' kiln.yaml >grow.yaml
	while IFS='|' read -r situation status command; do
		check "review: exit status $status: $situation" "$status" -- sh -c "$command" "$KILN"
	done <<'TABLE'
usage error: apply with an unknown option|1|"$0" apply --no-such-option
usage error: up with an unknown option|1|"$0" up --no-such-option
usage error: destroy with a second operand|1|"$0" destroy kiln.yaml other.yaml
not approved: apply with no terminal to ask on and no --auto-approve|1|"$0" apply
not approved: destroy with no terminal to ask on and no --auto-approve|1|"$0" destroy
plan --detailed-exitcode with changes|2|"$0" plan --detailed-exitcode
plan without --detailed-exitcode, with changes|0|"$0" plan
apply refused for an error-level finding|3|"$0" apply --auto-approve over.yaml
up refused for an error-level finding|3|"$0" up --auto-approve over.yaml
apply of a saved plan refused for an error-level finding|3|"$0" plan --out over.kiln over.yaml >/dev/null && "$0" apply over.kiln
an operation failed (room for 1 node of the 2 in each zone)|1|KILN_SIM_CAPACITY=H100=1 "$0" apply --auto-approve
apply with changes, all done|0|"$0" apply --auto-approve
plan --detailed-exitcode with no changes|0|"$0" plan --detailed-exitcode
apply with no changes|0|"$0" apply --auto-approve
up with no changes|0|"$0" up --auto-approve
a plan saved for review|0|"$0" plan --out grow.kiln grow.yaml
up done and recorded, but a node did not report within --health-timeout|4|KILN_SIM_HEALTH_MS=600000 "$0" up --auto-approve --health-timeout 1s grow.yaml
apply of a plan file the state moved past|1|"$0" apply grow.kiln
destroy is not refused for an error-level finding|0|"$0" destroy --auto-approve over.yaml
destroy with nothing to destroy|0|"$0" destroy --auto-approve
TABLE
	assert "review: README, kiln(1) and kiln-up(1) say apply and up exit 3 on a refusal for a finding" \
		python3 -c '
import sys
text = lambda f: " ".join(open(sys.argv[1] + "/" + f).read().split())
assert "3 from `kiln audit` when an unwaived error-level finding remains, and from `apply` and `up` when they refuse a plan for one" in text("README.md")
assert ".B kiln apply and .B kiln up when they refuse a plan, or a saved plan file, for one" in text("man/kiln.1")
assert ".B 3 The plan, or the saved plan file, has an unwaived error\\-level finding" in text("man/kiln-up.1")
' "$E2E_ROOT"
	if command -v script >/dev/null 2>&1; then
		printf 'no\n' >answer
		check "review: exit status 1: not approved: an answer other than yes at the terminal" 1 \
			--stdin answer -- script -qec "$KILN apply" /dev/null
	fi
	cd "$E2E_ROOT" || exit 1
}

# A policy written for Terraform's plan JSON (conftest over `terraform show
# -json`) reads kiln's plan: planned_values and prior_state (issue 31).
rv_terraform_shape() {
	rv_new_dir examples/quickstart.yaml
	rv_policy=$E2E_ROOT/tests/tf-plan-policy.py
	rv_count='import json, sys
d = json.load(open(sys.argv[1]))
print(len(d["prior_state"]["values"]["root_module"]["resources"]),
      len(d["planned_values"]["root_module"]["resources"]))'
	"$KILN" plan --json >create.json 2>/dev/null
	assert "review: planned_values and prior_state pass the schema and say what resource_changes say" \
		python3 "$E2E_ROOT/tests/check-plan-schema.py" create.json
	check "review: a create plans every resource and has no prior state" 0 --out "0 5" \
		-- python3 -c "$rv_count" create.json
	check "review: a policy written for Terraform's shape reads the planned node group" 1 \
		--out "deny: sim_node_group.trainers: 2 nodes planned, more than 1
1 denials" -- python3 "$rv_policy" create.json 1
	check "review: ... and passes it within its limit" 0 --out "0 denials" \
		-- python3 "$rv_policy" create.json 8
	"$KILN" apply --auto-approve >/dev/null 2>&1
	sed -i 's/count: 2/count: 1/' kiln.yaml
	"$KILN" plan --json >shrink.json 2>/dev/null
	check "review: the policy reads the prior state: the node group shrinks" 1 \
		--out "deny: sim_node_group.trainers: shrinks from 2 to 1 nodes
1 denials" -- python3 "$rv_policy" shrink.json
	"$KILN" plan --destroy --json >destroy.json 2>/dev/null
	assert "review: a destroy plan passes the schema too" \
		python3 "$E2E_ROOT/tests/check-plan-schema.py" destroy.json
	check "review: a destroy plans nothing, and its prior state has every resource" 0 \
		--out "5 0" -- python3 -c "$rv_count" destroy.json
	check "review: the policy sees the bucket of the prior state deleted" 1 \
		--out-has "deny: sim_bucket.checkpoints: deletes the bucket quickstart-checkpoints-" \
		-- python3 "$rv_policy" destroy.json
	"$KILN" plan --out p.kiln >/dev/null 2>&1
	python3 "$E2E_ROOT/tests/e2e/approve_py.py" edit p.kiln - \
		planned_values.root_module.resources.2.values.count 2
	check "review: a plan file whose planned_values were edited is refused" 1 --out "" \
		--err "kiln: apply: p.kiln does not match the plan its spec and state give now: its planned_values are not what its own resource_changes give; nothing was changed
  hint: kiln carries out a plan file only as kiln made it, and this one was edited or the cloud changed since it was made; make and review a new plan: kiln plan kiln.yaml --out p.kiln" \
		-- "$KILN" apply p.kiln
	cd "$E2E_ROOT" || exit 1
}

review_tests() {
	rv_cost
	rv_iam
	rv_gate
	rv_exit_table
	rv_terraform_shape
}
