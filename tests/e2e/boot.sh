# boot.sh - the nodes' boot configuration (issue 14), end to end: every
# example's and template's user data through the real cloud-init schema check
# and shellcheck, and the boot script run for real in a sandbox
# (boot_sandbox.sh) for a healthy node, a node with a GPU missing, one
# without EFA devices, a slow file system, one NVMe device, and bootstrap
# steps; kiln user-data's errors.

# bo_docs SPEC: each compute group's document, checked by cloud-init and shellcheck.
bo_docs() {
	for g in $(python3 -c 'import sys, yaml; print(" ".join(yaml.safe_load(open(sys.argv[1])).get("compute") or {}))' "$1"); do
		check "boot: $1: kiln user-data -g $g" 0 -- "$KILN" user-data -g "$g" "$1"
		cp "$E2E_OUT" "$T/boot-doc.yaml"
		check "boot: $1: $g: cloud-init accepts the document" 0 \
			--out "Valid cloud-config: $T/boot-doc.yaml" -- cloud-init schema --config-file "$T/boot-doc.yaml"
		python3 -c 'import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
open(sys.argv[2], "w").write([f["content"] for f in d["write_files"] if f["path"] == "/var/lib/kiln/boot.sh"][0])' \
			"$T/boot-doc.yaml" "$T/boot-script.sh"
		check "boot: $1: $g: shellcheck passes the boot script" 0 --out "" --err "" \
			-- shellcheck "$T/boot-script.sh"
	done
}

# bo_filled GROUP SPEC OUT: the document as the launch fills it (aws_launch.c).
bo_filled() {
	"$KILN" user-data -g "$1" "$2" | sed \
		-e 's|{{kiln:nfs:home}}|fs-0aa11bb22cc33dd44.efs.us-east-1.amazonaws.com:/|' \
		-e 's|{{kiln:efs:home}}|fs-0aa11bb22cc33dd44|' \
		-e 's|{{kiln:workspace}}|default|' >"$3"
}

# bo_run NAME DOC [VAR=VALUE...]: run DOC's script in a fresh sandbox root $T/sb/NAME.
bo_run() {
	bo_name=$1
	bo_doc=$2
	shift 2
	check "boot: sandbox $bo_name: the boot script runs" 0 \
		-- env "$@" tests/e2e/boot_sandbox.sh "$bo_doc" "$T/sb/$bo_name/root"
	BO_ROOT=$T/sb/$bo_name/root
}

# bo_report NAME WANT: the kiln:health tag the node put on itself, exactly.
bo_report() {
	printf 'aws ec2 create-tags --region us-east-1 --resources i-0123456789abcdef0 --tags [{"Key":"kiln:health","Value":"%s"}]\n' "$2" >"$T/boot-want"
	grep '^aws ec2 create-tags' "$BO_ROOT/var/log/calls" >"$T/boot-got"
	compare "boot: sandbox $1: the node tags itself kiln:health: $2" "$T/boot-want" "$T/boot-got"
}

boot_tests() {
	if ! command -v cloud-init >/dev/null 2>&1 || ! command -v shellcheck >/dev/null 2>&1; then
		fail "boot: cloud-init and shellcheck are installed (scripts/deps.sh installs them)"
		return
	fi
	for spec in examples/*.yaml templates/*.yaml; do
		bo_docs "$spec"
	done

	check "boot: kiln help user-data" 0 --out-has "Usage: kiln user-data --group NAME [SPEC] [--digest] [OPTIONS]" \
		--out-has "CloudWatch agent on an aws GPU group where the image has it, and reports" \
		--out-has "Calls no cloud API." --err "" -- "$KILN" help user-data
	check "boot: user-data needs --group" 1 --out "" \
		--err "kiln: user-data: --group is required; name the group: kiln user-data --group NAME [SPEC]" \
		-- "$KILN" user-data examples/llm-pretrain.yaml
	check "boot: user-data of a group the spec has not" 1 --out "" \
		--err "kiln: user-data: examples/llm-pretrain.yaml has no compute group 'nope'; name a group under compute: in the spec" \
		-- "$KILN" user-data -g nope examples/llm-pretrain.yaml
	check "boot: user-data --digest is the plan's user_data" 0 \
		--out-has "sha256:" -- "$KILN" user-data -g trainers --digest examples/quickstart.yaml
	"$KILN" plan --json examples/quickstart.yaml 2>/dev/null |
		python3 -c 'import json, sys
p = json.load(sys.stdin)
print([r for r in p["resource_changes"] if r["address"] == "sim_node_group.trainers"][0]["change"]["after"]["user_data"])' >"$T/boot-plan-digest"
	"$KILN" user-data -g trainers --digest examples/quickstart.yaml >"$T/boot-cmd-digest"
	compare "boot: the digest kiln user-data prints is the one in the plan" \
		"$T/boot-plan-digest" "$T/boot-cmd-digest"

	# A secret in a bootstrap step: an audit error that never repeats the secret.
	check "boot: audit refuses a bootstrap step holding a secret, naming the kind, not the secret" 3 \
		--out-has "  error    KILN-BOOT-001   compute.trainers.bootstrap[0] looks like it holds a key, secret or token: user data can be read back by anyone allowed to describe the node, and is kept in the plan" \
		--out-has "at tests/e2e/specs/boot-secret.yaml:11:9 (sim_node_group.trainers)" \
		-- "$KILN" audit tests/e2e/specs/boot-secret.yaml
	assert "boot: the finding does not print the secret" \
		sh -c '! grep -q wJalrXUtnFEMI "$1"' sh "$E2E_OUT"
	check "boot: the SARIF output carries the finding" 3 --out-has '"ruleId": "KILN-BOOT-001"' \
		-- "$KILN" audit --format sarif tests/e2e/specs/boot-secret.yaml
	assert "boot: ... without the secret either" sh -c '! grep -q wJalrXUtnFEMI "$1"' sh "$E2E_OUT"

	# llm-pretrain's trainers: local NVMe, Lustre found at boot (a zone list), EFS, EFA.
	bo_filled trainers examples/llm-pretrain.yaml "$T/boot-trainers.yaml"
	bo_run healthy "$T/boot-trainers.yaml"
	cat >"$T/boot-want" <<'EOF'
LABEL=kiln-local /scratch ext4 defaults,noatime,nofail 0 2
fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com@tcp:/abcdefgh /fsx lustre relatime,flock,_netdev,nofail 0 0
fs-0aa11bb22cc33dd44.efs.us-east-1.amazonaws.com:/ /home nfs4 nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport,_netdev,nofail 0 0
EOF
	compare "boot: sandbox healthy: fstab holds the three tiers" "$T/boot-want" "$BO_ROOT/etc/fstab"
	cat >"$T/boot-want" <<'EOF'
mdadm --create /dev/md/kiln-local --run --level=0 --raid-devices=8 /dev/nvme1n1 /dev/nvme2n1 /dev/nvme3n1 /dev/nvme4n1 /dev/nvme5n1 /dev/nvme6n1 /dev/nvme7n1 /dev/nvme8n1
mkfs.ext4 -F -q -L kiln-local /dev/md/kiln-local
mount /scratch
mount /fsx
mount /home
EOF
	grep -E '^(mdadm|mkfs\.ext4|mount) ' "$BO_ROOT/var/log/calls" >"$T/boot-got"
	compare "boot: sandbox healthy: RAID 0 of the 8 instance-store devices (not the EBS root), then the mounts" \
		"$T/boot-want" "$T/boot-got"
	cat >"$T/boot-want" <<'EOF'
# NCCL over EFA (kiln: this group is on the fabric).
export FI_PROVIDER=efa
export FI_EFA_FORK_SAFE=1
export FI_EFA_USE_DEVICE_RDMA=1
EOF
	compare "boot: sandbox healthy: the EFA environment for login shells" \
		"$T/boot-want" "$BO_ROOT/etc/profile.d/kiln-efa.sh"
	assert "boot: sandbox healthy: the Lustre file system was looked up by its kiln tags" \
		grep -qF "Tags[?Key=='kiln:address' && Value=='aws_fsx_lustre.scratch']" "$BO_ROOT/var/log/calls"
	assert "boot: sandbox healthy: the log names each mount" \
		grep -qF "kiln: mounted home (fs-0aa11bb22cc33dd44.efs.us-east-1.amazonaws.com:/) at /home" "$BO_ROOT/var/log/kiln-boot.log"
	bo_report healthy "healthy: 8/8 GPUs, 32/32 EFA"

	# GPU metrics (issue 17): without the CloudWatch agent on the image, the log says so
	# and the node is healthy; with it, the agent is started from the configuration the
	# document wrote, which holds the nvidia_gpu section.
	assert "boot: sandbox healthy: no CloudWatch agent on the image is logged" \
		grep -qxF "kiln: the CloudWatch agent is not installed: no GPU metrics" "$BO_ROOT/var/log/kiln-boot.log"
	assert "boot: sandbox healthy: no agent, no agent call" \
		sh -c "! grep -q '^amazon-cloudwatch-agent-ctl' '$BO_ROOT/var/log/calls'"
	bo_run cwagent "$T/boot-trainers.yaml" SB_CWAGENT=1
	printf 'amazon-cloudwatch-agent-ctl -a fetch-config -m ec2 -s -c file:/opt/aws/amazon-cloudwatch-agent/etc/kiln.json\n' >"$T/boot-want"
	grep '^amazon-cloudwatch-agent-ctl' "$BO_ROOT/var/log/calls" >"$T/boot-got"
	compare "boot: sandbox cwagent: the agent is started from kiln's configuration" "$T/boot-want" "$T/boot-got"
	check "boot: sandbox cwagent: the configuration is JSON publishing each GPU's utilization and memory into CWAgent by InstanceId" 0 \
		--out '{"namespace": "CWAgent", "nvidia_gpu": ["utilization_gpu", "utilization_memory", "memory_used", "memory_total"], "append": {"InstanceId": "${aws:InstanceId}"}, "aggregation": [["InstanceId"]], "interval": 60}' \
		-- python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))["metrics"]
print(json.dumps({"namespace": m["namespace"], "nvidia_gpu": m["metrics_collected"]["nvidia_gpu"]["measurement"],
                  "append": m["append_dimensions"], "aggregation": m["aggregation_dimensions"],
                  "interval": m["metrics_collected"]["nvidia_gpu"]["metrics_collection_interval"]}))' \
		"$BO_ROOT/opt/aws/amazon-cloudwatch-agent/etc/kiln.json"
	assert "boot: sandbox cwagent: the log says the agent started" \
		grep -qxF "kiln: starting the CloudWatch agent (/opt/aws/amazon-cloudwatch-agent/etc/kiln.json)" "$BO_ROOT/var/log/kiln-boot.log"
	bo_report cwagent "healthy: 8/8 GPUs, 32/32 EFA"

	bo_run gpu-missing "$T/boot-trainers.yaml" SB_GPUS=7
	bo_report gpu-missing "unhealthy: 7 of 8 GPUs (nvidia-smi lists 7; p5.48xlarge has 8)"
	bo_run no-efa "$T/boot-trainers.yaml" SB_EFA=0
	bo_report no-efa "unhealthy: 0 of 32 EFA devices (fi_info lists 0; kiln attached 32 to p5.48xlarge)"
	bo_run slow-fs "$T/boot-trainers.yaml" SB_MOUNT_FAILS=2
	assert "boot: sandbox slow-fs: /home was mounted on the third try" \
		test "$(grep -c '^mount /home$' "$BO_ROOT/var/log/calls")" = 3
	bo_report slow-fs "healthy: 8/8 GPUs, 32/32 EFA"
	bo_run one-nvme "$T/boot-trainers.yaml" SB_NVME=1
	assert "boot: sandbox one-nvme: one device is no RAID" \
		sh -c "! grep -q '^mdadm' '$BO_ROOT/var/log/calls' && grep -qx 'mkfs.ext4 -F -q -L kiln-local /dev/nvme1n1' '$BO_ROOT/var/log/calls'"

	# The login group: no GPUs, no EFA, no local store; home only.
	bo_filled login examples/llm-pretrain.yaml "$T/boot-login.yaml"
	bo_run login "$T/boot-login.yaml"
	bo_report login "healthy: booted"
	assert "boot: sandbox login: no EFA environment off the fabric" \
		test ! -e "$BO_ROOT/etc/profile.d/kiln-efa.sh"
	assert "boot: sandbox login: no GPUs, no CloudWatch agent configuration or step" \
		sh -c "test ! -e '$BO_ROOT/opt/aws/amazon-cloudwatch-agent/etc/kiln.json' && ! grep -q 'CloudWatch agent' '$BO_ROOT/var/log/kiln-boot.log'"
	bo_run efs-utils "$T/boot-login.yaml" SB_EFS_UTILS=1
	printf 'fs-0aa11bb22cc33dd44:/ /home efs tls,_netdev,nofail 0 0\n' >"$T/boot-want"
	compare "boot: sandbox efs-utils: with amazon-efs-utils on the image, EFS is mounted by id over TLS" \
		"$T/boot-want" "$BO_ROOT/etc/fstab"

	# Bootstrap steps, top level first, in order; a failing step stops the rest.
	"$KILN" user-data -g trainers tests/e2e/specs/boot-steps.yaml >"$T/boot-steps.yaml"
	bo_run steps "$T/boot-steps.yaml"
	printf 'top\ngroup 1\n' >"$T/boot-want"
	compare "boot: sandbox steps: the steps ran in order" "$T/boot-want" "$BO_ROOT/tmp/order"
	printf 'unhealthy: bootstrap step 4 (compute.trainers.bootstrap[2]) failed; the steps after it did not run\n' >"$T/boot-want"
	compare "boot: sandbox steps: the failed step is the report (sim writes it to a file)" \
		"$T/boot-want" "$BO_ROOT/var/lib/kiln/health"
	assert "boot: sandbox steps: a file step is written with its mode" \
		test "$(stat -c %a "$BO_ROOT/etc/team/env.sh")" = 640
	assert "boot: sandbox steps: the step after the failed one did not run" \
		test ! -e "$BO_ROOT/tmp/after"
	bo_hostile
	bo_ttl
}

# bo_ttl_run NAME WANT_SHUTDOWN TAGS-JSON [IMDS]: run the TTL script of trainers once,
# against the stand-in metadata service (IMDS, default the one bo_ttl started) serving
# TAGS, with a stand-in shutdown; check it powered off (yes) or not (no).
bo_ttl_run() {
	printf '%s\n' "$3" >"$T/ttl-tags.json"
	rm -f "$T/ttl-calls"
	check "boot: node TTL $1: the script runs" 0 --err "" -- env PATH="$T/ttl-stub:$PATH" \
		KILN_IMDS="${4:-http://127.0.0.1:$bo_port}" KILN_TTL_LOG="$T/ttl.log" KILN_TTL_STATE="$T/ttl.last" \
		bash "$T/ttl.sh"
	if [ "$2" = yes ]; then
		assert "boot: node TTL $1: the node powers itself off" \
			grep -qx "shutdown -h now kiln: expired at .*" "$T/ttl-calls"
	else
		assert "boot: node TTL $1: the node keeps running" test ! -e "$T/ttl-calls"
	fi
}

# The node TTL (issue 29): the script, timer and service the document installs, run for
# real against a stand-in instance metadata service on loopback.
bo_ttl() {
	bo_filled trainers examples/llm-pretrain.yaml "$T/boot-trainers.yaml"
	python3 -c 'import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
files = {f["path"]: f for f in d["write_files"]}
for path, out in (("/var/lib/kiln/ttl.sh", "ttl.sh"), ("/etc/systemd/system/kiln-ttl.service", "kiln-ttl.service"),
                  ("/etc/systemd/system/kiln-ttl.timer", "kiln-ttl.timer")):
    open(sys.argv[2] + "/" + out, "w").write(files[path]["content"])
    print(path, files[path]["permissions"])' "$T/boot-trainers.yaml" "$T" >"$T/boot-got"
	printf '%s\n' '/var/lib/kiln/ttl.sh 0700' '/etc/systemd/system/kiln-ttl.service 0644' \
		'/etc/systemd/system/kiln-ttl.timer 0644' >"$T/boot-want"
	compare "boot: node TTL: the document writes the script and both units" "$T/boot-want" "$T/boot-got"
	check "boot: node TTL: shellcheck passes the TTL script" 0 --out "" --err "" -- shellcheck "$T/ttl.sh"
	if command -v systemd-analyze >/dev/null 2>&1; then
		check "boot: node TTL: systemd-analyze verify accepts the timer and the service" 0 --err "" \
			-- systemd-analyze verify "$T/kiln-ttl.timer" "$T/kiln-ttl.service"
	fi
	assert "boot: node TTL: the timer runs the service every minute" \
		grep -qx 'OnUnitActiveSec=1min' "$T/kiln-ttl.timer"
	assert "boot: sandbox healthy: the boot script enabled the TTL timer first" \
		sh -c "head -1 '$T/sb/healthy/root/var/log/calls' | grep -qx 'systemctl enable --now kiln-ttl.timer'"
	assert "boot: node TTL: the grace is the default 15m" grep -q '^g=900 ' "$T/ttl.sh"

	mkdir -p "$T/ttl-stub"
	printf '#!/bin/sh\nprintf "%%s\\n" "shutdown $*" >>"%s"\n' "$T/ttl-calls" >"$T/ttl-stub/shutdown"
	chmod 755 "$T/ttl-stub/shutdown"
	printf '{}\n' >"$T/ttl-tags.json"
	rm -f "$T/ttl-port" "$T/ttl.log" "$T/ttl.last"
	python3 tests/e2e/imds_standin.py "$T/ttl-tags.json" "$T/ttl-port" &
	bo_imds=$!
	i=0
	while [ ! -s "$T/ttl-port" ] && [ "$i" -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	bo_port=$(cat "$T/ttl-port")
	bo_at() { date -u -d "@$(($(date -u +%s) + $1))" +%Y-%m-%dT%H:%M:%SZ; }

	bo_ttl_run "expiry minus one minute" no "{\"kiln:expires\": \"$(bo_at 60)\"}"
	assert "boot: node TTL expiry minus one minute: the log says when" \
		grep -q "kiln ttl: expires .*; off 900s after$" "$T/ttl.log"
	bo_ttl_run "at expiry" no "{\"kiln:expires\": \"$(bo_at 0)\"}"
	assert "boot: node TTL at expiry: the log says the grace has begun" \
		grep -q "kiln ttl: expired at .*; off after the 900s grace$" "$T/ttl.log"
	bo_ttl_run "within the grace" no "{\"kiln:expires\": \"$(bo_at -840)\"}"
	bo_ttl_run "past the grace" yes "{\"kiln:expires\": \"$(bo_at -901)\"}"
	assert "boot: node TTL past the grace: the log says it powers off" \
		grep -q "kiln ttl: expired at .*, 900s grace passed: powering off$" "$T/ttl.log"
	bo_ttl_run "extended (ttl extend put a later tag)" no "{\"kiln:expires\": \"$(bo_at 3600)\"}"
	bo_ttl_run "no kiln:expires tag" no '{"kiln:cluster": "llm-pretrain"}'
	assert "boot: node TTL no tag: the boot log says so" \
		grep -q "kiln ttl: no kiln:expires tag: no TTL, keeps running$" "$T/ttl.log"
	bo_ttl_run "an empty tag (the TTL removed)" no '{"kiln:expires": ""}'
	bo_ttl_run "a tag that is no time" no '{"kiln:expires": "soon; rm -rf /"}'
	assert "boot: node TTL a tag that is no time: the boot log names it, filtered" \
		grep -q "kiln ttl: kiln:expires 'soonrm-rf' is no time: keeps running$" "$T/ttl.log"
	bo_ttl_run "instance tags not in the metadata" no 'null'
	kill "$bo_imds"
	wait "$bo_imds" 2>/dev/null
	bo_ttl_run "the metadata service down" no "{\"kiln:expires\": \"$(bo_at -901)\"}"
	assert "boot: node TTL the metadata service down: the boot log says so" \
		grep -q "kiln ttl: cannot read kiln:expires (no metadata, or no tags in it): keeps running$" "$T/ttl.log"
	check "boot: node TTL: the boot log has a line per change, not one a minute" 0 --out 8 \
		-- sh -c "grep -c 'kiln ttl:' '$T/ttl.log'"

	# ttl_grace sets the grace; out of range is refused with its fix.
	printf 'kiln: 1\ncluster: t\nprovider: {name: sim}\nttl: 2h\nttl_grace: 30m\ncompute:\n  trainers: {gpu: H100:8}\n' >"$T/ttl-grace.yaml"
	"$KILN" user-data -g trainers "$T/ttl-grace.yaml" >"$T/ttl-grace-doc.yaml"
	assert "boot: node TTL: ttl_grace: 30m is the script's grace" grep -q '^      g=1800 ' "$T/ttl-grace-doc.yaml"
	printf 'kiln: 1\ncluster: t\nprovider: {name: sim}\nttl_grace: 30s\n' >"$T/ttl-grace-bad.yaml"
	check "boot: node TTL: a ttl_grace under a minute is refused" 1 --out "" \
		--err "$T/ttl-grace-bad.yaml:4:12: error: ttl_grace must be between 1m and 7d, not 30s
  hint: it is how long past the expiry a node waits for \`kiln reap\` before it powers itself off (checked once a minute); 15m is the default" \
		-- "$KILN" validate "$T/ttl-grace-bad.yaml"
}

# bo_hostile: file contents with CR, ESC, DEL, C1 (U+009B and a raw 0x9B byte),
# NEL, U+2028 and U+2029, with and without a trailing newline (issue 33,
# findings 3 and 4): the document is YAML with no key but kiln's, cloud-init
# takes it, every content decodes to its bytes, and the sandbox writes them;
# a command holding one is refused at its value.
bo_hostile() {
	bo_raw=$(printf '\233')
	check "boot: hostile contents validate" 0 --out "ok tests/e2e/specs/boot-hostile.yaml" --err "" \
		-- "$KILN" validate --var raw="$bo_raw" tests/e2e/specs/boot-hostile.yaml
	"$KILN" user-data -g trainers --var raw="$bo_raw" tests/e2e/specs/boot-hostile.yaml >"$T/boot-hostile.yaml"
	check "boot: hostile contents: cloud-init accepts the document" 0 \
		--out "Valid cloud-config: $T/boot-hostile.yaml" -- cloud-init schema --config-file "$T/boot-hostile.yaml"
	cat >"$T/boot-want" <<'EOF'
keys: ['runcmd', 'write_files']
/var/lib/kiln/step-1.content b'x\rbootcmd: [[touch, /tmp/INJECTED]]\rzz: |'
/var/lib/kiln/step-2.content b'a\x1b[31mb\n'
/var/lib/kiln/step-3.content b'a\x7fb\n'
/var/lib/kiln/step-4.content b'a\xc2\x9bb\n'
/var/lib/kiln/step-5.content b'a\xc2\x85b\n'
/var/lib/kiln/step-6.content b'a\xe2\x80\xa8b\n'
/var/lib/kiln/step-7.content b'a\xe2\x80\xa9b\n'
/var/lib/kiln/step-8.content b'a\x9bb\n'
/var/lib/kiln/step-9.content b'no newline'
/var/lib/kiln/step-10.content b'one newline\n'
EOF
	python3 tests/e2e/boot_inspect.py "$T/boot-hostile.yaml" >"$T/boot-got" 2>&1
	compare "boot: hostile contents: PyYAML reads kiln's keys only, and each content decodes to its bytes" \
		"$T/boot-want" "$T/boot-got"
	bo_run hostile "$T/boot-hostile.yaml"
	printf 'x\rbootcmd: [[touch, /tmp/INJECTED]]\rzz: |' >"$T/boot-want"
	compare "boot: sandbox hostile: a content with CRs is written byte for byte" "$T/boot-want" "$BO_ROOT/etc/k/cr"
	printf 'a\302\233b\n' >"$T/boot-want"
	compare "boot: sandbox hostile: U+009B is written as its UTF-8" "$T/boot-want" "$BO_ROOT/etc/k/c1"
	printf 'a\233b\n' >"$T/boot-want"
	compare "boot: sandbox hostile: a raw 0x9B byte is written as it is" "$T/boot-want" "$BO_ROOT/etc/k/raw"
	printf 'no newline' >"$T/boot-want"
	compare "boot: sandbox hostile: a content without a trailing newline gets none" "$T/boot-want" "$BO_ROOT/etc/k/no-newline"
	printf 'one newline\n' >"$T/boot-want"
	compare "boot: sandbox hostile: a content with one keeps exactly one" "$T/boot-want" "$BO_ROOT/etc/k/newline"
	printf 'healthy: booted\n' >"$T/boot-want"
	compare "boot: sandbox hostile: the node is healthy (sim writes its report to a file)" \
		"$T/boot-want" "$BO_ROOT/var/lib/kiln/health"

	# A command keeps to text: the raw byte through a variable is refused where it is used.
	printf 'kiln: 1\ncluster: t\nprovider: {name: sim}\nvars: {c: x}\nbootstrap:\n  - {run: "echo ${var.c}"}\n' >"$T/boot-raw-run.yaml"
	check "boot: a command holding a byte that is not UTF-8 is refused at its value" 1 --out "" \
		--err "$T/boot-raw-run.yaml:6:11: error: bootstrap[0].run holds a byte that is not UTF-8 (0x9B) at byte 6; a command must be UTF-8 text with no control character but tab and newline
  hint: remove it; bytes that are not text go in a file step's content:, which reaches the node byte for byte" \
		-- "$KILN" validate --var c="$bo_raw" "$T/boot-raw-run.yaml"
}
