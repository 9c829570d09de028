# state.sh - end-to-end tests of state in git: workspaces, state commands,
# log and show, encryption, locks (held, stale, killed, interrupted, taken
# over), racing processes through a local path and a file:// remote, and
# processes killed mid-commit. Sourced by run.sh after lib.sh; $KILN is the
# binary under test (absolute path).

st_new_dir() { # a fresh working directory for one scenario
	st_dir=$(mktemp -d "$E2E_TMP/state.XXXXXX")
	cd "$st_dir" || exit 1
}

# A state document for FILE: serial, cluster and resources from arguments;
# lineage and the rest from LINEAGE_FROM, else from the workspace's state.
st_doc() { # FILE SERIAL CLUSTER [LINEAGE_FROM]
	if [ $# -lt 4 ] && "$KILN" state pull >.st_cur.json 2>/dev/null; then
		set -- "$1" "$2" "$3" .st_cur.json
	fi
	python3 - "$@" <<'EOF'
import json, sys
path, serial, cluster = sys.argv[1], int(sys.argv[2]), sys.argv[3]
src = sys.argv[4] if len(sys.argv) > 4 else None
doc = json.load(open(src)) if src else {
    "format_version": 1, "workspace": "default", "provider": "sim",
    "lineage": "0b9c6d3e-1f1e-4e0a-9b7a-5c2d8e4f6a1b", "resources": {}}
doc["serial"] = serial
doc["cluster"] = cluster
doc["resources"] = {
    "sim_bucket.data": {"type": "sim_bucket", "id": "b-1",
                        "attrs": {"name": "data", "token": "s3cr3t-t0ken"},
                        "deps": [], "sensitive": ["token"]},
    "sim_network.main": {"type": "sim_network", "id": "n-1",
                         "attrs": {"cidr": "10.0.0.0/16"}, "deps": [], "sensitive": []}}
json.dump(doc, open(path, "w"))
EOF
}

st_serial() {
	"$KILN" state pull "$@" | python3 -c 'import json,sys; print(json.load(sys.stdin)["serial"])'
}

# Make the branch point at a commit whose state.json is CONTENT (plumbing, as an attacker or a bad merge would).
st_forge_head() { # REPO CONTENT
	st_blob=$(printf '%s' "$2" | git --git-dir="$1" hash-object -w --stdin)
	st_tree=$(printf '100644 blob %s\tstate.json\n' "$st_blob" | git --git-dir="$1" mktree)
	st_commit=$(git --git-dir="$1" commit-tree "$st_tree" -p refs/heads/default -m forged)
	git --git-dir="$1" update-ref refs/heads/default "$st_commit"
}

state_workspaces() {
	st_new_dir
	check "reading commands do not create a state repository" 1 \
		--err "$(printf "kiln: log: there is no state repository at .kiln/state.git\n  hint: \`kiln workspace new default\` creates one; --state or KILN_STATE selects another")" \
		-- "$KILN" log
	assert "nothing was created by the failed read" test ! -e .kiln
	check "workspace new creates the default workspace" 0 \
		--out "created workspace 'default'" -- "$KILN" workspace new default
	assert "the state repository is a bare git repository at .kiln/state.git" \
		test "$(git --git-dir=.kiln/state.git rev-parse --is-bare-repository)" = true
	check "workspace new refuses an existing workspace" 1 \
		--err "kiln: workspace: workspace 'default' already exists; \`kiln workspace list\` shows the workspaces" \
		-- "$KILN" workspace new default
	check "workspace new refuses a bad name" 1 \
		--err "kiln: workspace: '../x' is not a workspace name; use 1 to 64 of letters, digits, '.', '_' and '-', not starting with '.' or '-', and neither HEAD nor only hex digits" \
		-- "$KILN" workspace new ../x
	"$KILN" workspace new ci-7 >/dev/null
	check "workspace list marks the selected workspace" 0 \
		--out "$(printf '  ci-7\n* default')" -- "$KILN" workspace list
	check "-w selects another workspace" 0 \
		--out "$(printf '* ci-7\n  default')" -- "$KILN" workspace list -w ci-7
	check "workspace list --json: every workspace, the selected one, no lock" 0 \
		--out '[{"name": "ci-7", "selected": true, "lock": null}, {"name": "default", "selected": false, "lock": null}]' \
		-- sh -c '"$1" workspace list -w ci-7 --json | python3 -c "import json, sys; print(json.dumps(json.load(sys.stdin)))"' sh "$KILN"
	check "workspace --json is only for list" 1 --out "" \
		--err "kiln: workspace: --json is for list, not new; use kiln workspace list --json" \
		-- "$KILN" workspace new --json x
	check "a workspace that does not exist is named with the fix" 1 \
		--err "$(printf "kiln: state: workspace 'nope' does not exist in .kiln/state.git\n  hint: \`kiln workspace list\` shows the workspaces; \`kiln workspace new nope\` creates it")" \
		-- "$KILN" state pull -w nope
	check "an unknown workspace subcommand gets a suggestion" 1 \
		--err "kiln: workspace: 'lst' is not a workspace command; did you mean 'list'?" \
		-- "$KILN" workspace lst
	check "workspace delete removes an empty workspace and names where its history is kept" 0 \
		--out-has "deleted workspace 'ci-7'; its history is kept at refs/kiln/archive/ci-7/" \
		-- "$KILN" workspace delete ci-7
	assert "the deleted workspace's history is still in the repository" \
		sh -c "git --git-dir=.kiln/state.git log --format=%s \$(git --git-dir=.kiln/state.git for-each-ref --format='%(refname)' refs/kiln/archive/ci-7/) | grep -q 'workspace new: ci-7'"
	st_doc s0.json 1 demo
	check "push refuses a workspace that does not exist, not starting one by mistake" 1 \
		--err-has "workspace 'prdo' does not exist" -- "$KILN" state push -w prdo --allow-plaintext-secrets s0.json
	assert "the refused push created no branch" sh -c '! git --git-dir=.kiln/state.git rev-parse -q --verify refs/heads/prdo'

	st_doc s1.json 1 demo
	"$KILN" state push --allow-plaintext-secrets s1.json >/dev/null
	check "workspace delete refuses a workspace that records resources" 1 \
		--err "kiln: workspace: workspace 'default' still records 2 resources; forget them with \`kiln state rm\` (the cloud is not touched)" \
		-- "$KILN" workspace delete default
	assert "the refused delete kept the branch" git --git-dir=.kiln/state.git rev-parse -q --verify refs/heads/default
	cd "$E2E_ROOT" || exit 1
}

state_commands() {
	st_new_dir
	"$KILN" workspace new default >/dev/null
	st_doc s1.json 1 demo
	check "push refuses a sensitive value without a key" 1 \
		--err "$(printf "kiln: state: resource sim_bucket.data has sensitive attribute 'token' and no KILN_STATE_KEY is set\n  hint: set KILN_STATE_KEY or KILN_STATE_KEY_FILE, or pass --allow-plaintext-secrets")" \
		-- "$KILN" state push s1.json
	KILN_STATE_KEY=$(openssl rand -base64 32)
	export KILN_STATE_KEY
	check "push records serial 1" 0 --out "pushed serial 1 to workspace 'default'" \
		-- "$KILN" state push s1.json
	assert "no commit holds the secret in plaintext" \
		sh -c '! git --git-dir=.kiln/state.git log -p --all | grep -q s3cr3t-t0ken'
	check "state list prints the addresses, sorted" 0 \
		--out "$(printf 'sim_bucket.data\nsim_network.main')" -- "$KILN" state list
	check "state list --json names type and id" 0 \
		--out-has '"address": "sim_bucket.data"' --out-has '"id": "b-1"' -- "$KILN" state list --json
	check "state show redacts sensitive values" 0 --out-has '"token":"(sensitive)"' \
		-- "$KILN" state show sim_bucket.data
	check "state show --show-sensitive decrypts with the key" 0 --out-has '"token":"s3cr3t-t0ken"' \
		-- "$KILN" state show --show-sensitive sim_bucket.data
	check "state show --show-sensitive with another key fails on the key id" 1 \
		--err-has "sealed with key" \
		-- env KILN_STATE_KEY="$(openssl rand -base64 32)" "$KILN" state show --show-sensitive sim_bucket.data
	check "state show --show-sensitive without a key says what is missing" 1 \
		--err "kiln: state: --show-sensitive needs the state key; set KILN_STATE_KEY or KILN_STATE_KEY_FILE" \
		-- env -u KILN_STATE_KEY "$KILN" state show --show-sensitive sim_bucket.data
	printf '%s\n' "$KILN_STATE_KEY" >open.key
	chmod 644 open.key
	check "state show: a key file others may read is refused, as a signing key is" 1 --out "" \
		--err "kiln: state: KILN_STATE_KEY_FILE: state key open.key may be read by group or others (mode 0644); kiln seals state only with a key that is private to its owner
  hint: chmod 600 open.key" \
		-- env -u KILN_STATE_KEY KILN_STATE_KEY_FILE=open.key "$KILN" state show --show-sensitive sim_bucket.data
	chmod 600 open.key
	check "state show: the same key file, private, opens the value" 0 --out-has '"token":"s3cr3t-t0ken"' \
		-- env -u KILN_STATE_KEY KILN_STATE_KEY_FILE=open.key "$KILN" state show --show-sensitive sim_bucket.data
	mkdir -p "$XDG_CONFIG_HOME/kiln"
	cp open.key "$XDG_CONFIG_HOME/kiln/state.key"
	check "state show: with no variable, the key file kiln init makes is used" 0 \
		--out-has '"token":"s3cr3t-t0ken"' \
		-- env -u KILN_STATE_KEY "$KILN" state show --show-sensitive sim_bucket.data
	rm -f "$XDG_CONFIG_HOME/kiln/state.key" open.key
	check "state show of an unknown address suggests the closest" 1 \
		--err "kiln: state: no resource 'sim_bucket.dta' in workspace 'default'; did you mean 'sim_bucket.data'?" \
		-- "$KILN" state show sim_bucket.dta
	check "state pull prints canonical state.json" 0 --out-has '"serial": 1,' -- "$KILN" state pull
	"$KILN" state pull >pulled.json
	assert "state pull is the committed blob, byte for byte" \
		cmp pulled.json "$(git --git-dir=.kiln/state.git show refs/heads/default:state.json >blob.json && echo blob.json)"

	st_doc low.json 1 demo pulled.json
	check "push refuses a serial that is not newer" 1 \
		--err "kiln: state: low.json has serial 1, but workspace 'default' is already at serial 1; pull, edit and push again; or another run changed it first" \
		-- "$KILN" state push low.json
	st_doc other.json 5 other-cluster pulled.json
	check "push refuses the state of another cluster" 1 \
		--err "kiln: state: other.json is the state of cluster 'other-cluster', but workspace 'default' holds cluster 'demo'" \
		-- "$KILN" state push other.json
	python3 -c "
import json; d=json.load(open('pulled.json')); d['serial']=9; d['lineage']='11111111-2222-4333-8444-555555555555'; json.dump(d, open('lineage.json','w'))"
	check "push refuses another lineage" 1 --err-has "they are different histories" \
		-- "$KILN" state push lineage.json
	python3 -c "
import json; d=json.load(open('pulled.json')); d['serial']=9; d['format_version']=2; json.dump(d, open('future.json','w'))"
	check "push refuses a future format_version" 1 \
		--err "$(printf 'kiln: state: future.json: format_version 2 is newer than this kiln understands (1)\n  hint: upgrade kiln to a version that reads state format 2')" \
		-- "$KILN" state push future.json
	python3 -c "
import json; d=json.load(open('pulled.json')); d['serial']=9; del d['lineage']; json.dump(d, open('nokey.json','w'))"
	check "push refuses a state with a missing key" 1 \
		--err "kiln: state: nokey.json: missing key 'lineage'" -- "$KILN" state push nokey.json
	printf '{"serial": ' >broken.json
	check "push refuses a file that is not JSON" 1 --err-has "broken.json: not JSON: line 1" \
		-- "$KILN" state push broken.json
	assert "refused pushes changed nothing" test "$(st_serial)" = 1

	check "state rm forgets a resource in one commit" 0 --out "removed sim_network.main" \
		-- "$KILN" state rm sim_network.main
	check "state rm of an unknown address changes nothing" 1 --err-has "no resource 'nothing'" \
		-- "$KILN" state rm nothing
	assert "serial rose by one for the rm" test "$(st_serial)" = 2
	check "kiln log lists every change, newest first" 0 \
		--out-has "state rm: sim_network.main demo/default" --out-has "state push: serial 1 demo/default" \
		--out-has "workspace new: default" -- "$KILN" log
	check "kiln log -n 1 shows one commit" 0 -- "$KILN" log -n 1
	assert "kiln log -n 1 printed one line" test "$(wc -l <"$E2E_OUT")" -eq 1
	check "kiln log --json is an array with ids, authors and messages" 0 -- "$KILN" log --json
	assert "kiln log --json parses and has three commits" python3 -c "
import json; a=json.load(open('$E2E_OUT')); assert len(a)==3, a; assert all(k in a[0] for k in ('id','author','email','date','summary','message'))"
	check "kiln log -p shows the state diff" 0 --out-has '-    "sim_network.main": {' -- "$KILN" log -p -n 1
	check "kiln show names author, trailers and diff" 0 --out-has "Author: Test <test@example.com>" \
		--out-has "Kiln-Serial: 2" --out-has "Kiln-Removed: sim_network.main" --out-has "+++ b/state.json" \
		-- "$KILN" show default
	check "kiln show of an unknown commit says how to list them" 1 \
		--err "$(printf "kiln: show: no commit 'deadbeef' in .kiln/state.git\n  hint: \`kiln log\` lists the commits of a workspace")" \
		-- "$KILN" show deadbeef

	# Tampering with a sealed value is detected, not decrypted into garbage.
	"$KILN" state pull | python3 -c "
import json,sys,base64
d=json.load(sys.stdin); e=d['resources']['sim_bucket.data']['attrs']['token']
ct=bytearray(base64.b64decode(e['ciphertext'])); ct[0]^=1; e['ciphertext']=base64.b64encode(bytes(ct)).decode()
print(json.dumps(d, sort_keys=True, indent=2))" >tampered.json
	st_forge_head .kiln/state.git "$(cat tampered.json)"
	check "a tampered sealed value fails authentication" 1 \
		--err-has "authentication failed: the value was changed or the key is wrong" \
		-- "$KILN" state show --show-sensitive sim_bucket.data
	unset KILN_STATE_KEY

	st_forge_head .kiln/state.git '{"format_version": 1, "serial": "x"'
	st_head=$(git --git-dir=.kiln/state.git rev-parse --short=7 refs/heads/default)
	check "a corrupted state.json on the branch is a clear error" 1 \
		--err-has "state.json of workspace 'default' (commit $st_head): not JSON" -- "$KILN" state list
	st_doc fix.json 9 demo
	check "nothing is written on top of a corrupted state" 1 -- "$KILN" state push --allow-plaintext-secrets fix.json
	assert "the corrupted head is still the head" \
		test "$(git --git-dir=.kiln/state.git rev-parse --short=7 refs/heads/default)" = "$st_head"
	st_forge_head .kiln/state.git '{"cluster":"demo","format_version":3,"lineage":"x","provider":null,"resources":{},"serial":4,"workspace":"default"}'
	check "a future format_version on the branch asks for a newer kiln" 1 \
		--err-has "format_version 3 is newer than this kiln understands (1)" -- "$KILN" state list
	cd "$E2E_ROOT" || exit 1
}

# Wait until the workspace's lock exists (the holder has taken it).
st_wait_lock() {
	for st_i in $(seq 1 100); do
		git --git-dir="${1:-.kiln/state.git}" rev-parse -q --verify refs/kiln/locks/default >/dev/null && return 0
		sleep 0.1
	done
	return 1
}

st_lock_id() {
	git --git-dir="${1:-.kiln/state.git}" log -1 --format=%B refs/kiln/locks/default |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])'
}

state_locks() {
	st_new_dir
	"$KILN" workspace new default >/dev/null
	st_doc s1.json 1 demo
	st_doc s2.json 2 demo

	KILN_TEST_LOCK_HOLD=30s "$KILN" state push --allow-plaintext-secrets s1.json >/dev/null 2>&1 &
	st_pid=$!
	st_wait_lock
	check "a held lock fails a second writer at once, naming holder, operation and since" 1 \
		--err-has "kiln: state: workspace 'default' is locked by " --err-has "for 'state push' since " \
		--err-has "hint: wait for it to finish, or retry with --lock-timeout 5m" \
		-- "$KILN" state push --allow-plaintext-secrets s2.json
	check "workspace list shows who holds the lock" 0 --out-has "(locked by " -- "$KILN" workspace list
	check "workspace list --json names the lock's holder and operation" 0 \
		--out "state push False" \
		-- sh -c '"$1" workspace list --json | python3 -c "import json, sys; l = json.load(sys.stdin)[0][\"lock\"]; print(l[\"operation\"], l[\"stale\"])"' sh "$KILN"
	kill -TERM "$st_pid"
	wait "$st_pid"
	assert "SIGTERM exits 143" test $? -eq 143
	# (the holder's stderr went to /dev/null; the message is checked below with SIGINT)
	assert "SIGTERM released the lock" sh -c '! git --git-dir=.kiln/state.git rev-parse -q --verify refs/kiln/locks/default'

	KILN_TEST_LOCK_HOLD=30s "$KILN" state push --allow-plaintext-secrets s1.json >/dev/null 2>int.err &
	st_pid=$!
	st_wait_lock
	kill -INT "$st_pid"
	wait "$st_pid"
	assert "SIGINT exits 130" test $? -eq 130
	assert "SIGINT says the lock was released" grep -qx "kiln: interrupted by SIGINT; the workspace lock was released" int.err

	KILN_TEST_LOCK_HOLD=30s "$KILN" state push --allow-plaintext-secrets s1.json >/dev/null 2>hup.err &
	st_pid=$!
	st_wait_lock
	kill -HUP "$st_pid"
	wait "$st_pid"
	assert "SIGHUP (a closed terminal) exits 129" test $? -eq 129
	assert "SIGHUP released the lock" sh -c '! git --git-dir=.kiln/state.git rev-parse -q --verify refs/kiln/locks/default'

	assert "SIGINT released the lock" sh -c '! git --git-dir=.kiln/state.git rev-parse -q --verify refs/kiln/locks/default'

	KILN_TEST_LOCK_HOLD=2s "$KILN" state push --allow-plaintext-secrets s1.json >/dev/null 2>&1 &
	st_pid=$!
	st_wait_lock
	check "--lock-timeout waits for a live holder, then writes" 0 --out "pushed serial 2 to workspace 'default'" \
		-- "$KILN" state push --allow-plaintext-secrets --lock-timeout 20s s2.json
	wait "$st_pid"

	# A holder killed outright leaves its lock; after the lease it is stale.
	export KILN_LOCK_LEASE=2s
	KILN_TEST_LOCK_HOLD=30s "$KILN" state rm sim_bucket.data >/dev/null 2>&1 &
	st_pid=$!
	st_wait_lock
	st_id=$(st_lock_id)
	kill -KILL "$st_pid"
	wait "$st_pid" 2>/dev/null
	sleep 2.5
	st_doc s3.json 3 demo
	check "a dead holder's lock is reported stale with the force-unlock command" 1 \
		--err-has "but its lease expired at" --err-has "the lock is stale" \
		--err-has "kiln force-unlock $st_id -w default" \
		-- "$KILN" state push --allow-plaintext-secrets s3.json
	check "force-unlock refuses another id" 1 --err-has "'not-the-id' is not that lock's id" \
		-- "$KILN" force-unlock not-the-id
	check "force-unlock removes the stale lock by its id" 0 \
		--out "removed lock $st_id of workspace 'default'" -- "$KILN" force-unlock "$st_id"
	check "after force-unlock the workspace is writable" 0 -- "$KILN" state push --allow-plaintext-secrets s3.json

	KILN_TEST_LOCK_HOLD=30s "$KILN" state rm sim_bucket.data >/dev/null 2>&1 &
	st_pid=$!
	st_wait_lock
	st_id=$(st_lock_id)
	kill -KILL "$st_pid"
	wait "$st_pid" 2>/dev/null
	check "a killed holder's lock, lease still running: says the holder is gone and when the lease ends" 1 \
		--err-has "kiln: state: workspace 'default' is locked by " \
		--err-has ", but pid $st_pid is no longer running on this host: the lock is stale, and its lease ends at " \
		--err-has "  hint: retry with --lock-timeout " \
		--err-has " to take it over once the lease ends, or remove it now: \`kiln force-unlock --force $st_id -w default\`" \
		-- "$KILN" state push --allow-plaintext-secrets s3.json
	check "force-unlock refuses a live lease without --force" 1 --err-has "is live" \
		-- "$KILN" force-unlock "$st_id"
	sleep 2.5
	st_doc s4.json 4 demo
	st_doc s5.json 5 demo
	check "--lock-timeout takes over a stale lock" 0 -- "$KILN" state push --allow-plaintext-secrets --lock-timeout 5s s4.json
	check "the takeover is recorded in the commit" 0 --out-has "Kiln-Lock-Takeover: $st_id held by " \
		-- "$KILN" show default
	KILN_TEST_LOCK_HOLD=3s "$KILN" state push --allow-plaintext-secrets s5.json >/dev/null 2>held.err &
	st_pid=$!
	st_wait_lock
	"$KILN" force-unlock --force "$(st_lock_id)" >/dev/null
	wait "$st_pid"
	st_rc=$?
	if [ "$st_rc" -eq 1 ] && grep -q "was removed or taken over while this run held it" held.err &&
		[ "$(st_serial)" = 4 ]; then
		pass "a holder whose lock was force-unlocked writes nothing"
	else
		fail "a holder whose lock was force-unlocked writes nothing" held.err
	fi
	unset KILN_LOCK_LEASE
	assert "no lock is left behind" sh -c '! git --git-dir=.kiln/state.git rev-parse -q --verify refs/kiln/locks/default'
	cd "$E2E_ROOT" || exit 1
}

# ROUNDS rounds of 8 processes that each pull, bump the serial and push.
st_race() { # LABEL STATE SHARED_CACHE(yes|no) EXTRA_FLAGS
	st_label=$1 st_state=$2 st_shared=$3 st_flags=$4
	st_ok=1
	rm -f rc.* err.* p*/rc.* p*/err.*
	st_before=$(KILN_STATE=$st_state st_serial)
	st_total=0
	for st_round in 1 2 3; do
		rm -f "$E2E_TMP"/.race.ready.* "$E2E_TMP/.race.go"
		for st_i in 1 2 3 4 5 6 7 8; do
			(
				if [ "$st_shared" = no ]; then
					mkdir -p "p$st_i" && cd "p$st_i" || exit 9
				fi
				export KILN_STATE=$st_state
				"$KILN" state pull >"pull.$st_i.json" 2>/dev/null || exit 8
				python3 -c "
import json; d=json.load(open('pull.$st_i.json')); d['serial']+=1; json.dump(d, open('push.$st_i.json','w'))"
				# Every writer has pulled before any pushes: all race from the
				# same serial (under load a late pull would see the winner's
				# push and rightly win too).
				: >"$E2E_TMP/.race.ready.$st_i"
				while [ ! -e "$E2E_TMP/.race.go" ]; do sleep 0.02; done
				# shellcheck disable=SC2086
				"$KILN" state push $st_flags "push.$st_i.json" >/dev/null 2>"err.$st_i"
				echo $? >"rc.$st_i"
			) &
		done
		# At most 30 s: a writer whose pull failed (exit 8) never gets ready,
		# and the round then fails on its odd exit.
		st_n=0
		while [ "$st_n" -lt 1500 ] &&
			[ "$(find "$E2E_TMP" -maxdepth 1 -name '.race.ready.*' | wc -l)" -lt 8 ]; do
			st_n=$((st_n + 1))
			sleep 0.02
		done
		: >"$E2E_TMP/.race.go"
		wait
		st_wins=$(cat rc.* p*/rc.* 2>/dev/null | grep -c '^0$')
		st_bad=$(cat rc.* p*/rc.* 2>/dev/null | grep -vc '^[01]$')
		if [ "$st_wins" -ne 1 ] || [ "$st_bad" -ne 0 ]; then
			printf 'round %s: %s winners, %s odd exits\n' "$st_round" "$st_wins" "$st_bad" >>"$E2E_TMP/.race"
			cat err.* p*/err.* >>"$E2E_TMP/.race" 2>/dev/null
			st_ok=0
		fi
		st_total=$((st_total + st_wins))
		rm -f rc.* err.* p*/rc.* p*/err.*
	done
	st_after=$(KILN_STATE=$st_state st_serial)
	if [ "$st_ok" = 1 ] && [ $((st_after - st_before)) -eq "$st_total" ]; then
		pass "8 racing writers, $st_label: exactly one wins each round, serial +1 per winner"
	else
		printf 'serial %s -> %s, %s winners in all\n' "$st_before" "$st_after" "$st_total" >>"$E2E_TMP/.race"
		fail "8 racing writers, $st_label: exactly one wins each round, serial +1 per winner" "$E2E_TMP/.race"
	fi
	rm -f "$E2E_TMP/.race"
}

# 8 writers that each remove their own resource, waiting for the lock: every
# change is computed from the head read under the lock, so all 8 must win in
# turn and nothing may be lost. A lock that let two in at once would make one
# of them fail on a moved head (or lose a removal).
st_race_rm() { # LABEL STATE SHARED_CACHE(yes|no)
	st_label=$1 st_state=$2 st_shared=$3
	rm -f rc.* err.* p*/rc.* p*/err.*
	KILN_STATE=$st_state "$KILN" state pull >rm-base.json
	python3 -c "
import json; d=json.load(open('rm-base.json')); d['serial']+=1
d['resources']={'sim_x.r%d' % i: {'type':'sim_x','id':str(i),'attrs':{},'deps':[],'sensitive':[]} for i in range(1, 9)}
json.dump(d, open('rm-push.json','w'))"
	KILN_STATE=$st_state "$KILN" state push rm-push.json >/dev/null
	st_before=$(KILN_STATE=$st_state st_serial)
	for st_i in 1 2 3 4 5 6 7 8; do
		(
			if [ "$st_shared" = no ]; then
				mkdir -p "p$st_i" && cd "p$st_i" || exit 9
			fi
			KILN_STATE=$st_state "$KILN" state rm --lock-timeout 60s "sim_x.r$st_i" >/dev/null 2>"err.$st_i"
			echo $? >"rc.$st_i"
		) &
	done
	wait
	st_wins=$(cat rc.* p*/rc.* 2>/dev/null | grep -c '^0$')
	st_left=$(KILN_STATE=$st_state "$KILN" state list | wc -l)
	st_after=$(KILN_STATE=$st_state st_serial)
	if [ "$st_wins" -eq 8 ] && [ "$st_left" -eq 0 ] && [ $((st_after - st_before)) -eq 8 ]; then
		pass "8 writers removing their own resource, $st_label: all 8 win in turn, nothing lost"
	else
		printf '%s winners, %s resources left, serial %s -> %s\n' "$st_wins" "$st_left" \
			"$st_before" "$st_after" >"$E2E_TMP/.race"
		cat err.* p*/err.* >>"$E2E_TMP/.race" 2>/dev/null
		fail "8 writers removing their own resource, $st_label: all 8 win in turn, nothing lost" "$E2E_TMP/.race"
	fi
	rm -f rc.* err.* p*/rc.* p*/err.* "$E2E_TMP/.race"
}

state_races() {
	st_new_dir
	git init -q --bare remote.git
	KILN_STATE=$st_dir/local.git "$KILN" workspace new default >/dev/null
	KILN_STATE=file://$st_dir/remote.git "$KILN" workspace new default >/dev/null
	st_race "local path, failing fast" "$st_dir/local.git" yes ""
	st_race "local path, waiting with --lock-timeout" "$st_dir/local.git" yes "--lock-timeout 30s"
	st_race "file:// remote, one cache" "file://$st_dir/remote.git" yes "--lock-timeout 30s"
	st_race "file:// remote, a cache per writer" "file://$st_dir/remote.git" no "--lock-timeout 30s"
	st_race_rm "local path" "$st_dir/local.git" yes
	st_race_rm "file:// remote, a cache per writer" "file://$st_dir/remote.git" no
	assert "the remote holds no lock after the races" \
		sh -c "! git --git-dir=remote.git rev-parse -q --verify refs/kiln/locks/default"
	cd "$E2E_ROOT" || exit 1
}

# Writers killed at random moments never leave a head that does not parse.
state_crashes() {
	st_new_dir
	export KILN_LOCK_LEASE=1s
	"$KILN" workspace new default >/dev/null
	st_ok=1
	for st_run in $(seq 1 20); do
		"$KILN" state pull >cur.json || st_ok=0
		python3 -c "
import json; d=json.load(open('cur.json')); d['serial']+=1; d['resources']['sim_x.r$st_run']={'type':'sim_x','id':'$st_run','attrs':{},'deps':[],'sensitive':[]}; json.dump(d, open('next.json','w'))"
		"$KILN" state push --lock-timeout 10s next.json >/dev/null 2>&1 &
		st_pid=$!
		sleep "0.0$(shuf -i 0-60 -n 1)"
		kill -KILL "$st_pid" 2>/dev/null
		wait "$st_pid" 2>/dev/null
		if ! "$KILN" state pull >check.json 2>"$E2E_TMP/.crash" ||
			! python3 -c "import json; json.load(open('check.json'))" 2>>"$E2E_TMP/.crash"; then
			st_ok=0
			echo "run $st_run: the head does not parse" >>"$E2E_TMP/.crash"
		fi
	done
	sleep 1.2
	st_doc final.json 1000 demo check.json
	if [ "$st_ok" = 1 ] && "$KILN" state push --allow-plaintext-secrets --lock-timeout 10s final.json >/dev/null 2>>"$E2E_TMP/.crash" &&
		git --git-dir=.kiln/state.git fsck --no-dangling >/dev/null 2>>"$E2E_TMP/.crash"; then
		pass "20 writers killed at random points: the head always parses, the repository is sound, the next writer wins"
	else
		fail "20 writers killed at random points: the head always parses, the repository is sound, the next writer wins" "$E2E_TMP/.crash"
	fi
	unset KILN_LOCK_LEASE
	cd "$E2E_ROOT" || exit 1
}

# A lock force-unlocked from another machine (another cache) stays removed,
# and its holder writes nothing: the check asks the remote, not the cache.
state_remote_unlock() {
	st_new_dir
	git init -q --bare remote.git
	export KILN_STATE=file://$st_dir/remote.git
	mkdir a b
	(cd a && "$KILN" workspace new default >/dev/null)
	(cd a && st_doc s1.json 1 demo)
	(cd a && KILN_LOCK_LEASE=3s KILN_TEST_LOCK_HOLD=4s "$KILN" state push --allow-plaintext-secrets s1.json >/dev/null 2>held.err; echo $? >rc) &
	st_pid=$!
	st_wait_lock remote.git
	st_id=$(st_lock_id remote.git)
	(cd b && "$KILN" force-unlock --force "$st_id" >/dev/null)
	wait "$st_pid"
	if [ "$(cat a/rc)" = 1 ] && grep -q "removed or taken over while this run held it" a/held.err &&
		! git --git-dir=remote.git rev-parse -q --verify refs/kiln/locks/default >/dev/null &&
		[ "$(cd b && st_serial)" = 0 ]; then
		pass "a lock force-unlocked from another machine stays removed and its holder writes nothing"
	else
		fail "a lock force-unlocked from another machine stays removed and its holder writes nothing" a/held.err
	fi
	unset KILN_STATE
	cd "$E2E_ROOT" || exit 1
}

state_pipe() {
	st_new_dir
	"$KILN" workspace new default >/dev/null
	st_doc many.json 1 demo
	"$KILN" state push --allow-plaintext-secrets many.json >/dev/null
	"$KILN" state rm sim_bucket.data sim_network.main | true
	assert "a closed pipe (state rm | true) leaves no lock" \
		sh -c '! git --git-dir=.kiln/state.git rev-parse -q --verify refs/kiln/locks/default'
	assert "the removal behind the closed pipe was recorded" test "$(st_serial)" = 2
	cd "$E2E_ROOT" || exit 1
}

# The message kiln gives for the loose object OID of REPO cut to SIZE bytes,
# from what zlib makes of those bytes: its kind and size once the header
# ("blob 123\0") is whole, else "object" (tests the file itself, not kiln).
st_damage_msg() { # REPO OID SIZE GOOD_FILE
	python3 - "$@" <<'EOF2'
import sys, zlib
repo, oid, size, good = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
out = zlib.decompressobj().decompress(open(good, "rb").read()[:size])
where = f"{oid} (objects/{oid[:2]}/{oid[2:]}) is truncated: its file ends after {size} bytes"
if b"\0" in out:
    kind, n = out[:out.index(b"\0")].decode().split(" ")
    what = f"{kind} {where}, before the end of its compressed content ({n} bytes announced)"
else:
    what = f"object {where}, inside the object header"
print(f"the state repository {repo} is damaged: {what}")
EOF2
}

# One truncated loose object (a commit, its tree or its state.json blob, cut
# to 10..1000 bytes) hung libgit2 1.5.1 at 100 % CPU: every command that
# reads it fails at once, names the object and the repair, and leaves no lock.
state_damaged() {
	st_new_dir
	cp "$E2E_ROOT/examples/quickstart.yaml" kiln.yaml
	"$KILN" apply --auto-approve >/dev/null 2>&1
	cp -a .kiln/state.git good.git
	st_hint="\`git --git-dir=.kiln/state.git fsck\` lists every damaged object; restore them from a backup or a clone of this repository"
	for st_kind in blob tree commit; do
		case $st_kind in
		blob) st_oid=$(git --git-dir=good.git rev-parse default:state.json) ;;
		tree) st_oid=$(git --git-dir=good.git rev-parse 'default^{tree}') ;;
		commit) st_oid=$(git --git-dir=good.git rev-parse default) ;;
		esac
		st_good=good.git/objects/$(echo "$st_oid" | cut -c1-2)/$(echo "$st_oid" | cut -c3-)
		st_file=.kiln/state.git/objects/$(echo "$st_oid" | cut -c1-2)/$(echo "$st_oid" | cut -c3-)
		for st_size in 10 40 100 1000; do
			[ "$st_size" -lt "$(wc -c <"$st_good")" ] || continue
			rm -rf .kiln/state.git
			cp -a good.git .kiln/state.git
			chmod u+w "$st_file"
			truncate -s "$st_size" "$st_file"
			st_msg=$(st_damage_msg .kiln/state.git "$st_oid" "$st_size" "$st_good")
			for st_cmd in "state list" plan "apply --auto-approve"; do
				# shellcheck disable=SC2086
				check "$st_kind cut to $st_size bytes: $st_cmd fails at once naming it and the repair" 1 \
					--err "$(printf 'kiln: %s: %s\n  hint: %s' "${st_cmd%% *}" "$st_msg" "$st_hint")" \
					-- timeout 20 "$KILN" $st_cmd
			done
			assert "$st_kind cut to $st_size bytes: no lock is left" \
				sh -c '! git --git-dir=.kiln/state.git rev-parse -q --verify refs/kiln/locks/default'
		done
	done
	# The history commands read every object of a change: one cut blob fails them too.
	rm -rf .kiln/state.git
	cp -a good.git .kiln/state.git
	st_oid=$(git --git-dir=good.git rev-parse default:state.json)
	st_file=.kiln/state.git/objects/$(echo "$st_oid" | cut -c1-2)/$(echo "$st_oid" | cut -c3-)
	chmod u+w "$st_file"
	truncate -s 100 "$st_file"
	st_msg=$(st_damage_msg .kiln/state.git "$st_oid" 100 "good.git/objects/$(echo "$st_oid" | cut -c1-2)/$(echo "$st_oid" | cut -c3-)")
	check "log -p over a cut blob fails naming it" 1 \
		--err "$(printf 'kiln: log: %s\n  hint: %s' "$st_msg" "$st_hint")" -- timeout 20 "$KILN" log -p
	check "show of the commit whose blob is cut fails naming it" 1 \
		--err "$(printf 'kiln: show: %s\n  hint: %s' "$st_msg" "$st_hint")" -- timeout 20 "$KILN" show default
	check "log without -p reads no blob, so it still shows the history" 0 \
		--out-has "apply" -- timeout 20 "$KILN" log
	# A pack cut short (libgit2 checks it against its index): the objects it held are missing.
	rm -rf .kiln/state.git
	cp -a good.git .kiln/state.git
	git --git-dir=.kiln/state.git gc -q
	st_pack=$(ls .kiln/state.git/objects/pack/*.pack)
	chmod u+w "$st_pack"
	truncate -s 1000 "$st_pack"
	check "a cut pack: the head commit is named missing, with the repair" 1 \
		--err "$(printf 'kiln: state: the state repository .kiln/state.git is damaged: commit %s is missing (no loose object, and no pack that matches its index holds it)\n  hint: %s' "$(git --git-dir=good.git rev-parse default)" "$st_hint")" \
		-- timeout 20 "$KILN" state list
	# Bytes changed inside the blob's data in a pack (its length and trailer still match the index).
	rm -rf .kiln/state.git
	cp -a good.git .kiln/state.git
	git --git-dir=.kiln/state.git gc -q
	st_pack=$(ls .kiln/state.git/objects/pack/*.pack)
	st_oid=$(git --git-dir=good.git rev-parse default:state.json)
	st_at=$(git verify-pack -v "${st_pack%.pack}.idx" | awk -v o="$st_oid" '$1 == o { print $5 + 40 }')
	chmod u+w "$st_pack"
	printf '\377\000\377\000' | dd of="$st_pack" bs=1 seek="$st_at" conv=notrunc 2>/dev/null
	check "a pack changed inside the blob: it is named, with the repair" 1 \
		--err-has "kiln: plan: the state repository .kiln/state.git is damaged: blob $st_oid cannot be read from its pack (" \
		--err-has "  hint: $st_hint" \
		-- timeout 20 "$KILN" plan
	cd "$E2E_ROOT" || exit 1
}

# The same through a file:// remote: a cut object in this machine's cache
# says to remove the cache; one in the remote (loose, as `git push` leaves
# objects) fails the fetch, which libgit2 would otherwise never finish.
state_damaged_remote() {
	st_new_dir
	git init -q --bare remote.git
	export KILN_STATE=file://$st_dir/remote.git
	mkdir a b
	cp "$E2E_ROOT/examples/quickstart.yaml" a/kiln.yaml
	cp "$E2E_ROOT/examples/quickstart.yaml" b/kiln.yaml
	(cd a && "$KILN" apply --auto-approve >/dev/null 2>&1)
	st_cache=$(cd a && ls -d .kiln/cache/*.git)
	st_oid=$(git --git-dir="a/$st_cache" rev-parse default:state.json)
	st_obj=objects/$(echo "$st_oid" | cut -c1-2)/$(echo "$st_oid" | cut -c3-)
	chmod u+w "a/$st_cache/$st_obj"
	truncate -s 100 "a/$st_cache/$st_obj"
	check "a cut object in the cache: plan says to remove the cache" 1 \
		--err-has "kiln: plan: the state cache $st_cache of $KILN_STATE is damaged: blob $st_oid ($st_obj) is truncated" \
		--err-has "hint: remove the cache (rm -rf $st_cache); the next run fetches it again from $KILN_STATE" \
		-- sh -c "cd a && timeout 20 '$KILN' plan"
	rm -rf "a/$st_cache"
	check "with the cache removed, the next run fetches it again" 0 --out-has "sim_network.main" \
		-- sh -c "cd a && timeout 20 '$KILN' state list"
	# The remote's objects loose, one cut: a machine with no cache fetches it.
	git init -q --bare loose.git
	git --git-dir=remote.git push -q "$st_dir/loose.git" 'refs/*:refs/*'
	st_size=$(($(wc -c <"loose.git/$st_obj") - 4))
	chmod u+w "loose.git/$st_obj"
	truncate -s "$st_size" "loose.git/$st_obj"
	check "a cut object in a file:// remote fails the fetch at once, naming it and the repair" 1 \
		--err "$(printf 'kiln: state: the state remote file://%s/loose.git is damaged: blob %s (%s) is truncated: its file ends after %s bytes, before the end of its compressed content (%s bytes announced)\n  hint: `git --git-dir=%s/loose.git fsck` lists every damaged object; restore them from a backup, or from a kiln cache of this remote (.kiln/cache/ in another checkout)' "$st_dir" "$st_oid" "$st_obj" "$st_size" "$(git --git-dir=remote.git cat-file -s "$st_oid")" "$st_dir")" \
		-- sh -c "cd b && KILN_STATE=file://$st_dir/loose.git timeout 20 '$KILN' state list"
	unset KILN_STATE
	cd "$E2E_ROOT" || exit 1
}

# The tutorial's trap: the state sealed with one key, an apply in a new
# shell with another. The apply stops before anything changes, names both
# keys and, when it can see it, where the state's key is.
state_key_mismatch() {
	st_new_dir
	cp "$E2E_ROOT/examples/quickstart.yaml" kiln.yaml
	st_cfg=$st_dir/config
	mkdir -p "$st_cfg/kiln"
	openssl rand -base64 32 >"$st_cfg/kiln/state.key"
	chmod 600 "$st_cfg/kiln/state.key"
	check "key mismatch: the first apply seals with the key kiln init makes" 0 \
		-- env XDG_CONFIG_HOME="$st_cfg" "$KILN" apply --auto-approve --health-timeout 0
	st_kid=$("$KILN" state pull | python3 -c 'import json, sys
print(json.load(sys.stdin)["resources"]["sim_node_group.trainers"]["attrs"]["join_token"]["kid"])')
	st_head=$(git --git-dir=.kiln/state.git rev-parse refs/heads/default)
	sed -i 's/count: 2/count: 3/' kiln.yaml
	st_other=$(openssl rand -base64 32)
	check "key mismatch: an apply with another KILN_STATE_KEY stops, naming the file that holds the state's key" 1 \
		--err-has "kiln: apply: the state is sealed with key $st_kid (sim_node_group.trainers/join_token), but KILN_STATE_KEY is key " \
		--err-has ": kiln seals a state with one key only
  hint: key $st_kid is the state key kiln init made, $st_cfg/kiln/state.key: unset KILN_STATE_KEY to use it, or move the state to key " \
		--err-has " with kiln state rekey $st_cfg/kiln/state.key; nothing was changed" \
		-- env XDG_CONFIG_HOME="$st_cfg" KILN_STATE_KEY="$st_other" "$KILN" apply --auto-approve --health-timeout 0
	assert "key mismatch: nothing was committed" \
		test "$(git --git-dir=.kiln/state.git rev-parse refs/heads/default)" = "$st_head"
	check "key mismatch: nothing was created (2 nodes still)" 0 --out-has '"count":2' \
		-- "$KILN" state show sim_node_group.trainers
	check "key mismatch: without the state's key anywhere kiln sees, the hint names its id" 1 \
		--err-has "  hint: set KILN_STATE_KEY (or KILN_STATE_KEY_FILE) to the key whose id is $st_kid, the one this workspace was sealed with, or move the state to key " \
		--err-has " with kiln state rekey FILE, FILE holding key $st_kid; nothing was changed" \
		-- env XDG_CONFIG_HOME="$st_dir/none" KILN_STATE_KEY="$st_other" "$KILN" repair --auto-approve
	check "key mismatch: with the state's key the apply goes on" 0 \
		-- env XDG_CONFIG_HOME="$st_cfg" "$KILN" apply --auto-approve --health-timeout 0
	check "key mismatch: and adds the node" 0 --out-has '"count":3' \
		-- "$KILN" state show sim_node_group.trainers
	# Rotation: move the state to the other key with the old key's file.
	check "key rekey: the state moves to the new key, one commit, naming both ids" 0 \
		--out-has "resealed 1 value of workspace 'default' with key " \
		--out-has " (was $st_kid); the commits before this one still need key $st_kid to open" \
		-- env XDG_CONFIG_HOME="$st_dir/none" KILN_STATE_KEY="$st_other" "$KILN" state rekey "$st_cfg/kiln/state.key"
	check "key rekey: the new key now opens the value" 0 --out-has '"join_token":"' \
		-- env XDG_CONFIG_HOME="$st_dir/none" KILN_STATE_KEY="$st_other" "$KILN" state show --show-sensitive sim_node_group.trainers
	check "key rekey: and the old key is refused as another key" 1 \
		--err-has ": sealed with key " \
		-- env XDG_CONFIG_HOME="$st_cfg" "$KILN" state show --show-sensitive sim_node_group.trainers
	check "key rekey: a second rekey finds nothing to move" 0 \
		--out "no value of workspace 'default' is sealed with key $st_kid: nothing to rekey" \
		-- env XDG_CONFIG_HOME="$st_dir/none" KILN_STATE_KEY="$st_other" "$KILN" state rekey "$st_cfg/kiln/state.key"
	check "key rekey: the old key's file being the key in force is refused" 1 --out "" \
		--err "kiln: state: $st_cfg/kiln/state.key holds key $st_kid, the state key already in force: nothing to rekey; set the state key to the new key, and give the old one's file" \
		-- env XDG_CONFIG_HOME="$st_cfg" "$KILN" state rekey "$st_cfg/kiln/state.key"
	check "key rekey: an apply with the new key goes on" 0 \
		-- env XDG_CONFIG_HOME="$st_dir/none" KILN_STATE_KEY="$st_other" "$KILN" apply --auto-approve --health-timeout 0
}

state_tests() {
	export KILN_AUTHOR="Test <test@example.com>"
	unset KILN_STATE KILN_WORKSPACE KILN_STATE_KEY KILN_STATE_KEY_FILE
	state_workspaces
	state_commands
	state_locks
	state_races
	state_remote_unlock
	state_pipe
	state_damaged
	state_damaged_remote
	state_crashes
	state_key_mismatch
	unset KILN_AUTHOR
}
