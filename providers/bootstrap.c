/*
 * bootstrap.c - see bootstrap.h. Builds the #cloud-config document and its
 * boot script as text; owns nothing but the strings it returns, and never
 * touches a cloud, a file or the environment.
 */
#include "bootstrap.h"

#include "crypt.h"
#include "expand.h"
#include "str.h"
#include "strbuf.h"

#include <inttypes.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOOT_DIR "/var/lib/kiln"
#define BOOT_SCRIPT BOOT_DIR "/boot.sh"
/* Step N's text, as the document writes it: N, then "sh" or "content". */
#define BOOT_STEP_FILE BOOT_DIR "/step-%zu."
#define BOOT_LOG "/var/log/kiln-boot.log"
#define BOOT_SCHEDULER "/var/lib/kiln/scheduler.sh"

/* s as one shell word in single quotes. */
static void sh_quote(struct strbuf *sb, const char *s)
{
	sb_addc(sb, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			sb_adds(sb, "'\\''");
		else
			sb_addc(sb, *s);
	}
	sb_addc(sb, '\'');
}

/* Whether text has a line that is exactly word. */
static bool has_line(const char *text, const char *word)
{
	size_t l = strlen(word);
	const char *p = text;

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t ll = nl ? (size_t)(nl - p) : strlen(p);

		if (ll == l && strncmp(p, word, l) == 0)
			return true;
		p = nl ? nl + 1 : NULL;
	}
	return false;
}

/* " 'a' 'b' 'c'[ 'd']": up to four more words, each quoted. */
static void sh_words(struct strbuf *sb, const char *a, const char *b, const char *c, const char *d)
{
	const char *w[] = {a, b, c, d};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(w) && w[i]; i++) {
		sb_addc(sb, ' ');
		sh_quote(sb, w[i]);
	}
}

/* A heredoc delimiter that is no line of text: BASE, else BASE_, BASE__... */
static char *heredoc_end(const char *text, const char *base)
{
	struct strbuf end = {0};

	sb_adds(&end, base);
	while (has_line(text, end.buf))
		sb_addc(&end, '_');
	return sb_detach(&end);
}

/*
 * The first line of a command, at most 60 bytes, for the log line naming a
 * step; cut between two UTF-8 characters, never inside one.
 */
static char *step_title(const char *cmd)
{
	size_t n = strcspn(cmd, "\n");

	if (n <= 60)
		return xasprintf("%.*s", (int)n, cmd);
	n = 57;
	while (n > 0 && ((unsigned char)cmd[n] & 0xc0) == 0x80)
		n--;
	return xasprintf("%.*s...", (int)n, cmd);
}

/* Types whose EFA does RDMA reads, where AWS documents FI_EFA_USE_DEVICE_RDMA=1. */
static bool type_has_rdma(const char *type)
{
	static const char *const families[] = {"p4d.", "p4de.", "p5.",	  "p5e.", "p5en.",
					       "p6-",  "trn1.", "trn1n.", "trn2."};
	size_t i;

	for (i = 0; type && i < ARRAY_SIZE(families); i++)
		if (strncmp(type, families[i], strlen(families[i])) == 0)
			return true;
	return false;
}

static void script_head(struct strbuf *s, const struct boot_input *in)
{
	sb_addf(s,
		"#!/bin/bash\n"
		"# kiln boot script of %s (cluster %s, %s): generated from the spec.\n"
		"# cloud-init runs it once, at the instance's first boot; its output is in\n"
		"# " BOOT_LOG " and /var/log/cloud-init-output.log.\n"
		"set -u\n"
		"umask 022\n"
		"# Mounts and file system lookups are tried KILN_TRIES times, KILN_WAIT seconds\n"
		"# apart: a file system may still be being made when the node boots.\n"
		"KILN_TRIES=${KILN_TRIES:-90}\n"
		"KILN_WAIT=${KILN_WAIT:-20}\n"
		"problems=\n"
		"say() { printf 'kiln: %%s\\n' \"$*\"; }\n"
		"problem() {\n"
		"\tsay \"problem: $1\"\n"
		"\tproblems=\"${problems:+$problems; }$1\"\n"
		"}\n",
		in->address, in->spec->cluster, in->instance_type);
}

static void script_local(struct strbuf *s, const struct boot_input *in)
{
	if (!in->local_mount)
		return;
	sb_adds(s, "\n# The local store: every instance-store NVMe device (found by its model,\n"
		   "# never by name), RAID 0 when there are several, ext4. Its data is lost\n"
		   "# when the instance stops or is replaced.\n"
		   "local_nvme() {\n"
		   "\tlocal mnt=$1 d n model dev\n"
		   "\tlocal -a devs=()\n"
		   "\tfor d in /sys/class/nvme/nvme*; do\n"
		   "\t\t[ -r \"$d/model\" ] || continue\n"
		   "\t\tmodel=$(sed 's/[[:space:]]*$//' \"$d/model\")\n"
		   "\t\t[ \"$model\" = 'Amazon EC2 NVMe Instance Storage' ] || continue\n"
		   "\t\tfor n in \"$d\"/nvme*n*; do\n"
		   "\t\t\t[ -e \"$n\" ] && devs+=(\"/dev/${n##*/}\")\n"
		   "\t\tdone\n"
		   "\tdone\n"
		   "\tif [ ${#devs[@]} -eq 0 ]; then\n"
		   "\t\tproblem \"no instance-store NVMe device for $mnt\"\n"
		   "\t\treturn\n"
		   "\tfi\n"
		   "\tdev=${devs[0]}\n"
		   "\tif [ ${#devs[@]} -gt 1 ]; then\n"
		   "\t\tdev=/dev/md/kiln-local\n"
		   "\t\tif ! mdadm --create \"$dev\" --run --level=0 --raid-devices=${#devs[@]} "
		   "\"${devs[@]}\"; then\n"
		   "\t\t\tproblem \"RAID 0 of ${#devs[@]} NVMe devices for $mnt failed (mdadm)\"\n"
		   "\t\t\treturn\n"
		   "\t\tfi\n"
		   "\tfi\n"
		   "\tif ! mkfs.ext4 -F -q -L kiln-local \"$dev\"; then\n"
		   "\t\tproblem \"mkfs.ext4 of $dev for $mnt failed\"\n"
		   "\t\treturn\n"
		   "\tfi\n"
		   "\tmkdir -p \"$mnt\"\n"
		   "\tprintf 'LABEL=kiln-local %s ext4 defaults,noatime,nofail 0 2\\n' \"$mnt\" "
		   ">>/etc/fstab\n"
		   "\tif mount \"$mnt\"; then\n"
		   "\t\tsay \"local store: ${#devs[@]} NVMe device(s) at $mnt\"\n"
		   "\telse\n"
		   "\t\tproblem \"$mnt (local NVMe) not mounted\"\n"
		   "\tfi\n"
		   "}\n");
	sb_addf(s, "say 'local store %s'\nlocal_nvme ", in->local_store);
	sh_quote(s, in->local_mount);
	sb_addc(s, '\n');
}

static void script_mounts(struct strbuf *s, const struct boot_input *in)
{
	size_t i;
	bool find = false;

	if (in->nmounts == 0)
		return;
	for (i = 0; i < in->nmounts; i++)
		find |= in->mounts[i].source == NULL;
	sb_adds(s,
		"\n# The file systems this group's role reaches: an fstab line each\n"
		"# (_netdev,nofail: a boot never waits on them), mounted with retries.\n"
		"# With a mount helper on the image (argument 9), its own source, type and\n"
		"# options (6 to 8) are used instead.\n"
		"mount_fs() {\n"
		"\tlocal store=$1 src=$2 mnt=$3 type=$4 opts=$5 i=0\n"
		"\tif [ $# -ge 9 ] && command -v \"$9\" >/dev/null 2>&1; then\n"
		"\t\tsrc=$6 type=$7 opts=$8\n"
		"\tfi\n"
		"\tmkdir -p \"$mnt\"\n"
		"\tprintf '%s %s %s %s 0 0\\n' \"$src\" \"$mnt\" \"$type\" \"$opts\" >>/etc/fstab\n"
		"\tuntil mount \"$mnt\"; do\n"
		"\t\ti=$((i + 1))\n"
		"\t\tif [ \"$i\" -ge \"$KILN_TRIES\" ]; then\n"
		"\t\t\tproblem \"$mnt not mounted ($store from $src)\"\n"
		"\t\t\treturn\n"
		"\t\tfi\n"
		"\t\tsleep \"$KILN_WAIT\"\n"
		"\tdone\n"
		"\tsay \"mounted $store ($src) at $mnt\"\n"
		"}\n");
	if (find)
		sb_adds(s, "# A source found at boot: the finder is retried until it prints one.\n"
			   "found=\n"
			   "find_fs() {\n"
			   "\tlocal store=$1 finder=$2 i=0\n"
			   "\tuntil found=$(\"$finder\") && [ -n \"$found\" ]; do\n"
			   "\t\ti=$((i + 1))\n"
			   "\t\tif [ \"$i\" -ge \"$KILN_TRIES\" ]; then\n"
			   "\t\t\tproblem \"$store not found (not available yet?)\"\n"
			   "\t\t\treturn 1\n"
			   "\t\tfi\n"
			   "\t\tsleep \"$KILN_WAIT\"\n"
			   "\tdone\n"
			   "}\n");
	for (i = 0; i < in->nmounts; i++) {
		const struct boot_mount *m = &in->mounts[i];

		sb_addc(s, '\n');
		if (m->why)
			sb_addf(s, "# %s: %s\n", m->store, m->why);
		if (m->source) {
			sb_adds(s, "mount_fs ");
			sh_quote(s, m->store);
			sb_addc(s, ' ');
			sh_quote(s, m->source);
		} else {
			char *fn = xasprintf("find_%zu", i + 1);

			sb_addf(s, "%s() {\n\t%s\n}\n", fn, m->find);
			sb_adds(s, "find_fs ");
			sh_quote(s, m->store);
			sb_addf(s, " %s && mount_fs ", fn);
			sh_quote(s, m->store);
			sb_adds(s, " \"$found\"");
			free(fn);
		}
		sh_words(s, m->path, m->fstype, m->options, NULL);
		if (m->alt_source)
			sh_words(s, m->alt_source, m->alt_fstype, m->alt_options, m->alt_helper);
		sb_addc(s, '\n');
	}
}

/* The spec's bootstrap steps, top level first: how many. */
static size_t step_count(const struct boot_input *in)
{
	return in->spec->nbootstrap + in->group->nbootstrap;
}

/* Step i of step_count (0-based), and where the spec has it (caller frees *where). */
static const struct spec_step *step_at(const struct boot_input *in, size_t i, char **where)
{
	size_t top = in->spec->nbootstrap;

	if (i < top) {
		*where = xasprintf("bootstrap[%zu]", i);
		return &in->spec->bootstrap[i];
	}
	*where = xasprintf("compute.%s.bootstrap[%zu]", in->group->name, i - top);
	return &in->group->bootstrap[i - top];
}

/*
 * The file cloud-init writes step i's text to (run_step and put_file read
 * it by its number, i + 1): a command to run, or a file's content to copy.
 */
static char *step_file(const struct spec_step *st, size_t i)
{
	return xasprintf(BOOT_STEP_FILE "%s", i + 1, st->kind == STEP_RUN ? "sh" : "content");
}

/*
 * The steps, in order: each runs its command, or copies its file, from the
 * file the document wrote it to; a command's first line names it in the log.
 */
static void script_steps(struct strbuf *s, const struct boot_input *in)
{
	size_t i, total = step_count(in);

	for (i = 0; i < total; i++) {
		char *where;
		const struct spec_step *st = step_at(in, i, &where);
		char *title = st->kind == STEP_RUN ? step_title(st->run) : NULL;

		sb_addf(s, "%s %zu ", st->kind == STEP_RUN ? "run_step" : "put_file", i + 1);
		sh_quote(s, where);
		sb_addc(s, ' ');
		sh_quote(s, st->kind == STEP_RUN ? title : st->path);
		if (st->kind == STEP_FILE)
			sb_addf(s, " %s", st->mode ? st->mode : "0644");
		sb_addc(s, '\n');
		free(title);
		free(where);
	}
}

static void script_health(struct strbuf *s, const struct boot_input *in)
{
	const char *type = in->instance_type;

	sb_addf(s,
		"\n# Health: GPUs against the %d %s has, EFA devices against the %d kiln\n"
		"# attached; the report goes where kiln's refresh reads it.\n",
		in->gpus, type, in->efa);
	sb_adds(s, "summary=\n");
	if (in->gpus > 0) {
		sb_addf(s, "gpus=%d\n", in->gpus);
		sb_adds(s, "n=0\n"
			   "if command -v nvidia-smi >/dev/null 2>&1; then\n"
			   "\tn=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | "
			   "grep -c .)\n"
			   "else\n"
			   "\tproblem \"nvidia-smi is not on the image: no GPU driver\"\n"
			   "fi\n");
		sb_addf(s,
			"if [ \"$n\" -lt \"$gpus\" ]; then\n"
			"\tproblem \"$n of $gpus GPUs (nvidia-smi lists $n; %s has $gpus)\"\n"
			"fi\n"
			"summary=\"$n/$gpus GPUs\"\n",
			type);
		if (in->group->health_gpu == HEALTH_GPU_QUICK)
			sb_adds(
			    s,
			    "# health.gpu quick: DCGM's short diagnostic where DCGM is installed,\n"
			    "# else each GPU's uncorrected ECC errors as nvidia-smi counts them.\n"
			    "if command -v dcgmi >/dev/null 2>&1; then\n"
			    "\tdcgmi diag -r 1 || problem \"dcgmi diag -r 1 failed\"\n"
			    "elif [ \"$n\" -gt 0 ]; then\n"
			    "\twhile IFS=', ' read -r idx ecc; do\n"
			    "\t\tcase $ecc in\n"
			    "\t\t''|0|*N/A*) ;;\n"
			    "\t\t*) problem \"GPU $idx has $ecc uncorrected ECC errors\" ;;\n"
			    "\t\tesac\n"
			    "\tdone < <(nvidia-smi "
			    "--query-gpu=index,ecc.errors.uncorrected.volatile."
			    "total --format=csv,noheader 2>/dev/null)\n"
			    "fi\n");
	}
	if (in->efa > 0)
		sb_addf(
		    s,
		    "efa=%d\n"
		    "m=0\n"
		    "if command -v fi_info >/dev/null 2>&1; then\n"
		    "\tm=$(fi_info -p efa -t FI_EP_RDM 2>/dev/null | grep -c 'domain:')\n"
		    "else\n"
		    "\tproblem \"fi_info is not on the image: no EFA software\"\n"
		    "fi\n"
		    "if [ \"$m\" -lt \"$efa\" ]; then\n"
		    "\tproblem \"$m of $efa EFA devices (fi_info lists $m; kiln attached $efa to "
		    "%s)\"\n"
		    "fi\n"
		    "summary=\"${summary:+$summary, }$m/$efa EFA\"\n",
		    in->efa, type);
	sb_adds(s,
		"if [ -n \"$problems\" ]; then\n"
		"\treport_text=\"unhealthy: $problems\"\n"
		"else\n"
		"\treport_text=\"healthy: ${summary:-booted}\"\n"
		"fi\n"
		"# At most 256 characters (a tag value), no quotes or backslashes.\n"
		"report_text=$(printf '%s' \"$report_text\" | tr -d '\\042\\134' | tr '\\n' ' ')\n"
		"report_text=${report_text:0:256}\n"
		"say \"health: $report_text\"\n"
		"report_health() {\n\t");
	sb_adds(s, in->report);
	sb_adds(s, "\n}\n"
		   "report_health \"$report_text\" || say 'the health report failed'\n");
}

/* Start the metrics agent where the image has it; either way no health problem. */
static void script_agent(struct strbuf *s, const struct boot_agent *a)
{
	sb_addf(s,
		"\n# GPU metrics: %s publishes each GPU's utilization and memory,\n"
		"# configured by %s, where the image has it;\n"
		"# without it there are no GPU metrics, which is no health problem.\n"
		"if %s; then\n"
		"\tsay \"starting %s (%s)\"\n"
		"\t%s || say '%s did not start: no GPU metrics'\n"
		"else\n"
		"\tsay '%s is not installed: no GPU metrics'\n"
		"fi\n",
		a->name, a->config_path, a->installed, a->name, a->config_path, a->start, a->name,
		a->name);
}

/*
 * The node TTL (issue 29): the script kiln-ttl.timer runs every minute. It
 * reads the instance's kiln:expires tag through the cloud's read_tag; past
 * it plus the grace it powers the node off, which the launch made a
 * termination. A tag it cannot read, or one that is no time, never powers
 * anything off: it says so in the boot log (once per change of what it has
 * to say, not every minute) and keeps running.
 */
static void ttl_script(struct strbuf *s, const struct boot_input *in)
{
	sb_addf(s,
		"#!/bin/bash\n"
		"# kiln node TTL of %s, every minute: off past kiln:expires + grace\n"
		"g=%" PRId64 " log=${KILN_TTL_LOG:-" BOOT_LOG "} last=${KILN_TTL_STATE:-/run/kiln-ttl.last}\n"
		"note() {\n"
		"\techo \"kiln ttl: $1\"\n"
		"\t[ \"$(cat \"$last\" 2>/dev/null)\" = \"$1\" ] && return\n"
		"\techo \"$(date -u +%%FT%%TZ) kiln ttl: $1\" >>\"$log\"\n"
		"\techo \"$1\" >\"$last\"\n"
		"}\n"
		"read_tag() {\n\t",
		in->address, in->ttl_grace);
	sb_adds(s, in->read_tag);
	sb_adds(s, "\n}\n"
		   "x=$(read_tag kiln:expires)\n"
		   "rc=$?\n"
		   "x=$(printf %s \"$x\" | tr -cd '0-9A-Za-z:+._-' | cut -c1-64)\n"
		   "if [ $rc = 3 ] || { [ $rc = 0 ] && [ -z \"$x\" ]; }; then\n"
		   "\tnote 'no kiln:expires tag: no TTL, keeps running'\n"
		   "elif [ $rc != 0 ]; then\n"
		   "\tnote 'cannot read kiln:expires (no metadata, or no tags in it): keeps running'\n"
		   "elif ! t=$(date -u -d \"$x\" +%s 2>/dev/null); then\n"
		   "\tnote \"kiln:expires '$x' is no time: keeps running\"\n"
		   "elif [ \"$(date +%s)\" -lt \"$t\" ]; then\n"
		   "\tnote \"expires $x; off ${g}s after\"\n"
		   "elif [ \"$(date +%s)\" -lt $((t + g)) ]; then\n"
		   "\tnote \"expired at $x; off after the ${g}s grace\"\n"
		   "else\n"
		   "\tnote \"expired at $x, ${g}s grace passed: powering off\"\n"
		   "\tshutdown -h now \"kiln: expired at $x\"\n"
		   "fi\n");
}

/* The units that run it: a oneshot service, and the timer that starts it every minute. */
static const char ttl_service[] = "[Service]\n"
				  "Type=oneshot\n"
				  "ExecStart=/bin/bash " BOOT_TTL_SCRIPT "\n";
static const char ttl_timer[] = "[Timer]\n"
				"OnBootSec=1min\n"
				"OnUnitActiveSec=1min\n"
				"AccuracySec=5s\n"
				"[Install]\n"
				"WantedBy=timers.target\n";

/* First thing at boot, before mounts that may take long: the TTL timer runs. */
static void script_ttl(struct strbuf *s, const struct boot_input *in)
{
	if (!in->read_tag)
		return;
	sb_adds(s, "systemctl enable --now kiln-ttl.timer || problem 'no node TTL: kiln-ttl.timer "
		   "did not start'\n");
}

static void script_build(struct strbuf *s, const struct boot_input *in)
{
	size_t total = step_count(in);

	script_head(s, in);
	script_ttl(s, in);
	script_local(s, in);
	script_mounts(s, in);
	if (total > 0) {
		sb_addf(
		    s,
		    "\n# The spec's %zu bootstrap steps, top level first, in order; the document\n"
		    "# wrote each one's text to " BOOT_DIR "/step-N.sh (a command) or\n"
		    "# step-N.content (a file's content, copied byte for byte). A failed step\n"
		    "# stops the rest.\n"
		    "step_failed=\n"
		    "run_step() {\n"
		    "\t[ -z \"$step_failed\" ] || return 0\n"
		    "\tsay \"step $1 ($2): $3\"\n"
		    "\tif ! bash \"" BOOT_DIR "/step-$1.sh\" </dev/null; then\n"
		    "\t\tstep_failed=$1\n"
		    "\t\tproblem \"bootstrap step $1 ($2) failed; the steps after it did not "
		    "run\"\n"
		    "\tfi\n"
		    "}\n"
		    "put_file() {\n"
		    "\t[ -z \"$step_failed\" ] || return 0\n"
		    "\tsay \"step $1 ($2): file $3\"\n"
		    "\tmkdir -p \"$(dirname \"$3\")\"\n"
		    "\tcat \"" BOOT_DIR "/step-$1.content\" >\"$3\"\n"
		    "\tchmod \"$4\" \"$3\"\n"
		    "}\n",
		    total);
		script_steps(s, in);
	}
	if (in->scheduler) {
		char *end = heredoc_end(in->scheduler, "KILN_SCHEDULER");

		sb_addf(s,
			"\n# The scheduler (scheduler: in the spec): this node's part, written\n"
			"# out and run; a failure is a health problem.\n"
			"mkdir -p /var/lib/kiln\n"
			"cat >" BOOT_SCHEDULER " <<'%s'\n",
			end);
		sb_adds(s, in->scheduler);
		if (s->len && s->buf[s->len - 1] != '\n')
			sb_addc(s, '\n');
		sb_addf(s,
			"%s\n"
			"say \"scheduler: " BOOT_SCHEDULER "\"\n"
			"if ! sh " BOOT_SCHEDULER "; then\n"
			"\tproblem \"the scheduler did not start (" BOOT_SCHEDULER " failed)\"\n"
			"fi\n",
			end);
		free(end);
	}
	if (in->gpu_metrics)
		script_agent(s, in->gpu_metrics);
	script_health(s, in);
}

/* text as a YAML literal block's lines, each indented by indent spaces. */
static void yaml_block(struct strbuf *d, const char *text, int indent)
{
	const char *p = text;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);

		if (l > 0)
			sb_addf(d, "%*s%.*s", indent, "", (int)l, p);
		sb_addc(d, '\n');
		p = nl ? nl + 1 : p + l;
	}
}

/*
 * s as a YAML double-quoted scalar: what YAML would not take as it is (a
 * control character, NEL, U+2028, U+2029) escaped. Validation refuses text
 * that is not UTF-8 where it reaches here (a key's comment); should some
 * get through, its bytes become U+FFFD rather than a broken document.
 */
static void yaml_quote(struct strbuf *d, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t len = strlen(s), i = 0, n;

	sb_addc(d, '"');
	while (i < len) {
		int32_t cp = str_utf8_decode(u + i, len - i, &n);

		if (cp < 0) {
			sb_adds(d, "\\uFFFD");
			n = 1;
		} else if (cp == '"' || cp == '\\') {
			sb_addc(d, '\\');
			sb_addc(d, (char)cp);
		} else if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0) || cp == 0x2028 || cp == 0x2029) {
			sb_addf(d, "\\u%04X", (unsigned)cp);
		} else {
			sb_add(d, s + i, n);
		}
		i += n;
	}
	sb_addc(d, '"');
}

/*
 * A write_files entry whose content is text base64-encoded: no byte of it
 * reaches the document as YAML (a CR or U+2028 would end a block scalar
 * there), and cloud-init writes it back byte for byte.
 */
static void yaml_encoded_file(struct strbuf *d, const char *path, const char *text)
{
	char *b64 = crypt_base64_encode((const unsigned char *)text, strlen(text));

	sb_addf(d,
		"  - path: %s\n"
		"    permissions: \"0600\"\n"
		"    encoding: b64\n"
		"    content: \"%s\"\n",
		path, b64);
	free(b64);
}

/* Each bootstrap step's text (a command, a file's content) as its encoded file. */
static void yaml_step_files(struct strbuf *d, const struct boot_input *in)
{
	size_t i, total = step_count(in);

	for (i = 0; i < total; i++) {
		char *where;
		const struct spec_step *st = step_at(in, i, &where);
		char *path = step_file(st, i);

		yaml_encoded_file(d, path, st->kind == STEP_RUN ? st->run : st->content);
		free(path);
		free(where);
	}
}

char *bootstrap_document(const struct boot_input *in)
{
	struct strbuf d = {0}, script = {0};
	size_t i;

	script_build(&script, in);
	sb_adds(&d, "#cloud-config\n");
	sb_addf(&d, "# kiln: the user data of %s (cluster %s), generated from the spec.\n",
		in->address, in->spec->cluster);
	if (in->login_user) {
		sb_adds(&d, "users:\n  - default\n  - name: ");
		yaml_quote(&d, in->login_user);
		sb_adds(&d, "\n    shell: /bin/bash\n    sudo: \"ALL=(ALL) NOPASSWD:ALL\"\n");
		if (in->nkeys)
			sb_adds(&d, "    ssh_authorized_keys:\n");
		for (i = 0; i < in->nkeys; i++) {
			sb_adds(&d, "      - ");
			yaml_quote(&d, in->authorized_keys[i]);
			sb_addc(&d, '\n');
		}
	} else if (in->nkeys) {
		sb_adds(&d, "ssh_authorized_keys:\n");
		for (i = 0; i < in->nkeys; i++) {
			sb_adds(&d, "  - ");
			yaml_quote(&d, in->authorized_keys[i]);
			sb_addc(&d, '\n');
		}
	}
	sb_adds(&d, "write_files:\n");
	if (in->efa > 0) {
		/*
		 * AWS's EC2 user guide, "Get started with EFA and NCCL for ML
		 * workloads", and the aws-ofi-nccl plugin's documented variables:
		 * libfabric's EFA provider, GPUDirect RDMA on the types whose EFA
		 * does RDMA reads (p4d, p5...), fork safety for PyTorch's workers.
		 */
		sb_adds(&d, "  - path: /etc/profile.d/kiln-efa.sh\n"
			    "    permissions: \"0644\"\n"
			    "    content: |\n"
			    "      # NCCL over EFA (kiln: this group is on the fabric).\n"
			    "      export FI_PROVIDER=efa\n"
			    "      export FI_EFA_FORK_SAFE=1\n");
		if (in->efa_rdma || type_has_rdma(in->instance_type))
			sb_adds(&d, "      export FI_EFA_USE_DEVICE_RDMA=1\n");
	}
	if (in->gpu_metrics) {
		sb_adds(&d, "  - path: ");
		yaml_quote(&d, in->gpu_metrics->config_path);
		sb_adds(&d, "\n    permissions: \"0644\"\n"
			    "    content: |\n");
		yaml_block(&d, in->gpu_metrics->config, 6);
	}
	sb_adds(&d, "  - path: " BOOT_SCRIPT "\n"
		    "    permissions: \"0700\"\n"
		    "    content: |\n");
	yaml_block(&d, script.buf, 6);
	if (in->read_tag) {
		struct strbuf ttl = {0};

		ttl_script(&ttl, in);
		sb_adds(&d, "  - path: " BOOT_TTL_SCRIPT "\n"
			    "    permissions: \"0700\"\n"
			    "    content: |\n");
		yaml_block(&d, ttl.buf, 6);
		sb_adds(&d, "  - path: " BOOT_TTL_SERVICE "\n"
			    "    permissions: \"0644\"\n"
			    "    content: |\n");
		yaml_block(&d, ttl_service, 6);
		sb_adds(&d, "  - path: " BOOT_TTL_TIMER "\n"
			    "    permissions: \"0644\"\n"
			    "    content: |\n");
		yaml_block(&d, ttl_timer, 6);
		sb_release(&ttl);
	}
	yaml_step_files(&d, in);
	sb_adds(&d, "runcmd:\n"
		    "  - [sh, -c, \"bash " BOOT_SCRIPT " 2>&1 | tee -a " BOOT_LOG "\"]\n");
	sb_release(&script);
	return sb_detach(&d);
}

char *bootstrap_digest(const char *doc)
{
	unsigned char md[SHA256_DIGEST_LENGTH];
	char hex[2 * SHA256_DIGEST_LENGTH + 1];
	size_t i;

	SHA256((const unsigned char *)doc, strlen(doc), md);
	for (i = 0; i < SHA256_DIGEST_LENGTH; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	return xasprintf("sha256:%s", hex);
}

char *bootstrap_placeholder(const char *key)
{
	return xasprintf("{{kiln:%s}}", key);
}

int bootstrap_check_size(const struct spec *spec, const struct spec_group *g, const char *doc,
			 struct kiln_error *err)
{
	size_t size = strlen(doc), n = 0;
	const char *p;

	for (p = strstr(doc, "{{kiln:"); p; p = strstr(p + 1, "{{kiln:"))
		n++;
	size += n * BOOT_PLACEHOLDER_MAX;
	if (size <= BOOT_MAX_BYTES)
		return 0;
	(void)spec;
	kiln_error_set(err,
		       "compute.%s: its user data would be %zu bytes; EC2 takes at most %d "
		       "before base64",
		       g->name, size, BOOT_MAX_BYTES);
	kiln_error_hint(err, "move long bootstrap steps into a script on the image, or in an "
			     "object store the group's role reads, and run that");
	return -1;
}

char *bootstrap_fill(const char *doc, const json_t *values, struct kiln_error *err)
{
	struct strbuf out = {0};
	const char *p = doc, *open;

	while ((open = strstr(p, "{{kiln:"))) {
		const char *close = strstr(open, "}}");
		char *key;
		const char *v;

		if (!close)
			break;
		key = xasprintf("%.*s", (int)(close - open - 7), open + 7);
		v = json_string_value(json_object_get(values, key));
		if (!v) {
			kiln_error_set(err, "the user data needs %s, which is not known yet", key);
			kiln_error_hint(err, "run plan again: it refreshes what exists");
			free(key);
			sb_release(&out);
			return NULL;
		}
		free(key);
		sb_add(&out, p, (size_t)(open - p));
		sb_adds(&out, v);
		p = close + 2;
	}
	sb_adds(&out, p);
	return sb_detach(&out);
}

const struct spec_store *bootstrap_local_store(const struct spec *spec, const struct spec_group *g)
{
	size_t i, n;

	if (spec_index_fresh(spec)) {
		const struct spec_store *const *locals = spec_index_locals(spec, &n);

		for (i = 0; i < n; i++)
			if (spec_local_on(locals[i], g))
				return locals[i];
		return NULL;
	}
	for (i = 0; i < spec->nstores; i++)
		if (spec_local_on(&spec->stores[i], g))
			return &spec->stores[i];
	return NULL;
}

bool bootstrap_mounts_store(const struct spec *spec, const struct spec_group *g,
			    const struct spec_store *s)
{
	const struct spec_role *r;
	size_t i;

	/* The tier first: a spec may hold thousands of object stores, and roles. */
	if (s->tier != TIER_LUSTRE && s->tier != TIER_NFS)
		return false;
	r = g->role.name ? spec_role_find(spec, g->role.name) : NULL;
	if (!r)
		return false;
	for (i = 0; i < r->nread; i++)
		if (strcmp(r->read[i].name, s->name) == 0)
			return true;
	for (i = 0; i < r->nwrite; i++)
		if (strcmp(r->write[i].name, s->name) == 0)
			return true;
	return false;
}

static int store_order(const void *a, const void *b)
{
	const struct spec_store *x = *(const struct spec_store *const *)a;
	const struct spec_store *y = *(const struct spec_store *const *)b;

	return x < y ? -1 : x > y;
}

const struct spec_store **bootstrap_mounted_stores(const struct spec *spec,
						   const struct spec_group *g, size_t *n)
{
	const struct spec_role *r = g->role.name ? spec_role_find(spec, g->role.name) : NULL;
	const struct spec_store **out;
	size_t i, k = 0;

	*n = 0;
	if (!r)
		return NULL;
	out = xcalloc(r->nread + r->nwrite + 1, sizeof(*out));
	for (i = 0; i < r->nread + r->nwrite; i++) {
		const struct spec_ref *ref = i < r->nread ? &r->read[i] : &r->write[i - r->nread];
		const struct spec_store *s = ref->name ? spec_store_find(spec, ref->name) : NULL;

		if (s && (s->tier == TIER_LUSTRE || s->tier == TIER_NFS))
			out[k++] = s;
	}
	/* The spec's order, each once: a role may read and write the same store. */
	qsort(out, k, sizeof(*out), store_order);
	for (i = 0; i < k; i++)
		if (*n == 0 || out[*n - 1] != out[i])
			out[(*n)++] = out[i];
	return out;
}

/* AWS's user guide for EFS ("Recommended NFS mount settings"), and FSx for Lustre's. */
const char boot_nfs_options[] =
    "nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport,_netdev,nofail";
const char boot_lustre_options[] = "relatime,flock,_netdev,nofail";

char *bootstrap_group_document(const struct spec *spec, const struct spec_group *g,
			       const char *address, const struct catalog_type *t, int efa,
			       const struct boot_cloud *cloud, bool zoned, char **mounts,
			       struct kiln_error *err)
{
	size_t nmounted;
	const struct spec_store **mounted = bootstrap_mounted_stores(spec, g, &nmounted);
	struct boot_mount *m = xcalloc(nmounted + 1, sizeof(*m));
	char **owned = xcalloc(4 * nmounted + 1, sizeof(*owned));
	const struct spec_store *local = bootstrap_local_store(spec, g);
	struct boot_input in = {0};
	struct strbuf note = {0};
	size_t i, n = 0, no = 0;
	const char **keys;
	char *doc, *sched;

	for (i = 0; i < nmounted; i++) {
		const struct spec_store *s = mounted[i];
		char *src = NULL, *find = NULL, *why = NULL;

		cloud->source(spec, s, zoned, &src, &find, &why);
		owned[no++] = src;
		owned[no++] = find;
		owned[no++] = why;
		if (s->tier == TIER_NFS && cloud->nfs_helper) {
			m[n].alt_source = owned[no++] = cloud->nfs_helper_source(s);
			m[n].alt_fstype = cloud->nfs_helper_fstype;
			m[n].alt_options = cloud->nfs_helper_options;
			m[n].alt_helper = cloud->nfs_helper;
		}
		m[n].store = s->name;
		m[n].path = s->mount;
		m[n].fstype = s->tier == TIER_LUSTRE ? "lustre" : "nfs4";
		m[n].options = s->tier == TIER_LUSTRE ? boot_lustre_options : boot_nfs_options;
		m[n].source = src;
		m[n].find = find;
		m[n].why = why;
		sb_addf(&note, "%s%s at %s (%s)", n ? "; " : "", s->name, s->mount,
			why ? why : spec_tier_name(s->tier));
		n++;
	}
	if (local)
		sb_addf(&note,
			"%slocal NVMe %s at %s (RAID 0 of the instance store; its data is "
			"lost when a node stops or is replaced)",
			note.len ? "; " : "", local->name, local->mount);
	in.spec = spec;
	in.group = g;
	in.address = address;
	in.instance_type = t->name;
	in.mounts = m;
	in.nmounts = n;
	in.local_mount = local ? local->mount : NULL;
	in.local_store = local ? local->name : NULL;
	in.gpus = t->gpus;
	in.efa = efa;
	in.efa_rdma = type_has_rdma(t->name);
	in.report = cloud->report;
	/* access: (issue 15): the keys go to access.user, else to the image's default user. */
	in.login_user = spec->access.user;
	in.nkeys = spec->access.nkeys;
	keys = xcalloc(spec->access.nkeys + 1, sizeof(*keys));
	for (i = 0; i < spec->access.nkeys; i++)
		keys[i] = spec->access.keys[i].line;
	in.authorized_keys = keys;
	in.scheduler = sched = cloud->scheduler ? cloud->scheduler(spec, g) : NULL;
	in.gpu_metrics = t->gpus > 0 ? cloud->gpu_metrics : NULL;
	in.read_tag = cloud->read_tag;
	in.ttl_grace = spec->ttl_grace ? spec->ttl_grace : SPEC_TTL_GRACE_DEFAULT;
	doc = bootstrap_document(&in);
	if (in.read_tag && bootstrap_check_size(spec, g, doc, err) < 0) {
		/*
		 * The node TTL is worth less than the rest of the boot: without
		 * room for it, the nodes go without, kiln reap alone enforces the
		 * TTL, and the plan says so.
		 */
		free(doc);
		in.read_tag = NULL;
		doc = bootstrap_document(&in);
		sb_addf(&note, "%sno node TTL: its timer does not fit in EC2's %d bytes of user "
			       "data beside the rest, so only kiln reap enforces the TTL",
			note.len ? "; " : "", BOOT_MAX_BYTES);
	}
	free(sched);
	free(keys);
	for (i = 0; i < no; i++)
		free(owned[i]);
	free(owned);
	free(m);
	free(mounted);
	if (bootstrap_check_size(spec, g, doc, err) < 0) {
		free(doc);
		sb_release(&note);
		return NULL;
	}
	if (mounts)
		*mounts = note.len ? sb_detach(&note) : NULL;
	sb_release(&note);
	return doc;
}

/* The catalog's types with instance-store NVMe, for the message: "a, b, c". */
static char *types_with_nvme(const struct catalog *cat)
{
	struct strbuf sb = {0};
	size_t i, n = 0;

	for (i = 0; i < cat->ntypes; i++) {
		if (cat->types[i].nvme_gb == 0)
			continue;
		if (n++ < 6)
			sb_addf(&sb, "%s%s", sb.len ? ", " : "", cat->types[i].name);
	}
	if (n > 6)
		sb_addf(&sb, " and %zu more", n - 6);
	return sb.len ? sb_detach(&sb) : xstrdup("none");
}

void bootstrap_check_spec(const struct catalog *cat, const struct spec *spec,
			  const struct boot_cloud *cloud, bool zoned, struct diags *d)
{
	size_t i, j;

	if (spec->broken & (SPEC_BROKEN_COMPUTE | SPEC_BROKEN_STORAGE | SPEC_BROKEN_NETWORK))
		return;
	for (i = 0; i < spec->ngroups; i++) {
		const struct spec_group *g = &spec->groups[i];
		const struct spec_store *local = bootstrap_local_store(spec, g);
		const struct catalog_type *t;
		struct kiln_error err = {{0}, {0}};
		char *why = NULL, *doc;
		int efa;

		if (g->machine_bad || expand_group_type("", cat, spec, g, &t, &why, &err) < 0)
			continue; /* reported by expand_check_groups */
		free(why);
		if (local && t->nvme_gb == 0) {
			const struct ynode *at = local->key;
			char *types = types_with_nvme(cat);
			struct diag *dg;

			for (j = 0; j < local->ngroups; j++)
				if (strcmp(local->groups[j].name, g->name) == 0)
					at = local->groups[j].node;
			dg = diags_add(d, DIAG_ERROR, spec->file, at->line, at->col,
				       "storage.%s: compute.%s runs on %s, which has no "
				       "instance-store NVMe for a local store",
				       local->name, g->name, t->name);
			if (local->groups_node)
				diag_hint(dg, "remove %s from groups:; types with one: %s", g->name,
					  types);
			else
				diag_hint(dg,
					  "list the groups on types with one, like groups: "
					  "[GROUP]; types with one: %s",
					  types);
			free(types);
			continue;
		}
		efa = bootstrap_efa_devices(t, spec->network.fabric == FABRIC_EFA && t->efa);
		doc = bootstrap_group_document(spec, g, g->name, t, efa, cloud, zoned, NULL, &err);
		if (!doc) {
			struct diag *dg = diags_add(d, DIAG_ERROR, spec->file, g->key->line,
						    g->key->col, "%s", err.msg);

			diag_hint(dg, "%s", err.hint);
		}
		free(doc);
	}
}

int bootstrap_efa_devices(const struct catalog_type *t, bool efa)
{
	if (!efa)
		return 0;
	return t->efa_interfaces > 1 ? t->efa_interfaces : 1;
}

/*
 * What the user data gives from access: (issue 15), with the real policy of
 * a change: NULL when the spec has no keys. Caller frees.
 */
static char *boot_access_note(const struct spec *spec)
{
	struct strbuf sb = {0};
	size_t i;

	if (!spec->access.nkeys)
		return NULL;
	sb_addf(&sb, "authorizes %zu ssh key%s (", spec->access.nkeys,
		spec->access.nkeys == 1 ? "" : "s");
	for (i = 0; i < spec->access.nkeys; i++)
		sb_addf(&sb, "%s%s", i ? ", " : "", spec->access.keys[i].fingerprint);
	if (spec->access.user)
		sb_addf(&sb, ") for user %s", spec->access.user);
	else
		sb_adds(&sb, ") for the image's default user");
	sb_adds(&sb, "; a key change is new user data, so new nodes: cloud-init writes "
		     "authorized_keys once, at a node's first boot");
	return sb_detach(&sb);
}

int bootstrap_group_attrs(json_t *r, const char *prefix, const struct spec *spec,
			  const struct spec_group *g, const char *address,
			  const struct catalog_type *t, bool efa, const struct boot_cloud *cloud,
			  bool zoned, struct kiln_error *err)
{
	char *note = NULL, *doc, *digest, *access;

	doc = bootstrap_group_document(spec, g, address, t, bootstrap_efa_devices(t, efa), cloud,
				       zoned, &note, err);
	if (!doc) {
		char *at = expand_where(spec, g->key);
		char *msg = xasprintf("%s%s%s", prefix, at, err->msg);

		free(at);
		snprintf(err->msg, sizeof(err->msg), "%s", msg);
		free(msg);
		return -1;
	}
	digest = bootstrap_digest(doc);
	expand_attr(r, "user_data", json_string(digest));
	expand_attr(r, "user_data_text", json_string(doc));
	access = boot_access_note(spec);
	if (note || access)
		expand_why(r, "user_data",
			   xasprintf("%s%s%s%s", note ? "mounts " : "", note ? note : "",
				     note && access ? "; " : "", access ? access : ""));
	free(access);
	free(note);
	free(digest);
	free(doc);
	return 0;
}
