/*
 * slurm.c - slurm.conf, gres.conf and the Slurm boot steps of a cluster
 * with `scheduler: slurm`; see slurm.h. Text only: it never reads or writes
 * a file and names no cloud (the provider says how a node reads a
 * parameter).
 *
 * Why it is built this way (Slurm 22.05, slurm.conf(5), slurmd(8),
 * gres.conf(5)):
 * - configless: only the controller holds the files; every slurmd fetches
 *   them (--conf-server) and `scontrol reconfigure` pushes new ones;
 * - dynamic normal nodes (slurmd -Z): a node registers itself with its own
 *   hardware plus --conf "Gres=... Feature=GROUP"; a NodeSet of that feature
 *   is the group's partition, so nodes come and go with no slurm.conf edit.
 *   Their addresses are not in slurm.conf, so the slurmd fan-out is off
 *   (TreeWidth=65533, as slurm.conf(5) asks for nodes not in DNS), and
 *   MaxNodeCount leaves room for them (a change needs a controller restart);
 * - gres.conf is one file for every node: its lines name the nodes by the
 *   names kiln gives them at boot, GROUP-C-D from the address A.B.C.D
 *   (unique in a VPC of /16 or smaller), so each group gets its own GPUs;
 * - the daemons survive a reboot (cloud-init runs the script once): each is
 *   the package's systemd unit, enabled, slurmd and slurmctld with a drop-in
 *   (their options, Restart=on-failure, and no condition on a local
 *   slurm.conf, which configless nodes lack); without systemd (a container,
 *   the e2e test) the script runs the units' ExecStart lines itself. A
 *   node's slurmd drop-in runs the boot script again in its "slurmd" mode,
 *   which looks the controller up (and checks it is an IPv4 address) before
 *   it execs slurmd: a node rebooted after its controller was replaced
 *   joins the new one;
 * - GPU partitions give whole nodes (OverSubscribe=EXCLUSIVE): a training
 *   job owns its nodes, and no cgroup device confinement is needed
 *   (ProctrackType=proctrack/linuxproc).
 */
#include "slurm.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "expand.h"
#include "strbuf.h"

int slurm_cluster_from_spec(struct slurm_cluster *out, const struct spec *spec,
			    const struct catalog *cat, struct kiln_error *err)
{
	size_t i, n = 0, lower = 0;
	const struct spec_group *dflt = spec_default_partition(spec);

	memset(out, 0, sizeof(*out));
	out->name = xstrdup(spec->cluster);
	out->controller = xstrdup(spec->scheduler.controller.name);
	out->parts = xcalloc(spec->ngroups + 1, sizeof(*out->parts));
	/* Every GPU name fits in this: none is longer than the spec's gpu: value. */
	out->gpu_lower = xcalloc(spec->ngroups + 1, 32);
	for (i = 0; i < spec->ngroups; i++) {
		const struct spec_group *g = &spec->groups[i];
		struct slurm_partition *p = &out->parts[n];
		const struct catalog_type *t;
		char *why = NULL;

		if (!spec_group_partition(spec, g))
			continue;
		if (expand_group_type("", cat, spec, g, &t, &why, err) < 0) {
			slurm_cluster_free(out);
			return -1;
		}
		free(why);
		p->name = spec_group_partition(spec, g);
		p->group = g->name;
		p->count = g->count;
		p->is_default = g == dflt;
		if (t->gpu && t->gpus > 0 && strlen(t->gpu) < 32) {
			char *s = out->gpu_lower + 32 * lower++;
			size_t k;

			for (k = 0; t->gpu[k]; k++)
				s[k] = (char)tolower((unsigned char)t->gpu[k]);
			p->gpu = s;
			p->gpus = t->gpus;
		}
		n++;
	}
	out->nparts = n;
	return 0;
}

void slurm_cluster_free(struct slurm_cluster *c)
{
	free(c->name);
	free(c->controller);
	free(c->parts);
	free(c->gpu_lower);
	memset(c, 0, sizeof(*c));
}

const struct slurm_partition *slurm_partition_of(const struct slurm_cluster *c, const char *group)
{
	size_t i;

	for (i = 0; i < c->nparts; i++)
		if (strcmp(c->parts[i].group, group) == 0)
			return &c->parts[i];
	return NULL;
}

static long max_nodes(const struct slurm_cluster *c)
{
	long total = 0;
	size_t i;

	for (i = 0; i < c->nparts; i++)
		total += c->parts[i].count;
	return 2 * total > SLURM_MIN_NODES ? 2 * total : SLURM_MIN_NODES;
}

char *slurm_conf(const struct slurm_cluster *c)
{
	struct strbuf sb = {0};
	size_t i;

	sb_addf(&sb,
		"# slurm.conf of cluster %s, made by kiln from its spec: edit the spec, not this\n"
		"# file (kiln apply replaces it and the controller runs scontrol reconfigure).\n"
		"# Configless: the slurmd of every node fetches it from the controller.\n"
		"# The controller adds SlurmctldHost (its name and address) at boot.\n"
		"ClusterName=%s\n",
		c->name, c->name);
	sb_adds(&sb, "SlurmctldParameters=enable_configless\n"
		     "AuthType=auth/munge\n"
		     "CredType=cred/munge\n"
		     "SlurmUser=slurm\n"
		     "StateSaveLocation=/var/spool/slurmctld\n"
		     "SlurmdSpoolDir=/var/spool/slurmd\n"
		     "SlurmctldPidFile=/run/slurmctld.pid\n"
		     "SlurmdPidFile=/run/slurmd.pid\n"
		     "SlurmctldLogFile=/var/log/slurm/slurmctld.log\n"
		     "SlurmdLogFile=/var/log/slurm/slurmd.log\n"
		     "ProctrackType=proctrack/linuxproc\n"
		     "TaskPlugin=task/affinity\n"
		     "SelectType=select/cons_tres\n"
		     "SelectTypeParameters=CR_Core\n"
		     "MpiDefault=none\n"
		     "ReturnToService=2\n"
		     "GresTypes=gpu\n"
		     "# Dynamic nodes (slurmd -Z) register themselves: room for them, and no\n"
		     "# fan-out through nodes whose addresses are not in this file.\n");
	sb_addf(&sb, "MaxNodeCount=%ld\n", max_nodes(c));
	sb_adds(&sb, "TreeWidth=65533\n"
		     "# One partition per compute group: the nodes with the group's feature.\n");
	for (i = 0; i < c->nparts; i++) {
		const struct slurm_partition *p = &c->parts[i];

		sb_addf(&sb, "NodeSet=%s-nodes Feature=%s\n", p->group, p->group);
		sb_addf(&sb,
			"PartitionName=%s Nodes=%s-nodes Default=%s MaxTime=INFINITE State=UP%s\n",
			p->name, p->group, p->is_default ? "YES" : "NO",
			p->gpus ? " OverSubscribe=EXCLUSIVE" : "");
	}
	return sb_detach(&sb);
}

char *slurm_gres_conf(const struct slurm_cluster *c)
{
	struct strbuf sb = {0};
	size_t i;

	sb_addf(&sb,
		"# gres.conf of cluster %s, made by kiln: the GPUs of each group's nodes,\n"
		"# named GROUP-C-D at boot from their address A.B.C.D.\n"
		"AutoDetect=off\n",
		c->name);
	for (i = 0; i < c->nparts; i++) {
		const struct slurm_partition *p = &c->parts[i];

		if (!p->gpus)
			continue;
		if (p->gpus == 1)
			sb_addf(&sb,
				"NodeName=%s-[0-255]-[0-255] Name=gpu Type=%s File=/dev/nvidia0\n",
				p->group, p->gpu);
		else
			sb_addf(
			    &sb,
			    "NodeName=%s-[0-255]-[0-255] Name=gpu Type=%s File=/dev/nvidia[0-%d]\n",
			    p->group, p->gpu, p->gpus - 1);
	}
	return sb_detach(&sb);
}

char *slurm_node_name_expr(const struct slurm_partition *p)
{
	return xasprintf("%s-$(echo \"$addr\" | cut -d. -f3)-$(echo \"$addr\" | cut -d. -f4)",
			 p->group);
}

char *slurm_slurmd_args(const struct slurm_partition *p, const char *ctl)
{
	if (p->gpus)
		return xasprintf("-Z --conf-server %s --conf \"Gres=gpu:%s:%d Feature=%s\"", ctl,
				 p->gpu, p->gpus, p->group);
	return xasprintf("-Z --conf-server %s --conf \"Feature=%s\"", ctl, p->group);
}

/* The shell functions both scripts use: a retried parameter read, and munge. */
static void script_common(struct strbuf *sb, const struct slurm_fetch *f)
{
	char *cmd = xasprintf(f->command, "\"$1\"");

	sb_addf(
	    sb,
	    "set -eu\n"
	    "umask 022\n"
	    "\n"
	    "# kiln_fetch NAME FILE: a parameter's value into FILE, retried while the\n"
	    "# node's role or the network is not ready yet (5 minutes at most).\n"
	    "kiln_fetch() {\n"
	    "\tn=0\n"
	    "\tuntil %s >\"$2\"; do\n"
	    "\t\tn=$((n + 1))\n"
	    "\t\tif [ \"$n\" -ge 30 ]; then\n"
	    "\t\t\techo \"kiln-slurm: cannot read parameter $1\" >&2\n"
	    "\t\t\treturn 1\n"
	    "\t\tfi\n"
	    "\t\tsleep 10\n"
	    "\tdone\n"
	    "}\n"
	    "\n"
	    "# The munge key is read with the node's role at boot: it is never in user data.\n"
	    "kiln_munge() {\n"
	    "\tinstall -d -o munge -g munge -m 0700 /etc/munge /var/lib/munge /var/log/munge\n"
	    "\tinstall -d -o munge -g munge -m 0755 /run/munge\n"
	    "\tumask 077\n"
	    "\tkiln_fetch %s /etc/munge/.munge.key.b64\n"
	    "\tbase64 -d /etc/munge/.munge.key.b64 >/etc/munge/munge.key\n"
	    "\trm -f /etc/munge/.munge.key.b64\n"
	    "\tumask 022\n"
	    "\tchown munge:munge /etc/munge/munge.key\n"
	    "\tchmod 0400 /etc/munge/munge.key\n"
	    "\tif [ -d /run/systemd/system ]; then\n"
	    "\t\tsystemctl enable munge.service\n"
	    "\t\tsystemctl restart munge.service\n"
	    "\telse\n"
	    "\t\trunuser -u munge -- munged\n"
	    "\tfi\n"
	    "}\n"
	    "\n"
	    "# kiln_dropin NAME CMD: the package's NAME.service runs CMD, restarted when\n"
	    "# it fails, and without the package's condition on a local slurm.conf\n"
	    "# (configless nodes have none).\n"
	    "kiln_dropin() {\n"
	    "\tinstall -d -m 0755 \"/etc/systemd/system/$1.service.d\"\n"
	    "\tprintf '[Unit]\\nConditionPathExists=\\n\\n[Service]\\nExecStart=\\nExecStart=%%s\\n"
	    "Restart=on-failure\\nRestartSec=5\\n' \"$2\" "
	    ">\"/etc/systemd/system/$1.service.d/kiln.conf\"\n"
	    "}\n"
	    "\n"
	    "# kiln_unit NAME FILE: NAME.service runs now and at every boot, as FILE (a\n"
	    "# unit or kiln's drop-in) says. Without systemd (a container), FILE's\n"
	    "# command line runs as systemd would run it.\n"
	    "kiln_unit() {\n"
	    "\tif [ -d /run/systemd/system ]; then\n"
	    "\t\tsystemctl daemon-reload\n"
	    "\t\tsystemctl enable \"$1.service\"\n"
	    "\t\tsystemctl restart \"$1.service\"\n"
	    "\telse\n"
	    "\t\tcmd=$(sed -n 's/^ExecStart=\\(..*\\)$/\\1/p' \"$2\")\n"
	    "\t\teval \"exec $cmd\" &\n"
	    "\tfi\n"
	    "}\n"
	    "\n",
	    cmd, f->munge_key);
	free(cmd);
}

char *slurm_controller_script(const struct slurm_cluster *c, const struct slurm_fetch *f)
{
	struct strbuf sb = {0};

	sb_addf(&sb,
		"#!/bin/sh\n"
		"# kiln: the Slurm controller of cluster %s (group %s): slurmctld, configless.\n"
		"# Needs slurmctld, munge and slurm-client on the image (Debian and Ubuntu\n"
		"# packages of those names).\n",
		c->name, c->controller);
	script_common(&sb, f);
	sb_addf(
	    &sb,
	    "# kiln_files: slurm.conf (with this host as SlurmctldHost) and gres.conf\n"
	    "# from the parameters kiln keeps them in.\n"
	    "kiln_files() {\n"
	    "\tkiln_fetch %s /etc/slurm/.slurm.conf.new\n"
	    "\tkiln_fetch %s /etc/slurm/.gres.conf.new\n"
	    "\t{\n"
	    "\t\techo \"SlurmctldHost=$(hostname -s)($addr)\"\n"
	    "\t\tcat /etc/slurm/.slurm.conf.new\n"
	    "\t} >/etc/slurm/.slurm.conf.tmp\n"
	    "\tmv /etc/slurm/.slurm.conf.tmp /etc/slurm/slurm.conf\n"
	    "\tmv /etc/slurm/.gres.conf.new /etc/slurm/gres.conf\n"
	    "\tmv /etc/slurm/.slurm.conf.new /etc/slurm/.slurm.conf.kiln\n"
	    "}\n"
	    "\n"
	    "# kiln_sync: a changed partition or GRES reaches the running controller:\n"
	    "# new files, then scontrol reconfigure, which pushes them to every node.\n"
	    "kiln_sync() {\n"
	    "\twhile sleep \"${KILN_SLURM_SYNC_SECONDS:-60}\"; do\n"
	    "\t\tkiln_fetch %s /etc/slurm/.slurm.conf.next || continue\n"
	    "\t\tkiln_fetch %s /etc/slurm/.gres.conf.next || continue\n"
	    "\t\tif cmp -s /etc/slurm/.slurm.conf.next /etc/slurm/.slurm.conf.kiln &&\n"
	    "\t\t\tcmp -s /etc/slurm/.gres.conf.next /etc/slurm/gres.conf; then\n"
	    "\t\t\tcontinue\n"
	    "\t\tfi\n"
	    "\t\tkiln_files && scontrol reconfigure && echo \"kiln-slurm: reconfigured\"\n"
	    "\tdone\n"
	    "}\n"
	    "\n"
	    "addr=$(hostname -I | cut -d' ' -f1)\n"
	    "# The sync loop's own unit runs this script with \"sync\".\n"
	    "if [ \"${1:-}\" = sync ]; then\n"
	    "\tkiln_sync\n"
	    "\texit 1\n"
	    "fi\n"
	    "install -d -m 0755 /etc/slurm\n"
	    "kiln_files\n"
	    "kiln_munge\n"
	    "install -d -o slurm -g slurm -m 0755 /var/spool/slurmctld /var/log/slurm\n"
	    "kiln_dropin slurmctld \"/usr/sbin/slurmctld -D -s\"\n"
	    "kiln_unit slurmctld /etc/systemd/system/slurmctld.service.d/kiln.conf\n"
	    "u=/etc/systemd/system/kiln-slurm-sync.service\n"
	    "printf '[Unit]\\nDescription=kiln: new slurm.conf and gres.conf reach slurmctld\\n"
	    "After=slurmctld.service\\n\\n[Service]\\nExecStart=/bin/sh -c \"exec /bin/sh %%s sync "
	    ">>/var/log/slurm/kiln-sync.log 2>&1\"\\nRestart=always\\nRestartSec=60\\n\\n"
	    "[Install]\\nWantedBy=multi-user.target\\n' \"$(readlink -f \"$0\")\" >\"$u\"\n"
	    "kiln_unit kiln-slurm-sync \"$u\"\n",
	    f->slurm_conf, f->gres_conf, f->slurm_conf, f->gres_conf);
	return sb_detach(&sb);
}

char *slurm_node_script(const struct slurm_partition *p, const struct slurm_fetch *f,
			const char *ctl_find)
{
	struct strbuf sb = {0};
	char *name = slurm_node_name_expr(p), *args = slurm_slurmd_args(p, "\"$ctl\"");

	sb_addf(
	    &sb,
	    "#!/bin/sh\n"
	    "# kiln: a node of group %s joins the Slurm controller as a dynamic node, in\n"
	    "# its group's partition (slurm.conf, which the controller serves, says which:\n"
	    "# a new partition name changes no node).\n"
	    "# Needs slurmd and munge on the image (Debian and Ubuntu packages of those names).\n",
	    p->group);
	script_common(&sb, f);
	sb_addf(&sb,
		"# kiln_controller: the controller's address as the cloud reports it.\n"
		"kiln_controller() {\n"
		"\t%s\n"
		"}\n"
		"\n"
		"# kiln_ipv4 A: whether A is a dotted-quad IPv4 address (it goes on\n"
		"# slurmd's command line and into /etc/hosts).\n"
		"kiln_ipv4() {\n"
		"\tcase $1 in\n"
		"\t'' | *[!0-9.]* | .* | *. | *..*) return 1 ;;\n"
		"\tesac\n"
		"\tset -f\n"
		"\told_ifs=$IFS\n"
		"\tIFS=.\n"
		"\t# shellcheck disable=SC2086 # split on the dots\n"
		"\tset -- $1\n"
		"\tIFS=$old_ifs\n"
		"\tset +f\n"
		"\t[ \"$#\" -eq 4 ] || return 1\n"
		"\tfor o; do\n"
		"\t\t[ \"${#o}\" -le 3 ] && [ \"$o\" -le 255 ] || return 1\n"
		"\tdone\n"
		"}\n"
		"\n"
		"# kiln_find: ctl, the controller's address, looked up while it is not\n"
		"# running yet (10 minutes at most), at every start of slurmd: a\n"
		"# controller replaced since the last boot has a new one. name: the name\n"
		"# gres.conf knows this node's GPUs by, GROUP-C-D of its address A.B.C.D.\n"
		"kiln_find() {\n"
		"\tn=0\n"
		"\tuntil ctl=$(kiln_controller) && kiln_ipv4 \"$ctl\"; do\n"
		"\t\tn=$((n + 1))\n"
		"\t\tif [ \"$n\" -ge 60 ]; then\n"
		"\t\t\techo \"kiln-slurm: no Slurm controller found\" >&2\n"
		"\t\t\texit 1\n"
		"\t\tfi\n"
		"\t\tsleep 10\n"
		"\tdone\n"
		"\taddr=$(ip -4 -o route get \"$ctl\" | sed -n 's/.* src \\([0-9.]*\\).*/\\1/p')\n"
		"\tname=\"%s\"\n"
		"}\n"
		"\n"
		"# slurmd's unit runs this script with \"slurmd\": the controller looked up\n"
		"# again, then slurmd.\n"
		"if [ \"${1:-}\" = slurmd ]; then\n"
		"\tkiln_find\n"
		"\texec /usr/sbin/slurmd -D -s -N \"$name\" %s\n"
		"fi\n"
		"kiln_find\n"
		"hostname \"$name\"\n"
		"echo \"$name\" >/etc/hostname\n"
		"grep -q \" $name\\$\" /etc/hosts || echo \"$addr $name\" >>/etc/hosts\n"
		"kiln_munge\n"
		"install -d -m 0755 /var/spool/slurmd /var/log/slurm\n"
		"kiln_dropin slurmd \"/bin/sh $(readlink -f \"$0\") slurmd\"\n"
		"kiln_unit slurmd /etc/systemd/system/slurmd.service.d/kiln.conf\n",
		ctl_find, name, args);
	free(name);
	free(args);
	return sb_detach(&sb);
}
