/*
 * store_remote.c - the state repository's remote: fetching it into the
 * cache (checking a file:// remote's objects first), listing its refs, and
 * pushing one ref change without force; see store_int.h. Local refs,
 * commits and objects are store.c's.
 */
#include "store.h"
#include "store_int.h"

#include "log.h"
#include "odbcheck.h"

#include <stdlib.h>
#include <string.h>

/* Credentials for ssh remotes come from the ssh agent; nothing is stored. */
static int credentials(git_credential **out, const char *url, const char *user, unsigned allowed,
		       void *payload)
{
	(void)url;
	(void)payload;
	const char *token = getenv("KILN_STATE_TOKEN");

	if (allowed & GIT_CREDENTIAL_SSH_KEY)
		return git_credential_ssh_key_from_agent(out, user ? user : "git");
	/* https: a token from the environment (never from a file kiln writes). */
	if ((allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT) && token && *token)
		return git_credential_userpass_plaintext_new(out, user ? user : "x-access-token",
							     token);
	return GIT_PASSTHROUGH;
}

static int remote_new(struct store *s, git_remote **remote, struct kiln_error *err)
{
	git_remote_create_options opts = GIT_REMOTE_CREATE_OPTIONS_INIT;

	/*
	 * The URL is used as given: no url.*.insteadOf rewriting from the user's
	 * git config (and libgit2 1.5 leaks in the regex that looks those up).
	 */
	opts.repository = s->repo;
	opts.flags = GIT_REMOTE_CREATE_SKIP_INSTEADOF | GIT_REMOTE_CREATE_SKIP_DEFAULT_FETCHSPEC;
	if (git_remote_create_with_opts(remote, s->url, &opts) != 0) {
		kiln_error_set(err, "cannot use state remote %s: %s", s->location,
			       store_git_error());
		return -1;
	}
	return 0;
}

static int remote_check_blob(const char *root, const git_tree_entry *entry, void *payload)
{
	git_object *obj = NULL;
	int rc;

	(void)root;
	if (git_tree_entry_type(entry) != GIT_OBJECT_BLOB)
		return 0;
	rc = git_tree_entry_to_object(&obj, payload, entry);
	git_object_free(obj);
	return rc;
}

/* The tree of commit id in r, and with blobs every blob under it: 0 or libgit2's error. */
static int remote_check_commit(git_repository *r, const git_oid *id, bool blobs)
{
	git_commit *c = NULL;
	git_tree *tree = NULL;
	int rc;

	rc = git_commit_lookup(&c, r, id);
	if (rc == 0)
		rc = git_commit_tree(&tree, c);
	if (rc == 0 && blobs)
		rc = git_tree_walk(tree, GIT_TREEWALK_PRE, remote_check_blob, r);
	git_tree_free(tree);
	git_commit_free(c);
	return rc;
}

/*
 * libgit2's local transport reads a file:// remote through a repository of
 * its own, with no odbcheck in front: one truncated loose object there would
 * hang the fetch (libgit2 1.5.1). So read first, through a checked
 * repository, what the fetch will read: every commit of the remote's refs
 * that the cache lacks, with its tree and blobs, and the trees of the commits
 * both have, where the walk stops. Other failures are left to the fetch to
 * report.
 */
static int remote_check(struct store *s, struct kiln_error *err)
{
	static const char *const globs[] = {"refs/heads/*", "refs/kiln/*"};
	const char *path = s->url + strlen("file://");
	git_repository *r = NULL;
	git_revwalk *walk = NULL;
	git_odb *mine = NULL;
	struct odbcheck *check = NULL;
	const char *kind, *file, *why;
	git_oid id;
	size_t i;
	int ret = 0;

	if (git_repository_open_bare(&r, path) != 0 || odbcheck_attach(&check, r) != 0 ||
	    git_repository_odb(&mine, s->repo) != 0 || git_revwalk_new(&walk, r) != 0)
		goto out;
	for (i = 0; i < ARRAY_SIZE(globs); i++) {
		git_reference_iterator *it = NULL;
		git_reference *ref;

		if (git_reference_iterator_glob_new(&it, r, globs[i]) != 0)
			continue;
		while (git_reference_next(&ref, it) == 0) {
			const git_oid *target = git_reference_target(ref);

			/* Not a commit, or a bad ref: the fetch reports it. */
			if (target && git_odb_exists(mine, target)) {
				if (git_revwalk_hide(walk, target) == 0)
					remote_check_commit(r, target, false);
			} else if (target) {
				git_revwalk_push(walk, target);
			}
			git_reference_free(ref);
		}
		git_reference_iterator_free(it);
	}
	while (!odbcheck_damage(check, &id, &kind, &file, &why) && git_revwalk_next(&id, walk) == 0)
		remote_check_commit(r, &id, true);
	if (odbcheck_damage(check, &id, &kind, &file, &why)) {
		char hex[GIT_OID_HEXSZ + 1];

		git_oid_tostr(hex, sizeof(hex), &id);
		kiln_error_set(err, "the state remote %s is damaged: %s %s (%s) %s", s->location,
			       kind, hex, file, why);
		kiln_error_hint(err,
				"`git --git-dir=%s fsck` lists every damaged object; restore "
				"them from a backup, or from a kiln cache of this remote "
				"(.kiln/cache/ in another checkout)",
				path);
		ret = -1;
	}
out:
	git_revwalk_free(walk);
	git_odb_free(mine);
	git_repository_free(r);
	return ret;
}

int store_sync_locked(struct store *s, struct kiln_error *err)
{
	static char *specs[] = {"+refs/heads/*:refs/heads/*", "+refs/kiln/*:refs/kiln/*"};
	git_strarray arr = {specs, 2};
	git_fetch_options fo = GIT_FETCH_OPTIONS_INIT;
	git_remote *remote = NULL;
	int ret = -1;

	if (!s->url)
		return 0;
	if (remote_new(s, &remote, err) < 0)
		return -1;
	fo.prune = GIT_FETCH_PRUNE;
	fo.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
	fo.update_fetchhead = 0;
	fo.callbacks.credentials = credentials;
	log_debug("fetching state from %s into %s", s->location, s->path);
	if (str_starts_with(s->url, "file://") && remote_check(s, err) < 0)
		goto out;
	if (git_remote_fetch(remote, &arr, &fo, NULL) != 0) {
		if (store_damaged(s, err))
			goto out;
		kiln_error_set(err, "cannot fetch state from %s: %s", s->location,
			       store_git_error());
		if (str_starts_with(s->url, "file://") && strstr(store_git_error(), "not found"))
			kiln_error_hint(err,
					"the remote lacks an object its refs need: `git "
					"--git-dir=%s fsck` lists what is damaged; restore it "
					"from a backup",
					s->url + strlen("file://"));
		else if (str_starts_with(s->url, "file://"))
			kiln_error_hint(err, "check the URL; a file:// remote must be a bare "
					     "repository (git init --bare PATH)");
		else
			kiln_error_hint(err, "check the URL and the credentials: ssh uses the ssh "
					     "agent, https the token in KILN_STATE_TOKEN");
		goto out;
	}
	ret = 0;
out:
	git_remote_free(remote);
	return ret;
}

int store_sync(struct store *s, struct kiln_error *err)
{
	int rc;

	store_cache_lock(s);
	rc = store_sync_locked(s, err);
	store_cache_unlock(s);
	return rc;
}

/* The value of a ref on the remote itself: 0 found, 1 absent, -1 error. */
int store_remote_ref_value(struct store *s, const char *ref, git_oid *oid, struct kiln_error *err)
{
	git_remote *remote = NULL;
	git_remote_callbacks cb = GIT_REMOTE_CALLBACKS_INIT;
	const git_remote_head **heads;
	size_t n, i;
	int ret = -1;

	if (remote_new(s, &remote, err) < 0)
		return -1;
	cb.credentials = credentials;
	if (git_remote_connect(remote, GIT_DIRECTION_FETCH, &cb, NULL, NULL) != 0 ||
	    git_remote_ls(&heads, &n, remote) != 0) {
		kiln_error_set(err, "cannot list refs of %s: %s", s->location, store_git_error());
		goto out;
	}
	ret = 1;
	for (i = 0; i < n; i++) {
		if (strcmp(heads[i]->name, ref) == 0) {
			git_oid_cpy(oid, &heads[i]->oid);
			ret = 0;
			break;
		}
	}
out:
	git_remote_free(remote);
	return ret;
}

struct push_result {
	char *rejected;
};

static int on_push_update(const char *refname, const char *status, void *data)
{
	struct push_result *r = data;

	if (status && !r->rejected)
		r->rejected = xasprintf("%s: %s", refname, status);
	return 0;
}

/* Push one refspec without force: 0, STORE_MOVED when the remote refused it, -1. */
static int remote_push(struct store *s, const char *refspec, struct kiln_error *err)
{
	char *spec = xstrdup(refspec);
	git_strarray arr = {&spec, 1};
	git_push_options po = GIT_PUSH_OPTIONS_INIT;
	struct push_result r = {0};
	git_remote *remote = NULL;
	int rc, ret = -1;

	if (remote_new(s, &remote, err) < 0)
		goto out;
	po.callbacks.push_update_reference = on_push_update;
	po.callbacks.credentials = credentials;
	po.callbacks.payload = &r;
	rc = git_remote_push(remote, &arr, &po);
	log_debug("push %s to %s: %s", refspec, s->location,
		  rc == 0 && !r.rejected ? "ok"
		  : r.rejected		 ? r.rejected
					 : store_git_error());
	if (rc == GIT_ELOCKED || (rc != 0 && strstr(store_git_error(), "failed to lock"))) {
		ret = STORE_BUSY;
	} else if (rc == GIT_ENONFASTFORWARD || rc == GIT_EEXISTS || rc == GIT_EMODIFIED ||
		   (rc == 0 && r.rejected)) {
		ret = STORE_MOVED;
	} else if (rc != 0) {
		const char *msg = store_git_error();

		/* The local transport reports a lost race as a plain error. */
		if (strstr(msg, "already exists") || strstr(msg, "not present locally") ||
		    strstr(msg, "fastforward"))
			ret = STORE_MOVED;
		else if (!store_damaged(s, err))
			kiln_error_set(err, "cannot push %s to %s: %s", refspec, s->location, msg);
	} else {
		ret = 0;
	}
out:
	free(r.rejected);
	free(spec);
	git_remote_free(remote);
	return ret;
}

/* remote_push(), waiting while another writer briefly holds the remote ref file. */
static int remote_push_waiting(struct store *s, const char *refspec, struct kiln_error *err)
{
	int rc, tries;

	for (tries = 0; (rc = remote_push(s, refspec, err)) == STORE_BUSY && tries < BUSY_TRIES;
	     tries++) {
		/* A file:// remote is under our flock too: its REF.lock may be a dead one. */
		if (!str_starts_with(s->url, "file://") ||
		    !store_clear_dead_ref_lock(s->url + strlen("file://"),
					       strchr(refspec, ':') + 1))
			store_busy_pause();
	}
	return rc;
}

/* After a remote refused a change, put the cache back to what the remote has. */
int store_refused(struct store *s, int code, struct kiln_error *err)
{
	return store_sync_locked(s, err) < 0 ? -1 : code;
}

int store_push_ref(struct store *s, const char *ref, bool set, int refused_as,
		   struct kiln_error *err)
{
	char *spec = set ? xasprintf("%s:%s", ref, ref) : xasprintf(":%s", ref);
	int rc = remote_push_waiting(s, spec, err);

	free(spec);
	if (rc == STORE_MOVED || rc == STORE_BUSY)
		return store_refused(s, refused_as, err);
	return rc;
}
