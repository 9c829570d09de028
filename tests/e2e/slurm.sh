# slurm.sh - scheduler: slurm end to end (sourced by run.sh; E2E_ONLY=slurm):
# kiln applies examples/llm-pretrain.yaml with a scheduler against moto, boto3
# reads what it stored (the munge key as a SecureString, slurm.conf and
# gres.conf), and then the real Slurm of this machine (Debian's slurmctld,
# slurmd, slurm-client and munge, 22.05) runs with exactly that: munged and
# slurmctld on a "controller", slurmd on two "nodes" and then a third, each a
# network namespace this test makes (a veth on a bridge of its own, a private
# subnet), with its own mounts and host name (tests/e2e/slurm_node.sh), each
# running the scheduler part of the user data kiln launched its group with
# (read back from moto with boto3), the AWS CLI answered by a stand-in. An
# sshd on the controller node (KILN_TEST_SSH_ENDPOINT) takes kiln status's
# ssh, whose sinfo counts the nodes the real slurmctld has.
#
# GPUs are faked as Slurm allows on nodes without them: gres.conf's File=
# names /dev/nvidia0..7, which the node's private /dev holds as character
# devices with /dev/null's numbers; Slurm counts and hands them out
# (CUDA_VISIBLE_DEVICES) and never opens them.
#
# It needs root (namespaces, mounts) and the daemons: without them every test
# here fails, naming what is missing; it never skips. Everything it starts is
# stopped by pid (the processes of its namespaces) and the namespaces and the
# bridge are deleted, also when it is interrupted.

SLURM_SPEC_IMAGE=ami-1e749f67

slurm_fail_all() { # WHY
	printf '%s\n' "$1" >"$E2E_TMP/.slurm-why"
	fail "slurm: the real Slurm test can run here (root, slurmctld, slurmd, slurm-client, munge, iproute2, moto)" \
		"$E2E_TMP/.slurm-why"
}

# The namespaces and bridge of this run, and stopping what runs in them.
slurm_cleanup() {
	slurm_sshd_stop
	for sl_ns in $SLURM_NETNS; do
		sl_pids=$(ip netns pids "$sl_ns" 2>/dev/null)
		# shellcheck disable=SC2086
		[ -n "$sl_pids" ] && kill $sl_pids 2>/dev/null
	done
	sl_i=0
	while [ "$sl_i" -lt 50 ]; do
		sl_left=""
		for sl_ns in $SLURM_NETNS; do
			sl_left="$sl_left$(ip netns pids "$sl_ns" 2>/dev/null)"
		done
		[ -z "$sl_left" ] && break
		sleep 0.1
		sl_i=$((sl_i + 1))
	done
	for sl_ns in $SLURM_NETNS; do
		sl_pids=$(ip netns pids "$sl_ns" 2>/dev/null)
		# shellcheck disable=SC2086
		[ -n "$sl_pids" ] && kill -9 $sl_pids 2>/dev/null
		ip netns delete "$sl_ns" 2>/dev/null
	done
	SLURM_NETNS=""
	[ -n "${SLURM_BRIDGE:-}" ] && ip link delete "$SLURM_BRIDGE" 2>/dev/null
	SLURM_BRIDGE=""
	if [ -n "${SLURM_MOTO_LP:-}" ]; then
		sh "$E2E_ROOT/tests/moto/server.sh" stop "$SLURM_MOTO_LP" >/dev/null 2>&1
		SLURM_MOTO_LP=""
	fi
	if [ -n "${SLURM_MOTO:-}" ]; then
		sh "$E2E_ROOT/tests/moto/server.sh" stop "$SLURM_MOTO" >/dev/null 2>&1
		SLURM_MOTO=""
	fi
}

# slurm_net: a bridge and one namespace per node on 10.199.N.0/24.
slurm_net() {
	sl_net=10.199.$(($$ % 250))
	SLURM_BRIDGE=ksl$$
	ip link add "$SLURM_BRIDGE" type bridge || return 1
	ip addr add "$sl_net.254/24" dev "$SLURM_BRIDGE" || return 1
	ip link set "$SLURM_BRIDGE" up || return 1
	sl_i=0
	for sl_node in ctl n1 n2 n3; do
		sl_i=$((sl_i + 1))
		sl_ns=ksl$$-$sl_node
		ip netns add "$sl_ns" || return 1
		SLURM_NETNS="$SLURM_NETNS $sl_ns"
		ip link add "ksl$$$sl_node" type veth peer name eth0 netns "$sl_ns" || return 1
		ip link set "ksl$$$sl_node" master "$SLURM_BRIDGE" up || return 1
		ip -n "$sl_ns" addr add "$sl_net.$sl_i/24" dev eth0 || return 1
		ip -n "$sl_ns" link set eth0 up || return 1
		ip -n "$sl_ns" link set lo up || return 1
	done
	SLURM_CTL=$sl_net.1
}

# slurm_boot NODE SCRIPT GPUS ADDRESS: a node boots (in the background) with
# SCRIPT, named as EC2 names an instance at that address (ip-A-B-C-D).
slurm_boot() {
	sl_dir=$SLURM_DIR/nodes/$1
	mkdir -p "$sl_dir/stub" "$sl_dir/etc-slurm"
	# The stand-in for the AWS CLI: the parameters boto3 read from moto.
	cat >"$sl_dir/stub/aws" <<EOF
#!/bin/sh
# The AWS CLI as the boot script calls it: the parameters boto3 read from
# moto, and the controller's address, for exactly the calls kiln generates.
case "\$1 \$2 \$3 \$4" in
"ssm get-parameter --region us-east-1")
	[ "\$5 \$7 \$8 \$9 \${10} \${11}" = "--name --with-decryption --query Parameter.Value --output text" ] || { echo "aws stand-in: unexpected: \$*" >&2; exit 2; }
	case \$6 in
	/kiln/llm-pretrain/default/slurm/*) cat "$SLURM_DIR/params/\${6##*/}" && echo ;;
	*) echo "An error occurred (ParameterNotFound) when calling the GetParameter operation" >&2; exit 254 ;;
	esac ;;
"ec2 describe-instances --region us-east-1")
	[ "\$*" = "ec2 describe-instances --region us-east-1 --filters Name=tag:kiln:cluster,Values=llm-pretrain Name=tag:kiln:workspace,Values=default Name=tag:kiln:address,Values=aws_instance_group.login Name=instance-state-name,Values=running --query Reservations[0].Instances[0].PrivateIpAddress --output text" ] || { echo "aws stand-in: unexpected: \$*" >&2; exit 2; }
	echo "$SLURM_CTL" ;;
*) echo "aws stand-in: unexpected: \$*" >&2; exit 2 ;;
esac
EOF
	chmod +x "$sl_dir/stub/aws"
	# Slurm 22.05's cgroup autodetect refuses a host with cgroup v1 and v2 both
	# mounted ("Hybrid mode is not supported"), as this test machine may be; node
	# images with cgroup v2 alone (Ubuntu 22.04 and later, Amazon Linux 2023)
	# need no cgroup.conf. Here the controller serves one naming v1.
	if [ "$1" = ctl ] && [ ! -f /sys/fs/cgroup/cgroup.controllers ]; then
		echo "CgroupPlugin=cgroup/v1" >"$sl_dir/etc-slurm/cgroup.conf"
	fi
	unshare --mount --uts --propagation private \
		nsenter --net="/run/netns/ksl$$-$1" \
		sh "$E2E_ROOT/tests/e2e/slurm_node.sh" "$sl_dir" "$2" "$3" "ip-$(echo "$4" | tr . -)" \
		>"$sl_dir/sandbox.log" 2>&1 &
}

# slurm_wait FILE SECONDS: until FILE exists.
slurm_wait() {
	sl_i=0
	while [ ! -s "$1" ] && [ "$sl_i" -lt $(($2 * 10)) ]; do
		sleep 0.1
		sl_i=$((sl_i + 1))
	done
	[ -s "$1" ]
}

# slurm_on_ctl CMD...: a Slurm command on the controller node.
slurm_on_ctl() {
	nsenter -t "$(cat "$SLURM_DIR/nodes/ctl/pid")" -m -n -u "$@"
}

# slurm_nodes_idle N SECONDS: until sinfo shows N idle nodes.
slurm_nodes_idle() {
	sl_i=0
	while [ "$sl_i" -lt $(($2 * 5)) ]; do
		[ "$(slurm_on_ctl sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)" -ge "$1" ] &&
			return 0
		sleep 0.2
		sl_i=$((sl_i + 1))
	done
	return 1
}

# slurm_status_json FLAGS...: kiln status --json's slurm object of the
# trainers group and its scheduler object, on one line.
slurm_status_json() {
	"$KILN" status --json --var image=$SLURM_SPEC_IMAGE "$@" | python3 -c 'import json, sys
d = json.load(sys.stdin)
dump = lambda o: json.dumps(o, sort_keys=True, separators=(",", ":"))
print(dump([g["slurm"] for g in d["groups"] if g["name"] == "trainers"][0]), dump(d["scheduler"]))'
}

slurm_kiln_tests() {
	cd "$SLURM_DIR" || exit 1
	sed 's/^compute:/scheduler: {type: slurm, controller: login}\n\ncompute:/' \
		"$E2E_ROOT/examples/llm-pretrain.yaml" >kiln.yaml
	# The key kiln status's ssh logs in to the controller with (the test sshd
	# in the controller's namespaces, slurm_status_tests), as root there.
	ssh-keygen -q -t ed25519 -N '' -C e2e@kiln -f "$SLURM_DIR/user"
	printf 'access:\n  user: root\n  ssh_keys:\n    - {file: %s}\n' "$SLURM_DIR/user.pub" >>kiln.yaml
	# The munge key's SecureString under a customer managed key the test
	# makes (moto's KMS), not the account's aws/ssm.
	SLURM_KMS=$("$AWS_PY" "$E2E_ROOT/tests/e2e/slurm_inspect.py" kms-key alias/kiln-munge)
	sed -i "s|^scheduler: {type: slurm, controller: login}|scheduler: {type: slurm, controller: login, kms_key: \"$SLURM_KMS\"}|" kiln.yaml
	sed 's|kms_key: "[^"]*"|kms_key: alias/aws/ssm|' kiln.yaml >bad-kms.yaml
	check "slurm: an AWS managed key as kms_key is refused at its line and column" 1 \
		--err "bad-kms.yaml:25:54: error: scheduler.kms_key 'alias/aws/ssm' is an AWS managed key, whose policy lets every principal of the account decrypt through SSM${NL}  hint: name a customer managed key, or leave kms_key out for aws/ssm" \
		-- "$KILN" validate bad-kms.yaml
	check "slurm: llm-pretrain with a scheduler validates" 0 \
		--out "ok kiln.yaml" -- "$KILN" validate kiln.yaml
	check "slurm: the plan makes the munge key, slurm.conf and gres.conf parameters, each role reading its own" 2 \
		--out-has "  + aws_ssm_parameter.munge_key  create" \
		--out-has "      generated:  \"munge-key\"" \
		--out-has "      kind:       \"SecureString\"" \
		--out-has "  + aws_ssm_parameter.slurm_conf  create" \
		--out-has "  • aws_ssm_parameter.munge_key: generated: munged's shared key: kiln makes it at apply and seals it in the state; the nodes read it with their role at boot, never from user data" \
		--out-has "    + ssm:GetParameter               arn:aws:ssm:us-east-1:*:parameter/kiln/llm-pretrain/default/slurm/munge-key  (new role)" \
		--out-has "    + ssm:GetParameter               arn:aws:ssm:us-east-1:*:parameter/kiln/llm-pretrain/default/slurm/slurm.conf  (new role)" \
		--out-has "      key_id:     \"$SLURM_KMS\"" \
		--out-has "  • aws_ssm_parameter.munge_key: key_id: scheduler.kms_key: SSM encrypts the key with it, and only the cluster's roles may decrypt with it, through SSM" \
		--out-has "    + kms:Decrypt                    $SLURM_KMS   (new role)" \
		-- "$KILN" plan --detailed-exitcode --var image=$SLURM_SPEC_IMAGE
	check "slurm: apply makes them" 0 \
		--out-has "aws_ssm_parameter.munge_key: created [id /kiln/llm-pretrain/default/slurm/munge-key]" \
		--out-has "Apply complete: 19 created" \
		-- "$KILN" apply --auto-approve --var image=$SLURM_SPEC_IMAGE
	mkdir -p params
	assert "slurm: boto3 reads the munge key as a SecureString, slurm.conf and gres.conf as Strings" \
		"$AWS_PY" "$E2E_ROOT/tests/e2e/slurm_inspect.py" params llm-pretrain default params
	"$AWS_PY" "$E2E_ROOT/tests/e2e/slurm_inspect.py" ssm-resources llm-pretrain default \
		>ssm-resources.txt 2>&1
	sl_arn='arn:aws:ssm:us-east-1:123456789012:parameter/kiln/llm-pretrain/default/slurm'
	printf '%s\n' \
		"kiln-llm-pretrain-default-login $sl_arn/gres.conf,$sl_arn/munge-key,$sl_arn/slurm.conf" \
		"kiln-llm-pretrain-default-trainer $sl_arn/munge-key" >ssm-resources.want
	compare "slurm: the munge key's ARN is the only SSM resource of the trainers' role; the controller's reads the files too" \
		ssm-resources.want ssm-resources.txt
	sl_via='"Condition":{"StringEquals":{"kms:ViaService":"ssm.us-east-1.amazonaws.com"}}'
	printf '%s\n' "munge-key $SLURM_KMS" \
		"kiln-llm-pretrain-default-login {\"Action\":[\"kms:Decrypt\"],$sl_via,\"Effect\":\"Allow\",\"Resource\":\"$SLURM_KMS\",\"Sid\":\"KilnSlurmKey\"}" \
		"kiln-llm-pretrain-default-trainer {\"Action\":[\"kms:Decrypt\"],$sl_via,\"Effect\":\"Allow\",\"Resource\":\"$SLURM_KMS\",\"Sid\":\"KilnSlurmKey\"}" \
		>kms-use.want
	"$AWS_PY" "$E2E_ROOT/tests/e2e/slurm_inspect.py" kms-use llm-pretrain default >kms-use.txt 2>&1
	compare "slurm: boto3 finds the munge key encrypted with kms_key, and each role may decrypt with exactly that key, through SSM only" \
		kms-use.want kms-use.txt
	sl_key=$(cat params/munge-key)
	assert "slurm: the munge key is 128 random bytes" \
		sh -c '[ "$(printf %s "$1" | base64 -d | wc -c)" -eq 128 ]' sh "$sl_key"
	# Every object of the state repository, every commit: the key only sealed.
	for sl_o in $(git --git-dir=.kiln/state.git rev-list --all --objects | cut -d' ' -f1); do
		git --git-dir=.kiln/state.git cat-file -p "$sl_o"
	done >state-objects.txt 2>/dev/null
	assert "slurm: the state repository holds the munge key sealed, never in plaintext" \
		sh -c '! grep -q -F "$1" state-objects.txt && grep -q "kiln_sealed" state-objects.txt' \
		sh "$sl_key"
	check "slurm: the state shows it as sensitive" 0 \
		--out-has '"value":"(sensitive)"' \
		-- "$KILN" state show aws_ssm_parameter.munge_key
	check "slurm: with the state key, it is the key SSM holds" 0 \
		--out-has "$sl_key" \
		-- "$KILN" state show aws_ssm_parameter.munge_key --show-sensitive
	"$AWS_PY" "$E2E_ROOT/tests/e2e/slurm_inspect.py" user-data llm-pretrain default \
		>user-data.txt 2>&1
	assert "slurm: no instance's user data holds the munge key" \
		sh -c '[ -s user-data.txt ] && ! grep -q -F "$1" user-data.txt' sh "$sl_key"
	check "slurm: status --no-ssh says the login node is the controller and no trainer joined yet" 0 \
		--out-has "    slurm controller (slurmctld)" \
		--out-has "    slurm partition trainers (default): 0 of 16 nodes joined (from health tags, reported healthy: controller not asked: --no-ssh)" \
		-- "$KILN" status --no-ssh --var image=$SLURM_SPEC_IMAGE
	"$AWS_PY" "$E2E_ROOT/tests/e2e/slurm_inspect.py" report-healthy llm-pretrain default trainers 3
	check "slurm: status --no-ssh counts the nodes that reported healthy as joined" 0 \
		--out-has "    slurm partition trainers (default): 3 of 16 nodes joined (from health tags, reported healthy: controller not asked: --no-ssh)" \
		-- "$KILN" status --no-ssh --var image=$SLURM_SPEC_IMAGE
	check "slurm: and --json has the partition's count, its source and why" 0 \
		--out '{"default":true,"joined":3,"nodes":16,"partition":"trainers","role":"partition","source":"health"} {"asked":false,"reason":"--no-ssh","source":"health","type":"slurm"}' \
		-- slurm_status_json --no-ssh
	check "slurm: a second plan has no changes" 0 \
		--out-has "No changes." -- "$KILN" plan --var image=$SLURM_SPEC_IMAGE
	sed 's/^    gang: true/    gang: true\n    partition: gpu/' kiln.yaml >kiln.next.yaml
	check "slurm: a new partition name is an update of slurm.conf in place, and no node is replaced" 2 \
		--out-has "  ~ aws_ssm_parameter.slurm_conf  update" \
		--out-has "(live: PutParameter overwrites it in place; the Slurm controller reads it again within a minute and runs scontrol reconfigure: no node is replaced)" \
		--out-has "Plan: 0 to create, 1 to update, 0 to replace, 0 to delete" \
		-- "$KILN" plan --detailed-exitcode --var image=$SLURM_SPEC_IMAGE kiln.next.yaml
	"$KILN" plan --json --var image=$SLURM_SPEC_IMAGE kiln.next.yaml >"$SLURM_DIR/next.json" 2>/dev/null
	assert "slurm: the JSON plan of a partition rename validates against the schema" \
		python3 "$E2E_ROOT/tests/check-plan-schema.py" "$SLURM_DIR/next.json"
	assert "slurm: and the new slurm.conf names partition gpu" \
		"$AWS_PY" -c 'import json, sys
p = json.load(open(sys.argv[1]))
c = [r for r in p["resource_changes"] if r["address"] == "aws_ssm_parameter.slurm_conf"][0]
sys.exit(0 if "PartitionName=gpu Nodes=trainers-nodes" in c["change"]["after"]["content"] else 1)' "$SLURM_DIR/next.json"
}

# With moto's IAM enforcement on after the first 3 requests (the ones that
# make the users): kiln iam-policy's policy is enough for the parameters too.
slurm_least_privilege() {
	sl_lp=$SLURM_DIR/moto-iam
	if ! sl_out=$(INITIAL_NO_AUTH_ACTION_COUNT=3 sh "$E2E_ROOT/tests/moto/server.sh" start "$sl_lp" 2>&1); then
		printf '%s\n' "$sl_out" >"$E2E_TMP/.slurm-moto"
		fail "slurm: moto with IAM enforcement starts" "$E2E_TMP/.slurm-moto"
		return
	fi
	SLURM_MOTO_LP=$sl_lp
	sl_dir=$SLURM_DIR/lp
	mkdir -p "$sl_dir"
	cd "$sl_dir" || exit 1
	sed 's/count: 16/count: 2/' "$SLURM_DIR/kiln.yaml" >kiln.yaml
	"$KILN" iam-policy --var image=$SLURM_SPEC_IMAGE >policy.json
	check "slurm: kiln's own policy may encrypt with kms_key, through SSM only" 0 \
		--out "[{\"Action\": [\"kms:Encrypt\"], \"Condition\": {\"StringEquals\": {\"kms:ViaService\": \"ssm.us-east-1.amazonaws.com\"}}, \"Effect\": \"Allow\", \"Resource\": \"$SLURM_KMS\", \"Sid\": \"KilnSlurmKey\"}]" \
		-- python3 -c 'import json, sys; print(json.dumps([s for s in json.load(open(sys.argv[1]))["Statement"] if s.get("Sid") == "KilnSlurmKey"], sort_keys=True))' policy.json
	sl_ep=AWS_ENDPOINT_URL=http://127.0.0.1:$(cat "$sl_lp/moto.port")
	sl_py=$E2E_ROOT/tests/e2e/aws_inspect.py
	echo '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}' >admin.json
	sl_admin=$(env "$sl_ep" "$AWS_PY" "$sl_py" user admin admin.json)
	# shellcheck disable=SC2086
	sl_keys=$(env "$sl_ep" $sl_admin "$AWS_PY" "$sl_py" user kiln-ci policy.json)
	# shellcheck disable=SC2086
	check "slurm: the cluster applies with exactly the iam-policy permissions, parameters included" 0 \
		--out-has "aws_ssm_parameter.munge_key: created" \
		--out-has "Apply complete: 19 created, 0 updated, 0 replaced, 0 deleted." \
		-- env "$sl_ep" $sl_keys "$KILN" apply --auto-approve --var image=$SLURM_SPEC_IMAGE
	# shellcheck disable=SC2086
	check "slurm: and plans no changes with them" 0 --out-has "No changes." \
		-- env "$sl_ep" $sl_keys "$KILN" plan --detailed-exitcode --var image=$SLURM_SPEC_IMAGE
	# shellcheck disable=SC2086
	check "slurm: and destroys with them, the parameters deleted" 0 \
		--out-has "aws_ssm_parameter.munge_key: deleted" \
		-- env "$sl_ep" $sl_keys "$KILN" destroy --auto-approve --var image=$SLURM_SPEC_IMAGE
	sh "$E2E_ROOT/tests/moto/server.sh" stop "$sl_lp" >/dev/null 2>&1
	SLURM_MOTO_LP=""
	cd "$E2E_ROOT" || exit 1
}

# slurm_sshd_start: an sshd on the controller node (in its namespaces, so
# what it runs sees the controller's slurm.conf and munge socket) at
# $SLURM_CTL and a free port, taking $SLURM_DIR/user.pub for root. Sets
# SLURM_SSHD (its pid) and KILN_TEST_SSH_ENDPOINT; 1 when it does not answer.
slurm_sshd_start() {
	sl_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	sl_d=$SLURM_DIR/sshd
	mkdir -p "$sl_d"
	sshd_files "$sl_d" "$SLURM_CTL" "$sl_port" "$SLURM_DIR/user.pub"
	slurm_on_ctl mkdir -p /run/sshd
	nsenter -t "$(cat "$SLURM_DIR/nodes/ctl/pid")" -m -n -u \
		/usr/sbin/sshd -D -f "$sl_d/sshd_config" -E "$sl_d/sshd.log" &
	SLURM_SSHD=$!
	KILN_TEST_SSH_ENDPOINT=$SLURM_CTL:$sl_port
	export KILN_TEST_SSH_ENDPOINT
	sshd_answers "$SLURM_DIR/user" root "$SLURM_CTL" "$sl_port"
}

slurm_sshd_stop() {
	[ -n "${SLURM_SSHD:-}" ] || return 0
	kill "$SLURM_SSHD" 2>/dev/null
	wait "$SLURM_SSHD" 2>/dev/null
	SLURM_SSHD=""
}

# kiln status asks slurmctld itself (sinfo over kiln's ssh) how many nodes
# of each partition joined: N, as sinfo on the controller says.
slurm_status_joined() { # N NAME
	cd "$SLURM_DIR" || exit 1
	check "$2" 0 \
		--out-has "    slurm partition trainers (default): $1 of 16 nodes joined: $1 idle, 0 allocated, 0 down (from slurmctld on kiln-llm-pretrain-default-login-0)" \
		-- "$KILN" status --var image=$SLURM_SPEC_IMAGE
	cd "$E2E_ROOT" || exit 1
}

# kiln run --sbatch (issue 27): the script reaches the real slurmctld
# through the controller's sshd, the job id sbatch gave is recorded, and
# kiln run cancel scancels it.
slurm_run_tests() {
	cd "$SLURM_DIR" || exit 1
	printf '#!/bin/sh\n#SBATCH --nodes=1\n#SBATCH --partition=trainers\n#SBATCH --output=/dev/null\nsleep 120\n' >train.sbatch
	check "slurm: kiln run --sbatch submits through the controller and records the job id" 0 \
		--out-has "recorded and submitted on trainers" --out-has "Slurm job " --err "" \
		-- "$KILN" run --sbatch train.sbatch --name slurm-e2e --var image=$SLURM_SPEC_IMAGE
	sl_run=$(sed -n 's/^Run \(r-[0-9a-f]*\) .*/\1/p' "$E2E_OUT")
	sl_job=$(sed -n 's/^Slurm job \([0-9]*\);.*/\1/p' "$E2E_OUT")
	check "slurm: slurmctld has the job kiln recorded, named after the run" 0 \
		--out "kiln-$sl_run" -- slurm_on_ctl squeue -h -j "$sl_job" -o %j
	check "slurm: kiln run show gives the job id" 0 --out-has "  job id         $sl_job" \
		-- "$KILN" run show "$sl_run"
	check "slurm: kiln run cancel scancels the job" 0 --out "Run $sl_run cancelled." --err "" \
		-- "$KILN" run cancel "$sl_run" --var image=$SLURM_SPEC_IMAGE
	sl_i=0
	until [ -z "$(slurm_on_ctl squeue -h -j "$sl_job" -o %T 2>/dev/null)" ] || [ "$sl_i" -ge 50 ]; do
		sleep 0.2
		sl_i=$((sl_i + 1))
	done
	check "slurm: the cancelled job has left the queue" 0 --out "" \
		-- slurm_on_ctl squeue -h -j "$sl_job" -o %T
	cd "$E2E_ROOT" || exit 1
}

# slurm_cmdline NODE COMM: the command line of NODE's process COMM, its
# words joined by spaces.
slurm_cmdline() {
	for sl_p in $(ip netns pids "ksl$$-$1"); do
		if [ "$(cat "/proc/$sl_p/comm" 2>/dev/null)" = "$2" ]; then
			tr '\0' ' ' <"/proc/$sl_p/cmdline" | sed 's/ $//'
			echo
			return 0
		fi
	done
	echo "no $2 runs on $1" >&2
	return 1
}

# slurm_verify NODE UNIT...: systemd-analyze verify each UNIT as NODE's boot
# script left it: Debian's unit (when there is one) with kiln's drop-in.
slurm_verify() {
	sl_n=$1
	shift
	for sl_u in "$@"; do
		sl_v=$SLURM_DIR/verify/$sl_n/$sl_u
		mkdir -p "$sl_v"
		if [ -f "/lib/systemd/system/$sl_u.service" ]; then
			cp "/lib/systemd/system/$sl_u.service" "$sl_v/"
		fi
		cp -R "$SLURM_DIR/nodes/$sl_n/etc-systemd/$sl_u.service"* "$sl_v/" || return 1
		SYSTEMD_UNIT_PATH=$sl_v: systemd-analyze verify "$sl_v/$sl_u.service" || return 1
	done
}

# The daemons run from the units the boot scripts wrote: no systemd runs in
# the test's namespaces, so kiln_unit ran each unit's ExecStart as systemd
# would; on a node with systemd they are enabled and come back after a reboot.
slurm_unit_tests() { # C: the third byte of the test's subnet
	printf '%s\n' '[Unit]' 'ConditionPathExists=' '' '[Service]' 'ExecStart=' \
		"ExecStart=/bin/sh $SLURM_DIR/boot-trainers.sh slurmd" \
		'Restart=on-failure' 'RestartSec=5' >"$SLURM_DIR/slurmd-dropin.want"
	compare "slurm: a node's boot script writes a drop-in for Debian's slurmd.service: the script again, which looks the controller up, restarted on failure" \
		"$SLURM_DIR/slurmd-dropin.want" "$SLURM_DIR/nodes/n1/etc-systemd/slurmd.service.d/kiln.conf"
	check "slurm: and the node's slurmd is what that ExecStart execs: slurmd -Z against the controller it looked up" 0 \
		--out "/usr/sbin/slurmd -D -s -N trainers-$1-2 -Z --conf-server $SLURM_CTL --conf Gres=gpu:h100:8 Feature=trainers" \
		-- slurm_cmdline n1 slurmd
	check "slurm: the controller's slurmctld runs its drop-in's ExecStart" 0 \
		--out "/usr/sbin/slurmctld -D -s" -- slurm_cmdline ctl slurmctld
	check "slurm: and its reconfigure loop runs kiln-slurm-sync.service's ExecStart" 0 \
		--out "/bin/sh $SLURM_DIR/boot-login.sh sync" -- slurm_cmdline ctl sh
	check "slurm: systemd-analyze verify accepts every unit and drop-in the boot scripts wrote" 0 \
		-- slurm_verify ctl slurmctld kiln-slurm-sync
	check "slurm: and the node's" 0 -- slurm_verify n1 slurmd
}

slurm_daemon_tests() {
	if ! slurm_net >"$E2E_TMP/.slurm-net" 2>&1; then
		fail "slurm: the test's bridge and namespaces are made" "$E2E_TMP/.slurm-net"
		return
	fi
	pass "slurm: the test's bridge and namespaces are made"
	for sl_g in login trainers; do
		check "slurm: the user data of $sl_g's nodes holds their scheduler part" 0 \
			-- "$AWS_PY" "$E2E_ROOT/tests/e2e/slurm_inspect.py" scheduler-script \
			llm-pretrain default "$sl_g" "$SLURM_DIR/boot-$sl_g.sh"
	done
	check "slurm: the boot scripts pass shellcheck" 0 \
		-- shellcheck -s sh "$SLURM_DIR/boot-login.sh" "$SLURM_DIR/boot-trainers.sh"
	sl_net=${SLURM_CTL%.1}
	# The controller looks for new files every 2 s here (60 s on a real node).
	KILN_SLURM_SYNC_SECONDS=2 slurm_boot ctl "$SLURM_DIR/boot-login.sh" 0 "$SLURM_CTL"
	if ! slurm_wait "$SLURM_DIR/nodes/ctl/pid" 60 ||
		[ "$(cat "$SLURM_DIR/nodes/ctl/booted")" != ok ]; then
		fail "slurm: the controller boots: munged and slurmctld start with kiln's slurm.conf" \
			"$SLURM_DIR/nodes/ctl/sandbox.log" "$SLURM_DIR/nodes/ctl/boot.log"
		return
	fi
	sl_i=0
	until slurm_on_ctl scontrol ping 2>/dev/null | grep -q "is UP" || [ "$sl_i" -ge 100 ]; do
		sleep 0.2
		sl_i=$((sl_i + 1))
	done
	check "slurm: the controller boots: munged and slurmctld start with kiln's slurm.conf" 0 \
		--out-has "is UP" -- slurm_on_ctl scontrol ping
	sl_ctld=$(slurm_on_ctl cat /run/slurmctld.pid)
	slurm_boot n1 "$SLURM_DIR/boot-trainers.sh" 8 "$sl_net.2"
	slurm_boot n2 "$SLURM_DIR/boot-trainers.sh" 8 "$sl_net.3"
	if ! slurm_nodes_idle 2 60; then
		fail "slurm: two trainers nodes join as dynamic nodes" \
			"$SLURM_DIR/nodes/n1/sandbox.log" "$SLURM_DIR/nodes/n1/boot.log" \
			"$SLURM_DIR/nodes/n1/log/slurm/slurmd.log" "$SLURM_DIR/nodes/ctl/log/slurm/slurmctld.log"
		return
	fi
	if slurm_sshd_start; then
		pass "slurm: an sshd answers on the controller node"
		slurm_status_joined 2 "slurm: status asks slurmctld over ssh: the 2 trainers that joined, idle"
		slurm_run_tests
	else
		fail "slurm: an sshd answers on the controller node" "$SLURM_DIR/sshd/sshd.log"
	fi
	sl_c=${sl_net#10.199.}
	slurm_unit_tests "$sl_c"
	check "slurm: sinfo shows the trainers partition with its GPUs as GRES" 0 \
		--out "trainers* 2 gpu:h100:8 trainers idle" \
		-- slurm_on_ctl sinfo -h -o "%P %D %G %f %T"
	check "slurm: the nodes are named after their group and address" 0 \
		--out "trainers-$sl_c-2${NL}trainers-$sl_c-3" \
		-- slurm_on_ctl sinfo -h -N -o %N
	check "slurm: srun -N 2 -p trainers hostname runs on two distinct nodes" 0 \
		--out "trainers-$sl_c-2${NL}trainers-$sl_c-3" \
		-- sh -c 'nsenter -t "$1" -m -n -u timeout 60 srun -N 2 -p trainers hostname | sort' \
		sh "$(cat "$SLURM_DIR/nodes/ctl/pid")"
	check "slurm: a job asking for 8 GPUs gets the node's eight devices" 0 \
		--out "0,1,2,3,4,5,6,7" \
		-- slurm_on_ctl timeout 60 srun -N 1 -p trainers --gres=gpu:h100:8 \
		sh -c 'echo "$CUDA_VISIBLE_DEVICES"'
	slurm_boot n3 "$SLURM_DIR/boot-trainers.sh" 8 "$sl_net.4"
	if slurm_nodes_idle 3 60; then
		pass "slurm: a third node joins with no change to the controller"
	else
		fail "slurm: a third node joins with no change to the controller" \
			"$SLURM_DIR/nodes/n3/boot.log" "$SLURM_DIR/nodes/n3/log/slurm/slurmd.log"
	fi
	slurm_status_joined 3 "slurm: status asks slurmctld again: 3 joined after the group grew"
	cd "$SLURM_DIR" || exit 1
	check "slurm: and --json says the counts came from the controller" 0 \
		--out '{"allocated":0,"default":true,"down":0,"idle":3,"joined":3,"nodes":16,"not_responding":0,"other":0,"partition":"trainers","role":"partition","source":"controller"} {"controller":"kiln-llm-pretrain-default-login-0","source":"controller","type":"slurm"}' \
		-- slurm_status_json
	slurm_sshd_stop
	check "slurm: with the controller's sshd stopped, status counts health tags and says why" 0 \
		--out-has "    slurm partition trainers (default): 3 of 16 nodes joined (from health tags, reported healthy: controller not reachable: ssh: connect to host $SLURM_CTL port ${KILN_TEST_SSH_ENDPOINT##*:}: Connection refused)" \
		-- "$KILN" status --var image=$SLURM_SPEC_IMAGE
	unset KILN_TEST_SSH_ENDPOINT
	cd "$E2E_ROOT" || exit 1
	check "slurm: and a job runs on all three, the controller never restarted" 0 \
		--out "3 $sl_ctld" \
		-- sh -c 'n=$(nsenter -t "$1" -m -n -u timeout 60 srun -N 3 -p trainers hostname | sort -u | wc -l); echo "$n $(nsenter -t "$1" -m -n -u cat /run/slurmctld.pid)"' \
		sh "$(cat "$SLURM_DIR/nodes/ctl/pid")"
	# The plan that renamed the partition (slurm_kiln_tests): its slurm.conf,
	# as the parameter holds it once applied, reaches the running controller.
	"$AWS_PY" -c 'import json, sys
p = json.load(open(sys.argv[1]))
c = [r for r in p["resource_changes"] if r["address"] == "aws_ssm_parameter.slurm_conf"][0]
open(sys.argv[2], "w").write(c["change"]["after"]["content"])' "$SLURM_DIR/next.json" "$SLURM_DIR/params/slurm.conf.next"
	mv "$SLURM_DIR/params/slurm.conf.next" "$SLURM_DIR/params/slurm.conf"
	sl_i=0
	until [ "$(slurm_on_ctl sinfo -h -o %P 2>/dev/null)" = "gpu*" ] || [ "$sl_i" -ge 150 ]; do
		sleep 0.2
		sl_i=$((sl_i + 1))
	done
	check "slurm: a renamed partition reaches the running controller (scontrol reconfigure), its nodes kept" 0 \
		--out "gpu* 3 gpu:h100:8 idle $sl_ctld" \
		-- sh -c 'echo "$(nsenter -t "$1" -m -n -u sinfo -h -o "%P %D %G %T") $(nsenter -t "$1" -m -n -u cat /run/slurmctld.pid)"' \
		sh "$(cat "$SLURM_DIR/nodes/ctl/pid")"
	check "slurm: the controller logged the reconfigure" 0 --out-has "kiln-slurm: reconfigured" \
		-- cat "$SLURM_DIR/nodes/ctl/log/slurm/kiln-sync.log"
}

slurm_tests() {
	sl_missing=""
	for sl_cmd in slurmctld slurmd sinfo srun scontrol munged ip unshare nsenter mknod shellcheck \
		systemd-analyze; do
		command -v "$sl_cmd" >/dev/null 2>&1 || sl_missing="$sl_missing $sl_cmd"
	done
	if [ "$(id -u)" != 0 ]; then
		slurm_fail_all "not root: namespaces, mounts and the daemons need root (CI runs as root)"
		return
	fi
	if [ -n "$sl_missing" ]; then
		slurm_fail_all "missing:$sl_missing (scripts/deps.sh --install installs them)"
		return
	fi
	if ! AWS_PY=$(aws_find_python); then
		slurm_fail_all "no python3 here has moto 5 and boto3"
		return
	fi
	PYTHON=$AWS_PY
	export PYTHON
	SLURM_DIR=$(mktemp -d "$E2E_TMP/slurm.XXXXXX")
	SLURM_NETNS=""
	SLURM_MOTO=$SLURM_DIR/moto
	trap 'slurm_cleanup; rm -rf "$E2E_TMP"' EXIT
	trap 'exit 130' INT TERM
	if ! sl_out=$(sh "$E2E_ROOT/tests/moto/server.sh" start "$SLURM_MOTO" 2>&1); then
		printf '%s\n' "$sl_out" >"$E2E_TMP/.slurm-moto"
		fail "slurm: moto starts" "$E2E_TMP/.slurm-moto"
		return
	fi
	eval "$sl_out"
	AWS_ENDPOINT_URL=http://127.0.0.1:$MOTO_PORT
	AWS_ACCESS_KEY_ID=testing
	AWS_SECRET_ACCESS_KEY=testing
	KILN_STATE_KEY=$(head -c 32 /dev/urandom | base64)
	export AWS_ENDPOINT_URL AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY KILN_STATE_KEY
	slurm_kiln_tests
	slurm_least_privilege
	slurm_daemon_tests
	cd "$E2E_ROOT" || exit 1
	slurm_cleanup
	assert "slurm: every process the test started is stopped and its namespaces deleted" \
		sh -c '! ip netns list | grep -q "^ksl$1-" && ! ip link show "ksl$1" >/dev/null 2>&1' sh "$$"
	unset AWS_ENDPOINT_URL AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY KILN_STATE_KEY
	trap 'rm -rf "$E2E_TMP"' EXIT
}
