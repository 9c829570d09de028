# runs.sh - end-to-end tests of training runs (issue 27): kiln run, runs,
# run show and run cancel. On sim a run is simulated end to end (its end
# after KILN_SIM_RUN_SECONDS, its tokens from KILN_SIM_RUN_TOKENS_PER_S,
# under KILN_NOW's clock); against moto with a real sshd on loopback
# (KILN_TEST_SSH_ENDPOINT, as the access tests do) the command really
# starts on every node with its KILN_* variables and cancel really ends it.
# The record is read back from the state repository with git itself.
# Sourced by run.sh after lib.sh; $KILN is the binary.

ru_err() { # MESSAGE [HINT]: what kiln run prints on stderr
	if [ $# -gt 1 ]; then
		printf 'kiln: run: %s\n  hint: %s\n' "$1" "$2"
	else
		printf 'kiln: run: %s\n' "$1"
	fi
}

# A fresh directory: the spec, applied on sim, committed in a git repository.
ru_sim_dir() { # SPEC
	ru_dir=$(mktemp -d "$E2E_TMP/runs.XXXXXX")
	cd "$ru_dir" || exit 1
	cp "$E2E_ROOT/$1" kiln.yaml
	printf '.kiln/\n' >.gitignore
	git init -q . && git add kiln.yaml .gitignore &&
		git -c user.name=e2e -c user.email=e2e@example.com commit -qm spec
	KILN_NOW=2026-12-07T00:00:00Z "$KILN" apply --auto-approve >/dev/null 2>&1
}

ru_records() { # the runs.json the runs ref's head holds
	git --git-dir=.kiln/state.git show refs/kiln/runs/default:runs.json
}

ru_sim() {
	ru_sim_dir examples/quickstart.yaml
	export KILN_NOW=2026-12-07T00:00:00Z
	check "runs: a workspace without runs says how to start one" 0 \
		--out "No runs in workspace 'default' yet; kiln run starts one." --err "" \
		-- "$KILN" runs
	check "runs: kiln run with nothing to run is refused" 1 --out "" \
		--err "kiln: run: nothing to run: give --sbatch FILE or -- COMMAND; for example: kiln run trainers -- torchrun train.py, or kiln run --sbatch train.sbatch" \
		-- "$KILN" run trainers
	check "runs: --sbatch without a scheduler is refused, naming the fix" 1 --out "" \
		--err "$(ru_err "--sbatch needs a scheduler, and kiln.yaml has no scheduler: section" "give the command after --, which kiln starts on every node of the group, or add scheduler: {type: slurm}")" \
		-- "$KILN" run --sbatch train.sbatch
	check "runs: a group the spec does not have is refused, naming the groups" 1 --out "" \
		--err "$(ru_err "no group 'evaluators' in kiln.yaml" "name one of its groups: trainers")" \
		-- "$KILN" run evaluators -- python eval.py
	printf 'print("changed")\n' >train.py
	check "runs: a dirty tree is refused before anything is recorded, naming the file" 1 --out "" \
		--err "$(ru_err "the code here is not committed: 1 file differs from $(git rev-parse HEAD) (first: train.py)" "commit them so the run's lineage names its code, or pass --allow-dirty to record the run with a digest of the diff")" \
		-- "$KILN" run -- python train.py
	assert "runs: the refused run left no runs ref" \
		test -z "$(git --git-dir=.kiln/state.git for-each-ref refs/kiln/runs)"
	check "runs: a negative progress rate is refused before anything is recorded" 1 --out "" \
		--err "$(ru_err "sim: KILN_SIM_RUN_TOKENS_PER_S must be a number of tokens a second of at least 0, like 250000, got '-5'")" \
		-- env KILN_SIM_RUN_TOKENS_PER_S=-5 "$KILN" run --allow-dirty -- python train.py
	check "runs: a progress rate that is not a number is refused" 1 --out "" \
		--err "$(ru_err "sim: KILN_SIM_RUN_TOKENS_PER_S must be a number of tokens a second of at least 0, like 250000, got 'fast'")" \
		-- env KILN_SIM_RUN_TOKENS_PER_S=fast "$KILN" run --allow-dirty -- python train.py
	check "runs: a --data store that does not exist is refused, naming the object stores" 1 --out "" \
		--err "$(ru_err "no store 'datasets' in kiln.yaml" "--data names one of its object stores: checkpoints")" \
		-- "$KILN" run --allow-dirty --data datasets/c4/ -- python train.py
	check "runs: a sim object listing that is not KEY=SIZE pairs is refused" 1 --out "" \
		--err "$(ru_err "sim: KILN_SIM_OBJECTS must be KEY=SIZE pairs separated by commas, like data/a.bin=1024,data/b.bin=2048, got 'c4/a'")" \
		-- env KILN_SIM_OBJECTS=c4/a "$KILN" run --allow-dirty --data checkpoints -- python train.py
	check "runs: --allow-dirty records the run, simulated, and says so" 0 \
		--out-has "recorded and started on trainers: 2 nodes, 16 GPUs." \
		--out-has "(simulated: the sim provider runs no machines; the run ends after 2h)" \
		--err "" \
		-- env KILN_SIM_RUN_SECONDS=7200 KILN_SIM_RUN_TOKENS_PER_S=250000 \
		KILN_E2E_SECRET=s3cr3t-token-value "$KILN" run --allow-dirty --name llama-try1 -- \
		python train.py --token s3cr3t-token-value
	id=$(sed -n 's/^Run \(r-[0-9a-f]*\) .*/\1/p' "$E2E_OUT")
	ru_records >record.json
	assert "runs: the record holds the lineage: code commit, dirty with a diff digest, spec digest, state commit, instance types, nodes" \
		python3 -c '
import json, sys, subprocess
d = json.load(open("record.json"))
assert d["kiln_runs"] == 1, d
r = d["runs"][0]
l = r["lineage"]
head = subprocess.check_output(["git", "rev-parse", "HEAD"], text=True).strip()
state = subprocess.check_output(["git", "--git-dir=.kiln/state.git", "rev-parse", "refs/heads/default"], text=True).strip()
assert r["id"] == sys.argv[1] and r["name"] == "llama-try1", r
assert l["code_commit"] == head and l["dirty"] is True, l
assert l["diff_digest"].startswith("sha256:") and len(l["diff_digest"]) == 71, l
assert l["spec_digest"].startswith("sha256:") and l["state_commit"] == state, l
assert l["instance_types"] == ["p5.48xlarge"] and l["nodes"] == 2, l
assert r["entry"] == {"kind": "command", "name": "python", "args": 3, "digest": r["entry"]["digest"]}, r
assert r["record_digest"].startswith("sha256:") and r["simulated"] is True, r
' "$id"
	assert "runs: no argument or environment value reaches the state repository" \
		test "$(git --git-dir=.kiln/state.git log -p refs/kiln/runs/default | grep -c s3cr3t)" = 0
	assert "runs: the run was recorded before it started: two commits on the runs ref" \
		test "$(git --git-dir=.kiln/state.git log --format=%s refs/kiln/runs/default | tr '\n' '|')" \
		= "run $id started (simulated)|run $id: llama-try1 on trainers (2 nodes)|"
	check "runs: kiln runs lists it running with its tokens so far" 0 \
		--out-has "$id  llama-try1            running        2  2026-12-07T00:00:00Z  -                        -  450.00M" \
		--out-has "(simulated runs: the sim provider runs no machines)" \
		-- env KILN_NOW=2026-12-07T00:30:00Z "$KILN" runs
	check "runs: after the simulated duration it has completed, exit 0, with every token" 0 \
		--out-has "$id  llama-try1            completed      2  2026-12-07T00:00:00Z  2026-12-07T02:00:00Z     0  1.80B" \
		-- env KILN_NOW=2026-12-07T03:00:00Z "$KILN" runs
	check "runs: kiln run show prints the run with its lineage" 0 \
		--out-has "Run $id: llama-try1" \
		--out-has "  state          running" \
		--out-has "  code           $(git rev-parse HEAD)" \
		--out-has "  instance type  p5.48xlarge" \
		--out-has "  entry          command python (3 args, sha256:" \
		-- "$KILN" run show "$id"
	check "runs: kiln runs --json and run show --json give the same run object" 0 --err "" \
		-- "$KILN" runs --json
	cp "$E2E_OUT" runs.json
	"$KILN" run show "$id" --json >show.json
	assert "runs: the JSON run carries id, name, state, tokens and its lineage" \
		python3 -c '
import json
runs = json.load(open("runs.json"))["runs"]
one = json.load(open("show.json"))
assert runs == [one], (runs, one)
for k in ("id", "name", "state", "nodes", "started", "ended", "exit_status", "tokens", "edited"):
    assert k in one, k
for k in ("code_commit", "dirty", "data", "spec_digest", "state_commit", "image"):
    assert k in one["lineage"], k
assert one["tokens"] == 0 and one["state"] == "running", one
'
	check "runs: an unknown run id is refused, naming the latest runs" 1 --out "" \
		--err "$(ru_err "no run 'r-ffffffff' in this workspace" "kiln runs lists them (the latest: $id)")" \
		-- "$KILN" run show r-ffffffff
	check "runs: something that is not a run id is refused" 1 --out "" \
		--err "kiln: run: '../x' is not a run id; a run id is r- and 8 hex digits; kiln runs lists them" \
		-- "$KILN" run cancel ../x
	check "runs: kiln run cancel ends a simulated run" 0 \
		--out "Run $id cancelled (simulated)." --err "" \
		-- env KILN_NOW=2026-12-07T00:45:00Z "$KILN" run cancel "$id"
	check "runs: a cancelled run cannot be cancelled again" 1 --out "" \
		--err "$(ru_err "run $id has already ended: cancelled at 2026-12-07T00:45:00Z" "kiln runs lists the runs still going")" \
		-- "$KILN" run cancel "$id"

	# A hand edit: halve the GPUs of the record in the state repository.
	ru_records | python3 -c '
import json, sys
d = json.load(sys.stdin)
d["runs"][0]["gpus"] = 8
print(json.dumps(d, indent=2, sort_keys=True))' >edited.json
	blob=$(git --git-dir=.kiln/state.git hash-object -w edited.json)
	tree=$(printf '100644 blob %s\truns.json\n' "$blob" | git --git-dir=.kiln/state.git mktree)
	commit=$(git --git-dir=.kiln/state.git -c user.name=x -c user.email=x@example.com \
		commit-tree "$tree" -p refs/kiln/runs/default -m "cheaper, by hand")
	git --git-dir=.kiln/state.git update-ref refs/kiln/runs/default "$commit"
	check "runs: a hand-edited record is marked, never trusted for money" 0 \
		--out-has "$id  llama-try1            cancelled      2  2026-12-07T00:00:00Z  2026-12-07T00:45:00Z     -  675.00M  EDITED: not trusted for money" \
		-- "$KILN" runs
	check "runs: run show names the edit" 0 \
		--out-has "  EDITED: its record_digest sha256:" \
		--out-has "is not the digest of what it holds" \
		-- "$KILN" run show "$id"
	"$KILN" runs --json >edited-runs.json
	assert "runs: the JSON says edited" python3 -c '
import json
r = json.load(open("edited-runs.json"))["runs"][0]
assert r["edited"] is True and "not the digest" in r["edited_why"], r'

	# A group with no nodes.
	sed -i 's/count: 2/count: 0/' kiln.yaml
	"$KILN" apply --auto-approve >/dev/null 2>&1
	check "runs: a run on a group with no nodes is refused" 1 --out "" \
		--err "$(ru_err "group 'trainers' has no nodes in workspace 'default'" "kiln apply (or kiln up) starts them; kiln hosts lists the nodes there are")" \
		-- "$KILN" run --allow-dirty -- python train.py
	check "runs: kiln help run shows the subcommands" 0 \
		--out-has "Usage: kiln run [GROUP] [--name NAME] (--sbatch FILE | -- COMMAND [ARGS...])  |  show ID  |  cancel ID" \
		-- "$KILN" help run
	unset KILN_NOW
	cd "$E2E_ROOT" || exit 1
}

# kiln status shows each running run: pace, MFU, ETA against the
# workload's deadline, cost so far and projected, the warning; and "no
# data" (never 0) for a run that reports no progress.
ru_status() {
	ru_sim_dir examples/quickstart.yaml
	printf 'workload: {params: 8B, tokens: 20B, deadline: 1d}\n' >>kiln.yaml
	git -c user.name=e2e -c user.email=e2e@example.com commit -qam workload
	export KILN_NOW=2026-12-07T00:00:00Z
	"$KILN" apply --auto-approve >/dev/null 2>&1
	KILN_SIM_RUN_TOKENS_PER_S=150000 KILN_SIM_RUN_SECONDS=200000 \
		"$KILN" run --name llama8b -- torchrun train.py >"$E2E_TMP/run.out" 2>&1
	id=$(sed -n 's/^Run \(r-[0-9a-f]*\) .*/\1/p' "$E2E_TMP/run.out")
	KILN_SIM_RUN_SECONDS=200000 "$KILN" run --name quiet -- python quiet.py >"$E2E_TMP/run2.out" 2>&1
	id2=$(sed -n 's/^Run \(r-[0-9a-f]*\) .*/\1/p' "$E2E_TMP/run2.out")
	check "runs: status shows the run's pace, MFU, ETA, deadline, cost and the deadline it will miss" 0 \
		--out-has "Runs:" \
		--out-has "  $id llama8b on trainers (2 nodes, 16 GPUs): running 1h0m (simulated)" \
		--out-has "    150000 tokens/s, MFU 0.45, ETA 1d12h (deadline 2026-12-08T00:00:00Z); cost \$196.68 so far, \$7,284.59 projected" \
		--out-has "    warning: will miss its deadline (2026-12-08T00:00:00Z) by 13h2m14s at this pace" \
		--out-has "  $id2 quiet on trainers (2 nodes, 16 GPUs): running 1h0m (simulated)" \
		--out-has "    no data, no data, ETA no data (deadline 2026-12-08T00:00:00Z); cost \$196.68 so far, no data projected" \
		-- env KILN_NOW=2026-12-07T01:00:00Z "$KILN" status
	check "runs: status --json carries the runs, no data as null" 0 \
		-- env KILN_NOW=2026-12-07T01:00:00Z "$KILN" status --json
	cp "$E2E_OUT" "$E2E_TMP/status.json"
	assert "runs: the JSON run figures" python3 -c '
import json, sys
runs = {r["name"]: r for r in json.load(open(sys.argv[1]))["runs"]}
a, q = runs["llama8b"], runs["quiet"]
assert a["tokens_per_second"] == 150000 and a["mfu"] == 0.4548 and a["eta_seconds"] == 129734, a
assert a["cost_so_far_usd"] == a["hourly_usd"] == 196.6838 and a["elapsed_seconds"] == 3600, a
assert q["tokens_per_second"] is None and q["mfu"] is None and q["eta_seconds"] is None, q
assert q["tokens"] is None and q["projected_cost_usd"] is None, q
' "$E2E_TMP/status.json"
	unset KILN_NOW
	cd "$E2E_ROOT" || exit 1
}

# kiln report --by run: each run's cost, idle, and the invariant that the
# runs and idle add up to the lifetime's cost to the cent, in every format
# (the HTML read back by headless Chromium); a hand-edited record's cost
# is not trusted and its time counted as idle.
ru_report() {
	ru_sim_dir examples/quickstart.yaml
	KILN_NOW=2026-12-07T01:00:00Z KILN_SIM_RUN_TOKENS_PER_S=100000 \
		"$KILN" run --name a -- python a.py >"$E2E_TMP/a.out" 2>&1
	ida=$(sed -n 's/^Run \(r-[0-9a-f]*\) .*/\1/p' "$E2E_TMP/a.out")
	KILN_NOW=2026-12-07T03:00:00Z KILN_SIM_RUN_SECONDS=7200 \
		"$KILN" run --name b -- python b.py >"$E2E_TMP/b.out" 2>&1
	idb=$(sed -n 's/^Run \(r-[0-9a-f]*\) .*/\1/p' "$E2E_TMP/b.out")
	export KILN_NOW=2026-12-07T06:00:00Z
	check "runs: report --by run gives each run's GPU-hours, cost, tokens and idle" 0 \
		--out-has "$ida  a                     completed       16.00       \$196.68      360M       \$0.55  no data" \
		--out-has "$idb  b                     completed       32.00       \$393.37   no data     no data  no data" \
		--out-has "Idle (what no run used): \$590.05; runs and idle add up to \$1,180.10." \
		-- "$KILN" report --by run
	"$KILN" report --by run --format json >"$E2E_TMP/report.json"
	"$KILN" report --format json >"$E2E_TMP/lifetimes.json"
	assert "runs: JSON: runs + idle = total = the lifetimes' cost, to the cent; the run object has its lineage" \
		python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); l = json.load(open(sys.argv[2]))
runs = d["runs"]
assert [r["name"] for r in runs] == ["a", "b"], runs
cents = lambda v: round(v * 100)
assert cents(sum(r["cost_usd"] for r in runs)) + cents(d["idle_usd"]) == cents(d["total_usd"]), d
assert cents(d["total_usd"]) == cents(l["total"]["cost"]), (d["total_usd"], l["total"])
a = runs[0]
for k in ("id", "name", "state", "cost_usd", "gpu_hours", "tokens", "usd_per_million_tokens", "mfu"):
    assert k in a, k
for k in ("code_commit", "dirty", "data", "spec_digest", "state_commit", "image"):
    assert k in a["lineage"], k
assert a["usd_per_million_tokens"] == round(a["cost_usd"] / 360, 4), a
' "$E2E_TMP/report.json" "$E2E_TMP/lifetimes.json"
	"$KILN" report --by run --format csv >"$E2E_TMP/report.csv"
	assert "runs: CSV: a row a run, then idle and total, adding up" python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert [r["id"] for r in rows] == [sys.argv[2], sys.argv[3], "idle", "total"], rows
c = [round(float(r["cost_usd"]) * 100) for r in rows]
assert c[0] + c[1] + c[2] == c[3], c
' "$E2E_TMP/report.csv" "$ida" "$idb"
	"$KILN" report --by run --format html >"$E2E_TMP/report.html"
	if ! command -v chromium >/dev/null 2>&1; then
		fail "runs: chromium is installed (scripts/deps.sh --install adds it)" /dev/null
	else
		chromium --headless --no-sandbox --disable-gpu --no-first-run \
			--disable-background-networking --disable-component-update --disable-sync \
			--user-data-dir="$E2E_TMP/.chromium-runs" --dump-dom \
			"file://$E2E_TMP/report.html" >"$E2E_TMP/dom.html" 2>/dev/null
		assert "runs: HTML: Chromium's DOM holds each run's cost, idle and the total" python3 -c '
import html.parser, sys
class P(html.parser.HTMLParser):
    def __init__(s):
        super().__init__(); s.cells = {}; s.id = None
    def handle_starttag(s, tag, attrs):
        s.id = dict(attrs).get("id")
    def handle_data(s, data):
        if s.id: s.cells[s.id] = s.cells.get(s.id, "") + data
p = P(); p.feed(open(sys.argv[1]).read())
want = {"run-" + sys.argv[2]: "$196.68", "run-" + sys.argv[3]: "$393.37", "idle": "$590.05", "runs-total": "$1,180.10"}
got = {k: p.cells.get(k) for k in want}
assert got == want, (got, want)
' "$E2E_TMP/dom.html" "$ida" "$idb"
	fi
	# Halve run b's GPUs by hand: its cost is no longer trusted, its time is idle.
	ru_records | python3 -c '
import json, sys
d = json.load(sys.stdin)
d["runs"][1]["gpus"] = 8
print(json.dumps(d, indent=2, sort_keys=True))' >"$E2E_TMP/edited.json"
	blob=$(git --git-dir=.kiln/state.git hash-object -w "$E2E_TMP/edited.json")
	tree=$(printf '100644 blob %s\truns.json\n' "$blob" | git --git-dir=.kiln/state.git mktree)
	commit=$(git --git-dir=.kiln/state.git -c user.name=x -c user.email=x@example.com \
		commit-tree "$tree" -p refs/kiln/runs/default -m "cheaper, by hand")
	git --git-dir=.kiln/state.git update-ref refs/kiln/runs/default "$commit"
	check "runs: a hand-edited run is named in the report, its cost unknown and counted as idle" 0 \
		--out-has "$idb  b                     completed           -       unknown   no data     no data  no data  EDITED: not trusted for money, counted as idle" \
		--out-has "Idle (what no run used): \$983.42; runs and idle add up to \$1,180.10." \
		-- "$KILN" report --by run
	unset KILN_NOW
	cd "$E2E_ROOT" || exit 1
}

# Against moto, the test sshd standing for every node: the command starts
# on both nodes with its variables, and cancel ends what it started.
ru_aws() {
	aws_moto_up "runs: the aws tests" "$E2E_TMP/moto-runs" || return 0
	ac_new_dir tests/e2e/specs/aws-cluster.yaml
	printf 'access:\n  ssh_keys:\n    - {file: user.pub}\n  user: %s\n' "$(id -un)" >>kiln.yaml
	# Only the spec is code here: sshd's files and the outputs are not.
	printf '*\n!kiln.yaml\n!.gitignore\n' >.gitignore
	git init -q . && git add kiln.yaml .gitignore &&
		git -c user.name=e2e -c user.email=e2e@example.com commit -qm spec
	check "runs: aws apply" 0 --out-has "Apply complete" -- "$KILN" apply --auto-approve
	if ac_sshd_start "$ac_dir"; then
		KILN_TEST_SSH_ENDPOINT=127.0.0.1:$ac_port
		export KILN_TEST_SSH_ENDPOINT
		out=$ac_dir/out
		mkdir -p "$out"
		# 1,100 objects under c4/ (two pages of ListObjectsV2) and one beside it.
		bucket=$("$KILN" state pull 2>/dev/null | python3 -c '
import json, sys
print(json.load(sys.stdin)["resources"]["aws_s3_bucket.datasets"]["id"])')
		"$AWS_PY" -c '
import boto3, sys
s3 = boto3.client("s3")
for i in range(1100):
    s3.put_object(Bucket=sys.argv[1], Key="c4/shard-%05d" % i, Body=b"x" * (i % 7))
s3.put_object(Bucket=sys.argv[1], Key="other/readme", Body=b"not data")' "$bucket"
		check "runs: a --data store the spec does not have is refused, naming its object stores" 1 --out "" \
			--err "$(ru_err "no store 'dataset' in kiln.yaml" "--data names one of its object stores: datasets, checkpoints")" \
			-- "$KILN" run trainers --data dataset/c4/ -- true
		check "runs: kiln run starts the command on every node of the group" 0 \
			--out-has "recorded and started on trainers: 2 nodes" --err "" \
			-- "$KILN" run trainers --data datasets/c4/ -- sh -c \
			"echo \$KILN_RUN_ID \$KILN_NODES \$KILN_MASTER_ADDR > $out/rank\$KILN_NODE_RANK"
		id=$(sed -n 's/^Run \(r-[0-9a-f]*\) .*/\1/p' "$E2E_OUT")
		"$KILN" hosts trainers --format hostfile >hostfile
		master=$(sed -n 1p hostfile)
		for i in 1 2 3 4 5 6 7 8 9 10; do
			[ -f "$out/rank0" ] && [ -f "$out/rank1" ] && break
			sleep 0.5
		done
		git --git-dir=.kiln/state.git show refs/kiln/runs/default:runs.json >"$E2E_TMP/aws-runs.json"
		assert "runs: the data manifest is the digest of what boto3 lists under c4/, every page" \
			"$AWS_PY" -c '
import boto3, hashlib, json, sys
s3 = boto3.client("s3")
objs = []
for page in s3.get_paginator("list_objects_v2").paginate(Bucket=sys.argv[1], Prefix="c4/"):
    objs += page.get("Contents", [])
lines = "".join("%s\t%d\t%s\n" % (o["Key"], o["Size"], o["ETag"]) for o in sorted(objs, key=lambda o: o["Key"]))
d = json.load(open(sys.argv[2]))["runs"][0]["lineage"]["data"]
want = [{"store": "datasets", "prefix": "c4/", "objects": 1100,
         "bytes": sum(o["Size"] for o in objs), "manifest_digest": "sha256:" + hashlib.sha256(lines.encode()).hexdigest()}]
assert d == want, (d, want)' "$bucket" "$E2E_TMP/aws-runs.json"
		assert "runs: each node got KILN_RUN_ID, KILN_NODES, its KILN_NODE_RANK and KILN_MASTER_ADDR" \
			test "$(cat "$out/rank0" "$out/rank1" 2>&1 | tr '\n' '|')" = "$id 2 $master|$id 2 $master|"
		# A marker only this test's sleepers carry, for pgrep.
		mark="sleep 300; : $ac_dir"
		check "runs: kiln run starts a long run on both nodes" 0 \
			--out-has "recorded and started on trainers" \
			-- "$KILN" run --name sleeper trainers -- sh -c "$mark"
		sid=$(sed -n 's/^Run \(r-[0-9a-f]*\) .*/\1/p' "$E2E_OUT")
		for i in 1 2 3 4 5 6 7 8 9 10; do
			[ "$(pgrep -f -c -x "sh -c $mark")" = 2 ] && break
			sleep 0.5
		done
		assert "runs: the long run runs on both nodes" test "$(pgrep -f -c -x "sh -c $mark")" = 2
		check "runs: kiln run cancel ends it" 0 --out "Run $sid cancelled." --err "" \
			-- "$KILN" run cancel "$sid"
		for i in 1 2 3 4 5 6 7 8 9 10; do
			[ "$(pgrep -f -c -x "sh -c $mark")" = 0 ] && break
			sleep 0.5
		done
		assert "runs: cancel ended the processes kiln started on every node" \
			test "$(pgrep -f -c -x "sh -c $mark")" = 0
		check "runs: kiln runs shows it cancelled" 0 --out-has "$sid  sleeper" \
			--out-has "cancelled" -- "$KILN" runs
		rm -f "$HOME/.kiln-runs/$id"-* "$HOME/.kiln-runs/$sid"-*
		unset KILN_TEST_SSH_ENDPOINT
		ac_sshd_stop
	fi
	"$KILN" destroy --auto-approve >/dev/null 2>&1
	cd "$E2E_ROOT" || exit 1
	aws_moto_down "$E2E_TMP/moto-runs"
}

runs_tests() {
	ru_sim
	ru_status
	ru_report
	ru_aws
}
