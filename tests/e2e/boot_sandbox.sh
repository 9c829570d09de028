#!/bin/sh
# shellcheck disable=SC2016 # the stand-ins' bodies expand when they run, not here
# boot_sandbox.sh DOC ROOT - run the boot script of a kiln user data document
# (kiln user-data) for real, as root, in a throwaway root: a private mount
# namespace (unshare --mount), /usr bound read-only, a fresh /etc and /var,
# /sys/class/nvme model files, and stand-ins on PATH for the node's tools
# that record their arguments (ROOT/var/log/calls) and answer like the real
# ones. cloud-init's part is played here: write_files are written, then the
# runcmd's script runs. Fails loudly (exit 2) when unshare or chroot cannot be
# used: never a skip.
#
# The node it plays, from the environment:
#   SB_GPUS=8         GPUs nvidia-smi lists
#   SB_EFA=32         EFA devices fi_info lists
#   SB_NVME=8         instance-store NVMe devices (nvme1..N; nvme0 is the EBS root)
#   SB_MOUNT_FAILS=0  how many times each network mount fails before it succeeds
#   SB_EFS_UTILS=     1: amazon-efs-utils is installed (a mount.efs helper on PATH)
#   SB_CWAGENT=       1: the CloudWatch agent is installed (amazon-cloudwatch-agent-ctl on PATH)
set -eu

doc=$1
root=$2

if [ "$(id -u)" != 0 ]; then
	echo "boot_sandbox: must run as root (CI does): unshare --mount and chroot need it" >&2
	exit 2
fi
for tool in unshare chroot python3; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "boot_sandbox: $tool is missing" >&2
		exit 2
	}
done

rm -rf "$root"
mkdir -p "$root"/usr "$root"/etc "$root"/tmp "$root"/var/log "$root"/var/lib/kiln \
	"$root"/sys/class/nvme "$root"/dev "$root"/proc "$root"/stub "$root"/run
for d in bin sbin lib lib32 lib64 libx32; do
	if [ -L "/$d" ]; then
		ln -s "$(readlink "/$d")" "$root/$d"
	elif [ -d "/$d" ]; then
		mkdir -p "$root/$d"
	fi
done
: >"$root/etc/fstab"
: >"$root/var/log/calls"
: >"$root/dev/null"
chmod 1777 "$root/tmp"

# The devices: nvme0 the EBS root volume, nvme1..N the instance store.
i=0
while [ "$i" -le "${SB_NVME:-8}" ]; do
	mkdir -p "$root/sys/class/nvme/nvme$i/nvme${i}n1"
	if [ "$i" = 0 ]; then
		printf 'Amazon Elastic Block Store              \n' >"$root/sys/class/nvme/nvme$i/model"
	else
		printf 'Amazon EC2 NVMe Instance Storage        \n' >"$root/sys/class/nvme/nvme$i/model"
	fi
	i=$((i + 1))
done

# cloud-init's write_files (b64 entries decoded), and the command runcmd runs.
python3 - "$doc" "$root" <<'EOF'
import base64, os, shlex, sys, yaml
doc, root = sys.argv[1], sys.argv[2]
text = open(doc).read()
assert text.startswith("#cloud-config\n"), "not a cloud-config document"
d = yaml.safe_load(text)
for f in d.get("write_files", []):
    path = root + f["path"]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    # cloud-init's encodings: b64 (or base64) decoded, else the text as UTF-8.
    if f.get("encoding") in ("b64", "base64"):
        data = base64.b64decode(f["content"], validate=True)
    else:
        data = f["content"].encode()
    with open(path, "wb") as out:
        out.write(data)
    os.chmod(path, int(f.get("permissions", "0644"), 8))
with open(root + "/stub/runcmd", "w") as out:
    out.write("\n".join(c if isinstance(c, str) else shlex.join(c) for c in d.get("runcmd", [])) + "\n")
EOF

# The stand-ins: each records "NAME ARGS" and answers as the real tool.
stub() {
	printf '#!/bin/sh\nprintf "%%s\\n" "%s $*" >>/var/log/calls\n%s\n' "$1" "$2" >"$root/stub/$1"
	chmod 755 "$root/stub/$1"
}
stub mount '
for a in "$@"; do m=$a; done
n=$(cat "/run/mount-tries$(echo "$m" | tr / _)" 2>/dev/null || echo 0)
echo $((n + 1)) >"/run/mount-tries$(echo "$m" | tr / _)"
if grep " $m " /etc/fstab | grep -q _netdev && [ "$n" -lt "${SB_MOUNT_FAILS:-0}" ]; then
	echo "mount.$m: Connection timed out" >&2
	exit 32
fi
grep -q " $m " /etc/fstab || { echo "mount: $m: cannot find in /etc/fstab" >&2; exit 1; }'
stub mdadm 'echo "mdadm: array $2 started."'
# systemd is not running in the sandbox: enabling the TTL timer is recorded only.
stub systemctl ''
stub mkfs.ext4 ''
stub nvidia-smi '
case $* in
*ecc.errors*) i=0; while [ "$i" -lt "${SB_GPUS:-8}" ]; do echo "$i, 0"; i=$((i + 1)); done ;;
*--query-gpu=index*) i=0; while [ "$i" -lt "${SB_GPUS:-8}" ]; do echo "$i"; i=$((i + 1)); done ;;
esac'
stub fi_info '
i=0
while [ "$i" -lt "${SB_EFA:-32}" ]; do
	printf "provider: efa\n    fabric: efa\n    domain: rdmap%ss0-rdm\n    version: 122.0\n    type: FI_EP_RDM\n    protocol: FI_PROTO_EFA\n" "$i"
	i=$((i + 1))
done
[ "${SB_EFA:-32}" -gt 0 ] || { echo "fi_getinfo: -61 (No data available)" >&2; exit 1; }'
stub curl '
case $* in
*api/token*) echo "AQAEAKILNTOKEN==" ;;
*meta-data/instance-id*) echo "i-0123456789abcdef0" ;;
*) exit 22 ;;
esac'
stub aws '
case $* in
*"fsx describe-file-systems"*) printf "fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com\tabcdefgh\n" ;;
*"ec2 create-tags"*) echo "" ;;
*) echo "aws: unexpected call" >&2; exit 2 ;;
esac'

[ "${SB_EFS_UTILS:-}" = 1 ] && stub mount.efs ''
# The agent's control script answers fetch-config with a config it can read, as the real one
# refuses a missing file.
[ "${SB_CWAGENT:-}" = 1 ] && stub amazon-cloudwatch-agent-ctl '
for a in "$@"; do c=$a; done
[ -r "${c#file:}" ] || { echo "amazon-cloudwatch-agent-ctl: cannot read ${c#file:}" >&2; exit 1; }'
uid=$$
# The namespace: /usr read-only, /dev/null and /proc (bash's <(...) needs /dev/fd).
if ! unshare --mount --propagation private sh -eu -c '
	root=$1
	mount --bind /usr "$root/usr"
	mount -o remount,bind,ro "$root/usr"
	mount --bind /dev/null "$root/dev/null"
	mount -t proc proc "$root/proc"
	ln -sf /proc/self/fd "$root/dev/fd"
	exec chroot "$root" /usr/bin/env -i PATH=/stub:/usr/sbin:/usr/bin:/sbin:/bin \
		KILN_TRIES=3 KILN_WAIT=0 SB_GPUS="$2" SB_EFA="$3" SB_MOUNT_FAILS="$4" \
		/bin/sh /stub/runcmd' sh "$root" "${SB_GPUS:-8}" "${SB_EFA:-32}" "${SB_MOUNT_FAILS:-0}" \
	>"$root/../sandbox.$uid.out" 2>&1; then
	cat "$root/../sandbox.$uid.out" >&2
	echo "boot_sandbox: the sandbox could not be made or its script failed (see above)" >&2
	exit 2
fi
cat "$root/../sandbox.$uid.out"
rm -f "$root/../sandbox.$uid.out"
