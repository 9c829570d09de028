# access.sh - end-to-end tests of logging in to the nodes (issue 15):
# access: in the spec, kiln hosts, ssh-config, ssh and exec. The real
# OpenSSH client resolves the generated configuration (ssh -G), a real sshd
# started here on 127.0.0.1 takes kiln ssh and kiln exec (through
# KILN_TEST_SSH_ENDPOINT, which sends every node to it), and boto3 checks
# kiln hosts against what moto runs. Sourced by run.sh after lib.sh.

ac_new_dir() { # SPEC: a fresh working directory holding SPEC as kiln.yaml and a user key
	ac_dir=$(mktemp -d "$E2E_TMP/access.XXXXXX")
	cd "$ac_dir" || exit 1
	cp "$E2E_ROOT/$1" kiln.yaml
	ssh-keygen -q -t ed25519 -N '' -C e2e@kiln -f "$ac_dir/user"
}

# ssh -G's value of KEY for HOST under config FILE.
ac_ssh_g() { # FILE HOST KEY
	ssh -G -F "$1" "$2" 2>/dev/null | awk -v k="$3" '$1 == k { $1 = ""; sub(/^ /, ""); print }'
}

ac_sim() {
	ac_new_dir examples/quickstart.yaml
	printf 'access:\n  ssh_keys:\n    - {file: user.pub}\n' >>kiln.yaml
	check "access: the plan says who logs in to sim nodes, and that private groups need the VPC" 2 \
		--out-has "access: compute.trainers: nodes log in as kiln (sim nodes boot no image; 'kiln' stands for an image's default user)" \
		--out-has "access: compute.trainers is private and no group is public: reachable only from inside the VPC; add a login group with public: true (a small instance) to jump through, or run kiln from inside the VPC" \
		-- "$KILN" plan --detailed-exitcode
	"$KILN" apply --auto-approve >/dev/null 2>&1
	check "access: sim hosts list both nodes with simulated addresses, and say so" 0 \
		--out-has "kiln-quickstart-default-trainers-0  i-" \
		--out-has "(simulated addresses: the sim provider runs no machines)" \
		-- "$KILN" hosts
	"$KILN" state pull 2>/dev/null | python3 -c '
import json, sys
for n in json.load(sys.stdin)["resources"]["sim_node_group.trainers"]["attrs"]["nodes"]:
    print(n["private_ip"], "slots=8")' >want.mpi
	check "access: hosts --format mpi is an Open MPI hostfile of the recorded addresses" 0 \
		--out-file want.mpi \
		--err "kiln: hosts: simulated addresses: the sim provider runs no machines" \
		-- "$KILN" hosts --format mpi
	sed 's/ slots=8$//' want.mpi >want.hostfile
	check "access: hosts --format hostfile is one address a line" 0 --out-file want.hostfile \
		-- "$KILN" hosts trainers --format hostfile
	check "access: hosts --refresh reads the same nodes live" 0 --out-file want.hostfile \
		-- "$KILN" hosts trainers --format hostfile --refresh
	check "access: kiln help hosts shows the formats" 0 \
		--out-has "Usage: kiln hosts [GROUP] [SPEC] [--format plain|mpi|hostfile|json] [OPTIONS]" \
		-- "$KILN" help hosts
	"$KILN" ssh-config >sim.cfg 2>&1
	check "access: ssh-config takes the spec as its operand too, as plan does" 0 \
		--out-file sim.cfg -- "$KILN" ssh-config kiln.yaml
	check "access: hosts takes a group and the spec as operands, in either order" 0 \
		--out-file want.hostfile -- "$KILN" hosts kiln.yaml trainers --format hostfile
	check "access: a spec given twice is refused, naming both" 1 --out "" \
		--err "kiln: ssh-config: two specs: 'kiln.yaml' and 'other.yaml'; give the spec once" \
		-- "$KILN" ssh-config --spec kiln.yaml other.yaml
	ip0=$(sed -n 1p want.hostfile)
	assert "access: ssh -G resolves a sim node to its simulated address, user and key" \
		test "$(ac_ssh_g sim.cfg kiln-quickstart-default-trainers-0 hostname)|$(ac_ssh_g sim.cfg kiln-quickstart-default-trainers-0 user)|$(ac_ssh_g sim.cfg kiln-quickstart-default-trainers-0 identityfile)|$(ac_ssh_g sim.cfg kiln-quickstart-default-trainers-0 proxyjump)" \
		= "$ip0|kiln|$ac_dir/user|"
	check "access: kiln ssh on sim says there is nothing to log in to" 1 \
		--err "kiln: ssh: workspace 'default' runs on the sim provider: its nodes are simulated and there is nothing to log in to; kiln hosts and kiln ssh-config show the simulated addresses; a spec on a cloud provider makes nodes to log in to" \
		-- "$KILN" ssh
	check "access: kiln exec without a command is refused" 1 \
		--err "kiln: exec: kiln exec needs a command to run; write the command after --, like kiln exec trainers -- nvidia-smi -L" \
		-- "$KILN" exec trainers
	check "access: kiln hosts of a group that does not exist names the groups" 1 \
		--err "kiln: hosts: workspace 'default' has no node group 'gpu' with nodes${NL}  hint: the groups with nodes are: trainers (kiln hosts lists them)" \
		-- "$KILN" hosts gpu
	# A key file whose name ssh_config could not read back inside quotes.
	ssh-keygen -q -t ed25519 -N '' -C e2e@kiln -f 'we"ird'
	sed -i 's/{file: user.pub}/{file: '"'"'we"ird.pub'"'"'}/' kiln.yaml
	check "access: ssh-config refuses a key file name with a '\"', naming it, and writes nothing" 1 \
		--out "" \
		--err "kiln: ssh-config: the key file '$ac_dir/we\"ird' has a control character or '\"' in its name, which ssh_config cannot quote${NL}  hint: rename the key pair (and its .pub) and name the new file in access.ssh_keys" \
		-- "$KILN" ssh-config
	cd "$E2E_ROOT" || exit 1
}

ac_bad_keys() {
	ac_new_dir examples/quickstart.yaml
	cp kiln.yaml base.yaml
	# The spec's own lines: the key sits three lines below the quickstart's last.
	ac_line=$(($(wc -l <base.yaml) + 3))
	{ cat base.yaml; printf 'access:\n  ssh_keys:\n    - ssh-ed25519 AAAA!!!!C3NzaC1lZDI1NTE5 me\n'; } >kiln.yaml
	check "access: a malformed key is refused at its line and column" 1 \
		--err-has "kiln.yaml:$ac_line:7: error: access.ssh_keys[0]: the ssh-ed25519 key's data is not valid base64${NL}  hint: copy the whole line from the .pub file again" \
		-- "$KILN" validate kiln.yaml
	{ cat base.yaml; printf 'access:\n  ssh_keys:\n    - ssh-ed25519 AAAAC3NzaC1lZDI1NTE5 me\n'; } >kiln.yaml
	check "access: a key cut short is refused: its data holds no 32-byte key" 1 \
		--err-has "kiln.yaml:$ac_line:7: error: access.ssh_keys[0]: the ssh-ed25519 key's data does not hold a 32-byte key${NL}  hint: copy the whole line from the .pub file again" \
		-- "$KILN" validate kiln.yaml
	{ cat base.yaml; printf 'access:\n  ssh_keys:\n    - {file: nope.pub}\n'; } >kiln.yaml
	check "access: a key file that does not exist is refused" 1 \
		--err-has "kiln.yaml:$ac_line:14: error: access.ssh_keys[0].file: cannot read 'nope.pub': No such file or directory${NL}  hint: give the path of a public key file (.pub), relative to the spec's directory" \
		-- "$KILN" validate kiln.yaml
	{ cat base.yaml; printf 'access:\n  ssh_keys:\n    - {file: user}\n'; } >kiln.yaml
	check "access: a private key file is refused without being read" 1 \
		--err-has "kiln.yaml:$ac_line:14: error: access.ssh_keys[0].file: 'user' is a private key; kiln takes public keys only and did not read it${NL}  hint: name the public half instead (ssh-keygen -y -f user > user.pub makes it)" \
		-- "$KILN" validate kiln.yaml
	# Issue 33, finding 12: a FIFO is refused before it is read (reading one would
	# wait for a writer forever: timeout makes a hang a failure), and so is a directory.
	mkfifo fifo.pub
	mkdir dir.pub
	{ cat base.yaml; printf 'access:\n  ssh_keys:\n    - {file: fifo.pub}\n    - {file: dir.pub}\n'; } >kiln.yaml
	check "access: a FIFO or a directory given as a key file is refused, not read" 1 --out "" \
		--err-has "kiln.yaml:$ac_line:14: error: access.ssh_keys[0].file: cannot read 'fifo.pub': it is a FIFO (named pipe), not a regular file${NL}  hint: give the path of a public key file (.pub), relative to the spec's directory" \
		--err-has "kiln.yaml:$((ac_line + 1)):14: error: access.ssh_keys[1].file: cannot read 'dir.pub': it is a directory, not a regular file${NL}  hint: give the path of a public key file (.pub), relative to the spec's directory" \
		-- timeout 20 "$KILN" validate kiln.yaml
	ssh-keygen -q -t rsa -b 2048 -N '' -C weak -f weak
	{ cat base.yaml; printf 'access:\n  ssh_keys:\n    - {file: weak.pub}\n'; } >kiln.yaml
	fp=$(ssh-keygen -lf weak.pub | awk '{print $2}')
	check "access: a 2048-bit RSA key is a KILN-SSH-001 finding with ssh-keygen's fingerprint" 0 \
		--out-has "access.ssh_keys[0] ($fp) is a 2048-bit RSA key: under 3072 bits" \
		--out-has "KILN-SSH-001" \
		-- "$KILN" audit kiln.yaml
	cd "$E2E_ROOT" || exit 1
}

# Start sshd on 127.0.0.1 and a free port, taking DIR/user.pub for the
# current user; sets ac_sshd_pid and ac_port. Returns 1 when it cannot.
ac_sshd_start() { # DIR
	ac_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	sshd_files "$1" 127.0.0.1 "$ac_port" "$1/user.pub"
	# As root, sshd wants its privilege separation directory (the package's
	# service unit makes it at start).
	[ "$(id -u)" = 0 ] && mkdir -p /run/sshd
	/usr/sbin/sshd -D -f "$1/sshd_config" -E "$1/sshd.log" &
	ac_sshd_pid=$!
	sshd_answers "$1/user" "$(id -un)" 127.0.0.1 "$ac_port" && return 0
	fail "access: the test sshd answers on 127.0.0.1:$ac_port" "$1/sshd.log"
	return 1
}

ac_sshd_stop() {
	kill "$ac_sshd_pid" 2>/dev/null
	wait "$ac_sshd_pid" 2>/dev/null
}

ac_aws_cluster() {
	ac_new_dir tests/e2e/specs/aws-cluster.yaml
	printf 'access:\n  ssh_keys:\n    - {file: user.pub}\n  key_pair: e2e-team\n' >>kiln.yaml
	"$AWS_PY" "$E2E_ROOT/tests/e2e/access_inspect.py" import-key e2e-team user.pub
	check "access: the aws plan names the login user the AMI documents" 2 \
		--out-has "access: compute.trainers: nodes log in as ubuntu (image ami-1e749f67 ('ubuntu/images/hvm-ssd/ubuntu-trusty-14.04-amd64-server-20170727') is an Ubuntu image, whose default user is ubuntu)" \
		-- "$KILN" plan --detailed-exitcode
	check "access: aws apply with access" 0 --out-has "Apply complete: 11 created" \
		-- "$KILN" apply --auto-approve
	assert "access: boto3 finds every node launched with the spec's key pair" \
		"$AWS_PY" "$E2E_ROOT/tests/e2e/access_inspect.py" key-name e2e default trainers e2e-team
	assert "access: boto3 finds the key in every trainer's user data (DescribeInstanceAttribute)" \
		"$AWS_PY" "$E2E_ROOT/tests/e2e/access_inspect.py" user-data e2e default trainers user.pub ud.yaml
	if command -v cloud-init >/dev/null 2>&1; then
		check "access: cloud-init's own schema accepts the user data the nodes got" 0 \
			--out "Valid cloud-config: ud.yaml" -- cloud-init schema --config-file ud.yaml
	else
		fail "access: cloud-init's own schema accepts the user data (cloud-init is not installed: scripts/deps.sh --install)"
	fi
	"$KILN" hosts --format json >hosts.json 2>hosts.err
	assert "access: kiln hosts --format json agrees with boto3's DescribeInstances" \
		"$AWS_PY" "$E2E_ROOT/tests/e2e/access_inspect.py" hosts hosts.json e2e default
	"$KILN" ssh-config >aws.cfg 2>&1
	pub=$(python3 -c 'import json,sys; print([n for n in json.load(open("hosts.json"))["nodes"] if n["group"] == "login"][0]["public_ip"])')
	priv=$(python3 -c 'import json,sys; print([n for n in json.load(open("hosts.json"))["nodes"] if n["name"].endswith("trainers-1")][0]["private_ip"])')
	assert "access: ssh -G: the login node is its public address, as ubuntu, with the key" \
		test "$(ac_ssh_g aws.cfg kiln-e2e-default-login-0 hostname)|$(ac_ssh_g aws.cfg kiln-e2e-default-login-0 user)|$(ac_ssh_g aws.cfg kiln-e2e-default-login-0 proxyjump)|$(ac_ssh_g aws.cfg kiln-e2e-default-login-0 identityfile)|$(ac_ssh_g aws.cfg kiln-e2e-default-login-0 stricthostkeychecking)" \
		= "$pub|ubuntu||$ac_dir/user|accept-new"
	assert "access: ssh -G: a private GPU node is its private address, through the login node" \
		test "$(ac_ssh_g aws.cfg kiln-e2e-default-trainers-1 hostname)|$(ac_ssh_g aws.cfg kiln-e2e-default-trainers-1 user)|$(ac_ssh_g aws.cfg kiln-e2e-default-trainers-1 proxyjump)|$(ac_ssh_g aws.cfg kiln-e2e-default-trainers-1 identityfile)" \
		= "$priv|ubuntu|kiln-e2e-default-login-0|$ac_dir/user"
	check "access: kiln ssh to a node index that does not exist" 1 \
		--err "kiln: ssh: node group 'trainers' has 2 nodes (index 0 to 1); there is no node 5${NL}  hint: kiln hosts trainers lists them" \
		-- "$KILN" ssh trainers/5

	# The test sshd stands for every node: log in as whoever runs the tests.
	printf '  user: %s\n' "$(id -un)" >>kiln.yaml
	if ac_sshd_start "$ac_dir"; then
		KILN_TEST_SSH_ENDPOINT=127.0.0.1:$ac_port
		export KILN_TEST_SSH_ENDPOINT
		check "access: kiln ssh runs a command on a private node through the login node" 0 \
			--out "hello from trainers/1" \
			-- "$KILN" ssh trainers/1 -- echo hello from trainers/1
		check "access: kiln ssh with no group logs in to the login node" 0 --out "ok" \
			-- "$KILN" ssh -- echo ok
		check "access: kiln exec runs on every node of a group, prefixed by its name" 0 \
			--out "kiln-e2e-default-trainers-0: hi${NL}kiln-e2e-default-trainers-1: hi" \
			--err "kiln: exec: all 2 nodes succeeded" \
			-- "$KILN" exec trainers --parallelism 1 -- echo hi
		check "access: kiln exec exits with the worst status and names the node that failed" 3 \
			--out "kiln-e2e-default-trainers-0: first" \
			--err "kiln-e2e-default-trainers-1: taken${NL}kiln: exec: 1 of 2 nodes failed: kiln-e2e-default-trainers-1 (exit 3)" \
			-- "$KILN" exec trainers --parallelism 1 -- \
			"mkdir $ac_dir/once 2>/dev/null && echo first || { echo taken >&2; exit 3; }"
		check "access: kiln exec --json prints one object, each node's exit, duration and output kept" 3 \
			--err "kiln: exec: 1 of 2 nodes failed: kiln-e2e-default-trainers-1 (exit 3)" \
			-- "$KILN" exec trainers --parallelism 1 --json -- \
			"echo o; printf 'e\\377' >&2; mkdir $ac_dir/once-json 2>/dev/null || exit 3"
		cp "$E2E_OUT" exec.json
		assert "access: kiln exec --json: per node exit 0 and 3, durations, stdout and stderr whole" \
			python3 -c 'import json, sys
d = json.load(open("exec.json"))
n = d["nodes"]
assert [x["name"] for x in n] == ["kiln-e2e-default-trainers-0", "kiln-e2e-default-trainers-1"], n
assert [x["exit"] for x in n] == [0, 3], n
assert all(x["started"] and isinstance(x["duration_seconds"], float) and x["duration_seconds"] >= 0 for x in n), n
assert all(x["stdout"] == "o\n" and x["stderr"] == "e\ufffd" for x in n), n
assert not any(x["stdout_truncated"] or x["stderr_truncated"] for x in n), n
assert d["output"] == "kept" and d["output_limit_bytes"] == 1048576, d
assert (d["succeeded"], d["failed"], d["exit"], d["workspace"]) == (1, 1, 3, "default"), d
assert d["command"][0].startswith("echo o;"), d'
		check "access: kiln exec on every group runs on all three nodes in parallel" 0 \
			--out-has "kiln-e2e-default-login-0: up" \
			--out-has "kiln-e2e-default-trainers-1: up" \
			--err "kiln: exec: all 3 nodes succeeded" \
			-- "$KILN" exec -- echo up
		# ssh hands the configuration's path to the jump's ssh through
		# /bin/sh: a TMPDIR with a space or a shell character must not reach it.
		ac_tmp="$ac_dir/a b;touch ac-pwned;"
		mkdir -p "$ac_tmp"
		check "access: kiln ssh jumps through the login node with a TMPDIR holding a space and a ';'" 0 \
			--out "through the jump" \
			-- env TMPDIR="$ac_tmp" "$KILN" ssh trainers/1 -- echo through the jump
		assert "access: no shell ran the rest of TMPDIR's path" test ! -e ac-pwned
		ac_private "$(id -un)"
		unset KILN_TEST_SSH_ENDPOINT
		ac_sshd_stop
	fi
	"$KILN" destroy --auto-approve >/dev/null 2>&1
	cd "$E2E_ROOT" || exit 1
}

# A cluster of private GPU nodes only: the plan and kiln ssh say they are
# reachable only from inside the VPC, with the fix (kiln ssh still tries:
# kiln may run inside the VPC; here the test sshd stands for the node).
ac_private() { # USER
	ac_priv_dir=$(mktemp -d "$E2E_TMP/access-private.XXXXXX")
	cp "$ac_dir/user" "$ac_dir/user.pub" "$ac_priv_dir/"
	cd "$ac_priv_dir" || exit 1
	cat >kiln.yaml <<-SPEC
		kiln: 1
		cluster: priv
		provider: {name: aws, region: us-east-1, zone: us-east-1a}
		network: {cidr: 10.43.0.0/16, fabric: ena}
		compute:
		  trainers: {gpu: H100:8, count: 1, image: ami-dca37ea5}
		access:
		  ssh_keys: [{file: user.pub}]
		  user: $1
	SPEC
	check "access: a spec of private groups only: the plan says the VPC alone reaches them" 2 \
		--out-has "access: compute.trainers is private and no group is public: reachable only from inside the VPC; add a login group with public: true (a small instance) to jump through, or run kiln from inside the VPC" \
		-- "$KILN" plan --detailed-exitcode
	"$KILN" apply --auto-approve >/dev/null 2>&1
	check "access: kiln ssh to a private node with no login node warns, with the fix, and tries" 0 \
		--out "in the VPC" \
		--err "kiln: ssh: warning: compute.trainers is private and no group is public: reachable only from inside the VPC${NL}  hint: add a login group with public: true (a small instance) to jump through, or run kiln from inside the VPC" \
		-- "$KILN" ssh trainers -- echo in the VPC
	"$KILN" destroy --auto-approve >/dev/null 2>&1
	cd "$ac_dir" || exit 1
}

# kiln status asks a private Slurm controller through the login node, whose
# sshd (the test sshd, standing for both) takes passwords only: under a
# terminal (script(1)), neither ssh nor the jump's ssh may prompt; status
# counts health tags and says why, within its bound.
ac_status_jump() {
	ac_new_dir tests/e2e/specs/aws-cluster.yaml
	cat >kiln.yaml <<-SPEC
		kiln: 1
		cluster: sj
		provider: {name: aws, region: us-east-1, zone: us-east-1a}
		network:
		  cidr: 10.44.0.0/16
		  fabric: ena
		  ingress: [{port: 22, from: 203.0.113.0/24}]
		scheduler: {type: slurm, controller: ctl, kms_key: alias/kiln-sj}
		compute:
		  login: {instance_type: m7i.xlarge, count: 1, image: ami-1e749f67, public: true, role: node}
		  ctl: {instance_type: m7i.xlarge, count: 1, image: ami-1e749f67, role: node}
		  trainers: {gpu: H100:8, count: 1, image: ami-1e749f67, role: node, default: true}
		iam:
		  roles: {node: {}}
		access:
		  ssh_keys: [{file: user.pub}]
		  user: $(id -un)
	SPEC
	"$AWS_PY" "$E2E_ROOT/tests/e2e/slurm_inspect.py" kms-key alias/kiln-sj >kms.arn
	check "access: a cluster whose Slurm controller is private, behind the login node" 0 \
		--out-has "Apply complete:" -- "$KILN" apply --auto-approve
	# scheduler.kms_key a bare alias: the roles may decrypt with the key of
	# that alias in this account only (moto's account, STS GetCallerIdentity).
	ac_via='"Condition":{"ForAnyValue:StringEquals":{"kms:ResourceAliases":"alias/kiln-sj"},"StringEquals":{"kms:ViaService":"ssm.us-east-1.amazonaws.com"}}'
	printf '%s\n' "munge-key alias/kiln-sj" \
		"kiln-sj-default-node {\"Action\":[\"kms:Decrypt\"],$ac_via,\"Effect\":\"Allow\",\"Resource\":\"arn:aws:kms:us-east-1:123456789012:key/*\",\"Sid\":\"KilnSlurmKey\"}" \
		>kms-use.want
	"$AWS_PY" "$E2E_ROOT/tests/e2e/slurm_inspect.py" kms-use sj default >kms-use.txt 2>&1
	compare "access: boto3 reads a bare kms_key alias scoped to the caller's account in the role policy, not every account's keys" \
		kms-use.want kms-use.txt
	ac_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	mkdir pw
	sshd_files "$ac_dir/pw" 127.0.0.1 "$ac_port" "$ac_dir/user.pub"
	sed -i 's/^PasswordAuthentication no/PasswordAuthentication yes/; s/^KbdInteractiveAuthentication no/KbdInteractiveAuthentication yes/' pw/sshd_config
	printf 'PubkeyAuthentication no\n' >>pw/sshd_config
	[ "$(id -u)" = 0 ] && mkdir -p /run/sshd
	/usr/sbin/sshd -D -f "$ac_dir/pw/sshd_config" -E "$ac_dir/pw/sshd.log" &
	ac_pw_pid=$!
	# Up when it answers ssh-keyscan (no login: it takes passwords only).
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		ssh-keyscan -p "$ac_port" 127.0.0.1 >/dev/null 2>&1 && break
		sleep 0.3
	done
	KILN_TEST_SSH_ENDPOINT=127.0.0.1:$ac_port script -q -e -c "$KILN status" status.typescript \
		</dev/null >/dev/null 2>&1
	echo "exit $?" >>status.typescript
	tr -d '\r' <status.typescript >status.txt
	check "access: status under a terminal: no password prompt through the jump, health tags and ssh's reason" 0 \
		--out-has "    slurm partition trainers (default): 0 of 1 nodes joined (from health tags, reported healthy: controller not reachable: kex_exchange_identification: Connection closed by remote host)" \
		--out-has "exit 0" \
		-- cat status.txt
	assert "access: nothing asked for a password" sh -c '! grep -qi "password:" status.txt'
	check "access: status prints the hint for the reason once, after the node groups" 0 \
		--out "1${NL}  slurm hint: kiln ssh ctl shows what ssh does; --no-ssh skips asking" \
		-- sh -c 'grep -c "^  slurm hint: " status.txt; grep -B1 "^Cost: " status.txt | head -n 1'
	# A listener that takes the connection and never speaks: status ends
	# within its bound (ssh's ConnectTimeout covers the banner) with why.
	python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
print(s.getsockname()[1], flush=True)
held = []
while True:
    held.append(s.accept()[0])' >mute.port &
	ac_mute_pid=$!
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		[ -s mute.port ] && break
		sleep 0.2
	done
	check "access: a controller that accepts and never speaks: status counts health tags and says why" 0 \
		--out-has "    slurm partition trainers (default): 0 of 1 nodes joined (from health tags, reported healthy: controller not reachable: Connection timed out during banner exchange)" \
		-- env KILN_TEST_SSH_ENDPOINT="127.0.0.1:$(cat mute.port)" "$KILN" status
	kill "$ac_mute_pid" 2>/dev/null
	wait "$ac_mute_pid" 2>/dev/null
	# The controller deleted outside kiln: status says so and asks no one at
	# the address the state recorded (which may be someone else's now).
	"$AWS_PY" "$E2E_ROOT/tests/e2e/access_inspect.py" terminate sj default ctl >/dev/null
	check "access: a controller deleted outside kiln is said so, and not asked at its old address" 0 \
		--out-has "    slurm partition trainers (default): 0 of 1 nodes joined (from health tags, reported healthy: controller not reachable: controller deleted outside kiln: the refresh did not find aws_instance_group.ctl)" \
		-- env KILN_TEST_SSH_ENDPOINT=127.0.0.1:$ac_port "$KILN" status
	kill "$ac_pw_pid" 2>/dev/null
	wait "$ac_pw_pid" 2>/dev/null
	"$KILN" destroy --auto-approve >/dev/null 2>&1
	cd "$E2E_ROOT" || exit 1
}

ac_aws() {
	aws_moto_up "access: the aws tests" "$E2E_TMP/moto-access" || return 0
	ac_aws_cluster
	ac_status_jump
	aws_moto_down "$E2E_TMP/moto-access"
}

access_tests() {
	ac_sim
	ac_bad_keys
	ac_aws
}
