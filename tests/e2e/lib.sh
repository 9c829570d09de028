# lib.sh - a tiny test harness for kiln's end-to-end tests (sourced by run.sh).
#
#   check NAME EXIT [EXPECTATIONS] [--] COMMAND...
#
# runs COMMAND with stdout, stderr and the exit status captured, and passes
# when the exit status is EXIT and every expectation holds:
#
#   --out TEXT        stdout is exactly TEXT (a trailing newline is implied
#                     unless TEXT is empty)
#   --out-file F      stdout is exactly the content of F
#   --err TEXT        the same for stderr
#   --err-file F
#   --out-has TEXT    stdout contains TEXT (repeatable, as are all *-has)
#   --err-has TEXT    stderr contains TEXT
#   --stdin F         feed F on standard input (default /dev/null)
#
# Whatever the expectations, a sanitizer report on stderr fails the test.
# One line per test: "ok - NAME" or "not ok - NAME" followed by what differed.
# compare NAME WANT GOT checks two files the same way. e2e_finish prints
# "e2e: N passed, N failed" and returns non-zero on failure.
# After check, $E2E_OUT, $E2E_ERR and $E2E_RC describe the last run, for
# extra assertions made with pass/fail/assert.

E2E_PASSED=0
E2E_FAILED=0
E2E_TMP=$(mktemp -d "${TMPDIR:-/tmp}/kiln-e2e.XXXXXX") || exit 1
trap 'rm -rf "$E2E_TMP"' EXIT
trap 'exit 130' INT TERM
E2E_OUT=$E2E_TMP/.stdout
E2E_ERR=$E2E_TMP/.stderr
E2E_RC=0

# Sanitizers: leaks on, and exit codes kiln never uses, so a report is
# never mistaken for an ordinary error exit.
ASAN_OPTIONS=detect_leaks=1:exitcode=86:abort_on_error=0
LSAN_OPTIONS=exitcode=86
UBSAN_OPTIONS=halt_on_error=1:exitcode=87:print_stacktrace=1
export ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS
# Output must not depend on the caller's terminal or environment.
unset KILN_LOG_LEVEL KILN_IN_AUTOMATION CI
# Applies do not wait for their nodes' health reports (nothing boots on moto,
# and other groups' outputs stay as they are); health.sh turns it back on.
KILN_HEALTH_TIMEOUT=0
export KILN_HEALTH_TIMEOUT
# The state key kiln init makes, and kiln finds when no variable names one,
# lives here: never the key of whoever runs the tests, nor one of theirs used.
XDG_CONFIG_HOME=$E2E_TMP/.config
export XDG_CONFIG_HOME
export LC_ALL=C.UTF-8

pass() {
	E2E_PASSED=$((E2E_PASSED + 1))
	printf 'ok - %s\n' "$1"
}

# fail NAME [DETAIL FILE...]: the detail files are shown indented.
fail() {
	e2e_name=$1
	shift
	E2E_FAILED=$((E2E_FAILED + 1))
	printf 'not ok - %s\n' "$e2e_name"
	for e2e_f in "$@"; do
		sed 's/^/#   /' "$e2e_f"
	done
}

skip() {
	printf 'skip - %s (%s)\n' "$1" "$2"
}

# assert NAME COMMAND...: passes when COMMAND succeeds.
assert() {
	e2e_name=$1
	shift
	if "$@" >"$E2E_TMP/.assert" 2>&1; then
		pass "$e2e_name"
	else
		printf 'assertion failed: %s\n' "$*" >>"$E2E_TMP/.assert"
		fail "$e2e_name" "$E2E_TMP/.assert"
	fi
}

# Compare a captured stream with the wanted text; appends a diff to the report.
e2e_compare() { # LABEL WANT_FILE GOT_FILE REPORT
	if ! cmp -s "$2" "$3"; then
		printf '%s differs (--- want, +++ got):\n' "$1" >>"$4"
		diff -u "$2" "$3" | tail -n +3 >>"$4"
		return 1
	fi
	return 0
}

# Whether file $2 contains the text of file $1 whole: grep -F alone takes a
# text of several lines as several patterns and passes when any one matches.
e2e_contains() {
	case $(cat "$1") in
	*'
'*) python3 -c 'import sys; sys.exit(open(sys.argv[1], errors="replace").read() not in open(sys.argv[2], errors="replace").read())' "$1" "$2" ;;
	*) grep -qF -- "$(cat "$1")" "$2" ;;
	esac
}

check() {
	e2e_name=$1
	e2e_want_rc=$2
	shift 2
	e2e_stdin=/dev/null
	e2e_n=0
	e2e_report=$E2E_TMP/.report
	: >"$e2e_report"
	rm -f "$E2E_TMP"/.want.* "$E2E_TMP"/.has.*
	while [ $# -gt 0 ]; do
		case $1 in
		--out | --err)
			e2e_s=${1#--}
			if [ -z "$2" ]; then
				: >"$E2E_TMP/.want.$e2e_s"
			else
				printf '%s\n' "$2" >"$E2E_TMP/.want.$e2e_s"
			fi
			shift 2
			;;
		--out-file | --err-file)
			e2e_s=${1#--}
			e2e_s=${e2e_s%-file}
			if [ -f "$2" ]; then
				cp "$2" "$E2E_TMP/.want.$e2e_s"
			else
				printf 'missing golden file %s\n' "$2" >>"$e2e_report"
				: >"$E2E_TMP/.want.$e2e_s"
			fi
			shift 2
			;;
		--out-has | --err-has)
			e2e_s=${1#--}
			e2e_s=${e2e_s%-has}
			e2e_n=$((e2e_n + 1))
			printf '%s' "$2" >"$E2E_TMP/.has.$e2e_n.$e2e_s"
			shift 2
			;;
		--stdin)
			e2e_stdin=$2
			shift 2
			;;
		--)
			shift
			break
			;;
		*)
			break
			;;
		esac
	done
	"$@" <"$e2e_stdin" >"$E2E_OUT" 2>"$E2E_ERR"
	E2E_RC=$?
	if [ "$E2E_RC" != "$e2e_want_rc" ]; then
		printf 'exit status %s, want %s\n' "$E2E_RC" "$e2e_want_rc" >>"$e2e_report"
	fi
	for e2e_s in out err; do
		e2e_got=$E2E_OUT
		[ $e2e_s = err ] && e2e_got=$E2E_ERR
		if [ -f "$E2E_TMP/.want.$e2e_s" ]; then
			e2e_compare "std$e2e_s" "$E2E_TMP/.want.$e2e_s" "$e2e_got" "$e2e_report"
		fi
	done
	for e2e_f in "$E2E_TMP"/.has.*; do
		[ -f "$e2e_f" ] || continue
		e2e_got=$E2E_OUT
		case $e2e_f in *.err) e2e_got=$E2E_ERR ;; esac
		if ! e2e_contains "$e2e_f" "$e2e_got"; then
			printf 'std%s lacks: %s\n' "${e2e_f##*.}" "$(cat "$e2e_f")" >>"$e2e_report"
		fi
	done
	if has_sanitizer_report "$E2E_ERR"; then
		printf 'sanitizer report on stderr\n' >>"$e2e_report"
	fi
	if [ -s "$e2e_report" ]; then
		printf 'command: %s\n' "$*" >>"$e2e_report"
		if [ ! -f "$E2E_TMP/.want.err" ] && [ -s "$E2E_ERR" ]; then
			printf 'stderr was:\n' >>"$e2e_report"
			head -n 40 "$E2E_ERR" >>"$e2e_report"
		fi
		# What it printed, to tell a rare failure from a regression afterwards.
		if [ ! -f "$E2E_TMP/.want.out" ] && [ -s "$E2E_OUT" ]; then
			printf 'stdout was:\n' >>"$e2e_report"
			head -n 60 "$E2E_OUT" >>"$e2e_report"
		fi
		fail "$e2e_name" "$e2e_report"
		return 1
	fi
	pass "$e2e_name"
}

# compare NAME WANT_FILE GOT_FILE [LABEL]: passes when the files are identical.
compare() {
	: >"$E2E_TMP/.report"
	if e2e_compare "${4:-output}" "$2" "$3" "$E2E_TMP/.report"; then
		pass "$1"
	else
		fail "$1" "$E2E_TMP/.report"
	fi
}

# has_sanitizer_report FILE: true when FILE holds an ASan/LSan/UBSan report.
has_sanitizer_report() {
	grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:|SUMMARY: (Address|Leak|UndefinedBehavior)Sanitizer' "$1"
}

e2e_finish() {
	printf 'e2e: %d passed, %d failed\n' "$E2E_PASSED" "$E2E_FAILED"
	[ "$E2E_FAILED" -eq 0 ]
}

# A test sshd's files in DIR: a host key, authorized_keys holding PUBKEY, and
# an sshd_config listening on ADDR:PORT (public keys only, no PAM), for
# `/usr/sbin/sshd -D -f DIR/sshd_config -E DIR/sshd.log` (access.sh, slurm.sh).
sshd_files() { # DIR ADDR PORT PUBKEY
	ssh-keygen -q -t ed25519 -N '' -f "$1/hostkey"
	cp "$4" "$1/authorized_keys"
	cat >"$1/sshd_config" <<-CFG
		Port $3
		ListenAddress $2
		HostKey $1/hostkey
		PidFile $1/sshd.pid
		AuthorizedKeysFile $1/authorized_keys
		PasswordAuthentication no
		KbdInteractiveAuthentication no
		UsePAM no
		StrictModes no
		PermitRootLogin prohibit-password
		AllowTcpForwarding yes
	CFG
}

# Until ssh logs in to USER@ADDR:PORT with KEY (3 s at most); 1 when it never does.
sshd_answers() { # KEY USER ADDR PORT
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		ssh -F /dev/null -o BatchMode=yes -o StrictHostKeyChecking=no \
			-o UserKnownHostsFile=/dev/null -i "$1" -p "$4" "$2@$3" true 2>/dev/null &&
			return 0
		sleep 0.3
	done
	return 1
}
