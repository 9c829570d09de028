#!/bin/sh
# slurm_node.sh - one node of the real-Slurm test (tests/e2e/slurm.sh): run a
# boot script kiln generated, as it runs on a node, inside namespaces the test
# made. Started as
#
#   unshare --mount --uts --propagation private \
#       nsenter --net=/run/netns/NETNS sh slurm_node.sh DIR SCRIPT GPUS HOSTNAME
#
# so the node has its own network (a veth on the test's bridge), host name and
# mounts: /etc/slurm, /etc/munge, /etc/systemd/system, /etc/hosts,
# /etc/hostname, /run, /var/spool, /var/log and /var/lib/munge are its own
# (under DIR, or tmpfs; no /run/systemd/system: no systemd runs), so the
# generated script writes where it writes on a real node and nothing of the
# host is touched. /dev is a tmpfs with the usual devices and GPUS fake GPUs:
# /dev/nvidia0.. are character devices with /dev/null's numbers, which is all
# gres.conf's File= needs on a node without GPUs (Slurm counts and hands out
# the files; nothing opens them). DIR/stub holds the stand-ins the script
# calls instead of the cloud's CLI. The node's last process is a sleep whose
# pid goes to DIR/pid: the test enters the node through it and ends it.
set -eu
dir=$1
script=$2
gpus=$3
hostname "$4"

mkdir -p "$dir/etc-slurm" "$dir/etc-munge" "$dir/etc-systemd" "$dir/dev"
: >"$dir/hosts"
: >"$dir/hostname"
printf '127.0.0.1 localhost\n' >"$dir/hosts"
mount --bind "$dir/etc-slurm" /etc/slurm
mount --bind "$dir/etc-munge" /etc/munge
mount --bind "$dir/etc-systemd" /etc/systemd/system
mount --bind "$dir/hosts" /etc/hosts
mount --bind "$dir/hostname" /etc/hostname
mkdir -p "$dir/log"
mount --bind "$dir/log" /var/log
for d in /run /var/spool /var/lib/munge; do
	mkdir -p "$d"
	mount -t tmpfs tmpfs "$d"
done

mount -t tmpfs -o mode=0755 tmpfs "$dir/dev"
mknod -m 0666 "$dir/dev/null" c 1 3
mknod -m 0666 "$dir/dev/zero" c 1 5
mknod -m 0666 "$dir/dev/full" c 1 7
mknod -m 0666 "$dir/dev/random" c 1 8
mknod -m 0666 "$dir/dev/urandom" c 1 9
mknod -m 0666 "$dir/dev/tty" c 5 0
mkdir "$dir/dev/pts" "$dir/dev/shm"
ln -s /proc/self/fd "$dir/dev/fd"
i=0
while [ "$i" -lt "$gpus" ]; do
	mknod -m 0666 "$dir/dev/nvidia$i" c 1 3
	i=$((i + 1))
done
mount --move "$dir/dev" /dev
mount -t devpts -o newinstance,ptmxmode=0666 devpts /dev/pts
ln -s pts/ptmx /dev/ptmx
mount -t tmpfs tmpfs /dev/shm

PATH=$dir/stub:$PATH
export PATH
# The boot script's output is the node's boot log, as cloud-init keeps it.
if sh "$script" >"$dir/boot.log" 2>&1; then
	echo ok >"$dir/booted"
else
	echo "exit $?" >"$dir/booted"
fi
echo $$ >"$dir/pid"
exec sleep 100000
