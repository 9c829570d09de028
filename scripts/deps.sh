#!/bin/sh
# deps.sh - find the build and test dependencies that are missing, and install
# them with apt-get when run as root (--install), or print the exact command.
#
#   scripts/deps.sh --check     exit 1 with the apt-get line if anything is missing
#   scripts/deps.sh --install   as root: apt-get install what is missing; no-op if nothing is
set -eu

mode=${1:---check}

# pkg-config module -> Debian package
libs="libcurl:libcurl4-openssl-dev openssl:libssl-dev jansson:libjansson-dev
libgit2:libgit2-dev yaml-0.1:libyaml-dev libxml-2.0:libxml2-dev zlib:zlib1g-dev cmocka:libcmocka-dev"
# command -> Debian package. jq and node: the CI examples' jobs (tests/e2e/ci.sh);
# cloud-init and shellcheck: every generated boot configuration is checked with them
# (tests/e2e/boot.sh); ssh and ssh-keygen: kiln ssh and exec, tests/e2e/access.sh;
# chromium: kiln report's HTML page, loaded headless (tests/e2e/report.sh); Slurm,
# munge and ip: the real-Slurm test in network namespaces (tests/e2e/slurm.sh), and
# systemd-analyze: the units and drop-ins its nodes' boot scripts write are verified
# (script: a terminal for kiln status, which must not prompt, tests/e2e/access.sh);
# zsh and fish: kiln completion's scripts are parsed and run by them (tests/e2e/completion.sh);
# dot: kiln graph's DOT is read by Graphviz (tests/e2e/timing.sh)
tools="cc:gcc make:make pkg-config:pkg-config groff:groff-base git:git man:man-db
python3:python3 openssl:openssl shuf:coreutils jq:jq node:nodejs
cloud-init:cloud-init shellcheck:shellcheck ssh:openssh-client ssh-keygen:openssh-client
chromium:chromium slurmctld:slurmctld slurmd:slurmd sinfo:slurm-client munged:munge
ip:iproute2 unshare:util-linux systemd-analyze:systemd script:bsdutils zsh:zsh fish:fish dot:graphviz"

missing=""
for pair in $tools; do
	cmd=${pair%%:*}; pkg=${pair#*:}
	command -v "$cmd" >/dev/null 2>&1 || missing="$missing $pkg"
done
# tests/e2e/access.sh starts a real sshd, which lives outside a user's PATH
[ -x /usr/sbin/sshd ] || missing="$missing openssh-server"
# python3 module -> Debian package (the e2e tests check JSON plans against their schema,
# and every spec against kiln schema's, tests/check-spec-schema.py)
if command -v python3 >/dev/null 2>&1 && ! python3 -c 'import jsonschema' 2>/dev/null &&
	! /usr/bin/python3 -c 'import jsonschema' 2>/dev/null; then
	missing="$missing python3-jsonschema"
fi
# tests/e2e/access.sh starts a real sshd, which lives outside a user's PATH
[ -x /usr/sbin/sshd ] || missing="$missing openssh-server"
# the e2e tests' python reads specs and cloud-configs with python3-yaml
/usr/bin/python3 -c 'import yaml' 2>/dev/null || missing="$missing python3-yaml"
if command -v pkg-config >/dev/null 2>&1; then
	for pair in $libs; do
		mod=${pair%%:*}; pkg=${pair#*:}
		pkg-config --exists "$mod" 2>/dev/null || missing="$missing $pkg"
	done
else
	for pair in $libs; do missing="$missing ${pair#*:}"; done
fi

if [ -z "$missing" ]; then
	[ "$mode" = --install ] && echo "deps: everything kiln needs is installed"
	exit 0
fi

line="apt-get install -y --no-install-recommends$missing"
if [ "$mode" = --install ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "deps: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
	echo "deps: done"
	exit 0
fi

echo "kiln: missing build dependencies:$missing" >&2
if [ "$mode" = --install ] && [ "$(id -u)" != 0 ]; then
	echo "kiln: not root, so not installing them; run: sudo $line" >&2
else
	echo "kiln: install them with: sudo $line   (or: make deps, as root)" >&2
fi
exit 1
