/*
 * spec_access.c - the top-level `access:` section: who may log in to the
 * nodes, and as which user.
 *
 *   access:
 *     ssh_keys:
 *       - ssh-ed25519 AAAAC3Nza... alice@laptop
 *       - {file: keys/bob.pub}          # read when the spec is loaded
 *     user: ubuntu                       # default: the image's default user
 *     key_pair: team-key                 # optional: an existing cloud key pair
 *
 * Every key is checked as an OpenSSH public key (sshkey.c). A key file is
 * read relative to the spec's directory (or from ~/); one whose first line
 * starts a private key is refused from that line alone, and the bytes read
 * to tell are wiped: a private key never reaches the spec, a plan or state.
 */
#include "spec.h"
#include "spec_load.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "sshkey.h"
#include "util.h"

const char *const spec_access_keys[] = {"ssh_keys", "user", "key_pair"};
const char *const spec_key_file_keys[] = {"file"};

/* The most a public key file may hold: authorized_keys lines, a few dozen keys. */
#define KEY_FILE_MAX (64 * 1024)

/* PATH as the spec names it: ~/ from $HOME, relative from the spec's directory. */
static char *key_path(const struct spec *spec, const char *file)
{
	const char *home = getenv("HOME"), *slash;

	if (file[0] == '/')
		return xstrdup(file);
	if (file[0] == '~' && file[1] == '/' && home && *home)
		return xasprintf("%s/%s", home, file + 2);
	slash = strrchr(spec->file, '/');
	if (!slash || strcmp(spec->file, "<stdin>") == 0)
		return xstrdup(file);
	return xasprintf("%.*s/%s", (int)(slash - spec->file), spec->file, file);
}

/* The private key a .pub file stands beside, absolute, for ssh's IdentityFile. */
static char *identity_of(const char *path)
{
	char dir[PATH_MAX], *copy = xstrdup(path), *slash = strrchr(copy, '/'), *id;
	const char *base = slash ? slash + 1 : copy;
	size_t n = strlen(base);

	if (slash)
		*slash = '\0';
	if (!realpath(slash ? (*copy ? copy : "/") : ".", dir)) {
		free(copy);
		return NULL;
	}
	if (n > 4 && strcmp(base + n - 4, ".pub") == 0)
		n -= 4;
	id = xasprintf("%s/%.*s", strcmp(dir, "/") == 0 ? "" : dir, (int)n, base);
	free(copy);
	return id;
}

/* Refuse a private key from its first bytes; they are wiped either way. */
static int refuse_private(struct loader *ld, const struct ynode *n, const char *path,
			  const char *file)
{
	char head[64];
	size_t got;
	struct kiln_error err = {0};
	FILE *f = util_file_open_regular(file, &err);
	bool priv;

	if (!f) {
		diag_hint(spec_err(ld, n, "%s: cannot read '%s': %s", path, file, err.msg),
			  "give the path of a public key file (.pub), relative to the spec's "
			  "directory");
		return -1;
	}
	got = fread(head, 1, sizeof(head), f);
	fclose(f);
	priv = sshkey_is_private(head, got);
	OPENSSL_cleanse(head, sizeof(head));
	if (!priv)
		return 0;
	diag_hint(spec_err(ld, n,
			   "%s: '%s' is a private key; kiln takes public keys only and did "
			   "not read it",
			   path, file),
		  "name the public half instead (ssh-keygen -y -f %s > %s.pub makes it)", file,
		  file);
	return -1;
}

static void add_key(struct loader *ld, const struct ynode *n, const char *path, const char *line,
		    const char *file, const char *resolved, size_t *cap)
{
	struct spec *spec = ld->spec;
	struct kiln_error err = {0};
	struct sshkey k;
	struct spec_ssh_key *sk;
	struct text_flaw flaw;

	if (sshkey_parse(&k, line, &err) < 0) {
		struct diag *dg = file ? spec_err(ld, n, "%s: %s: %s", path, file, err.msg)
				       : spec_err(ld, n, "%s: %s", path, err.msg);

		if (err.hint[0])
			diag_hint(dg, "%s", err.hint);
		return;
	}
	if (str_text_flaw_find(k.comment, false, &flaw)) {
		/* The line is written into the user data and authorized_keys as text. */
		struct diag *dg = spec_err(
		    ld, n,
		    "%s: %s%sthe comment of the %s key holds %s at byte %zu; a "
		    "comment must be UTF-8 text with no control character but tab",
		    path, file ? file : "", file ? ": " : "", k.type, flaw.name, flaw.byte);

		diag_hint(dg, "edit the comment, the text after the key's data");
		sshkey_release(&k);
		return;
	}
	sk = ARRAY_PUSH(spec->access.keys, spec->access.nkeys, *cap);
	memset(sk, 0, sizeof(*sk));
	sk->line = sshkey_line(&k);
	sk->type = xstrdup(k.type);
	sk->fingerprint = xstrdup(k.fingerprint);
	sk->bits = k.bits;
	sk->node = n;
	if (file) {
		sk->file = xstrdup(file);
		sk->identity = identity_of(resolved);
	}
	sshkey_release(&k);
}

/* Every key line of a file: blank lines and # comments skipped, as sshd does. */
static void load_key_file(struct loader *ld, const struct ynode *n, const char *path,
			  const char *file, size_t *cap)
{
	char *resolved = key_path(ld->spec, file), *buf = NULL, *line, *save = NULL;
	struct kiln_error err = {0};
	size_t len, before = ld->spec->access.nkeys;
	int rc;

	if (refuse_private(ld, n, path, resolved) < 0)
		goto out;
	if ((rc = util_file_read_regular(resolved, KEY_FILE_MAX, &buf, &len, &err)) < 0) {
		if (rc == -2)
			spec_err(ld, n, "%s: '%s' is larger than %d KiB: not a public key file",
				 path, file, KEY_FILE_MAX / 1024);
		else
			spec_err(ld, n, "%s: cannot read '%s': %s", path, file, err.msg);
		goto out;
	}
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *p = line;

		while (*p == ' ' || *p == '\t' || *p == '\r')
			p++;
		if (*p && *p != '#')
			add_key(ld, n, path, p, file, resolved, cap);
	}
	if (ld->spec->access.nkeys == before && ld->d->errors == 0)
		diag_hint(spec_err(ld, n, "%s: '%s' holds no public key", path, file),
			  "a public key file holds lines like 'ssh-ed25519 AAAAC3Nza... you@host'");
out:
	free(buf);
	free(resolved);
}

static void load_keys(struct loader *ld, const struct ynode *keys)
{
	size_t i, cap = 0;

	if (keys->kind != YNODE_SEQ) {
		diag_hint(spec_err(ld, keys,
				   "access.ssh_keys must be a list of public keys, got %s",
				   ydoc_describe(keys)),
			  "write ssh_keys: [\"ssh-ed25519 AAAA... you@host\"] or ssh_keys: "
			  "[{file: ~/.ssh/id_ed25519.pub}]");
		return;
	}
	for (i = 0; i < keys->n; i++) {
		const struct ynode *k = keys->vals[i];
		char *path = xasprintf("access.ssh_keys[%zu]", i), *sub, *text = NULL;

		if (k->kind == YNODE_MAP) {
			sub = xasprintf("%s.file", path);
			if (spec_check_keys(ld, k, "in a key", spec_key_file_keys,
					    ARRAY_SIZE(spec_key_file_keys)) &&
			    spec_get_string(ld, k, "file", sub, true, &text) == GOT_OK)
				load_key_file(ld, ydoc_get(k, "file"), sub, text, &cap);
			free(sub);
		} else if ((text = spec_scalar(ld, k, path))) {
			add_key(ld, k, path, text, NULL, NULL, &cap);
		}
		free(text);
		free(path);
	}
}

/* A login name as useradd(8) takes it by default: [a-z_][a-z0-9_-]*, at most 32. */
static bool user_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > 32 || !(s[0] == '_' || (s[0] >= 'a' && s[0] <= 'z')))
		return false;
	for (i = 1; i < n; i++)
		if (!(s[i] == '_' || s[i] == '-' || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

void spec_load_access(struct loader *ld, const struct ynode *access)
{
	struct spec *spec = ld->spec;
	const struct ynode *keys;
	size_t i;

	if (!access || !spec_expect_map(ld, access, "access"))
		return;
	spec->access.node = access;
	spec_check_keys(ld, access, "in access", spec_access_keys, ARRAY_SIZE(spec_access_keys));
	if ((keys = ydoc_get(access, "ssh_keys")) && !ydoc_is_null(keys))
		load_keys(ld, keys);
	if (spec_get_string(ld, access, "user", "access.user", false, &spec->access.user) ==
		GOT_OK &&
	    !user_ok(spec->access.user))
		diag_hint(spec_err(ld, ydoc_get(access, "user"),
				   "access.user '%s' is not a login name", spec->access.user),
			  "1 to 32 characters of a-z, 0-9, '_' and '-', starting with a letter "
			  "or '_'; or leave user out for the image's default user");
	if (spec_get_string(ld, access, "key_pair", "access.key_pair", false,
			    &spec->access.key_pair) == GOT_OK) {
		const char *p = spec->access.key_pair;

		for (i = 0; p[i] && p[i] >= 0x20 && p[i] < 0x7f; i++)
			;
		if (!*p || p[i] || i > 255)
			diag_hint(spec_err(ld, ydoc_get(access, "key_pair"),
					   "access.key_pair must be 1 to 255 printable ASCII "
					   "characters"),
				  "name a key pair the account has in the spec's region");
	}
}

void spec_access_free(struct spec *spec)
{
	size_t i;

	for (i = 0; i < spec->access.nkeys; i++) {
		struct spec_ssh_key *k = &spec->access.keys[i];

		free(k->line);
		free(k->type);
		free(k->fingerprint);
		free(k->file);
		free(k->identity);
	}
	free(spec->access.keys);
	free(spec->access.user);
	free(spec->access.key_pair);
}
