# report.sh - end-to-end tests of the cost ledger and `kiln report` on the
# sim provider: a workspace applied, scaled up, scaled down and destroyed at
# set clock times (KILN_NOW), an archived workspace, a running cluster, a
# history from before the ledger, --since, --by, the four formats, bad input
# with the exact messages, and the HTML page loaded by headless Chromium
# (Debian's chromium; scripts/deps.sh installs it) whose totals must equal
# the text report's. Sourced by run.sh after lib.sh; $KILN is the binary
# under test.

rp_apply() { # TIME COUNT [ARGS...]: apply the quickstart with COUNT nodes at TIME
	rp_t=$1 rp_n=$2
	shift 2
	sed "s/count: 2/count: $rp_n/" "$E2E_ROOT/examples/quickstart.yaml" >kiln.yaml
	KILN_NOW=$rp_t "$KILN" apply --auto-approve "$@" >/dev/null 2>&1
}

# The ledger trailers of every commit, written out: what an older kiln made.
rp_strip_ledger() { # WORKSPACE
	python3 - "$1" <<'EOF'
import subprocess, sys
git = ["git", "--git-dir=.kiln/state.git"]
ref = "refs/heads/" + sys.argv[1]
commits = subprocess.check_output(git + ["rev-list", "--reverse", ref], text=True).split()
parent = None
for c in commits:
    raw = subprocess.check_output(git + ["cat-file", "commit", c], text=True)
    head, _, msg = raw.partition("\n\n")
    lines = [l for l in head.split("\n") if not l.startswith("parent ")]
    if parent:
        lines.insert(1, "parent " + parent)
    msg = "".join(l + "\n" for l in msg.splitlines()
                  if not l.startswith(("Kiln-Time:", "Kiln-Burn:", "Kiln-GPUs:", "Kiln-Tag:")))
    parent = subprocess.run(git + ["hash-object", "-t", "commit", "-w", "--stdin"],
                            input="\n".join(lines) + "\n\n" + msg, text=True,
                            capture_output=True, check=True).stdout.strip()
subprocess.check_call(git + ["update-ref", ref, parent])
EOF
}

# Rewrite commit N (0 the oldest) of WORKSPACE's history with the trailers given
# ("Key: value" replaces every Key: line, or is added), re-parenting the
# commits after it: a ledger forged by hand.
rp_forge() { # WORKSPACE N TRAILER...
	python3 - "$@" <<'EOF2'
import os, subprocess, sys
git = ["git", "--git-dir=.kiln/state.git"]
ref, n = "refs/heads/" + sys.argv[1], int(sys.argv[2])
new = [os.fsencode(t) for t in sys.argv[3:]]
commits = subprocess.check_output(git + ["rev-list", "--reverse", ref]).split()
parent = subprocess.check_output(git + ["rev-parse", commits[n] + b"^"]).strip() if n else None
for i, c in enumerate(commits[n:], n):
    raw = subprocess.check_output(git + ["cat-file", "commit", c])
    head, _, msg = raw.partition(b"\n\n")
    lines = [l for l in head.split(b"\n") if not l.startswith(b"parent ")]
    if parent:
        lines.insert(1, b"parent " + parent)
    if i == n:
        body = msg.rstrip(b"\n").split(b"\n")
        for t in new:
            key = t.split(b":", 1)[0] + b":"
            at = [k for k, l in enumerate(body) if l.startswith(key)]
            if at:
                body[at[0]] = t
                body = [l for k, l in enumerate(body) if k not in at[1:]]
            else:
                body.append(t)
        msg = b"\n".join(body) + b"\n"
    parent = subprocess.run(git + ["hash-object", "-t", "commit", "-w", "--stdin"],
                            input=b"\n".join(lines) + b"\n\n" + msg,
                            capture_output=True, check=True).stdout.strip()
subprocess.check_call(git + ["update-ref", ref, parent])
EOF2
}

rp_chromium() { # URL ARGS...: headless, offline, a profile of its own
	chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$rp_dir/.chromium" "$@" 2>/dev/null
}

# A Lustre store kept by a destroy bills on: retained while its workspace
# exists, orphaned once the workspace is deleted.
rp_retained() {
	rp_retained_saved=$PWD
	rp_dir=$(mktemp -d "$E2E_TMP/report.XXXXXX")
	cd "$rp_dir" || return
	sed 's/^  checkpoints: .*/  scratch: {tier: lustre, capacity_gb: 4800, throughput_per_tib: 250, deletion: retain}/; /^iam:/,$d; /role: trainer/d' \
		"$E2E_ROOT/examples/quickstart.yaml" >kiln.yaml
	KILN_NOW=2027-01-01T00:00:00Z "$KILN" apply --auto-approve -w keep >/dev/null 2>&1
	KILN_NOW=2027-01-01T01:00:00Z "$KILN" destroy --auto-approve -w keep >/dev/null 2>&1
	check "report: the destroy that keeps a Lustre store records what it costs an hour" 0 \
		--out-has "Kiln-Retained: 1.3808 USD/h" --out-has "Kiln-Burn: 0.0000 USD/h" \
		-- git --git-dir=.kiln/state.git log -1 --format=%B keep
	# 4 h kept (01:00 to 05:00) at 1.3808/h: 5.5232.
	KILN_NOW=2027-01-01T05:00:00Z "$KILN" report --format json >kept.json 2>&1
	"$KILN" workspace delete keep >/dev/null 2>&1
	KILN_NOW=2027-01-01T05:00:00Z "$KILN" report --format json >orphan.json 2>&1
	assert "report: kept storage is retained, then orphaned when its workspace is deleted" python3 -c '
import json
k, o = json.load(open("kept.json"))["total"], json.load(open("orphan.json"))["total"]
assert (k["retained_cost"], k["orphaned_cost"]) == (5.5232, 0), k
assert (o["retained_cost"], o["orphaned_cost"]) == (0, 5.5232), o
assert k["storage_cost"] == 1.3808 and k["compute_cost"] == 196.6838, k
'
	KILN_NOW=2027-01-01T05:00:00Z "$KILN" report --format html >orphan.html 2>&1
	assert "report: the page shows the orphaned storage's cost" \
		grep -q 'id="finops-total-orphaned">\$5.52<' orphan.html
	cd "$rp_retained_saved" || return
}

# Status and report at one instant, after a resize and after a block bought up front
# (issue 29): one cost function, the same figure to the cent.
rp_status_agrees() {
	rp_status_saved=$PWD
	rp_dir=$(mktemp -d "$E2E_TMP/report.XXXXXX")
	cd "$rp_dir" || return
	# 2 nodes from 00:00, 4 from 05:00; at 10:00: 5 h × 196.6838 + 5 h × 393.3677
	# = 2950.2575, not 10 h at today's 393.3677 (3933.68, what status said before).
	rp_apply 2027-01-01T00:00:00Z 2
	rp_apply 2027-01-01T05:00:00Z 4
	check "report: status after a resize gives the cost so far the ledger gives, not 10 h at today's size" 0 \
		--out-has 'Cost: $393.37 an hour; $2,950.26 so far, up 10h0m since 2027-01-01T00:00:00Z.' \
		-- env KILN_NOW=2027-01-01T10:00:00Z "$KILN" status --no-ssh
	KILN_NOW=2027-01-01T10:00:00Z "$KILN" status --no-ssh --json >status.json 2>&1
	KILN_NOW=2027-01-01T10:00:00Z "$KILN" report --format json >report.json 2>&1
	assert "report: status --json's cost_so_far equals report --format json's running lifetime" python3 -c '
import json
s, r = json.load(open("status.json")), json.load(open("report.json"))
l = [l for l in r["lifetimes"] if l["end"] is None]
assert len(l) == 1, r["lifetimes"]
assert s["cost_so_far"] == l[0]["cost"] == 2950.2575, (s["cost_so_far"], l[0]["cost"])
assert s["since"] == l[0]["start"] and s["upfront"] == 0, s
'
	# A Capacity Block: bought at 00:00 for 4719.36 up front, the nodes launched at
	# 11:45 once it is active (its hourly price is in the fee: the burn is 0.0219, the
	# root volumes); at 14:00: 4719.36 + 2.25 h × burn, the same in both.
	mkdir blk && cd blk || return
	cp "$E2E_ROOT/examples/capacity-block.yaml" kiln.yaml
	KILN_NOW=2027-01-01T00:00:00Z "$KILN" apply --auto-approve --allow-purchase >/dev/null 2>&1
	KILN_NOW=2027-01-01T11:45:00Z "$KILN" apply --auto-approve >/dev/null 2>&1
	KILN_NOW=2027-01-01T14:00:00Z "$KILN" status --no-ssh --json >status.json 2>&1
	KILN_NOW=2027-01-01T14:00:00Z "$KILN" report --format json >report.json 2>&1
	assert "report: with a Capacity Block, status and report give one cost, its fee included" python3 -c '
import json, subprocess
s, r = json.load(open("status.json")), json.load(open("report.json"))
l = [l for l in r["lifetimes"] if l["end"] is None]
assert len(l) == 1 and s["cost_so_far"] == l[0]["cost"], (s, l)
assert s["upfront"] == l[0]["upfront"] == 4719.36, s
log = subprocess.check_output(["git", "--git-dir=.kiln/state.git", "log", "--format=%B", "default"], text=True)
burn = [float(x.split()[1]) for x in log.splitlines() if x.startswith("Kiln-Burn:")][0]
assert abs(s["cost_so_far"] - round(4719.36 + 2.25 * burn, 4)) < 1e-9, (s["cost_so_far"], burn)
'
	check "report: status says how much of the cost so far was paid up front" 0 \
		--out-has '$4,719.36 of it up front), up 14h0m since 2027-01-01T00:00:00Z.' \
		-- env KILN_NOW=2027-01-01T14:00:00Z "$KILN" status --no-ssh
	cd "$rp_status_saved" || return
}

# Team budgets and quotas across workspaces (issue 29): the policy file, its
# bad input, a refusal naming the limit, the use and who uses it, a waiver
# by an approved plan, and two applies racing against one limit.
rp_qpolicy() { # JSON: write it to p.json and set it as Ann
	printf '%s\n' "$1" >p.json
	KILN_AUTHOR="Ann Ops <ann@example.com>" "$KILN" policy set p.json >/dev/null 2>&1
}

rp_stopped() { # PID: stopped (SIGSTOP)
	[ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = T ]
}

rp_quota() {
	rp_quota_saved=$PWD
	rp_dir=$(mktemp -d "$E2E_TMP/report.XXXXXX")
	cd "$rp_dir" || return
	cp "$E2E_ROOT/examples/quickstart.yaml" kiln.yaml
	export KILN_NOW=2027-01-31T00:00:00Z
	"$KILN" workspace new default >/dev/null 2>&1
	check "quota: policy show says when no policy is set" 0 \
		--out "No policy: no team limit holds an apply back. Set one with kiln policy set FILE (kiln-policy(5))." \
		-- "$KILN" policy show
	printf '{"version": 1, "limits": [' >bad.json
	check "quota: a policy that is not JSON is refused with its position" 1 --out "" \
		--err "kiln: policy: bad.json:1:26: not JSON: ']' expected near end of file
  hint: kiln-policy(5) shows a policy file" \
		-- "$KILN" policy set bad.json
	printf '{"limits": []}\n' >bad.json
	check "quota: a policy without version 1 is refused" 1 --out "" \
		--err 'kiln: policy: bad.json: "version" must be 1
  hint: this kiln reads policy version 1: add "version": 1' \
		-- "$KILN" policy set bad.json
	printf '{"version": 1, "limits": [{"team": "ml", "max_gpu": 8}]}\n' >bad.json
	check "quota: an unknown key in a limit is named, with the key meant" 1 --out "" \
		--err "kiln: policy: bad.json: limits[0] has an unknown key 'max_gpu'
  hint: did you mean 'max_gpus'?" \
		-- "$KILN" policy set bad.json
	printf '{"version": 1, "limits": [{"max_gpus": 8}]}\n' >bad.json
	check "quota: a limit that names no team or workspace is refused" 1 --out "" \
		--err 'kiln: policy: bad.json: limits[0] must name one team or one workspace pattern, and names neither
  hint: add "team": "NAME" (the spec tag team) or "workspace": "PATTERN"' \
		-- "$KILN" policy set bad.json
	printf '{"version": 1, "limits": [{"team": "ml", "max_gpus": -8}]}\n' >bad.json
	check "quota: a negative GPU limit is refused" 1 --out "" \
		--err 'kiln: policy: bad.json: limits[0].max_gpus must be a whole number from 0 up
  hint: write it like "max_gpus": 32' \
		-- "$KILN" policy set bad.json
	printf '{"version": 1, "limits": [{"team": "ml"}]}\n' >bad.json
	check "quota: a limit that limits nothing is refused" 1 --out "" \
		--err 'kiln: policy: bad.json: limits[0] sets no limit
  hint: set max_gpus, monthly_budget_usd or max_upfront_usd' \
		-- "$KILN" policy set bad.json
	check "quota: an unknown policy subcommand is refused" 1 --out "" \
		--err "kiln: policy: 'get' is not a policy subcommand; use show, or set FILE" \
		-- "$KILN" policy get
	check "quota: a refused policy changed nothing" 1 --out "" \
		-- git --git-dir=.kiln/state.git rev-parse -q --verify refs/kiln/policy

	printf '{"version": 1, "limits": [{"team": "getting-started", "max_gpus": 24}, {"workspace": "blk*", "max_upfront_usd": 1000}]}\n' >p.json
	check "quota: policy set commits the policy under its author and shows it" 0 \
		--out-has "Policy set from p.json: commit " \
		--out-has ", set by Ann Ops <ann@example.com> at 2027-01-31T00:00:00Z:" \
		--out-has "  limits[0] team 'getting-started': at most 24 GPUs at once;" \
		--out-has "  limits[1] workspaces 'blk*': at most \$1,000.00 up front in one plan;" \
		-- env KILN_AUTHOR="Ann Ops <ann@example.com>" "$KILN" policy set p.json
	check "quota: the policy is a commit naming its author on refs/kiln/policy" 0 \
		--out "Ann Ops <ann@example.com> policy set: 2 limits" \
		-- git --git-dir=.kiln/state.git log -1 --format='%an <%ae> %s' refs/kiln/policy
	check "quota: a team within its GPU limit applies" 0 \
		-- "$KILN" apply --auto-approve -w alpha
	check "quota: plan names the team's GPU limit, the use and who uses it" 1 \
		--out-has "Plan: 5 to create" \
		--err "kiln: plan: team 'getting-started' may run at most 24 GPUs at once (policy limits[0], commit $(git --git-dir=.kiln/state.git rev-parse --short=7 refs/kiln/policy)); this plan would bring it to 32: 16 in beta (this plan), and in use 16 in alpha; nothing was changed
  hint: shrink the plan, free what those workspaces hold (kiln down), change the limit (kiln policy set FILE), or have an approved plan waive it: kiln apply PLAN --waive-limit team=getting-started:max_gpus --waive-reason TEXT" \
		-- "$KILN" plan -w beta
	check "quota: apply over the team's GPU limit is refused with the numbers" 1 \
		--err-has "kiln: apply: team 'getting-started' may run at most 24 GPUs at once (policy limits[0], commit " \
		--err-has "this plan would bring it to 32: 16 in beta (this plan), and in use 16 in alpha; nothing was changed" \
		-- "$KILN" apply --auto-approve -w beta
	check "quota: the refused workspace recorded nothing" 1 --out "" \
		-- git --git-dir=.kiln/state.git rev-parse -q --verify refs/heads/beta
	sed 's/count: 2/count: 1/' kiln.yaml >small.yaml
	check "quota: a plan that fits beside the others applies" 0 \
		-- "$KILN" apply small.yaml --auto-approve -w beta
	check "quota: shrinking is never refused, even over a limit set lower since" 0 \
		-- sh -c 'printf "{\"version\": 1, \"limits\": [{\"team\": \"getting-started\", \"max_gpus\": 8}]}\n" >low.json &&
			"$1" policy set low.json >/dev/null && "$1" apply small.yaml --auto-approve -w alpha' sh "$KILN"

	# A waiver: only a saved plan whose approvals count may carry one.
	rp_qpolicy '{"version": 1, "limits": [{"team": "getting-started", "max_gpus": 24}]}'
	check "quota: --waive-limit without --waive-reason is refused" 1 --out "" \
		--err "kiln: apply: --waive-limit needs --waive-reason TEXT; name the limit as the refusal names it and say why on one line: --waive-limit team=research:max_gpus --waive-reason 'the launch week'" \
		-- "$KILN" apply --auto-approve -w gamma --waive-limit team=getting-started:max_gpus
	check "quota: a waiver from a spec, with no approvals, is refused" 1 \
		--err-has "kiln: apply: --waive-limit waives a limit only for a saved plan whose approvals count; nothing was changed" \
		-- "$KILN" apply --auto-approve -w gamma --waive-limit team=getting-started:max_gpus --waive-reason "launch week"
	mkdir trusted
	openssl genpkey -algorithm ed25519 -out alice.key 2>/dev/null
	chmod 600 alice.key
	openssl pkey -in alice.key -pubout -out trusted/alice.pub 2>/dev/null
	"$KILN" plan -w gamma --out g.kiln >/dev/null 2>&1
	"$KILN" approve g.kiln --key alice.key --signer alice >/dev/null 2>&1
	check "quota: an approved plan with a waiver applies past the limit" 0 \
		-- "$KILN" apply g.kiln -w gamma --require-approvals 1 --trusted-keys trusted \
		--waive-limit team=getting-started:max_gpus --waive-reason "launch week"
	check "quota: the commit records the waiver and its reason" 0 \
		--out-has "Kiln-Quota-Waived: team=getting-started:max_gpus: launch week" \
		-- git --git-dir=.kiln/state.git log -1 --format=%B gamma

	# Up-front: a Capacity Block over the workspaces' limit.
	mkdir blk && cp "$E2E_ROOT/examples/capacity-block.yaml" blk/kiln.yaml
	check "quota: a purchase over the up-front limit is refused with its fee" 1 \
		--err-has "kiln: apply: workspaces 'blk*' may buy at most \$1,000.00 up front in one plan (policy limits[1], commit " \
		--err-has "this plan buys \$4,719.36 up front in blk1; nothing was changed" \
		-- sh -c 'printf "{\"version\": 1, \"limits\": [{\"team\": \"nobody\", \"max_gpus\": 0}, {\"workspace\": \"blk*\", \"max_upfront_usd\": 1000}]}\n" >p2.json &&
			"$1" policy set p2.json >/dev/null && "$1" apply blk/kiln.yaml --auto-approve --allow-purchase -w blk1' sh "$KILN"

	# A monthly budget: on the 31st, each 2-node cluster burns 196.6838 × 24 h = 4720.41
	# to the month's end; with alpha (1 node) and gamma (2) running, beta would bring
	# the month past $9,000.
	rp_qpolicy '{"version": 1, "limits": [{"team": "getting-started", "monthly_budget_usd": 9000}]}'
	check "quota: a plan past the team's monthly budget is refused with what was spent and who burns" 1 \
		--err-has "kiln: apply: team 'getting-started' has a monthly budget of \$9,000.00 (policy limits[0], commit " \
		--err-has "this plan would bring 2027-01 to \$" \
		--err-has ' spent so far, the rest at the hourly cost of beta (this plan), alpha ($98.34/h), gamma ($196.68/h) to the month'"'"'s end; nothing was changed' \
		-- "$KILN" apply --auto-approve -w beta
	unset KILN_NOW
	cd "$rp_quota_saved" || return
}

# Two applies of two workspaces against one limit (24 GPUs, 16 each): never both pass.
rp_quota_race() {
	rp_race_saved=$PWD
	rp_dir=$(mktemp -d "$E2E_TMP/report.XXXXXX")
	cd "$rp_dir" || return
	cp "$E2E_ROOT/examples/quickstart.yaml" kiln.yaml
	"$KILN" workspace new default >/dev/null 2>&1
	rp_qpolicy '{"version": 1, "limits": [{"team": "getting-started", "max_gpus": 24}]}'
	# x stops after its check passed, before its claim; y passes and claims; x goes on:
	# its swap fails, it reads y's claim and is refused.
	KILN_TEST_STOP_AT=quota "$KILN" apply --auto-approve -w x >x.out 2>x.err &
	rp_x=$!
	rp_n=0
	until rp_stopped "$rp_x" || [ $rp_n -ge 600 ]; do
		sleep 0.1
		rp_n=$((rp_n + 1))
	done
	"$KILN" apply --auto-approve -w y >y.out 2>y.err
	printf '%s\n' "$?" >y.rc
	kill -CONT "$rp_x"
	wait "$rp_x"
	printf '%s\n' "$?" >x.rc
	check "quota: of two racing applies, the one that claimed first passes" 0 --out "0" -- cat y.rc
	check "quota: the other, its check passed before the claim, is refused at the swap naming the winner" 0 \
		--out-has "1" \
		--out-has "kiln: apply: team 'getting-started' may run at most 24 GPUs at once" \
		--out-has "this plan would bring it to 32: 16 in x (this plan), and in use 16 in y; nothing was changed" \
		-- sh -c 'cat x.rc x.err'
	check "quota: the refused race loser recorded nothing" 1 --out "" \
		-- git --git-dir=.kiln/state.git rev-parse -q --verify refs/heads/x
	# Unforced: both at once, three times over fresh workspaces; exactly one passes each time.
	for rp_round in 1 2 3; do
		"$KILN" destroy --auto-approve -w y >/dev/null 2>&1
		"$KILN" destroy --auto-approve -w "p$((rp_round - 1))" >/dev/null 2>&1
		"$KILN" apply --auto-approve -w "p$rp_round" >/dev/null 2>&1 &
		rp_a=$!
		"$KILN" apply --auto-approve -w "q$rp_round" >/dev/null 2>&1 &
		rp_b=$!
		wait "$rp_a"
		rp_ra=$?
		wait "$rp_b"
		rp_rb=$?
		printf '%s %s\n' "$rp_ra" "$rp_rb" >>race.rc
		"$KILN" destroy --auto-approve -w "q$rp_round" >/dev/null 2>&1
	done
	assert "quota: two applies started together never both pass (3 rounds)" python3 -c '
rounds = [l.split() for l in open("race.rc")]
assert len(rounds) == 3, rounds
assert all(sorted(r) == ["0", "1"] for r in rounds), rounds
'
	cd "$rp_race_saved" || return
}

# Hostile text in a ledger: a spec tag and forged trailers (issue 33).
rp_hostile() {
	rp_hostile_saved=$PWD
	rp_dir=$(mktemp -d "$E2E_TMP/report.XXXXXX")
	cd "$rp_dir" || return
	rp_apply 2027-01-01T00:00:00Z 1 -w forged
	rp_forge forged 0 'Kiln-Tag: team==HYPERLINK("http://evil.example/","x")'
	sed -i 's/^tags: .*/tags: {team: "=1+2"}/' kiln.yaml
	KILN_NOW=2027-01-01T00:00:00Z "$KILN" apply --auto-approve -w formula >/dev/null 2>&1
	check "report: csv writes a formula-like tag and a forged one as text, quoted after a '" 0 \
		--out-has "\"'=1+2\",formula,no,quickstart,2027-01-01T00:00:00Z,,10.0000,80.0000,983.4190,0.0000,,," \
		--out-has "\"'=HYPERLINK(\"\"http://evil.example/\"\",\"\"x\"\")\",forged,no,quickstart,2027-01-01T00:00:00Z,,10.0000,80.0000,983.4190,0.0000,,," \
		-- env KILN_NOW=2027-01-01T10:00:00Z "$KILN" report --by tag:team --format csv
	rp_apply 2027-01-01T00:00:00Z 1 -w ctl
	rp_forge ctl 0 "Kiln-Tag: team=$(printf 'a\033[2Jb\007c\rd\342\200\256e')"
	check "report: a forged tag's ESC, BEL, CR and U+202E reach the terminal as '?'" 0 \
		--out-has "  a?[2Jb?c?d?e             1 lifetime, 10.00 hours, 80.00 GPU-hours, \$983.42" \
		-- env KILN_NOW=2027-01-01T10:00:00Z "$KILN" report --by tag:team
	assert "report: and no control byte or bidi override is printed raw" sh -c \
		'! LC_ALL=C grep -q "$(printf "[\033\007\r]")" "$1" && ! grep -q "$(printf "\342\200\256")" "$1"' sh "$E2E_OUT"
	rp_ledger_forged
	cd "$rp_hostile_saved" || return
}

# Malformed ledger trailers, forged one at a time into the second commit of a
# history (00:00 2 nodes, 02:00 4 nodes, now 03:00): each is named with its
# commit and field, none is counted as money, and report exits 1.
rp_ledger_case() { # TRAILER MESSAGE
	rp_forge default 1 "$1"
	rp_h=$(git --git-dir=.kiln/state.git rev-parse refs/heads/default | cut -c1-7)
	check "report: a forged '$1' is named with its commit, never counted as money" 1 \
		--out-has "Total: 1 lifetime, 3.00 hours, unknown GPU-hours, unknown." \
		--out-has "Cost unknown: part of the ledger is malformed (each commit is named on standard error), so its burn is not counted." \
		--err "kiln: report: error: ledger commit $rp_h: $2
kiln: report: the report is incomplete: 1 malformed ledger commit is not counted, so the cost of its lifetime is unknown" \
		-- env KILN_NOW=2027-01-01T03:00:00Z "$KILN" report
	rp_forge default 1 "Kiln-Time: 2027-01-01T02:00:00Z" \
		"Kiln-Burn: 393.3677 USD/h (1 part billed by use, not counted)" "Kiln-GPUs: 32"
}

rp_ledger_forged() {
	rp_dir=$(mktemp -d "$E2E_TMP/report.XXXXXX")
	cd "$rp_dir" || return
	rp_apply 2027-01-01T00:00:00Z 2
	rp_apply 2027-01-01T02:00:00Z 4
	check "report: the unforged history is counted" 0 \
		--out-has "Total: 1 lifetime, 3.00 hours, 64.00 GPU-hours, \$786.74." \
		-- env KILN_NOW=2027-01-01T03:00:00Z "$KILN" report
	rp_ledger_case "Kiln-Burn: 12abc" 'Kiln-Burn "12abc" is not a number of USD per hour'
	rp_ledger_case "Kiln-Burn: nan USD/h" 'Kiln-Burn "nan USD/h" is not a number of USD per hour'
	rp_ledger_case "Kiln-Burn: inf USD/h" 'Kiln-Burn "inf USD/h" is not a number of USD per hour'
	rp_ledger_case "Kiln-Burn: 1e400 USD/h" 'Kiln-Burn "1e400 USD/h" is not a number of USD per hour'
	rp_ledger_case "Kiln-Burn: " 'Kiln-Burn "" is not a number of USD per hour'
	rp_ledger_case "Kiln-GPUs: -3" 'Kiln-GPUs "-3" is not a whole number of GPUs'
	rp_ledger_case "Kiln-Time: 1900-01-01T00:00:00Z" \
		"Kiln-Time \"1900-01-01T00:00:00Z\" is before its parent's (2027-01-01T00:00:00Z)"
	# The split, the budget and kept storage are read as strictly as the burn.
	rp_ledger_case "Kiln-Burn-Storage: 1e400 USD/h" 'Kiln-Burn-Storage "1e400 USD/h" is not a number of USD per hour'
	rp_forge default 1 "Kiln-Burn-Storage: 0.0000 USD/h"
	rp_ledger_case "Kiln-Budget: lots" 'Kiln-Budget "lots" is not a number of USD per hour'
	rp_forge default 1 "Kiln-Budget: 400.0000 USD/h"
	rp_ledger_case "Kiln-Retained: -1 USD/h" 'Kiln-Retained "-1 USD/h" is not a number of USD per hour'
	rp_forge default 1 "Kiln-Retained: 0.0000 USD/h"
	check "report: the restored history is counted again" 0 \
		--out-has "Total: 1 lifetime, 3.00 hours, 64.00 GPU-hours, \$786.74." \
		-- env KILN_NOW=2027-01-01T03:00:00Z "$KILN" report
}

report_tests() {
	rp_saved_dir=$PWD
	export KILN_AUTHOR="Ann Ops <ann@example.com>"
	rp_dir=$(mktemp -d "$E2E_TMP/report.XXXXXX")
	cd "$rp_dir" || return

	# --- bad input ---
	check "report: an unknown --by key is refused, naming the keys" 1 --out "" \
		--err "kiln: report: unknown --by key 'owner'
  hint: use --by workspace, --by cluster, --by run or --by tag:KEY (a spec tag)" \
		-- "$KILN" report --by owner
	check "report: --by tag: without a key is refused" 1 --out "" \
		--err "kiln: report: unknown --by key 'tag:'
  hint: use --by workspace, --by cluster, --by run or --by tag:KEY (a spec tag)" \
		-- "$KILN" report --by tag:
	check "report: --since must be a date" 1 --out "" \
		--err "kiln: report: --since 'yesterday' is not a date
  hint: write it as 2027-01-31 or 2027-01-31T12:00:00Z" \
		-- "$KILN" report --since yesterday
	check "report: an unknown --format is refused" 1 --out "" \
		--err "kiln: report: unknown --format 'pdf'; use text, json, csv or html" \
		-- "$KILN" report --format pdf

	# --- a history at set clock times ---
	# train: 2 nodes at 00:00, 4 at 02:00, 1 at 05:00, destroyed at 06:00; again 2 nodes
	# at 20:00, running at 24:00. scratch: 1 node 01:00-02:00, then the workspace deleted.
	rp_apply 2027-01-01T00:00:00Z 2 -w train
	rp_apply 2027-01-01T01:00:00Z 1 -w scratch
	rp_apply 2027-01-01T02:00:00Z 4 -w train
	KILN_NOW=2027-01-01T02:00:00Z "$KILN" destroy --auto-approve -w scratch >/dev/null 2>&1
	"$KILN" workspace delete scratch >/dev/null 2>&1
	rp_apply 2027-01-01T05:00:00Z 1 -w train
	KILN_NOW=2027-01-01T06:00:00Z "$KILN" destroy --auto-approve -w train >/dev/null 2>&1
	rp_apply 2027-01-01T20:00:00Z 2 -w train
	check "report: each apply and destroy commit records the burn after it and the GPUs" 0 \
		--out-has "Kiln-Time: 2027-01-01T20:00:00Z" \
		--out-has "Kiln-Burn: 196.6838 USD/h (1 part billed by use, not counted)" \
		--out-has "Kiln-GPUs: 16" --out-has "Kiln-Tag: team=getting-started" \
		--out-has "Kiln-Burn-Compute: 196.6838 USD/h" --out-has "Kiln-Burn-Storage: 0.0000 USD/h" \
		--out-has "Kiln-Budget: 400.0000 USD/h" \
		-- git --git-dir=.kiln/state.git log -1 --format=%B train

	# The burns the commits record (USD/h): a p5.48xlarge node is 98.32 on-demand and
	# its 200 GB gp3 root volume 200 × 0.08 / 730 = 0.021918; 1 node 98.3419, 2 nodes
	# 196.6838, 4 nodes 393.3677 (each rounded to 4 places), 8 GPUs a node.
	#   train, first lifetime: 2 h × 196.6838 + 3 h × 393.3677 + 1 h × 98.3419
	#     = 393.3676 + 1180.1031 + 98.3419 = 1671.8126; GPU-hours 2×16 + 3×32 + 1×8 = 136
	#   train, running since 20:00, now 24:00: 4 h × 196.6838 = 786.7352; GPU-hours 64
	#   scratch (archived): 1 h × 98.3419 = 98.3419; GPU-hours 8
	#   total: 2556.8897 over 11 hours, 208 GPU-hours
	export KILN_NOW=2027-01-02T00:00:00Z
	check "report: the text report gives each lifetime the hand-computed cost" 0 \
		--out-has "Cost of each cluster lifetime, by workspace, from the first commit to 2027-01-02T00:00:00Z" \
		--out-has "scratch (archived)       quickstart       2027-01-01T01:00:00Z 2027-01-01T02:00:00Z      1.00       8.00       \$98.34" \
		--out-has "train                    quickstart       2027-01-01T00:00:00Z 2027-01-01T06:00:00Z      6.00     136.00    \$1,671.81" \
		--out-has "train                    quickstart       2027-01-01T20:00:00Z running                   4.00      64.00      \$786.74" \
		--out-has "  train                    2 lifetimes, 10.00 hours, 200.00 GPU-hours, \$2,458.55" \
		--out-has "Total: 3 lifetimes, 11.00 hours, 208.00 GPU-hours, \$2,556.89." \
		-- "$KILN" report
	"$KILN" report --format json >report.json 2>&1
	assert "report: --format json carries the exact figures" python3 -c '
import json
d = json.load(open("report.json"))
lt = {(l["workspace"], l["start"]): l for l in d["lifetimes"]}
first = lt[("train", "2027-01-01T00:00:00Z")]
assert first["cost"] == round(2 * 196.6838 + 3 * 393.3677 + 1 * 98.3419, 4) == 1671.8126, first
assert first["gpu_hours"] == 2 * 16 + 3 * 32 + 8 and first["hours"] == 6, first
assert first["end"] == "2027-01-01T06:00:00Z" and first["useful_gpu_hours"] is None, first
run = lt[("train", "2027-01-01T20:00:00Z")]
assert run["end"] is None and run["cost"] == round(4 * 196.6838, 4), run
old = lt[("scratch", "2027-01-01T01:00:00Z")]
assert old["archived"] is True and old["cost"] == 98.3419, old
assert d["total"]["cost"] == round(1671.8126 + 786.7352 + 98.3419, 4), d["total"]
assert [p[1] for p in first["series"]] == [0.0, 393.3676, 1573.4707, 1671.8126], first["series"]
# The split the ledger recorded: all compute (the object store is billed by use).
assert first["compute_cost"] == 1671.8126 and first["storage_cost"] == 0, first
assert [(s["start"], s["usd_per_hour"], s["budget_usd_per_hour"], s["gpus"]) for s in first["stretches"]] == [
    ("2027-01-01T00:00:00Z", 196.6838, 400, 16), ("2027-01-01T02:00:00Z", 393.3677, 400, 32),
    ("2027-01-01T05:00:00Z", 98.3419, 400, 8)], first["stretches"]
assert run["stretches"][0]["end"] == "2027-01-02T00:00:00Z" and run["stretches"][0]["gpu_util"] is None, run
assert d["total"]["retained_cost"] == 0 and d["total"]["idle_gpu_hours"] is None, d["total"]
'
	check "report: --by cluster adds up the workspaces of a cluster" 0 \
		--out-has "  quickstart               3 lifetimes, 11.00 hours, 208.00 GPU-hours, \$2,556.89" \
		-- "$KILN" report --by cluster
	check "report: --by tag:team groups by the spec's tag" 0 \
		--out-has "  getting-started          3 lifetimes, 11.00 hours, 208.00 GPU-hours, \$2,556.89" \
		-- "$KILN" report --by tag:team
	# --since 04:00: train's first lifetime 1 h × 393.3677 + 1 h × 98.3419 = 491.7096,
	# scratch (ended at 02:00) left out, the running one 786.7352: 1278.4448.
	check "report: --since counts only what burned from then on" 0 \
		--out-has "Total: 2 lifetimes, 6.00 hours, 104.00 GPU-hours, \$1,278.44." \
		-- "$KILN" report --since 2027-01-01T04:00:00Z
	check "report: --format csv has a header and a row per lifetime" 0 \
		--out-has "group,workspace,archived,cluster,start,end,hours,gpu_hours,cost_usd,upfront_usd,useful_gpu_hours,mean_gpu_util,cost_per_useful_gpu_hour_usd" \
		--out-has "train,train,no,quickstart,2027-01-01T00:00:00Z,2027-01-01T06:00:00Z,6.0000,136.0000,1671.8126,0.0000,,," \
		--out-has "scratch,scratch,yes,quickstart,2027-01-01T01:00:00Z,2027-01-01T02:00:00Z,1.0000,8.0000,98.3419,0.0000,,," \
		-- "$KILN" report --format csv

	# --- the HTML page in a real browser ---
	"$KILN" report --format html >report.html 2>&1
	assert "report: the HTML page fetches nothing (no script, link, src or url())" sh -c \
		'! grep -Eiq "<script|<link|src=|url\\(|@import|https?:" report.html'
	if ! command -v chromium >/dev/null 2>&1; then
		fail "report: chromium is installed (scripts/deps.sh --install adds it)" /dev/null
	else
		rp_chromium --dump-dom "file://$rp_dir/report.html" >dom.html
		rp_text_total=$("$KILN" report | sed -n 's/^Total: .*GPU-hours, \(.*\)\.$/\1/p')
		assert "report: Chromium's DOM holds the text report's totals" python3 -c '
import html.parser, sys
class P(html.parser.HTMLParser):
    def __init__(s):
        super().__init__(); s.cells = {}; s.id = None
    def handle_starttag(s, tag, attrs):
        s.id = dict(attrs).get("id")
    def handle_data(s, data):
        if s.id: s.cells[s.id] = s.cells.get(s.id, "") + data
p = P(); p.feed(open("dom.html").read())
want = {"total-cost": sys.argv[1], "total-hours": "11.00", "total-gpu-hours": "208.00"}
got = {k: p.cells.get(k) for k in want}
assert got == want, (got, want)
assert "<svg" in open("dom.html").read() and "polyline" in open("dom.html").read()
' "$rp_text_total"
		# The page wrapped with tests/e2e/report_check.js (the page has no script of its
		# own), laid out at a laptop's and a small window's width.
		{ sed 's#</body></html>##' report.html; printf '<script>\n'
		  cat "$E2E_ROOT/tests/e2e/report_check.js"; printf '</script></body></html>\n'; } >check.html
		for rp_w in 1280 800; do
			rp_chromium --window-size=$rp_w,1000 --virtual-time-budget=2000 --dump-dom \
				"file://$rp_dir/check.html" >layout$rp_w.html
			rp_chromium --hide-scrollbars --window-size=$rp_w,3000 \
				--screenshot="$rp_dir/report$rp_w.png" "file://$rp_dir/report.html" >/dev/null
			assert "report: at $rp_w px nothing overflows, and every chart has both axes with ticks, their titles and a legend" \
				python3 "$E2E_ROOT/tests/e2e/report_layout.py" "layout$rp_w.html" "$rp_w"
		done
		assert "report: Chromium takes a screenshot at 1280 and 800 px (PNG of that width)" \
			python3 -c '
import struct
for w in (1280, 800):
    b = open("report%d.png" % w, "rb").read()
    assert b[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    assert struct.unpack(">II", b[16:24]) == (w, 3000) and len(b) > 20000, (w, len(b))
'
		rp_chromium --screenshot="$rp_dir/phone.png" --window-size=390,1400 \
			"file://$rp_dir/report.html" >/dev/null
		assert "report: Chromium renders the page at a phone's width (a PNG screenshot)" \
			python3 -c '
import struct
b = open("phone.png", "rb").read()
assert b[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
w, h = struct.unpack(">II", b[16:24])
assert (w, h) == (390, 1400) and len(b) > 10000, (w, h, len(b))
'
		# KILN_REPORT_SHOTS=DIR keeps the screenshots, to look at them.
		[ -z "${KILN_REPORT_SHOTS:-}" ] || cp report1280.png report800.png "$KILN_REPORT_SHOTS/"
	fi
	rp_retained

	# --- utilization in kiln status (sim: KILN_SIM_GPU_UTIL, KILN_SIM_LUSTRE_LOAD) ---
	rp_dir=$(mktemp -d "$E2E_TMP/report.XXXXXX")
	cd "$rp_dir" || return
	sed 's/^  checkpoints: .*/  scratch: {tier: lustre, capacity_gb: 4800, throughput_per_tib: 250}/; /^iam:/,$d; /role: trainer/d' \
		"$E2E_ROOT/examples/quickstart.yaml" >kiln.yaml
	KILN_SIM_READY_MS=0 "$KILN" apply --auto-approve >/dev/null 2>&1
	check "report: status without simulated metrics says no data, and why" 0 \
		--out-has "Utilization (last 15m, simulated):
  trainers         no data: sim publishes no GPU metrics unless KILN_SIM_GPU_UTIL is set (kiln-sim(7))." \
		-- "$KILN" status
	check "report: status with busy GPUs says busy, with the mean" 0 \
		--out-has "  trainers         busy: GPU utilization 92.5% (mean) over 2 nodes; GPU 92.5% mean, 90.0% to 95.0%." \
		-- env KILN_SIM_GPU_UTIL=95,90 "$KILN" status
	check "report: status with every node under 10% says idle" 0 \
		--out-has "  trainers         idle: every node under 10% GPU utilization for the last 1h (highest 4.0%," \
		-- env KILN_SIM_GPU_UTIL=4,2 "$KILN" status --window 1h
	check "report: status with one busy and one idle node says imbalanced" 0 \
		--out-has "  trainers         imbalanced: 1 of 2 nodes at 50% or more, 1 under 10% (" \
		--out-has "; GPU 48.5% mean, 2.0% to 95.0%." \
		-- env KILN_SIM_GPU_UTIL=95,2 "$KILN" status
	# 250 MB/s/TiB × 4800 GB / 1024 = 1171.875 MB/s provisioned; 95% of it is 1113.28.
	check "report: status with low GPUs and a saturated Lustre store says storage-bound, with the fix" 0 \
		--out-has "  trainers         storage-bound: GPU utilization 25.0% (mean) while sim_lustre.scratch moves 1113.3 of the 1171.9 MB/s the spec provisioned (95%); GPU 25.0% mean, 20.0% to 30.0%." \
		--out-has "fix: raise storage.scratch.throughput_per_tib from 250 to 500 (+\$" \
		--out-has "  scratch          Lustre 1113.3 MB/s read, 0.0 MB/s written of 1171.9 provisioned (95%)." \
		-- env KILN_SIM_GPU_UTIL=20,30 KILN_SIM_LUSTRE_LOAD=95 "$KILN" status
	"$KILN" status --json >status.json 2>&1
	KILN_SIM_GPU_UTIL=95,2 "$KILN" status --json >status2.json 2>&1
	assert "report: status --json carries the utilization and its diagnosis" python3 -c '
import json
u = json.load(open("status.json"))["utilization"]
assert u["simulated"] is True and u["window_seconds"] == 900, u
assert u["groups"][0]["diagnosis"] == "no data" and u["groups"][0]["gpu_util"] is None, u
g = json.load(open("status2.json"))["utilization"]["groups"][0]
assert (g["gpu_util"], g["gpu_util_min"], g["gpu_util_max"], g["diagnosis"]) == (48.5, 2.0, 95.0, "imbalanced"), g
assert [n["gpu_util"] for n in g["per_node"]] == [95.0, 2.0], g
'
	check "report: status refuses a window shorter than the metric period" 1 --out "" \
		--err "kiln: status: --window 30s is shorter than the metric period (1m): utilization is sampled once a minute
  hint: write 1m or more; the default is 15m" \
		-- "$KILN" status --window 30s
	check "report: metrics that cannot be read leave the rest of the status, saying why" 0 \
		--out-has "Utilization: not measured: KILN_SIM_GPU_UTIL '9x' is not a list of percentages (sim)" \
		--out-has "Node groups:" \
		-- env KILN_SIM_GPU_UTIL=9x "$KILN" status
	check "report: KILN_SIM_GPU_UTIL with nan is refused, not taken for idle" 0 \
		--out-has "Utilization: not measured: KILN_SIM_GPU_UTIL '5,nan' is not a list of percentages (sim)" \
		-- env KILN_SIM_GPU_UTIL=5,nan "$KILN" status

	# --- kiln reap by idleness (sim) ---
	rp_dir=$(mktemp -d "$E2E_TMP/report.XXXXXX")
	cd "$rp_dir" || return
	sed 's/^ttl: 8h$/idle: {gpu_below: 10%, for: 30m, action: down}/' \
		"$E2E_ROOT/examples/quickstart.yaml" >kiln.yaml
	KILN_NOW=2027-01-01T00:00:00Z "$KILN" apply --auto-approve >/dev/null 2>&1
	check "report: reap never reaps on missing data, and says so" 0 \
		--out "default: kept: no utilization data for trainers (sim publishes no GPU metrics unless KILN_SIM_GPU_UTIL is set (kiln-sim(7))); reap never reaps on missing data" \
		-- env KILN_NOW=2027-01-01T03:00:00Z "$KILN" reap
	check "report: reap keeps a workspace whose GPUs are busy on some nodes" 0 \
		--out-has "default: kept: trainers is not idle (imbalanced: 1 of 2 nodes at 50% or more, 1 under 10% (" \
		-- env KILN_NOW=2027-01-01T03:00:00Z KILN_SIM_GPU_UTIL=95,3 "$KILN" reap
	check "report: reap --dry-run lists the idle workspace and why" 0 \
		--out-has "default: would reap: 5 resources (idle: trainers: every node under 10% GPU utilization for the last 30m (highest 4.0%, " \
		-- env KILN_NOW=2027-01-01T03:00:00Z KILN_SIM_GPU_UTIL=3,4 "$KILN" reap --dry-run
	assert "report: the dry run changed nothing" sh -c \
		'[ "$(git --git-dir=.kiln/state.git rev-list --count default)" = 1 ]'
	check "report: reap takes the idle workspace down" 0 \
		--out-has "default: reaped: 4 deleted, 1 retained (idle: trainers: every node under 10% GPU utilization for the last 30m" \
		-- env KILN_NOW=2027-01-01T03:00:00Z KILN_SIM_GPU_UTIL=3,4 "$KILN" reap
	check "report: the reap's commit says why, with the utilization measured" 0 \
		--out-has "Kiln-Operation: destroy" --out-has "Kiln-Reap-Reason: idle" \
		--out-has "Kiln-GPU-Util: 3.5" --out-has "Kiln-Time: 2027-01-01T03:00:00Z" \
		-- git --git-dir=.kiln/state.git log -1 --format=%B default
	# 3 h at 196.6838: 590.0514; 16 GPUs × 3 h = 48 GPU-hours, 3.5% useful: 1.68;
	# 590.0514 / 1.68 = 351.2211 per useful GPU-hour.
	check "report: the report gives the idle cluster's useful GPU-hours and their cost" 0 \
		--out-has "Total: 1 lifetime, 3.00 hours, 48.00 GPU-hours, \$590.05, 1.68 useful GPU-hours at \$351.22 each." \
		-- env KILN_NOW=2027-01-02T00:00:00Z "$KILN" report

	# --- an apply records the utilization of the stretch it ends ---
	rp_dir=$(mktemp -d "$E2E_TMP/report.XXXXXX")
	cd "$rp_dir" || return
	rp_apply 2027-01-01T00:00:00Z 2
	export KILN_SIM_GPU_UTIL=50
	rp_apply 2027-01-01T02:00:00Z 4
	unset KILN_SIM_GPU_UTIL
	KILN_NOW=2027-01-01T03:00:00Z "$KILN" destroy --auto-approve >/dev/null 2>&1
	check "report: the scaling apply records the GPU utilization since the first" 0 \
		--out-has "Kiln-GPU-Util: 50.0" \
		-- git --git-dir=.kiln/state.git log -1 --skip=1 --format=%B default
	# 0:00-2:00: 16 GPUs × 2 h = 32 GPU-hours at 50%: 16 useful, costing 2 × 196.6838 =
	# 393.3676, 24.5855 each; 2:00-3:00 (no utilization recorded): 32 GPU-hours, 393.3677.
	check "report: useful GPU-hours and their cost come from the stretches with utilization" 0 \
		--out-has "Total: 1 lifetime, 3.00 hours, 64.00 GPU-hours, \$786.74, 16.00 useful GPU-hours at \$24.59 each." \
		-- env KILN_NOW=2027-01-02T00:00:00Z "$KILN" report

	# --- a history from before the ledger ---
	rp_dir=$(mktemp -d "$E2E_TMP/report.XXXXXX")
	cd "$rp_dir" || return
	rp_apply 2027-01-01T00:00:00Z 2
	rp_strip_ledger default
	check "report: a history without the ledger has its cost unknown, never \$0" 0 \
		--out-has " unknown      unknown " \
		--out-has "Cost unknown: part of the history was recorded before the cost ledger" \
		-- "$KILN" report
	"$KILN" report --format json >old.json 2>&1
	assert "report: its JSON cost and GPU-hours are null" python3 -c '
import json
d = json.load(open("old.json"))
l = d["lifetimes"][0]
assert l["cost"] is None and l["gpu_hours"] is None and l["cost_known"] is False, l
assert d["total"]["cost"] is None, d["total"]
'
	unset KILN_NOW
	rp_status_agrees
	rp_quota
	rp_quota_race
	rp_hostile
	report_moto
	report_actual_moto
	cd "$rp_saved_dir" || return
}
