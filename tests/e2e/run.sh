#!/bin/sh
# run.sh BINARY - kiln's end-to-end tests: the real binary, its exit codes and
# its exact output. Run from anywhere (it changes to the repository root):
#
#   tests/e2e/run.sh build/test/kiln
#
# Golden files: tests/specs/invalid/NAME.yaml.expected is the exact stderr of
# `kiln validate tests/specs/invalid/NAME.yaml`; tests/specs/valid/NAME.yaml.expected,
# when present, is the stderr (warnings) of a valid spec.
set -u

if [ $# -ne 1 ]; then
	echo "usage: $0 KILN_BINARY" >&2
	exit 2
fi
case $1 in
/*) KILN=$1 ;;
*) KILN=$(pwd)/$1 ;;
esac
if [ ! -x "$KILN" ]; then
	echo "$0: $KILN is not an executable" >&2
	exit 2
fi
cd "$(dirname "$0")/../.." || exit 2
. tests/e2e/lib.sh
. tests/e2e/state.sh
. tests/e2e/engine.sh
. tests/e2e/aws.sh
. tests/e2e/review.sh
. tests/e2e/approve.sh
. tests/e2e/audit.sh
. tests/e2e/ci.sh
. tests/e2e/lifecycle.sh
. tests/e2e/sprawl.sh
. tests/e2e/init.sh
. tests/e2e/ownership.sh
. tests/e2e/docs.sh
. tests/e2e/capacity.sh
. tests/e2e/report.sh
. tests/e2e/report_aws.sh
. tests/e2e/boot.sh
. tests/e2e/health.sh
. tests/e2e/timing.sh
. tests/e2e/slurm.sh
. tests/e2e/access.sh
. tests/e2e/size.sh
. tests/e2e/completion.sh
. tests/e2e/schema.sh
. tests/e2e/runs.sh
. tests/e2e/scale.sh
E2E_ROOT=$(pwd)
T=$E2E_TMP
NL='
'
ESC=$(printf '\033')
HAVE_PY=false
command -v python3 >/dev/null 2>&1 && HAVE_PY=true

# E2E_ONLY=engine|state|aws|review|approve|audit|ci|sprawl|lifecycle|init|ownership|docs|boot|health|timing|capacity|slurm|report|access|size|completion|schema|runs|scale runs one group, for working on it.
case ${E2E_ONLY:-} in
engine) engine_tests; e2e_finish; exit $? ;;
approve) approve_tests; e2e_finish; exit $? ;;
state) state_tests; e2e_finish; exit $? ;;
aws) aws_tests; e2e_finish; exit $? ;;
review) review_tests; e2e_finish; exit $? ;;
audit) audit_tests; e2e_finish; exit $? ;;
ci) ci_tests; e2e_finish; exit $? ;;
lifecycle) lifecycle_tests; e2e_finish; exit $? ;;
sprawl) sprawl_tests; e2e_finish; exit $? ;;
init) init_tests; e2e_finish; exit $? ;;
ownership) ownership_tests; e2e_finish; exit $? ;;
docs) docs_tests; e2e_finish; exit $? ;;
capacity) capacity_tests; e2e_finish; exit $? ;;
boot) boot_tests; e2e_finish; exit $? ;;
health) health_tests; e2e_finish; exit $? ;;
timing) timing_tests; e2e_finish; exit $? ;;
slurm) slurm_tests; e2e_finish; exit $? ;;
report) report_tests; e2e_finish; exit $? ;;
access) access_tests; e2e_finish; exit $? ;;
size) size_tests; e2e_finish; exit $? ;;
completion) completion_tests; e2e_finish; exit $? ;;
schema) schema_tests; e2e_finish; exit $? ;;
runs) runs_tests; e2e_finish; exit $? ;;
scale) scale_tests; e2e_finish; exit $? ;;
esac

# --- every spec under tests/specs, examples/ and templates/ against its golden ---
#
# By default the specs of each kind are validated by one process, and its
# output is split per file (diagnostics always start with the file name): an
# ASan process costs ~0.1 s to start and to leak-check, and there are 150 of
# them. Each spec still gets its own verdict, and a spec that printed `ok` is
# one that validate found valid. E2E_ISOLATED=1 runs one process per spec.

# split_by_file OUT_DIR < STDERR: FILE:... lines and the hints under them go to
# OUT_DIR/<basename of FILE>.
split_by_file() {
	awk -v dir="$1" '
		/^  / { if (cur != "") print > cur; next }
		{
			i = index($0, ".yaml:")
			name = i ? substr($0, 1, i + 4) : "unattributed"
			n = split(name, parts, "/")
			if (cur != "" && cur != dir "/" parts[n]) close(cur)
			cur = dir "/" parts[n]
			print > cur
		}'
}

# specs_check KIND EXIT FILE...: KIND is "invalid" (exit 1, stdout empty) or
# "valid" (exit 0, stdout `ok FILE`); stderr equals FILE.expected, or is empty
# when a valid spec has none.
specs_check() {
	kind=$1
	want_rc=$2
	shift 2
	if [ "${E2E_ISOLATED:-0}" = 1 ]; then
		for f in "$@"; do
			if [ "$kind" = invalid ]; then
				check "$kind: $f" "$want_rc" --out "" --err-file "$f.expected" \
					-- "$KILN" validate "$f"
			elif [ -f "$f.expected" ]; then
				check "$kind: $f" "$want_rc" --out "ok $f" --err-file "$f.expected" \
					-- "$KILN" validate "$f"
			else
				check "$kind: $f" "$want_rc" --out "ok $f" --err "" -- "$KILN" validate "$f"
			fi
		done
		return
	fi
	d=$T/split-$kind
	mkdir -p "$d"
	"$KILN" validate "$@" >"$d.out" 2>"$d.err"
	rc=$?
	split_by_file "$d" <"$d.err"
	if has_sanitizer_report "$d.err" || [ "$rc" != "$want_rc" ] || [ -f "$d/unattributed" ]; then
		printf 'exit status %s (want %s); stderr:\n' "$rc" "$want_rc" >"$d.report"
		head -n 60 "$d.err" >>"$d.report"
		fail "$kind: one run over every spec (exit $want_rc, no sanitizer report)" "$d.report"
	else
		pass "$kind: one run over every spec (exit $want_rc, no sanitizer report)"
	fi
	for f in "$@"; do
		got=$d/${f##*/}
		[ -f "$got" ] || : >"$got"
		want=$f.expected
		[ -f "$want" ] || want=/dev/null
		if [ "$kind" = invalid ] && [ ! -f "$f.expected" ]; then
			printf 'missing golden file %s\n' "$f.expected" >"$d.report"
			fail "$kind: $f" "$d.report"
			continue
		fi
		: >"$d.report"
		e2e_compare stderr "$want" "$got" "$d.report"
		if [ "$kind" = invalid ] && grep -qxF "ok $f" "$d.out"; then
			printf 'validate printed `ok %s`: the spec is valid\n' "$f" >>"$d.report"
		elif [ "$kind" = valid ] && ! grep -qxF "ok $f" "$d.out"; then
			printf 'validate did not print `ok %s`\n' "$f" >>"$d.report"
		fi
		if [ -s "$d.report" ]; then
			fail "$kind: $f" "$d.report"
		else
			pass "$kind: $f"
		fi
	done
	if [ "$kind" = valid ]; then
		printf 'ok %s\n' "$@" >"$d.want-out"
		compare "$kind: stdout is one ok line per spec, in order" "$d.want-out" "$d.out" stdout
	fi
}

specs_check invalid 1 tests/specs/invalid/*.yaml
specs_check valid 0 tests/specs/valid/*.yaml examples/*.yaml templates/*.yaml
orphans=
for g in tests/specs/invalid/*.expected tests/specs/valid/*.expected; do
	[ -f "$g" ] || continue
	[ -f "${g%.expected}" ] || orphans="$orphans $g"
done
assert "every golden file has its spec" test -z "$orphans"

# --- size limit: 1 MiB is read, one byte more is refused ---
spec_head='kiln: 1
cluster: big
provider:
  name: sim
'
{ printf '%s' "$spec_head"; yes '# padding padding padding padding padding padding padding padding'; } |
	head -c 1048576 >"$T/exact.yaml"
{ printf '%s' "$spec_head"; yes '# padding padding padding padding padding padding padding padding'; } |
	head -c 1048577 >"$T/big.yaml"
check "size: a spec of exactly 1 MiB is read" 0 --out "ok $T/exact.yaml" --err "" \
	-- "$KILN" validate "$T/exact.yaml"
check "size: a spec over 1 MiB is refused" 1 --out "" \
	--err "$T/big.yaml: error: the spec is larger than 1 MiB, the most kiln reads" \
	-- "$KILN" validate "$T/big.yaml"
check "size: over 1 MiB on stdin is refused" 1 --out "" --stdin "$T/big.yaml" \
	--err "<stdin>: error: the spec is larger than 1 MiB, the most kiln reads" \
	-- "$KILN" validate -

# --- standard input ---
sed 's|^tests/specs/invalid/count-negative.yaml:|<stdin>:|' \
	tests/specs/invalid/count-negative.yaml.expected >"$T/stdin.expected"
check "stdin: errors name <stdin>" 1 --out "" --err-file "$T/stdin.expected" \
	--stdin tests/specs/invalid/count-negative.yaml -- "$KILN" validate -
check "stdin: a valid spec prints ok <stdin>" 0 --out "ok <stdin>" --err "" \
	--stdin examples/quickstart.yaml -- "$KILN" validate -

# --- missing and unreadable files ---
check "file: missing" 1 --out "" \
	--err "$T/nope.yaml: error: cannot read $T/nope.yaml: No such file or directory" \
	-- "$KILN" validate "$T/nope.yaml"
check "file: a directory" 1 --out "" \
	--err "tests/specs: error: cannot read tests/specs: Is a directory" \
	-- "$KILN" validate tests/specs

# --- waivers judged against the clock (KILN_NOW), as the plan's audit judges them ---
cat >"$T/waive-clock.yaml" <<'EOF_SPEC'
kiln: 1
cluster: waivers
provider: {name: sim}
network:
  ingress:
    - {port: 22, from: 0.0.0.0/0}
compute:
  login: {instance_type: m7i.xlarge, public: true}
waive:
  - {rule: KILN-NET-002, reason: "bastion for the on-call", until: 2027-01-31}
EOF_SPEC
check "waive: validate accepts a waiver on its last day" 0 --err "" \
	--out "ok $T/waive-clock.yaml" \
	-- env KILN_NOW=2027-01-31T23:59:59Z "$KILN" validate "$T/waive-clock.yaml"
check "waive: validate refuses a waiver the day after it expired" 1 --out "" \
	--err "$T/waive-clock.yaml:10:68: error: waive[0] (KILN-NET-002) expired on 2027-01-31, so it waives nothing; kiln plan reports it as KILN-WAIVE-002, an error
  hint: Fix what the waiver covered, or review it and move \`until:\` forward." \
	-- env KILN_NOW=2027-02-01T00:00:00Z "$KILN" validate "$T/waive-clock.yaml"
check "waive: validate with a malformed KILN_NOW says so" 1 --out "" \
	--err "$T/waive-clock.yaml: error: KILN_NOW 'soon' is not an RFC 3339 time
  hint: write it like 2027-01-31T12:00:00Z, or unset it" \
	-- env KILN_NOW=soon "$KILN" validate "$T/waive-clock.yaml"

# --- several specs in one run ---
check "several: all valid" 0 --err "" \
	--out "ok examples/quickstart.yaml${NL}ok tests/specs/valid/sim-defaults.yaml${NL}ok tests/specs/valid/every-tier.yaml" \
	-- "$KILN" validate examples/quickstart.yaml tests/specs/valid/sim-defaults.yaml \
	tests/specs/valid/every-tier.yaml
check "several: one invalid makes the run fail" 1 \
	--out "ok examples/quickstart.yaml${NL}ok tests/specs/valid/sim-defaults.yaml" \
	--err-file tests/specs/invalid/ttl-zero.yaml.expected \
	-- "$KILN" validate examples/quickstart.yaml tests/specs/invalid/ttl-zero.yaml \
	tests/specs/valid/sim-defaults.yaml
cat tests/specs/invalid/market-bad.yaml.expected tests/specs/invalid/several-errors.yaml.expected \
	>"$T/two.expected"
check "several: every invalid spec is reported, in argument order" 1 --out "" \
	--err-file "$T/two.expected" \
	-- "$KILN" validate tests/specs/invalid/market-bad.yaml tests/specs/invalid/several-errors.yaml
check "several: -q prints only problems" 1 --out "" \
	--err-file tests/specs/invalid/ttl-zero.yaml.expected \
	-- "$KILN" validate -q examples/quickstart.yaml tests/specs/invalid/ttl-zero.yaml
check "quiet: --quiet on a valid spec prints nothing" 0 --out "" --err "" \
	-- "$KILN" validate --quiet examples/quickstart.yaml

# --- --json ---
cat >"$T/json_check.py" <<'EOF'
# json_check.py JSON_FILE [TEXT_GOLDEN...]: the file is a JSON array of
# diagnostics with exactly the documented keys; rendered as text, they equal
# the concatenated goldens. With no golden, the array must be empty.
import json, sys
items = json.load(open(sys.argv[1]))
assert isinstance(items, list), "not a JSON array"
text = []
for d in items:
    keys = sorted(d)
    assert keys == sorted(["file", "line", "column", "severity", "message", "hint"]), keys
    assert isinstance(d["line"], int) and isinstance(d["column"], int)
    assert d["severity"] in ("error", "warning"), d["severity"]
    assert d["hint"] is None or isinstance(d["hint"], str)
    where = d["file"] + (":%d:%d" % (d["line"], d["column"]) if d["line"] > 0 else "")
    text.append("%s: %s: %s\n" % (where, d["severity"], d["message"]))
    if d["hint"] is not None:
        text.append("  hint: %s\n" % d["hint"])
want = "".join(open(f).read() for f in sys.argv[2:])
got = "".join(text)
if got != want:
    sys.exit("JSON rendered as text:\n%s\nwant:\n%s" % (got, want))
EOF
if $HAVE_PY; then
	check "json: errors as a JSON array" 1 --err "" \
		-- "$KILN" validate --json tests/specs/invalid/several-errors.yaml
	cp "$E2E_OUT" "$T/json.out"
	assert "json: array matches the text diagnostics" \
		python3 "$T/json_check.py" "$T/json.out" tests/specs/invalid/several-errors.yaml.expected
	check "json: a valid spec gives []" 0 --out "[]" --err "" \
		-- "$KILN" validate --json examples/quickstart.yaml
	check "json: warnings of a valid spec" 0 --err "" \
		-- "$KILN" validate --json tests/specs/valid/with-warnings.yaml
	cp "$E2E_OUT" "$T/json.out"
	assert "json: warnings match the text diagnostics" \
		python3 "$T/json_check.py" "$T/json.out" tests/specs/valid/with-warnings.yaml.expected
	check "json: several specs make one array" 1 --err "" \
		-- "$KILN" validate --json tests/specs/invalid/market-bad.yaml examples/quickstart.yaml \
		tests/specs/invalid/duplicate-key-three-times.yaml
	cp "$E2E_OUT" "$T/json.out"
	assert "json: one array, in argument order" \
		python3 "$T/json_check.py" "$T/json.out" tests/specs/invalid/market-bad.yaml.expected \
		tests/specs/invalid/duplicate-key-three-times.yaml.expected
	check "json: a file-level error has line and column 0" 1 --err "" \
		-- "$KILN" validate --json "$T/nope.yaml"
	cp "$E2E_OUT" "$T/json.out"
	printf '%s: error: cannot read %s: No such file or directory\n' "$T/nope.yaml" "$T/nope.yaml" \
		>"$T/nope.expected"
	assert "json: file-level error fields" \
		python3 "$T/json_check.py" "$T/json.out" "$T/nope.expected"
else
	skip "json" "python3 is not installed"
fi

# --- --var ---
check "var: --var fixes an invalid vars: value" 0 \
	--out "ok tests/specs/invalid/image-not-ami.yaml" --err "" \
	-- "$KILN" validate --var image=ami-0123456789abcdef0 tests/specs/invalid/image-not-ami.yaml
check "var: --var breaks a valid spec" 1 --out "" \
	--err "tests/specs/valid/vars-override.yaml:21:12: error: compute.trainers.image 'ubuntu-22.04' is not an AMI id
  hint: write ami- and 8 or 17 hex digits, like ami-0123456789abcdef0" \
	-- "$KILN" validate --var image=ubuntu-22.04 tests/specs/valid/vars-override.yaml
check "var: --var reaches the cluster name" 1 --out "" \
	--err "tests/specs/valid/vars-override.yaml:3:10: error: cluster name 'nightly-PROD' must be 1 to 32 characters of a-z, 0-9 and '-', not starting or ending with '-'" \
	-- "$KILN" validate --var suffix=PROD tests/specs/valid/vars-override.yaml
check "var: --var reaches a number" 1 --out "" \
	--err "tests/specs/valid/vars-override.yaml:20:12: error: compute.trainers.count must be between 0 and 10000, got 20000" \
	-- "$KILN" validate --var nodes=20000 tests/specs/valid/vars-override.yaml
check "var: the last --var wins" 0 --out "ok tests/specs/valid/vars-override.yaml" --err "" \
	-- "$KILN" validate --var image=bad --var image=ami-0fedcba9876543210 \
	tests/specs/valid/vars-override.yaml
check "var: --var sets a variable vars: does not declare" 0 \
	--out "ok tests/specs/invalid/var-unset-no-vars.yaml" --err "" \
	-- "$KILN" validate --var trainer_ami=ami-0123456789abcdef0 tests/specs/invalid/var-unset-no-vars.yaml
check "var: --var gives a value to a variable declared without one" 0 \
	--out "ok tests/specs/invalid/var-null.yaml" --err "" \
	-- "$KILN" validate --var image=ami-0123456789abcdef0 tests/specs/invalid/var-null.yaml
check "var: an unused, undeclared --var is a warning" 0 --out "ok examples/quickstart.yaml" \
	--err "examples/quickstart.yaml: warning: --var colour is not declared under vars: and not used by this spec" \
	-- "$KILN" validate --var colour=blue examples/quickstart.yaml
check "var: --var without =" 1 --out "" \
	--err "kiln: validate: --var 'foo' is not NAME=VALUE; write --var NAME=VALUE, like --var image=ami-0123456789abcdef0" \
	-- "$KILN" validate --var foo examples/quickstart.yaml
check "var: --var with an empty name" 1 --out "" \
	--err "kiln: validate: --var '=2' is not NAME=VALUE; write --var NAME=VALUE, like --var image=ami-0123456789abcdef0" \
	-- "$KILN" validate --var =2 examples/quickstart.yaml
check "var: --var with a bad name" 1 --out "" \
	--err "kiln: validate: --var '1x' is not a variable name; names are letters, digits and '_', not starting with a digit" \
	-- "$KILN" validate --var 1x=2 examples/quickstart.yaml
check "var: --var without a value" 1 --out "" \
	--err "kiln: validate: option '--var' needs a value (NAME=VALUE)" \
	-- "$KILN" validate --var

# --- the default spec, ./kiln.yaml, and --chdir ---
mkdir "$T/empty" "$T/proj" "$T/bad"
cp examples/quickstart.yaml "$T/proj/kiln.yaml"
cp tests/specs/invalid/ttl-zero.yaml "$T/bad/kiln.yaml"
sed 's|^tests/specs/invalid/ttl-zero.yaml:|kiln.yaml:|' tests/specs/invalid/ttl-zero.yaml.expected \
	>"$T/bad.expected"
nospec='kiln: validate: no spec given and ./kiln.yaml does not exist; run kiln init to start one here (kiln init --list shows the templates), or pass a spec path'
check "default: no spec and no ./kiln.yaml (-C)" 1 --out "" --err "$nospec" \
	-- "$KILN" -C "$T/empty" validate
check "default: no spec and no ./kiln.yaml (--chdir)" 1 --out "" --err "$nospec" \
	-- "$KILN" --chdir "$T/empty" validate
mkdir -p "$T/specflag" && cp examples/quickstart.yaml "$T/specflag/q.yaml"
"$KILN" -C "$T/specflag" plan q.yaml >"$T/specflag/operand.txt" 2>&1
check "default: plan --spec FILE plans as plan FILE does" 0 \
	--out-file "$T/specflag/operand.txt" -- "$KILN" -C "$T/specflag" plan --spec q.yaml
check "default: a spec given as --spec and as the operand is refused" 1 --out "" \
	--err "kiln: plan: two specs: 'q.yaml' and 'q.yaml'; give the spec once" \
	-- "$KILN" -C "$T/specflag" plan --spec q.yaml q.yaml
for c in plan ssh-config hosts; do
	check "default: $c with no spec and no ./kiln.yaml names kiln init" 1 --out "" \
		--err "kiln: $c: no spec given and ./kiln.yaml does not exist; run kiln init to start one here (kiln init --list shows the templates), or pass a spec path" \
		-- "$KILN" -C "$T/empty" "$c"
done
check "default: ./kiln.yaml is used (-C)" 0 --out "ok kiln.yaml" --err "" \
	-- "$KILN" -C "$T/proj" validate
check "default: ./kiln.yaml is used (--chdir=DIR)" 0 --out "ok kiln.yaml" --err "" \
	-- "$KILN" "--chdir=$T/proj" validate
check "default: -C after the command" 0 --out "ok kiln.yaml" --err "" \
	-- "$KILN" validate -C "$T/proj"
check "default: an invalid ./kiln.yaml" 1 --out "" --err-file "$T/bad.expected" \
	-- "$KILN" -C "$T/bad" validate
check "default: -C to a missing directory" 1 --out "" \
	--err "kiln: cannot change to directory '$T/missing': No such file or directory" \
	-- "$KILN" -C "$T/missing" validate

# --- CLI: help ---
main_usage='Usage: kiln [GLOBAL OPTIONS] COMMAND [ARGS]'
validate_usage='Usage: kiln validate [OPTIONS] [SPEC...]'
check "cli: kiln --help" 0 --out-has "$main_usage" --out-has "validate" --err "" -- "$KILN" --help
check "cli: kiln -h" 0 --out-has "$main_usage" --err "" -- "$KILN" -h
check "cli: kiln help" 0 --out-has "$main_usage" --err "" -- "$KILN" help
cp "$E2E_OUT" "$T/help.main"
check "cli: kiln help validate" 0 --out-has "$validate_usage" --out-has "--var NAME=VALUE" \
	--err "" -- "$KILN" help validate
cp "$E2E_OUT" "$T/help.validate"
check "cli: kiln validate --help is kiln help validate" 0 --out-file "$T/help.validate" --err "" \
	-- "$KILN" validate --help
check "cli: kiln validate -h" 0 --out-file "$T/help.validate" --err "" -- "$KILN" validate -h
check "cli: kiln --help is kiln help" 0 --out-file "$T/help.main" --err "" -- "$KILN" --help
check "cli: kiln help version" 0 --out-has "Usage: kiln version [--json]" --err "" \
	-- "$KILN" help version
check "cli: kiln help help" 0 --out-has "Usage: kiln help [COMMAND]" --err "" -- "$KILN" help help
check "cli: kiln help reap" 0 --out-has "Usage: kiln reap [--dry-run] [--state URL] [OPTIONS]" \
	--err "" -- "$KILN" help reap
check "cli: kiln help cost" 0 --out-has "Usage: kiln cost [SPEC | PLANFILE] [OPTIONS]" --err "" \
	-- "$KILN" help cost
check "cli: kiln help with an unknown command" 1 --out "" \
	--err "kiln: 'nosuch' is not a kiln command; see 'kiln --help'" \
	-- "$KILN" help nosuch
check "cli: kiln help with a misspelled command suggests the closest" 1 \
	--err "kiln: 'stat' is not a kiln command; did you mean 'state'?" -- "$KILN" help stat
check "cli: kiln help with two commands" 1 --out "" \
	--err "kiln: help: takes one command name, got 2" -- "$KILN" help validate version

# --- CLI: commands ---
check "cli: kiln with no arguments prints the usage, as --help does" 0 --err "" \
	--out "$("$KILN" --help)" -- "$KILN"
check "cli: global options and no command" 1 --out "" \
	--err "kiln: no command given; see 'kiln --help'" -- "$KILN" --no-color
check "cli: a misspelled command" 1 --out "" \
	--err "kiln: 'valdate' is not a kiln command; did you mean 'validate'?" -- "$KILN" valdate
check "cli: an unknown command" 1 --out "" \
	--err "kiln: 'frobnicate' is not a kiln command; see 'kiln --help'" -- "$KILN" frobnicate
# Every command the issues planned is available: --help lists no reserved names.
check "cli: kiln --help lists every command and nothing reserved" 0 \
	--out-has "  init " --out-has "  reap " --out-has "  sprawl " -- "$KILN" --help
assert "cli: kiln --help has no reserved section" sh -c '! grep -q "^Reserved" "$1"' sh "$E2E_OUT"
check "cli: kiln help init" 0 --out-has "Usage: kiln init" --err "" -- "$KILN" help init

# --- CLI: options ---
check "cli: unknown option with did-you-mean" 1 --out "" \
	--err "kiln: validate: unknown option '--jsn'; did you mean '--json'?" \
	-- "$KILN" validate --jsn examples/quickstart.yaml
check "cli: unknown short option" 1 --out "" \
	--err "kiln: validate: unknown option '-x'; see 'kiln help validate'" \
	-- "$KILN" validate -x examples/quickstart.yaml
check "cli: --json takes no value" 1 --out "" \
	--err "kiln: validate: option '--json' takes no value" \
	-- "$KILN" validate --json=1 examples/quickstart.yaml
check "cli: unknown global option" 1 --out "" \
	--err "kiln: unknown option '--bogus'; see 'kiln --help'" -- "$KILN" --bogus validate
check "cli: misspelled global option" 1 --out "" \
	--err "kiln: unknown option '--no-colour'; did you mean '--no-color'?" \
	-- "$KILN" --no-colour validate
check "cli: -C needs a value" 1 --out "" --err "kiln: option '-C' needs a value" -- "$KILN" -C
check "cli: global flag after the command" 0 --out "ok examples/quickstart.yaml" --err "" \
	-- "$KILN" validate --no-color examples/quickstart.yaml
check "cli: global flags before the command" 0 --out "ok examples/quickstart.yaml" \
	-- "$KILN" --no-color --log-level error --log-format json validate examples/quickstart.yaml
check "cli: bad --log-level" 1 --out "" \
	--err "kiln: unknown log level 'verbose'; use error, warn, info, debug or trace" \
	-- "$KILN" --log-level verbose validate examples/quickstart.yaml
check "cli: bad --log-level after the command" 1 --out "" \
	--err "kiln: validate: unknown log level 'verbose'; use error, warn, info, debug or trace" \
	-- "$KILN" validate --log-level=verbose examples/quickstart.yaml
check "cli: bad --log-format" 1 --out "" \
	--err "kiln: unknown log format 'xml'; use text or json" \
	-- "$KILN" --log-format xml validate examples/quickstart.yaml
check "cli: bad --log-format after the command" 1 --out "" \
	--err "kiln: validate: unknown log format 'xml'; use text or json" \
	-- "$KILN" validate --log-format=xml examples/quickstart.yaml

# --- CLI: version ---
check "cli: kiln --version" 0 --out "kiln 0.1.0" --err "" -- "$KILN" --version
check "cli: kiln version" 0 --out-has "kiln 0.1.0 (spec format 1)" --out-has "libyaml" --err "" \
	-- "$KILN" version
check "cli: kiln version takes no arguments" 1 --out "" \
	--err "kiln: version: takes no arguments, got 'extra'" -- "$KILN" version extra
if $HAVE_PY; then
	check "cli: kiln version --json" 0 --err "" -- "$KILN" version --json
	cp "$E2E_OUT" "$T/version.json"
	assert "cli: kiln version --json has version and libraries" python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))
assert v["version"] == "0.1.0", v
assert v["spec_format"] == 1, v
libs = v["libraries"]
assert isinstance(libs, dict) and libs, libs
for name in ("libcurl", "openssl", "jansson", "libgit2", "libyaml", "libxml2"):
    assert isinstance(libs.get(name), str) and libs[name], name
' "$T/version.json"
fi

# --- colour: never on a pipe, never with NO_COLOR ---
no_esc() { ! grep -q "$ESC" "$@"; }
check "color: non-TTY output is plain" 1 --out-has "ok examples/quickstart.yaml" \
	-- env -u NO_COLOR TERM=xterm-256color "$KILN" validate examples/quickstart.yaml \
	tests/specs/invalid/several-errors.yaml tests/specs/valid/with-warnings.yaml
assert "color: no ESC byte on a pipe" no_esc "$E2E_OUT" "$E2E_ERR"
check "color: NO_COLOR=1" 1 -- env NO_COLOR=1 TERM=xterm-256color "$KILN" validate \
	tests/specs/invalid/several-errors.yaml tests/specs/valid/with-warnings.yaml
assert "color: no ESC byte with NO_COLOR=1" no_esc "$E2E_OUT" "$E2E_ERR"
check "color: --no-color" 1 -- "$KILN" --no-color validate tests/specs/invalid/several-errors.yaml
assert "color: no ESC byte with --no-color" no_esc "$E2E_OUT" "$E2E_ERR"

# --- a hostile number of problems is capped ---
{
	printf 'kiln: 1\ncluster: many\nprovider:\n  name: sim\n'
	i=0
	while [ $i -lt 250 ]; do
		printf 'unknown%03d: x\n' $i
		i=$((i + 1))
	done
} >"$T/many.yaml"
check "limit: 250 problems" 1 --out "" -- "$KILN" validate "$T/many.yaml"
assert "limit: 200 problems are shown, then one line saying so" \
	test "$(grep -c ': error: ' "$E2E_ERR")" = 201
assert "limit: the last line says the rest are not shown" \
	sh -c 'tail -n 1 "$1" | grep -q "error: too many problems; the rest are not shown\$"' sh "$E2E_ERR"

# --- man pages render without warnings ---
if ! command -v man >/dev/null 2>&1; then
	skip "man pages" "man is not installed"
else
	nman=0
	for f in man/*.1 man/*.5 man/*.7; do
		[ -f "$f" ] || continue
		nman=$((nman + 1))
		check "man: $f renders without warnings" 0 --err "" \
			-- env LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$f"
		# "(\%word" made the \% a hyphenation point: "(‐" at a line's end.
		assert "man: $f never breaks a line right after a '('" sh -c '
for w in 50 60 70 72 78 80 90 100 120; do
	LC_ALL=C.UTF-8 MANWIDTH=$w man -l "$1" 2>/dev/null | grep -q "(‐\$" && exit 1
done
exit 0' sh "$f"
	done
	[ $nman -gt 0 ] || skip "man pages" "none in man/ yet"
	check "man: kiln-spec(5) says both providers plan and apply" 0 \
		--out-has "act on it with one of the two providers built into this release: aws" \
		-- env LC_ALL=C.UTF-8 MANWIDTH=2000 man -l man/kiln-spec.5
	assert "man: no page says a provider is not planned or applied yet" sh -c \
		'! grep -rn "not yet planned\|only provider that this release" man/' sh
fi

check "log: --log-level debug reports what was loaded, on stderr" 0 \
	--out "ok examples/quickstart.yaml" \
	--err "kiln: debug: examples/quickstart.yaml: 1 groups, 1 stores, 1 roles, 0 errors, 0 warnings" \
	-- "$KILN" --log-level debug validate examples/quickstart.yaml
check "log: --log-format json writes one JSON object per line" 0 \
	--err-has '{"@level":"debug","@message":"examples/quickstart.yaml: 1 groups' \
	-- "$KILN" validate --log-level debug --log-format json examples/quickstart.yaml
check "log: the default level stays quiet" 0 --out "ok examples/quickstart.yaml" --err "" \
	-- "$KILN" validate examples/quickstart.yaml

# --log-format json: every line on stderr is one JSON object, errors and hints included.
if $HAVE_PY; then
	cat >"$T/json-lines.py" <<'PY'
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
assert lines, "nothing on stderr"
for l in lines:
    o = json.loads(l)
    assert isinstance(o, dict), l
    assert o["@level"] in ("error", "warn", "info", "debug", "trace"), l
    assert isinstance(o["@message"], str) and isinstance(o["@timestamp"], str), l
for want in sys.argv[2:]:
    level, _, msg = want.partition("=")
    assert any(json.loads(l)["@level"] == level and msg in json.loads(l)["@message"]
               for l in lines), ("no", want, lines)
PY
	lj_dir=$(mktemp -d "$T/logjson.XXXXXX")
	cp examples/quickstart.yaml "$lj_dir/kiln.yaml"
	check "log json: validate's problems and their hints" 1 --out "" \
		-- "$KILN" --log-format json validate tests/specs/invalid/several-errors.yaml
	assert "log json: validate: every stderr line is JSON" python3 "$T/json-lines.py" "$E2E_ERR" \
		"error=several-errors.yaml:7:6: error: ttl: '3 days' is not a duration" \
		"error=  hint: write a number and a unit"
	check "log json: an option error before --log-format json" 1 --out "" \
		-- "$KILN" --bogus --log-format json validate
	assert "log json: the option error is JSON" python3 "$T/json-lines.py" "$E2E_ERR" \
		"error=kiln: unknown option '--bogus'; see 'kiln --help'"
	check "log json: a bad KILN_LOG_LEVEL is a JSON warning" 0 --out "ok examples/quickstart.yaml" \
		-- env KILN_LOG_LEVEL=loud "$KILN" validate --log-format=json examples/quickstart.yaml
	assert "log json: KILN_LOG_LEVEL warning is JSON" python3 "$T/json-lines.py" "$E2E_ERR" \
		"warn=kiln: KILN_LOG_LEVEL 'loud' is not a level"
	check "log json: an error carries its hint in a field" 1 --out "" \
		--err-has '"@message":"kiln: destroy: standard input is not a terminal, so kiln cannot ask for approval; nothing was changed"' \
		--err-has '"hint":"' \
		-- "$KILN" -C "$lj_dir" --log-format json destroy
	assert "log json: destroy's refusal is JSON" python3 "$T/json-lines.py" "$E2E_ERR"
	check "log json: apply's warnings and summary errors" 0 --out-has "Apply complete" \
		-- "$KILN" -C "$lj_dir" --log-format json apply --auto-approve
	assert "log json: apply: every stderr line is JSON" python3 "$T/json-lines.py" "$E2E_ERR" \
		"warn=sensitive value was not recorded"
	check "log json: a store error (cmd_report) with its hint" 1 --out "" \
		-- "$KILN" -C "$lj_dir" --log-format json state show sim_bucket.nope
	assert "log json: state's error is JSON" python3 "$T/json-lines.py" "$E2E_ERR" \
		"error=kiln: state: no resource 'sim_bucket.nope'"
else
	skip "log json" "python3 is not installed"
fi

state_tests
engine_tests
approve_tests
aws_tests
review_tests
audit_tests
ci_tests
lifecycle_tests
sprawl_tests
init_tests
ownership_tests
capacity_tests
docs_tests
boot_tests
health_tests
timing_tests
slurm_tests
report_tests
access_tests
size_tests
completion_tests
schema_tests
runs_tests
scale_tests

e2e_finish
