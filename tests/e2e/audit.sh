# audit.sh - end-to-end tests of `kiln audit` on the sim provider: exit codes
# (0 clean, 3 an unwaived error, 1 anything else), the exact text of the
# findings, --format json and sarif (SARIF validated by tests/check-sarif.py),
# saved plans, and waivers judged against the clock (KILN_NOW). Sourced by
# run.sh after lib.sh; $KILN is the binary under test.
# KILN_UPDATE_GOLDEN=1 rewrites the goldens under tests/golden/audit/.

au_new_dir() { # SPEC: a fresh working directory holding SPEC as kiln.yaml
	au_dir=$(mktemp -d "$E2E_TMP/audit.XXXXXX")
	cd "$au_dir" || exit 1
	cp "$E2E_ROOT/$1" kiln.yaml
}

au_golden() { # NAME FILE: FILE equals tests/golden/audit/NAME
	au_g=$E2E_ROOT/tests/golden/audit/$1
	if [ -n "${KILN_UPDATE_GOLDEN:-}" ]; then
		mkdir -p "$(dirname "$au_g")"
		cp "$2" "$au_g"
	fi
	compare "audit: $1 matches its golden" "$au_g" "$2"
}

au_insecure() {
	au_new_dir tests/e2e/specs/audit-insecure.yaml
	check "audit: an insecure spec exits 3 and lists every finding" 3 --err "" \
		--out-has "7 unwaived error-level findings: kiln apply refuses this plan" \
		-- "$KILN" audit
	cp "$E2E_OUT" findings.txt
	au_golden insecure.txt findings.txt
	check "audit: --format json exits 3 too" 3 --err "" -- "$KILN" audit --format json
	cp "$E2E_OUT" findings.json
	au_golden insecure.json findings.json
	assert "audit: the JSON has findings and a summary that counts them" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert sorted(d) == ["findings", "findings_summary"], sorted(d)
keys = {"rule", "severity", "address", "spec", "file", "line", "column", "message", "fix",
        "checkov", "trivy"}
for f in d["findings"]:
    assert keys <= set(f) <= keys | {"waived"}, sorted(f)
    assert f["file"] == "kiln.yaml" and f["line"] >= 1 and f["column"] >= 1, f
n = {"error": 0, "warning": 0, "info": 0, "waived": 0}
for f in d["findings"]:
    n["waived" if "waived" in f else f["severity"]] += 1
assert d["findings_summary"] == n, (d["findings_summary"], n)
assert n == {"error": 7, "warning": 7, "info": 1, "waived": 1}, n
' findings.json
	check "audit: --format sarif exits 3 too" 3 --err "" -- "$KILN" audit --format sarif
	cp "$E2E_OUT" findings.sarif
	assert "audit: the SARIF log has every field SARIF 2.1.0 requires" \
		python3 "$E2E_ROOT/tests/check-sarif.py" findings.sarif
	assert "audit: the SARIF log has a result per finding, the waived one suppressed" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["runs"][0]
d = json.load(open(sys.argv[2]))["findings"]
assert [r["ruleId"] for r in s["results"]] == [f["rule"] for f in d]
sup = [r for r in s["results"] if "suppressions" in r]
assert len(sup) == 1 and sup[0]["ruleId"] == "KILN-NET-001", sup
assert sup[0]["suppressions"] == [{"kind": "external", "justification":
    "public inference API, reviewed by security (waived until 2027-01-31)"}], sup
r = s["results"][0]["locations"][0]
assert r["physicalLocation"]["artifactLocation"] == {"uri": "kiln.yaml", "uriBaseId": "%SRCROOT%"}, r
assert r["physicalLocation"]["region"]["startLine"] >= 1, r
' findings.sarif findings.json
	sed -e 's/^          "version": "[^"]*"/          "version": "(kiln)"/' \
		-e 's|^          "uri": "file://.*"|          "uri": "file:///(working directory)/"|' \
		findings.sarif >findings.sarif.golden
	au_golden insecure.sarif findings.sarif.golden
	assert "audit: every rule of the SARIF driver is in the catalogue, kiln-rules(7)" python3 -c '
import json, sys
rules = [r["id"] for r in json.load(open(sys.argv[1]))["runs"][0]["tool"]["driver"]["rules"]]
page = open(sys.argv[2]).read()
missing = [r for r in rules if ".SS " + r.replace("-", "\\-") + " (" not in page]
assert len(rules) >= 20 and not missing, missing
' findings.sarif "$E2E_ROOT/man/kiln-rules.7"
	assert "audit: auditing plans nothing into being (no state, no sim)" \
		sh -c '[ ! -e .kiln/state.git ] && [ ! -e .kiln/sim ]'
	cd "$E2E_ROOT" || exit 1
}

au_clean_and_waived() {
	au_new_dir examples/quickstart.yaml
	check "audit: the quickstart has one warning and exits 0" 0 --err "" \
		--out "Findings: 0 errors, 1 warning, 0 info, 0 waived

  warning  KILN-GPU-002    compute.trainers: 2 GPU nodes without EFA: collectives run over TCP and multi-node scaling suffers
           at kiln.yaml:18:3 (sim_node_group.trainers)
           fix: Set \`network.fabric: efa\`; with \`gpu:\`, kiln then picks the cheapest type with EFA.
" -- "$KILN" audit

	cat >kiln.yaml <<'SPEC'
kiln: 1
cluster: audit-clean
provider: {name: sim}
storage:
  data: {tier: object, versioning: true}
SPEC
	check "audit: a spec with no finding says so and exits 0" 0 --err "" \
		--out "No findings: kiln.yaml passes every rule in kiln-rules(7)." -- "$KILN" audit
	check "audit: the SARIF of a clean spec has its rules and no result" 0 --err "" \
		-- "$KILN" audit --format sarif
	cp "$E2E_OUT" clean.sarif
	assert "audit: the clean SARIF validates" python3 "$E2E_ROOT/tests/check-sarif.py" clean.sarif

	cat >kiln.yaml <<'SPEC'
kiln: 1
cluster: audit-waived
provider: {name: sim}
network:
  ingress:
    - {port: 22, from: 0.0.0.0/0}
compute:
  login: {instance_type: m7i.xlarge, public: true}
waive:
  - {rule: KILN-NET-002, reason: "bastion for the on-call", until: 2027-01-31}
SPEC
	check "audit: a waived error no longer fails the audit" 0 --err "" \
		--out "Findings: 0 errors, 0 warnings, 0 info, 1 waived

  waived   KILN-NET-002    network.ingress[0] admits SSH (port 22) from 0.0.0.0/0, the whole internet
           at kiln.yaml:6:24 (sim_network.main)
           waived (error) until 2027-01-31: bastion for the on-call
           same as Checkov CKV_AWS_24, Trivy AVD-AWS-0107
" -- env KILN_NOW=2027-01-31T23:00:00Z "$KILN" audit
	check "audit: once the waiver expires the error counts again and the audit exits 3" 3 \
		--err "" \
		--out-has "  error    KILN-NET-002    network.ingress[0] admits SSH (port 22)" \
		--out-has "  error    KILN-WAIVE-002  waive[0] (KILN-NET-002) expired on 2027-01-31, so it waives nothing" \
		--out-has "2 unwaived error-level findings: kiln apply refuses this plan until they are fixed or waived." \
		-- env KILN_NOW=2027-02-01T00:00:00Z "$KILN" audit
	check "audit: a malformed KILN_NOW is an error" 1 --out "" \
		--err "kiln: audit: KILN_NOW 'soon' is not an RFC 3339 time
  hint: write it like 2027-01-31T12:00:00Z, or unset it" \
		-- env KILN_NOW=soon "$KILN" audit
	cd "$E2E_ROOT" || exit 1
}

au_plan_files() {
	au_new_dir tests/e2e/specs/audit-insecure.yaml
	"$KILN" plan --out plan.kiln >/dev/null 2>&1
	check "audit: a saved plan is audited against the spec it was made from" 3 --err "" \
		--out-file "$E2E_ROOT/tests/golden/audit/insecure.txt" -- "$KILN" audit plan.kiln
	check "audit: -w must match the plan's workspace" 1 --out "" \
		--err "kiln: audit: plan.kiln was made for workspace 'default', not 'other'; drop -w, or make a plan for that workspace" -- "$KILN" audit -w other plan.kiln
	check "audit: KILN_WORKSPACE must match the plan's workspace, as -w" 1 --out "" \
		--err "kiln: audit: plan.kiln was made for workspace 'default', not 'other' (KILN_WORKSPACE); unset KILN_WORKSPACE, or make a plan for that workspace" \
		-- env KILN_WORKSPACE=other "$KILN" audit plan.kiln
	check "audit: --refresh is refused with a plan file" 1 --out "" \
		--err "kiln: audit: --refresh cannot be used with a plan file; it was fixed when the plan was made" \
		-- "$KILN" audit --refresh=false plan.kiln
	cat >members.json <<'JSON'
{"findings": [{"rule": "KILN-COST-001", "severity": "error", "address": null,
  "spec": "budget.max_hourly_usd", "file": "kiln.yaml", "line": 4, "column": 27,
  "message": "the plan costs $999.00/h, above budget.max_hourly_usd $250.00/h",
  "fix": "Lower the node count or choose cheaper types, or raise budget.max_hourly_usd.",
  "checkov": null, "trivy": null}],
 "findings_summary": {"error": 1, "warning": 0, "info": 0, "waived": 0}}
JSON
	cp plan.kiln carried.kiln
	python3 "$E2E_ROOT/tests/e2e/audit_reseal.py" carried.kiln members.json
	check "audit: a plan that carries findings is reported as it is, not audited again" 3 \
		--err "" --out "Findings: 1 error, 0 warnings, 0 info, 0 waived

  error    KILN-COST-001   the plan costs \$999.00/h, above budget.max_hourly_usd \$250.00/h
           at kiln.yaml:4:27
           fix: Lower the node count or choose cheaper types, or raise budget.max_hourly_usd.

1 unwaived error-level finding: kiln apply refuses this plan until it is fixed or waived." \
		-- "$KILN" audit carried.kiln
	sed -i 's/count: 4/count: 5/' kiln.yaml
	check "audit: ... even once its spec has changed (the findings are part of the plan)" 3 \
		--err "" --out-has "KILN-COST-001" -- "$KILN" audit carried.kiln
	# A plan saved by a kiln from before plans carried findings.
	cp plan.kiln old.kiln
	echo '{"findings": null, "findings_summary": null}' >strip.json
	python3 "$E2E_ROOT/tests/e2e/audit_reseal.py" old.kiln strip.json
	check "audit: a plan without findings whose spec has changed since is refused" 1 --out "" \
		--err "kiln: audit: kiln.yaml has changed since old.kiln was made from it, and the plan carries no findings of its own; audit the spec itself, or make a new plan with kiln plan --out FILE" \
		-- "$KILN" audit old.kiln
	cd "$E2E_ROOT" || exit 1
}

au_examples() {
	au_dir=$(mktemp -d "$E2E_TMP/audit.XXXXXX")
	cd "$au_dir" || exit 1
	set -- env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_SESSION_TOKEN -u AWS_PROFILE \
		AWS_CONFIG_FILE=/nonexistent AWS_SHARED_CREDENTIALS_FILE=/nonexistent "$KILN" audit \
		--refresh=false
	check "audit: examples/llm-pretrain.yaml has only the note that its local store is lost with its nodes (--refresh=false: no credentials)" 0 \
		--err "" \
		--out "Findings: 0 errors, 0 warnings, 1 info, 0 waived

  info     KILN-LOCAL-001  storage.nvme is the instance store of compute.trainers: its data is lost when a node stops, fails or is replaced
           at $E2E_ROOT/examples/llm-pretrain.yaml:46:3
           fix: Keep only what can be rebuilt there (caches, shards staged from an object store); write checkpoints to an object or lustre store.
" -- "$@" "$E2E_ROOT/examples/llm-pretrain.yaml"
	check "audit: examples/finetune.yaml warns that its two GPU nodes have no fabric" 0 --err "" \
		--out "Findings: 0 errors, 1 warning, 0 info, 0 waived

  warning  KILN-GPU-002    compute.tuners: 2 GPU nodes without EFA: collectives run over TCP and multi-node scaling suffers
           at $E2E_ROOT/examples/finetune.yaml:24:3 (aws_instance_group.tuners)
           fix: Set \`network.fabric: efa\`; with \`gpu:\`, kiln then picks the cheapest type with EFA.
" -- "$@" "$E2E_ROOT/examples/finetune.yaml"
	cd "$E2E_ROOT" || exit 1
}

au_errors() {
	au_new_dir examples/quickstart.yaml
	check "audit: an unknown --format is refused" 1 --out "" \
		--err "kiln: audit: --format 'yaml' is not text, json or sarif; use --format text, json or sarif" -- "$KILN" audit --format yaml
	cp "$E2E_ROOT/tests/specs/invalid/waive-bad-until.yaml" bad.yaml
	check "audit: an invalid spec is reported and nothing is audited" 1 --out "" \
		--err-has "bad.yaml:8:12: error: waive[0].until must be a date written YYYY-MM-DD, got '2027-13-01'" \
		--err-has "kiln: audit: bad.yaml is not valid; nothing was planned" \
		-- "$KILN" audit bad.yaml
	check "audit: --help names the formats and the exit codes" 0 --err "" \
		--out-has "Usage: kiln audit [SPEC|PLANFILE] [OPTIONS]" \
		--out-has "--format text|json|sarif" \
		--out-has "Exits 0 when no unwaived error-level finding remains, 3 when one does" \
		-- "$KILN" audit --help
	cd "$E2E_ROOT" || exit 1
}

# GitHub code scanning maps a result to a file of the repository only when its
# path is relative to the repository, under a uriBaseId (SARIF2016) (issue 31).
au_sarif_relative() {
	au_dir=$(mktemp -d "$E2E_TMP/audit.XXXXXX")
	mkdir -p "$au_dir/repo/infra" "$au_dir/elsewhere"
	git init -q "$au_dir/repo"
	cp "$E2E_ROOT/tests/e2e/specs/audit-insecure.yaml" "$au_dir/repo/infra/kiln.yaml"
	root=$(cd "$au_dir/repo" && pwd -P)
	cd "$au_dir/elsewhere" || exit 1
	check "audit: SARIF of a spec named by its absolute path exits 3" 3 --err "" \
		-- "$KILN" audit --format sarif "$au_dir/repo/infra/kiln.yaml"
	cp "$E2E_OUT" abs.sarif
	check "audit: SARIF of a spec in a subdirectory of its repository, run there with -C, exits 3" 3 \
		--err "" -- "$KILN" -C "$au_dir/repo/infra" audit --format sarif
	cp "$E2E_OUT" sub.sarif
	for au_f in abs sub; do
		assert "audit: the $au_f SARIF passes the official SARIF 2.1.0 schema, relative paths and all" \
			python3 "$E2E_ROOT/tests/check-sarif.py" $au_f.sarif
		assert "audit: the $au_f SARIF names the spec relative to the repository, under %SRCROOT%" \
			python3 -c '
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == "file://" + sys.argv[2] + "/", run["originalUriBaseIds"]
arts = [l["physicalLocation"]["artifactLocation"] for r in run["results"] for l in r["locations"]]
assert len(arts) >= 7 and all(a == {"uri": "infra/kiln.yaml", "uriBaseId": "%SRCROOT%"} for a in arts), arts
rule = run["tool"]["driver"]["rules"][0]
assert (rule["id"], rule["name"], rule["helpUri"]) == (
    "KILN-S3-001", "AnObjectStoreIsNotEncryptedAtRest", "man:kiln-rules(7)#KILN-S3-001"), rule
' $au_f.sarif "$root"
	done
	cd "$E2E_ROOT" || exit 1
}

audit_tests() {
	(
		unset KILN_SIM_DIR KILN_STATE KILN_WORKSPACE KILN_NOW
		export KILN_NOW=2026-11-30T12:00:00Z
		au_insecure
		au_sarif_relative
		au_clean_and_waived
		au_plan_files
		au_examples
		au_errors
		printf '%s %s\n' "$E2E_PASSED" "$E2E_FAILED" >"$E2E_TMP/.audit-counts"
	)
	read -r E2E_PASSED E2E_FAILED <"$E2E_TMP/.audit-counts"
}
