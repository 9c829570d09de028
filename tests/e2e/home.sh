# home.sh - end-to-end tests of issue 31's conventions on the sim provider:
# machine output of init and approve (exec's is in access.sh, it needs an
# sshd), one spelling per option with kiln's answered for another's, kiln
# status --watch (a line per change off a terminal, redrawn in a pty, ended
# by SIGINT), the pager of long plans, and the live progress of kiln up seen
# twice in a tmux pane. Sourced by run.sh after lib.sh; $KILN is the binary.

ho_new_dir() { # a fresh directory with a sim-demo spec and its state
	ho_dir=$(mktemp -d "$E2E_TMP/home.XXXXXX")
	cd "$ho_dir" || exit 1
	"$KILN" init >/dev/null 2>&1
}

# python3 over a JSON document in a file: fails the assert with its message.
ho_json() { # FILE PYTHON (d is the document)
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[2])' "$1" "$2" "$KILN"
}

ho_machine_output() {
	ho_dir=$(mktemp -d "$E2E_TMP/home.XXXXXX")
	cd "$ho_dir" || exit 1
	check "home: kiln init --json prints what it made as one object" 0 \
		-- env -u KILN_STATE_KEY -u KILN_STATE_KEY_FILE "$KILN" init --json proj
	cp "$E2E_OUT" init.json
	assert "home: kiln init --json: spec, template, provider, .gitignore, workspace, key" \
		ho_json init.json 'assert d == {"dir": "proj", "spec": "proj/kiln.yaml", "template": "sim-demo", "provider": "sim", "gitignore": "created", "workspace": {"name": "default", "created": True, "state": "proj/.kiln/state.git"}, "state_key": {"action": d["state_key"]["action"], "path": d["state_key"].get("path")}}, d
assert d["state_key"]["action"] in ("created", "kept") and d["state_key"]["path"].endswith("/kiln/state.key"), d'
	check "home: kiln init --list --json lists every template with its provider" 0 \
		-- "$KILN" init --list --json
	cp "$E2E_OUT" list.json
	assert "home: kiln init --list --json: name, provider and summary of each template" \
		ho_json list.json 'import subprocess
text = subprocess.run([sys.argv[3], "init", "--list"], capture_output=True, text=True).stdout
assert [t["name"] for t in d] == [l.split()[0] for l in text.splitlines()], (d, text)
assert all(set(t) == {"name", "provider", "summary"} and t["summary"] for t in d), d'
	cd proj || exit 1
	"$KILN" plan --out p.kiln >/dev/null 2>&1
	check "home: kiln approve --generate-key --json names the key, its public key and id" 0 \
		-- "$KILN" approve --generate-key alice.key --json
	cp "$E2E_OUT" key.json
	assert "home: kiln approve --generate-key --json: key, public_key, key_id" \
		ho_json key.json 'assert d["key"] == "alice.key" and d["public_key"] == "alice.key.pub" and d["key_id"].startswith("sha256:"), d'
	check "home: kiln approve --json prints the approval as one object" 0 \
		-- "$KILN" approve p.kiln --key alice.key --signer alice --json
	cp "$E2E_OUT" ap.json
	assert "home: kiln approve --json: plan, signer, key id, digest, summary, count" \
		ho_json ap.json 'k = json.load(open("key.json"))
assert (d["plan"], d["signer"], d["key_id"], d["approvals"], d["replaced"]) == ("p.kiln", "alice", k["key_id"], 1, False), d
assert d["digest"].startswith("sha256:") and d["summary"].startswith("Plan: ") and d["time"].endswith("Z"), d'
	check "home: kiln approve --json again with the same key replaces its approval" 0 \
		-- "$KILN" approve p.kiln --key alice.key --signer alice --json
	cp "$E2E_OUT" ap2.json
	assert "home: kiln approve --json: replaced, still one approval" \
		ho_json ap2.json 'assert (d["approvals"], d["replaced"]) == (1, True), d'
	cd "$E2E_ROOT" || exit 1
}

ho_spellings() {
	check "home: --format on a command whose JSON is --json: kiln's spelling" 1 \
		--err "kiln: plan: unknown option '--format'; did you mean '--json'? kiln spells it so on every command" \
		-- "$KILN" plan --format json
	check "home: --yes: kiln's spelling is --auto-approve" 1 \
		--err "kiln: apply: unknown option '--yes'; did you mean '--auto-approve'? kiln spells it so on every command" \
		-- "$KILN" apply --yes
	check "home: -y on down: --auto-approve" 1 \
		--err "kiln: down: unknown option '-y'; did you mean '--auto-approve'? kiln spells it so on every command" \
		-- "$KILN" down -y
	check "home: --force on destroy: --auto-approve" 1 \
		--err "kiln: destroy: unknown option '--force'; did you mean '--auto-approve'? kiln spells it so on every command" \
		-- "$KILN" destroy --force
	check "home: -j on exec: --parallelism" 1 \
		--err "kiln: exec: unknown option '-j'; did you mean '--parallelism'? kiln spells it so on every command" \
		-- "$KILN" exec -j 4 -- true
	check "home: --output on plan: --out" 1 \
		--err "kiln: plan: unknown option '--output'; did you mean '--out'? kiln spells it so on every command" \
		-- "$KILN" plan --output p.kiln
	check "home: --file: --spec" 1 \
		--err "kiln: status: unknown option '--file'; did you mean '--spec'? kiln spells it so on every command" \
		-- "$KILN" status --file kiln.yaml
	check "home: --verbose: the global --log-level debug" 1 \
		--err "kiln: validate: unknown option '--verbose'; did you mean '--log-level debug'? kiln spells it so on every command" \
		-- "$KILN" validate --verbose
	check "home: --yes where the command asks nothing: the usual answer" 1 \
		--err "kiln: plan: unknown option '--yes'; see 'kiln help plan'" \
		-- "$KILN" plan --yes
	check "home: --json and --format mpi on hosts ask for two outputs" 1 \
		--err "kiln: hosts: --json and --format mpi ask for two outputs; give one of them" \
		-- "$KILN" hosts --json --format mpi
	ho_new_dir
	"$KILN" up --auto-approve >/dev/null 2>&1
	"$KILN" hosts --format json >fmt.json 2>/dev/null
	check "home: kiln hosts --json is kiln hosts --format json" 0 --out-file fmt.json \
		-- "$KILN" hosts --json
	"$KILN" audit --format json >fmt.json 2>/dev/null
	check "home: kiln audit --json is kiln audit --format json" 0 --out-file fmt.json \
		-- "$KILN" audit --json
	"$KILN" down --auto-approve >/dev/null 2>&1
	cd "$E2E_ROOT" || exit 1
}

# Run a command for SECONDS, then SIGINT it (python3: a background job of a
# shell ignores SIGINT); its stdout and stderr go to w.out and w.err, and
# the script prints its exit status, or fails when it did not stop.
ho_interrupt() { # SECONDS COMMAND...
	python3 -c 'import signal, subprocess, sys, time
p = subprocess.Popen(sys.argv[2:], stdout=open("w.out", "w"), stderr=open("w.err", "w"))
time.sleep(float(sys.argv[1]))
p.send_signal(signal.SIGINT)
try:
    print("exit", p.wait(timeout=20))
except subprocess.TimeoutExpired:
    p.kill()
    sys.exit("still running 20 s after SIGINT")' "$@"
}

ho_watch() {
	ho_new_dir
	"$KILN" up --auto-approve >/dev/null 2>&1
	cp kiln.yaml kiln.yaml.orig
	# The spec grows while it watches: the plan it reads has a change pending.
	# (renamed into place: a poll never reads half a spec)
	(sleep 2 && sed 's/^    count: 2$/    count: 3/' kiln.yaml.orig >k.new && mv k.new kiln.yaml) &
	KILN_NOW=2026-12-07T00:00:00Z
	export KILN_NOW
	check "home: status --watch off a terminal ends on SIGINT with status 0" 0 --out "exit 0" \
		-- ho_interrupt 5 "$KILN" status --watch 1
	unset KILN_NOW
	wait
	assert "home: status --watch off a terminal: the status once, whole" \
		test "$(grep -c '^Cluster sim-demo/default: ' w.out)" = 1
	assert "home: status --watch off a terminal: then one line per change, stamped" \
		test "$(grep -v '^ \|^[A-Z]' w.out)" = "2026-12-07T00:00:00Z pending_changes: 0 -> 1"
	assert "home: status --watch: nothing on stderr" test ! -s w.err
	cp kiln.yaml.orig kiln.yaml
	check "home: status --watch --json: one document a line, only when it changed" 0 --out "exit 0" \
		-- ho_interrupt 3.5 "$KILN" status --watch=1 --json
	assert "home: status --watch --json: an unchanged status is not printed again" \
		python3 -c 'import json; l = [json.loads(x) for x in open("w.out")]; assert len(l) == 1 and l[0]["nodes"] == 2, l'
	check "home: status --watch in a pty: each status drawn over the last" 0 --out "exit 0" \
		-- python3 -c 'import os, pty, signal, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
out, end = b"", time.time() + 60
while out.count(b"\x1b[H\x1b[2J") < 2 and time.time() < end:
    out += os.read(fd, 65536)
os.kill(pid, signal.SIGINT)
try:
    while True:
        b = os.read(fd, 65536)
        if not b:
            break
        out += b
except OSError:
    pass
_, st = os.waitpid(pid, 0)
open("pty.out", "wb").write(out)
assert out.count(b"kiln status every 1s, at ") >= 2, out
print("exit", os.waitstatus_to_exitcode(st))' "$KILN" status --watch 1
	check "home: status --watch with an interval that is none" 1 \
		--err "kiln: status: --watch '0s' is not an interval; give seconds (5) or a duration (30s, 1m), from 1s to 1d; a spec ends in .yaml" \
		-- "$KILN" status --watch 0s
	"$KILN" down --auto-approve >/dev/null 2>&1
	cd "$E2E_ROOT" || exit 1
}

# Run a command on a pseudo-terminal (its stdout a terminal), what it wrote
# there to pty.out; prints its exit status.
ho_pty() { # COMMAND...
	python3 -c 'import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
out = b""
try:
    while True:
        b = os.read(fd, 65536)
        if not b:
            break
        out += b
except OSError:
    pass
_, st = os.waitpid(pid, 0)
open("pty.out", "wb").write(out)
print("exit", os.waitstatus_to_exitcode(st))' "$@"
}

ho_pager() {
	ho_new_dir
	# The fake pager keeps what it was given, and the LESS it ran with.
	printf '#!/bin/sh\n{ echo "LESS=$LESS"; cat; } >paged.txt\n' >fakepager
	chmod +x fakepager
	check "home: kiln plan on a terminal goes through PAGER" 0 --out "exit 0" \
		-- ho_pty env -u LESS -u KILN_PAGER PAGER="$ho_dir/fakepager" "$KILN" plan
	assert "home: the pager got the whole plan, with LESS=FRX as git sets it" \
		python3 -c 'p = open("paged.txt").read(); assert p.startswith("LESS=FRX\nkiln plan: sim-demo/default on sim") and "\nPlan: 6 to create," in p, p'
	assert "home: with a pager, nothing of the plan on the terminal itself" \
		python3 -c 'o = open("pty.out", "rb").read(); assert b"Plan:" not in o, o'
	rm -f paged.txt
	check "home: KILN_PAGER wins over PAGER, and a LESS of the user's is kept" 0 --out "exit 0" \
		-- ho_pty env LESS=S KILN_PAGER="$ho_dir/fakepager" PAGER=false "$KILN" plan
	assert "home: KILN_PAGER got the plan with the user's LESS" \
		python3 -c 'p = open("paged.txt").read(); assert p.startswith("LESS=S\nkiln plan:"), p'
	rm -f paged.txt
	check "home: kiln plan --no-pager on a terminal prints the plan itself" 0 --out "exit 0" \
		-- ho_pty env PAGER="$ho_dir/fakepager" "$KILN" plan --no-pager
	assert "home: --no-pager: no pager ran, the plan is on the terminal" \
		sh -c 'test ! -e paged.txt && grep -q "Plan: 6 to create," pty.out'
	check "home: kiln plan in CI on a terminal is not paged" 0 --out "exit 0" \
		-- ho_pty env CI=true PAGER="$ho_dir/fakepager" "$KILN" plan
	assert "home: CI=true: no pager ran" sh -c 'test ! -e paged.txt && grep -q "Plan: 6 to create," pty.out'
	check "home: kiln plan --json on a terminal is not paged" 0 --out "exit 0" \
		-- ho_pty env PAGER="$ho_dir/fakepager" "$KILN" plan --json
	assert "home: --json: no pager ran" sh -c 'test ! -e paged.txt && grep -q "resource_changes" pty.out'
	check "home: kiln plan into a pipe is not paged" 0 --out-has "Plan: 6 to create," \
		-- env PAGER="$ho_dir/fakepager" "$KILN" plan
	assert "home: a pipe: no pager ran" test ! -e paged.txt
	check "home: PAGER=cat is no pager" 0 --out "exit 0" -- ho_pty env PAGER=cat "$KILN" plan
	assert "home: PAGER=cat: the plan is on the terminal" grep -q "Plan: 6 to create," pty.out
	"$KILN" plan --out p.kiln >/dev/null 2>&1
	check "home: kiln show PLANFILE on a terminal pages the plan too" 0 --out "exit 0" \
		-- ho_pty env PAGER="$ho_dir/fakepager" "$KILN" show p.kiln
	assert "home: kiln show PLANFILE: the pager got the plan and its approvals" \
		python3 -c 'p = open("paged.txt").read(); assert "\nPlan: 6 to create," in p and "\nApprovals: " in p, p'
	rm -f paged.txt
	check "home: kiln show PLANFILE --no-pager" 0 --out "exit 0" \
		-- ho_pty env PAGER="$ho_dir/fakepager" "$KILN" show p.kiln --no-pager
	assert "home: kiln show --no-pager: no pager ran" \
		sh -c 'test ! -e paged.txt && grep -q "Plan: 6 to create," pty.out' 
	cd "$E2E_ROOT" || exit 1
}

# kiln up in a tmux pane (a real terminal), on a sim whose nodes take 5 s
# to be ready and as long again to report: the pane is read twice while
# it runs, and must have changed.
ho_tmux_capture() { # PATTERN: until the pane shows PATTERN (30 s at most), into pane.N
	ho_n=$((ho_n + 1))
	for _ in $(seq 1 300); do
		tmux -L "$ho_sock" capture-pane -p -t ho >"pane.$ho_n" 2>/dev/null
		grep -q "$1" "pane.$ho_n" && return 0
		sleep 0.1
	done
	return 1
}

ho_progress() {
	if ! command -v tmux >/dev/null 2>&1; then
		fail "home: kiln up's progress in tmux (tmux is not installed: scripts/deps.sh --install)"
		return
	fi
	ho_new_dir
	ho_sock=kiln-e2e-$$
	ho_n=0
	tmux -L "$ho_sock" new-session -d -s ho -x 120 -y 40 \
		"cd $ho_dir && KILN_SIM_READY_MS=5000 KILN_SIM_HEALTH_MS=5000 KILN_HEALTH_TIMEOUT=1m XDG_CONFIG_HOME=$XDG_CONFIG_HOME $KILN up --auto-approve; echo kiln-exit-\$?; sleep 60"
	assert "home: tmux: the apply shows N of M operations done and the time elapsed" \
		ho_tmux_capture 'operations done, .* elapsed\]'
	sleep 2
	assert "home: tmux: read again while the nodes get ready, it shows it still running" \
		ho_tmux_capture 'operations done, .* elapsed\]'
	assert "home: tmux: the pane changed within 2 s of the apply" \
		sh -c '! cmp -s pane.1 pane.2'
	assert "home: tmux: the count and the elapsed time are a line of their own" \
		grep -qE '^  \[[0-9]+ of [0-9]+ operations done, [0-9.]+s elapsed\]$' pane.2
	assert "home: tmux: the health wait shows the nodes reported, of how many, and the time left" \
		ho_tmux_capture 'Health: [0-9] of 2 nodes reported, [0-9m]*s* left'
	sleep 2
	assert "home: tmux: read again during the health wait" \
		ho_tmux_capture 'Health: '
	assert "home: tmux: the health line moved within 2 s" sh -c '! cmp -s pane.3 pane.4'
	assert "home: tmux: kiln up ends with status 0, the live lines gone" \
		ho_tmux_capture 'kiln-exit-0'
	assert "home: tmux: no live line is left on the screen at the end" \
		sh -c '! grep -qE "operations done|nodes reported," pane.5'
	tmux -L "$ho_sock" kill-server 2>/dev/null
	"$KILN" down --auto-approve >/dev/null 2>&1
	cd "$E2E_ROOT" || exit 1
}

home_tests() {
	ho_machine_output
	ho_spellings
	ho_watch
	ho_pager
	ho_progress
}
