/*
 * lock.c - leased workspace locks over store refs; see lock.h.
 *
 * Threads: the renewer of each held lock works on its own store handle
 * (libgit2 objects are not shared between threads). The signal thread that
 * turns SIGINT/SIGTERM into "release, then exit" is signals.c's, with the
 * exit main installs: this file keeps what that exit needs (the held locks,
 * the critical section) and starts the thread with the first lock. Nothing
 * here exits the process.
 */
#include "lock.h"

#include "log.h"
#include "signals.h"
#include "jsonw.h"

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h> /* kill(pid, 0): is a local holder alive */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_HELD 8

struct lock {
	struct store *store;
	char *location;
	char *workspace;
	char *ref;
	struct lock_info info;
	char *takeover;
	int64_t lease;
	int64_t renew;

	pthread_mutex_t renew_mu; /* one renewal at a time: the renewer's or lock_renew_check's */
	pthread_mutex_t mu;	  /* guards oid, lost, stop */
	pthread_cond_t cond;
	git_oid oid;
	bool lost;
	char lost_why[1200];
	bool stop;
	pthread_t renewer;
	bool renewing;
};

static pthread_mutex_t held_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t critical_mu = PTHREAD_MUTEX_INITIALIZER;
static struct lock *held[MAX_HELD];

static int64_t parse_time(const char *s)
{
	struct tm tm = {0};
	const char *end = s ? strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm) : NULL;

	return end && !*end ? (int64_t)timegm(&tm) : -1;
}

static int64_t env_duration(const char *name, int64_t def)
{
	const char *v = getenv(name);
	int64_t secs;

	if (!v || !*v)
		return def;
	if (timefmt_duration_parse(v, &secs) == 0 && secs > 0)
		return secs;
	{
		char *msg = xasprintf("kiln: %s '%s' is not a duration like 30s or 2m; ignoring it",
				      name, v);

		log_report(LOG_WARN, msg, NULL);
		free(msg);
	}
	return def;
}

void lock_info_release(struct lock_info *info)
{
	free(info->id);
	free(info->holder);
	free(info->operation);
	free(info->workspace);
	free(info->lineage);
	memset(info, 0, sizeof(*info));
}

bool lock_info_expired(const struct lock_info *info)
{
	return (int64_t)time(NULL) >= info->expires;
}

char *lock_info_describe(const struct lock_info *info)
{
	char since[32];

	return xasprintf("%s (pid %ld) for '%s' since %s, lock %s", info->holder, info->pid,
			 info->operation, timefmt_time_format_rfc3339(info->created, since),
			 info->id);
}

static char *info_json(const struct lock_info *info)
{
	char c[32], e[32];
	json_t *o =
	    json_pack("{s:s, s:s, s:I, s:s, s:s, s:s, s:s}", "id", info->id, "holder", info->holder,
		      "pid", (json_int_t)info->pid, "operation", info->operation, "workspace",
		      info->workspace, "created", timefmt_time_format_rfc3339(info->created, c),
		      "expires", timefmt_time_format_rfc3339(info->expires, e));
	char *s;

	if (info->lineage)
		json_object_set_new(o, "lineage", json_string(info->lineage));
	s = jsonw_dumps(o, JSON_SORT_KEYS | JSON_INDENT(2), NULL);
	json_decref(o);
	return s;
}

static int info_parse(struct lock_info *info, const char *text)
{
	json_error_t je;
	json_t *o = json_loads(text, 0, &je);
	const char *id = NULL, *holder = NULL, *op = NULL, *ws = NULL, *created = NULL,
		   *expires = NULL;
	json_int_t pid = 0;

	memset(info, 0, sizeof(*info));
	if (!o ||
	    json_unpack(o, "{s:s, s:s, s:I, s:s, s:s, s:s, s:s}", "id", &id, "holder", &holder,
			"pid", &pid, "operation", &op, "workspace", &ws, "created", &created,
			"expires", &expires) != 0 ||
	    parse_time(created) < 0 || parse_time(expires) < 0) {
		json_decref(o);
		return -1;
	}
	info->id = xstrdup(id);
	info->holder = xstrdup(holder);
	info->pid = (long)pid;
	info->operation = xstrdup(op);
	info->workspace = xstrdup(ws);
	info->created = parse_time(created);
	info->expires = parse_time(expires);
	if (json_string_length(json_object_get(o, "lineage")))
		info->lineage = xstrdup(json_string_value(json_object_get(o, "lineage")));
	json_decref(o);
	return 0;
}

int lock_read(struct store *s, const char *workspace, struct lock_info *info, git_oid *oid,
	      struct kiln_error *err)
{
	char *ref = store_lock_ref(workspace);
	git_commit *c = NULL;
	int rc;

	memset(info, 0, sizeof(*info));
	rc = store_ref_read(s, ref, oid, err);
	free(ref);
	if (rc != 0)
		return rc;
	if ((rc = git_commit_lookup(&c, store_repo(s), oid)) != 0) {
		if (store_object_error(s, rc, "commit", oid, err))
			return -1;
		kiln_error_set(err, "cannot read the lock of workspace '%s': %s", workspace,
			       store_git_error());
		return -1;
	}
	rc = info_parse(info, git_commit_message(c));
	git_commit_free(c);
	if (rc < 0) {
		char hex[GIT_OID_HEXSZ + 1];

		/* With no id to name it by, its commit is its name. */
		git_oid_tostr(hex, sizeof(hex), oid);
		kiln_error_set(err,
			       "the lock of workspace '%s' (refs/kiln/locks/%s, commit %.7s) is "
			       "not a record kiln wrote",
			       workspace, workspace, hex);
		kiln_error_hint(err, "if nothing holds it, `kiln force-unlock --force %s -w %s`",
				hex, workspace);
		return LOCK_MALFORMED;
	}
	return 0;
}

/* A lock commit: the record as its message; parent is the lock it renews or replaces. */
static int write_lock_commit(struct store *s, const struct lock_info *info, const git_oid *parent,
			     git_oid *out, struct kiln_error *err)
{
	char *body = info_json(info);
	int rc = store_commit_file(s, parent, NULL, "", 0, body, out, err);

	free(body);
	return rc;
}

/* Why the lock is lost, naming who holds it now when someone does (s: a handle of ours). */
static void lost_to(struct lock *l, struct store *s)
{
	struct kiln_error ignored = {0};
	struct lock_info cur;
	git_oid oid;
	char *who;

	if (!s || lock_read(s, l->workspace, &cur, &oid, &ignored) != 0) {
		snprintf(l->lost_why, sizeof(l->lost_why),
			 "the lock on workspace '%s' was removed or taken over while this run held "
			 "it",
			 l->workspace);
		return;
	}
	who = lock_info_describe(&cur);
	snprintf(l->lost_why, sizeof(l->lost_why),
		 "the lock on workspace '%s' was removed or taken over while this run held it: "
		 "%s holds it now",
		 l->workspace, who);
	free(who);
	lock_info_release(&cur);
}

/* One renewal: a lock commit on cur (our record), the ref moved to it only from cur. */
static int renew_on(struct lock *l, struct store *s, const struct lock_info *info,
		    const git_oid *cur, git_oid *next, struct kiln_error *err)
{
	int rc = write_lock_commit(s, info, cur, next, err);

	return rc == 0 ? store_ref_update(s, l->ref, cur, next, err) : rc;
}

/* With l->mu held: what a renewal (rc) found, kept; s names the new holder when lost. */
static void renewed(struct lock *l, int rc, const git_oid *next, int64_t expires,
		    struct store *s)
{
	if (rc == 0) {
		l->oid = *next;
		l->info.expires = expires;
	} else if (rc == STORE_MOVED) {
		l->lost = true;
		lost_to(l, s);
	}
}

static void *renew_main(void *arg)
{
	struct lock *l = arg;
	struct kiln_error err = {{0}};
	struct store *s = NULL;

	pthread_mutex_lock(&l->mu);
	while (!l->stop) {
		struct timespec ts;
		git_oid cur, next;
		struct lock_info info;
		int rc;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += l->renew;
		if (pthread_cond_timedwait(&l->cond, &l->mu, &ts) != ETIMEDOUT || l->stop)
			continue;
		pthread_mutex_unlock(&l->mu);
		pthread_mutex_lock(&l->renew_mu);
		pthread_mutex_lock(&l->mu);
		cur = l->oid;
		info = l->info;
		info.expires = (int64_t)time(NULL) + l->lease;
		pthread_mutex_unlock(&l->mu);
		/* Our own handle (libgit2 objects stay in one thread), opened again after a
		 * failure. */
		rc = s || store_open(&s, l->location, &err) == 0 ? 0 : -1;
		if (rc == 0)
			rc = renew_on(l, s, &info, &cur, &next, &err);
		pthread_mutex_lock(&l->mu);
		renewed(l, rc, &next, info.expires, s);
		if (rc < 0) {
			store_free(s);
			s = NULL;
		}
		if (rc == STORE_MOVED) {
			pthread_mutex_unlock(&l->renew_mu);
			break;
		} else if (rc < 0 && (int64_t)time(NULL) >= l->info.expires) {
			/* Could not renew before the lease ran out: someone may take it now. */
			l->lost = true;
			snprintf(l->lost_why, sizeof(l->lost_why), "the lease ran out: %s",
				 err.msg);
			pthread_mutex_unlock(&l->renew_mu);
			break;
		}
		pthread_mutex_unlock(&l->renew_mu);
		if (l->lost)
			break;
	}
	pthread_mutex_unlock(&l->mu);
	store_free(s);
	return NULL;
}

static void release_for_signal(struct lock *l)
{
	struct kiln_error err = {0};
	struct store *s = NULL;

	/* Our own handle: the main thread's may be in use. */
	if (store_open(&s, l->location, &err) == 0) {
		pthread_mutex_lock(&l->mu);
		store_ref_delete(s, l->ref, &l->oid, &err);
		pthread_mutex_unlock(&l->mu);
		store_free(s);
	}
}

int lock_release_all_for_exit(void)
{
	int i, released = 0;

	/* Never unlocked: the caller ends the process, and nothing may move a branch first. */
	pthread_mutex_lock(&critical_mu);
	pthread_mutex_lock(&held_mu);
	for (i = 0; i < MAX_HELD; i++) {
		if (held[i]) {
			release_for_signal(held[i]);
			released++;
		}
	}
	return released;
}

void lock_critical_enter(void)
{
	pthread_mutex_lock(&critical_mu);
}

void lock_critical_leave(void)
{
	pthread_mutex_unlock(&critical_mu);
}

static void held_set(struct lock *l, bool on)
{
	int i;

	pthread_mutex_lock(&held_mu);
	for (i = 0; i < MAX_HELD; i++) {
		if (on && !held[i]) {
			held[i] = l;
			break;
		}
		if (!on && held[i] == l) {
			held[i] = NULL;
			break;
		}
	}
	pthread_mutex_unlock(&held_mu);
}

static void sleep_a_moment(int64_t remaining)
{
	/* About a second with jitter, so waiters do not retry in step. */
	long ms = 700 + (long)(rand() % 600);

	if (remaining * 1000 < ms)
		ms = (long)remaining * 1000;
	if (ms > 0) {
		struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

		nanosleep(&ts, NULL);
	}
}

static char *holder_name(void)
{
	char host[256] = "localhost";
	const char *user = getenv("USER");
	struct passwd *pw;

	if (!user || !*user) {
		pw = getpwuid(getuid());
		user = pw ? pw->pw_name : NULL;
	}
	gethostname(host, sizeof(host) - 1);
	host[sizeof(host) - 1] = '\0';
	return xasprintf("%s@%s", user && *user ? user : "unknown", host);
}

/*
 * True when the holder ran on this host (its holder name is ours) and its
 * process no longer exists: killed outright, it could not release the lock,
 * which then waits out its lease. Another host's process cannot be checked.
 */
static bool holder_gone(const struct lock_info *info)
{
	char *me = holder_name();
	const char *at = strchr(info->holder, '@'), *my_at = strchr(me, '@');
	bool same_host = at && my_at && strcmp(at, my_at) == 0;

	free(me);
	if (!same_host || info->pid <= 0 || info->pid == (long)getpid())
		return false;
	return kill((pid_t)info->pid, 0) < 0 && errno == ESRCH;
}

static struct lock *lock_new(struct store *s, const char *workspace, const char *operation,
			     const char *lineage)
{
	struct lock *l = xcalloc(1, sizeof(*l));
	char id[37];

	util_uuid_v4(id);
	l->store = s;
	l->location = xstrdup(store_source(s));
	l->workspace = xstrdup(workspace);
	l->ref = store_lock_ref(workspace);
	l->lease = env_duration("KILN_LOCK_LEASE", LOCK_LEASE_DEFAULT);
	l->renew = env_duration("KILN_LOCK_RENEW", LOCK_RENEW_DEFAULT);
	if (l->renew * 2 > l->lease)
		l->renew = l->lease / 3 > 0 ? l->lease / 3 : 1;
	l->info.id = xstrdup(id);
	l->info.holder = holder_name();
	l->info.pid = (long)getpid();
	l->info.operation = xstrdup(operation);
	l->info.workspace = xstrdup(workspace);
	l->info.lineage = lineage ? xstrdup(lineage) : NULL;
	pthread_mutex_init(&l->renew_mu, NULL);
	pthread_mutex_init(&l->mu, NULL);
	pthread_cond_init(&l->cond, NULL);
	return l;
}

static void lock_destroy(struct lock *l)
{
	lock_info_release(&l->info);
	free(l->location);
	free(l->workspace);
	free(l->ref);
	free(l->takeover);
	pthread_mutex_destroy(&l->renew_mu);
	pthread_mutex_destroy(&l->mu);
	pthread_cond_destroy(&l->cond);
	free(l);
}

/* One attempt: 0 held, 1 held by someone else (*cur filled), -1 error. */
static int try_take(struct lock *l, bool take_stale, struct lock_info *cur, struct kiln_error *err)
{
	git_oid commit, cur_oid;
	int rc;

	l->info.created = (int64_t)time(NULL);
	l->info.expires = l->info.created + l->lease;
	if (store_sync(l->store, err) < 0)
		return -1;
	if (write_lock_commit(l->store, &l->info, NULL, &commit, err) < 0)
		return -1;
	rc = store_ref_create(l->store, l->ref, &commit, err);
	if (rc == 0) {
		l->oid = commit;
		return 0;
	}
	if (rc < 0)
		return -1;
	rc = lock_read(l->store, l->workspace, cur, &cur_oid, err);
	if (rc < 0)
		return -1;
	if (rc == 1)
		return 1; /* released between our try and our read: try again */
	if (!take_stale || !lock_info_expired(cur))
		return 1;
	/* Replace the stale lock; its commit becomes our parent, so the change is a fast-forward.
	 */
	if (l->info.lineage && cur->lineage) {
		/* Its holder died before a first commit: what it made carries this lineage. */
		free(l->info.lineage);
		l->info.lineage = xstrdup(cur->lineage);
	}
	if (write_lock_commit(l->store, &l->info, &cur_oid, &commit, err) < 0)
		return -1;
	rc = store_ref_update(l->store, l->ref, &cur_oid, &commit, err);
	if (rc < 0)
		return -1;
	if (rc == STORE_MOVED)
		return 1;
	{
		char exp[32];

		l->takeover =
		    xasprintf("Kiln-Lock-Takeover: %s held by %s (pid %ld) for '%s', lease "
			      "expired %s",
			      cur->id, cur->holder, cur->pid, cur->operation,
			      timefmt_time_format_rfc3339(cur->expires, exp));
	}
	l->oid = commit;
	return 0;
}

/*
 * KILN_TEST_LOCK_HOLD=DURATION keeps a freshly taken lock that long before
 * the command goes on: the only way for a test to kill or interrupt a
 * process while it provably holds the lock. Documented as a test knob.
 */
static void hold_for_tests(void)
{
	int64_t secs = env_duration("KILN_TEST_LOCK_HOLD", 0);
	struct timespec ts = {(time_t)secs, 0};

	while (secs > 0 && nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

int lock_acquire(struct lock **out, struct store *s, const char *workspace,
		 const struct lock_options *opts, struct kiln_error *err)
{
	struct lock *l;
	int64_t deadline = (int64_t)time(NULL) + opts->timeout;
	struct lock_info cur = {0};
	int rc;

	*out = NULL;
	signals_start(); /* from the first lock on, a signal releases it */
	srand((unsigned)getpid() ^ (unsigned)time(NULL));
	l = lock_new(s, workspace, opts->operation, opts->lineage);
	for (;;) {
		lock_info_release(&cur);
		lock_critical_enter();
		rc = try_take(l, opts->timeout > 0, &cur, err);
		if (rc == 0)
			held_set(l, true);
		lock_critical_leave();
		if (rc <= 0)
			break;
		if (!cur.id && (int64_t)time(NULL) < deadline + 10)
			continue; /* released between our try and our read */
		if (!cur.id) {
			kiln_error_set(err,
				       "could not take the lock on workspace '%s': its ref kept "
				       "changing for 10s",
				       workspace);
			kiln_error_hint(err, "run `kiln workspace list`, then try again");
			rc = -1;
			break;
		}
		if ((int64_t)time(NULL) >= deadline) {
			char *who = lock_info_describe(&cur);
			char exp[32];

			if (lock_info_expired(&cur)) {
				kiln_error_set(
				    err,
				    "workspace '%s' is locked by %s, but its lease expired "
				    "at %s: the lock is stale",
				    workspace, who, timefmt_time_format_rfc3339(cur.expires, exp));
				kiln_error_hint(
				    err,
				    "if that run is gone, `kiln force-unlock %s -w %s`, or "
				    "retry with --lock-timeout to take the lock over",
				    cur.id, workspace);
			} else if (holder_gone(&cur)) {
				int64_t left = cur.expires - (int64_t)time(NULL);
				char *in = timefmt_duration_format(left > 0 ? left : 0);
				char *wait = timefmt_duration_format(left > 0 ? left + 10 : 10);

				kiln_error_set(
				    err,
				    "workspace '%s' is locked by %s, but pid %ld is no "
				    "longer running on this host: the lock is stale, and its "
				    "lease ends at %s (in %s)",
				    workspace, who, cur.pid,
				    timefmt_time_format_rfc3339(cur.expires, exp), in);
				kiln_error_hint(
				    err,
				    "retry with --lock-timeout %s to take it over once the "
				    "lease ends, or remove it now: `kiln force-unlock --force "
				    "%s -w %s`",
				    wait, cur.id, workspace);
				free(in);
				free(wait);
			} else {
				kiln_error_set(err, "workspace '%s' is locked by %s", workspace,
					       who);
				if (opts->timeout > 0) {
					char *waited = timefmt_duration_format(opts->timeout);

					kiln_error_hint(err,
							"still held after waiting %s; wait longer "
							"with a larger --lock-timeout",
							waited);
					free(waited);
				} else {
					kiln_error_hint(err, "wait for it to finish, or retry with "
							     "--lock-timeout 5m to wait for it");
				}
			}
			free(who);
			rc = -1;
			break;
		}
		sleep_a_moment(deadline - (int64_t)time(NULL));
	}
	lock_info_release(&cur);
	if (rc < 0) {
		lock_destroy(l);
		return -1;
	}
	log_debug("took lock %s on workspace '%s' (lease %llds, renewed every %llds)", l->info.id,
		  workspace, (long long)l->lease, (long long)l->renew);
	l->renewing = pthread_create(&l->renewer, NULL, renew_main, l) == 0;
	*out = l;
	hold_for_tests();
	return 0;
}

int lock_verify(struct lock *l, struct kiln_error *err)
{
	git_oid now, mine;
	int rc;

	if (lock_lost(l, err)) {
		kiln_error_set(err, "%s; nothing was written", l->lost_why);
		kiln_error_hint(err, "check `kiln workspace list` and `kiln log`, then run again");
		return -1;
	}
	pthread_mutex_lock(&l->mu);
	mine = l->oid;
	pthread_mutex_unlock(&l->mu);
	/* The remote, not the cache: a force-unlock from another machine shows only there. */
	rc = store_ref_read_fresh(l->store, l->ref, &now, err);
	if (rc < 0)
		return -1;
	if (rc == 1 || !git_oid_equal(&now, &mine)) {
		kiln_error_set(
		    err,
		    "the lock on workspace '%s' was removed or taken over while this run "
		    "held it; nothing was written",
		    l->workspace);
		kiln_error_hint(err, "check `kiln workspace list` and `kiln log`, then run again");
		return -1;
	}
	return 0;
}

int lock_renew_check(struct lock *l, struct kiln_error *err)
{
	struct store *s = NULL;
	struct lock_info info;
	git_oid mine, next;
	int rc;

	pthread_mutex_lock(&l->renew_mu);
	pthread_mutex_lock(&l->mu);
	mine = l->oid;
	info = l->info;
	info.expires = (int64_t)time(NULL) + l->lease;
	rc = l->lost ? STORE_MOVED : 0;
	pthread_mutex_unlock(&l->mu);
	/* Our own handle: this runs on a worker thread. */
	if (store_open(&s, l->location, err) < 0) {
		pthread_mutex_unlock(&l->renew_mu);
		return -1;
	}
	if (rc == 0)
		rc = renew_on(l, s, &info, &mine, &next, err);
	pthread_mutex_lock(&l->mu);
	renewed(l, rc, &next, info.expires, s);
	if (rc == STORE_MOVED)
		kiln_error_set(err, "%s", l->lost_why);
	pthread_mutex_unlock(&l->mu);
	pthread_mutex_unlock(&l->renew_mu);
	store_free(s);
	return rc == 0 ? 0 : -1;
}

bool lock_lost(struct lock *l, struct kiln_error *err)
{
	bool lost;

	pthread_mutex_lock(&l->mu);
	lost = l->lost;
	if (lost)
		kiln_error_set(err, "%s", l->lost_why);
	pthread_mutex_unlock(&l->mu);
	return lost;
}

const char *lock_id(const struct lock *l)
{
	return l->info.id;
}

const char *lock_takeover_note(const struct lock *l)
{
	return l->takeover;
}

int lock_release(struct lock *l, struct kiln_error *err)
{
	int rc = 0;
	bool lost;

	if (!l)
		return 0;
	pthread_mutex_lock(&l->mu);
	l->stop = true;
	pthread_cond_signal(&l->cond);
	pthread_mutex_unlock(&l->mu);
	if (l->renewing)
		pthread_join(l->renewer, NULL);
	lock_critical_enter();
	/* A lost lock is not ours to delete; the write that needed it already said so. */
	lost = lock_lost(l, NULL);
	if (!lost) {
		rc = store_ref_delete(l->store, l->ref, &l->oid, err);
		if (rc == STORE_MOVED) {
			kiln_error_set(err,
				       "the lock on workspace '%s' was no longer ours to release",
				       l->workspace);
			rc = -1;
		}
	}
	held_set(l, false);
	lock_critical_leave();
	lock_destroy(l);
	return rc;
}

int lock_force_unlock(struct store *s, const char *workspace, const char *id, bool force,
		      struct kiln_error *err)
{
	struct lock_info info;
	git_oid oid;
	char *ref;
	int rc;

	if (store_sync(s, err) < 0)
		return -1;
	rc = lock_read(s, workspace, &info, &oid, err);
	if (rc == LOCK_MALFORMED) {
		char hex[GIT_OID_HEXSZ + 1];

		git_oid_tostr(hex, sizeof(hex), &oid);
		if (!force || strlen(id) < 7 || strncmp(hex, id, strlen(id)) != 0)
			return -1;
		goto remove;
	}
	if (rc < 0)
		return -1;
	if (rc == 1) {
		kiln_error_set(err, "workspace '%s' is not locked", workspace);
		return -1;
	}
	if (strcmp(info.id, id) != 0) {
		kiln_error_set(err, "workspace '%s' is locked by %s; '%s' is not that lock's id",
			       workspace, info.holder, id);
		kiln_error_hint(err, "`kiln workspace list` shows the id of each lock");
		lock_info_release(&info);
		return -1;
	}
	if (!lock_info_expired(&info) && !force) {
		char *who = lock_info_describe(&info);
		char exp[32];

		kiln_error_set(err, "the lock of workspace '%s' is live: %s renews it until %s",
			       workspace, who, timefmt_time_format_rfc3339(info.expires, exp));
		kiln_error_hint(err, "that run may still be working; pass --force only if you know "
				     "it is gone");
		free(who);
		lock_info_release(&info);
		return -1;
	}
	lock_info_release(&info);
remove:
	ref = store_lock_ref(workspace);
	rc = store_ref_delete(s, ref, &oid, err);
	free(ref);
	if (rc == STORE_MOVED) {
		kiln_error_set(err,
			       "the lock of workspace '%s' changed while removing it; run "
			       "kiln force-unlock again",
			       workspace);
		return -1;
	}
	return rc;
}

const char *lock_lineage(const struct lock *l)
{
	return l ? l->info.lineage : NULL;
}
