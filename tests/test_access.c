/*
 * test_access.c - access: public keys (sshkey.c), the spec's access:
 * section (spec_access.c), and hosts, ssh configuration and node lookup
 * (access.c) over recorded node groups.
 */
#include "testutil.h"

#include <unistd.h>

#include "access.h"
#include "bootstrap.h"
#include "catalog_aws.h"
#include "sshkey.h"

#define HEAD                                                                                       \
	"kiln: 1\n"                                                                                \
	"cluster: c\n"                                                                             \
	"provider: {name: sim}\n"

/* Keys made with ssh-keygen 9.2 (-C test); fingerprints as ssh-keygen -l prints them. */
#define ED25519                                                                                    \
	"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMp+IDOhbPVQFnyUw8nUxuixIUxIEHWNIdDSUTQOpd31 test"
#define ED25519_FP "SHA256:3aFZj80C62Hs0xj5PnpAKndbek9odghG5t41mv4BRvA"
#define RSA2048                                                                                    \
	"ssh-rsa "                                                                                 \
	"AAAAB3NzaC1yc2EAAAADAQABAAABAQCd/"                                                        \
	"a0B8xMfhbgbPpOUZP5PMYWd4d3+ALm0+TMQuzpUIxutp311Z4DlFL1VQ"                                 \
	"OtGnwGF5xz02JUb1ReGsWzJ0+Xxsfhie9J4rEHOhg3X84KGZO0QaREB+uYKM+KaQ48Gg0XWL5eSaykLeYt+Om/"   \
	"qCoxxUG9SEs5Z6exLsr7lWPZgYJYAWafrVfqONR1P+UPuMssLyXCBVXt3s+"                              \
	"kAFhxidWvTh5tKzXobuoQGNVBl5r8d"                                                           \
	"UPl6iYauXYGvMYo0JZqhzKmyCHib72CF1W93ysqNuOZxYc5A7/SavKgPcXAa+o/"                          \
	"yeVmXGUxli+VxIoh4mhQfdtexGVvublrwGMLjTL+GqM1b test"
#define RSA3072                                                                                    \
	"ssh-rsa "                                                                                 \
	"AAAAB3NzaC1yc2EAAAADAQABAAABgQClDDCjwKtd1U6Vi7ECZY4bH33HW2srMzXPQ++RN8wSX//"              \
	"+Nn8ueN4X7pGfMRnWxp2pmSiN6Pt4yNwbX1RMTWlPHtGEdcJLr7DU7FZpNF1fn0F4EBHhG6ig5T5dsV0db0+"     \
	"5IERFhUj670PEcaipCAVWxcKKqE3B66z58HyAYgP1Q/uTxuERpESGJ3iR+a/nqPOYGbjYANQhoX3sMFAc5sZ3/"   \
	"237LuPwFuBvmToeTQl8uWp5x9oUqdYsfTr1riNFgrbDqL6CF6cFFyJDiv5Jmbm0rLbVgyJ2JSP1Gj1VGMv8ptA5C" \
	"r5kO1TF0i2nn1lSiDczIV8ihTwpX4Xlr6hw4k+4C7zGyg+kN0JP+HsBBStWCBVFVVViv0XtDZdc6wInopOCUg9n/" \
	"HZU+fNv17qXm0EVFz4zbZpUGAYFWCd/KChFsaoLhOjT2Iyl9t3+O+qPRkQ7DUzFpz9Wdb3JiFz0hQsEeSLl+DC+"  \
	"L8mikNY4R+/0FDGBYtI+KZakuyxNRIBEqtc= test"
#define DSA                                                                                        \
	"ssh-dss "                                                                                 \
	"AAAAB3NzaC1kc3MAAACBALN2RNq3ptZPjvLHTU7kRWYFaQ36fTAJ11e7bT9CdEJA5vcZgHZ0Jm5hTPr4aZYNy52W" \
	"x"                                                                                        \
	"Xbq2aTg5MZiTHNKUaq1QB9In0ScU7j6UYMsi/d5Zev4bVHajlUNP89bjPBZyVeTA960/I5fK2ymZUviTe+0lP3tq" \
	"hgJmL/0eV9bTMt/AAAAFQDhkdcJEm6mv/vLn/YksYvXn1NXOQAAAIAt/pvwmEO4RvRJPuXGgXszO7gfBg44P9a4w" \
	"DL7w/IVdsF/irUT21TLw0rq93l6ZLvn35iVre3KghsHaf3j45Hdh9/XOWEm/Nmvuyb7mP3z2qVnM3e05ftrHPRmZ" \
	"bxW8mJdOOvp49XRMqNnlxtef2X8VDDKQ63r5ma91knG/0q5XQAAAIA5Mi5ZGCZ5cV0g1gsOxvahGVKdej0XkXXV"  \
	"ixysE5+z2QH8Go1CLLBRZUTAzIP7gBO/Q7hZC1oRz81ywFwyuvVS0fPtWoaGv28V7h8C4tudKWbqEZ2UTYhzq3xS" \
	"uiyRLqwtD8csOLtCPnEO8oI9tqdylqdzYlAzjtfLsAz34tUkkQ== root@vm"
#define ECDSA384                                                                                   \
	"ecdsa-sha2-nistp384 "                                                                     \
	"AAAAE2VjZHNhLXNoYTItbmlzdHAzODQAAAAIbmlzdHAzODQAAABhBC8RlMcIqm2fkboe7Ek9nM4a/"            \
	"cPyW2PT12gT2yINvvmiebj8x+"                                                                \
	"cJ31WkuiaEf2NxiPgEmxbCFPjxZqXxMezNp37NkRKYZJws0zuRCbol41WP2qKIOv"                         \
	"nfit90iFm7LvdndA== test"

static void assert_parse_fails(const char *line, const char *msg)
{
	struct kiln_error err = {0};
	struct sshkey k;

	assert_int_equal(sshkey_parse(&k, line, &err), -1);
	assert_string_equal(err.msg, msg);
	assert_true(err.hint[0] != '\0');
}

static void test_ed25519_key_parses_with_ssh_keygens_fingerprint(void **state)
{
	struct kiln_error err = {0};
	struct sshkey k;
	char *line;

	(void)state;
	assert_int_equal(sshkey_parse(&k, "  " ED25519 "  \n", &err), 0);
	assert_string_equal(k.type, "ssh-ed25519");
	assert_string_equal(k.comment, "test");
	assert_string_equal(k.fingerprint, ED25519_FP);
	assert_int_equal(k.bits, 256);
	assert_null(sshkey_weakness(&k));
	line = sshkey_line(&k);
	assert_string_equal(line, ED25519);
	free(line);
	sshkey_release(&k);
}

static void test_rsa_key_size_is_read_from_its_modulus(void **state)
{
	struct kiln_error err = {0};
	struct sshkey k;

	(void)state;
	assert_int_equal(sshkey_parse(&k, RSA2048, &err), 0);
	assert_int_equal(k.bits, 2048);
	assert_string_equal(k.fingerprint, "SHA256:vo0nmQKmbh2SZPCaAA32WB84C0usfST2dK+SpIN+5NM");
	assert_non_null(sshkey_weakness(&k));
	sshkey_release(&k);
	assert_int_equal(sshkey_parse(&k, RSA3072, &err), 0);
	assert_int_equal(k.bits, 3072);
	assert_null(sshkey_weakness(&k));
	sshkey_release(&k);
}

static void test_dsa_key_is_weak_and_ecdsa_is_not(void **state)
{
	struct kiln_error err = {0};
	struct sshkey k;

	(void)state;
	assert_int_equal(sshkey_parse(&k, DSA, &err), 0);
	assert_int_equal(k.bits, 1024);
	assert_non_null(sshkey_weakness(&k));
	sshkey_release(&k);
	assert_int_equal(sshkey_parse(&k, ECDSA384, &err), 0);
	assert_int_equal(k.bits, 384);
	assert_null(sshkey_weakness(&k));
	sshkey_release(&k);
}

static void test_malformed_keys_are_refused_with_the_cause(void **state)
{
	(void)state;
	assert_parse_fails("ssh-foo AAAA", "'ssh-foo' is not an OpenSSH public key type");
	assert_parse_fails("ssh-ed25519", "the ssh-ed25519 key has no key data after its type");
	assert_parse_fails("ssh-ed25519 AAAAbad", "the ssh-ed25519 key's data is not valid base64");
	assert_parse_fails("ssh-ed25519 !!!!", "the ssh-ed25519 key's data is not valid base64");
	/* An ed25519 blob under the ssh-rsa type. */
	assert_parse_fails(
	    "ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIMp+IDOhbPVQFnyUw8nUxuixIUxIEHWNIdDSUTQOpd31",
	    "the key says it is ssh-rsa, but its data holds a key of type "
	    "ssh-ed25519");
	/* The same blob cut short: the key is 31 bytes, not 32. */
	assert_parse_fails(
	    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAH8p+IDOhbPVQFnyUw8nUxuixIUxIEHWNIdDSUTQOpd0=",
	    "the ssh-ed25519 key's data does not hold a 32-byte key");
}

static void test_private_keys_are_told_from_their_first_line(void **state)
{
	static const char openssh[] = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl";
	static const char pem[] = "-----BEGIN RSA PRIVATE KEY-----\n";
	static const char pub[] = "-----BEGIN PUBLIC KEY-----\n";

	(void)state;
	assert_true(sshkey_is_private(openssh, sizeof(openssh) - 1));
	assert_true(sshkey_is_private(pem, sizeof(pem) - 1));
	assert_true(sshkey_is_private("openssh-key-v1\0", 15));
	assert_false(sshkey_is_private(pub, sizeof(pub) - 1));
	assert_false(sshkey_is_private(ED25519, strlen(ED25519)));
}

/* A diagnostic at line:col with this message and a hint, else the list is printed. */
static void assert_error_at(const struct diags *d, int line, int col, const char *msg)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].line == line && d->v[i].col == col &&
		    strcmp(d->v[i].message, msg) == 0 && d->v[i].severity == DIAG_ERROR) {
			assert_non_null(d->v[i].hint);
			return;
		}
	diags_dump(d);
	fail_msg("no error %d:%d: %s", line, col, msg);
}

static void test_inline_keys_and_user_are_loaded(void **state)
{
	struct fx *f = *state;

	assert_int_equal(fx_load(f, HEAD "access:\n"
					 "  ssh_keys:\n"
					 "    - " ED25519 "\n"
					 "  user: ubuntu\n"
					 "  key_pair: team-key\n"),
			 0);
	assert_int_equal(f->spec->access.nkeys, 1);
	assert_string_equal(f->spec->access.keys[0].line, ED25519);
	assert_string_equal(f->spec->access.keys[0].fingerprint, ED25519_FP);
	assert_null(f->spec->access.keys[0].file);
	assert_null(f->spec->access.keys[0].identity);
	assert_string_equal(f->spec->access.user, "ubuntu");
	assert_string_equal(f->spec->access.key_pair, "team-key");
}

static void test_malformed_inline_key_is_reported_at_its_line(void **state)
{
	struct fx *f = *state;

	assert_int_equal(fx_load(f, HEAD "access:\n"
					 "  ssh_keys:\n"
					 "    - " ED25519 "\n"
					 "    - ssh-ed25519 AAAAbad me\n"),
			 -1);
	assert_error_at(&f->d, 7, 7,
			"access.ssh_keys[1]: the ssh-ed25519 key's data is not valid base64");
}

/* A directory of key files for one test, removed by the caller. */
static char *key_dir(void)
{
	char tmpl[] = "/tmp/kiln-test-access.XXXXXX";
	char *dir = mkdtemp(tmpl);

	assert_non_null(dir);
	return xstrdup(dir);
}

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static void test_key_file_is_read_and_names_its_private_key(void **state)
{
	struct fx *f = *state;
	char *dir = key_dir(), *pub = xasprintf("%s/id.pub", dir), *yaml, *id;

	write_file(pub, "# mine\n\n" ED25519 "\n");
	yaml = xasprintf(HEAD "access:\n  ssh_keys: [{file: %s}]\n", pub);
	assert_int_equal(fx_load(f, yaml), 0);
	assert_int_equal(f->spec->access.nkeys, 1);
	assert_string_equal(f->spec->access.keys[0].line, ED25519);
	assert_string_equal(f->spec->access.keys[0].file, pub);
	id = xasprintf("%s/id", dir);
	assert_string_equal(f->spec->access.keys[0].identity, id);
	unlink(pub);
	rmdir(dir);
	free(id);
	free(yaml);
	free(pub);
	free(dir);
}

static void test_private_key_file_is_refused(void **state)
{
	struct fx *f = *state;
	char *dir = key_dir(), *key = xasprintf("%s/id", dir), *yaml, *msg;

	write_file(key, "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n");
	yaml = xasprintf(HEAD "access:\n  ssh_keys:\n    - {file: %s}\n", key);
	assert_int_equal(fx_load(f, yaml), -1);
	msg = xasprintf("access.ssh_keys[0].file: '%s' is a private key; kiln takes public keys "
			"only and did not read it",
			key);
	assert_error_at(&f->d, 6, 14, msg);
	assert_int_equal(f->spec->access.nkeys, 0);
	unlink(key);
	rmdir(dir);
	free(msg);
	free(yaml);
	free(key);
	free(dir);
}

static void test_missing_key_file_is_refused(void **state)
{
	struct fx *f = *state;

	assert_int_equal(
	    fx_load(f, HEAD "access:\n  ssh_keys:\n    - {file: /nonexistent/id.pub}\n"), -1);
	assert_error_at(&f->d, 6, 14,
			"access.ssh_keys[0].file: cannot read '/nonexistent/id.pub': No such file "
			"or directory");
}

static void test_bad_user_and_unknown_key_are_refused(void **state)
{
	struct fx *f = *state;

	assert_int_equal(fx_load(f, HEAD "access:\n  user: Root\n  keys: []\n"), -1);
	assert_error_at(&f->d, 5, 9, "access.user 'Root' is not a login name");
	assert_error_at(&f->d, 6, 3, "unknown key 'keys' in access");
}

/*
 * Two groups as a state records them: a public login node and two private
 * trainers, with the per-node view (the second trainer has no address yet).
 */
static const char resources_json[] =
    "{\"sim_node_group.login\": {\"type\": \"sim_node_group\", \"attrs\": {"
    "  \"instance_ids\": [\"i-1\"], \"public\": true, \"gpus_per_node\": 0,"
    "  \"instance_type\": \"m7i.xlarge\", \"zone\": \"z-1a\","
    "  \"nodes\": [{\"id\": \"i-1\", \"index\": 0, \"zone\": \"z-1a\", \"private_ip\": "
    "\"10.0.0.5\", \"public_ip\": \"203.0.113.7\", \"state\": \"running\", \"launched\": null, "
    "\"health\": null, \"health_reason\": null}]}},"
    " \"sim_node_group.trainers\": {\"type\": \"sim_node_group\", \"attrs\": {"
    "  \"instance_ids\": [\"i-2\", \"i-3\"], \"public\": false, \"gpus_per_node\": 8,"
    "  \"instance_type\": \"p5.48xlarge\","
    "  \"nodes\": [{\"id\": \"i-2\", \"index\": 0, \"zone\": \"z-1a\", \"private_ip\": "
    "\"10.0.1.10\", \"public_ip\": null, \"state\": \"running\", \"health\": \"unhealthy\", "
    "\"health_reason\": \"7 of 8 GPUs\"},"
    "   {\"id\": \"i-3\", \"index\": 1, \"zone\": \"z-1a\", \"private_ip\": null, "
    "\"public_ip\": null, \"state\": \"pending\"}]}},"
    " \"sim_network.main\": {\"type\": \"sim_network\", \"attrs\": {\"cidr\": \"10.0.0.0/16\"}}}";

struct hosts_fx {
	struct fx base;
	struct engine e;
	json_t *res;
	json_t *hosts;
};

static int hosts_setup(void **state)
{
	struct hosts_fx *h = xcalloc(1, sizeof(*h));

	*state = h;
	assert_int_equal(load_spec(&h->base.spec,
				   HEAD "access:\n  user: alice\n  ssh_keys: [" ED25519 "]\n",
				   &h->base.d),
			 0);
	h->e.spec = h->base.spec;
	h->e.prov = provider_find("sim");
	h->e.workspace = "ws";
	h->res = json_loads(resources_json, 0, NULL);
	assert_non_null(h->res);
	return 0;
}

static int hosts_teardown(void **state)
{
	struct hosts_fx *h = *state;

	json_decref(h->hosts);
	json_decref(h->res);
	diags_release(&h->base.d);
	spec_free(h->base.spec);
	free(h);
	return 0;
}

static void test_hosts_name_every_node_and_jump_through_the_login_node(void **state)
{
	struct hosts_fx *h = *state;
	struct kiln_error err = {0};
	const json_t *n;

	h->hosts = access_hosts(&h->e, h->res, NULL, &err);
	assert_non_null(h->hosts);
	assert_string_equal(json_string_value(json_object_get(h->hosts, "login")),
			    "kiln-c-ws-login-0");
	assert_int_equal(json_array_size(json_object_get(h->hosts, "nodes")), 3);
	n = json_array_get(json_object_get(h->hosts, "nodes"), 1);
	assert_string_equal(json_string_value(json_object_get(n, "name")), "kiln-c-ws-trainers-0");
	assert_string_equal(json_string_value(json_object_get(n, "proxy_jump")),
			    "kiln-c-ws-login-0");
	assert_string_equal(json_string_value(json_object_get(n, "user")), "alice");
	assert_int_equal(json_integer_value(json_object_get(n, "gpus")), 8);
	assert_string_equal(json_string_value(json_object_get(n, "health_reason")), "7 of 8 GPUs");
	n = json_array_get(json_object_get(h->hosts, "nodes"), 0);
	assert_true(json_is_null(json_object_get(n, "proxy_jump")));
	assert_null(access_unreachable(h->hosts));
}

static void test_ssh_config_has_a_block_per_addressed_node(void **state)
{
	struct hosts_fx *h = *state;
	struct kiln_error err = {0};
	char *text;

	h->hosts = access_hosts(&h->e, h->res, NULL, &err);
	text = access_ssh_config(h->hosts, h->e.spec, NULL, &err);
	assert_string_equal(text,
			    "# kiln c/ws: OpenSSH configuration written by `kiln ssh-config`\n"
			    "# simulated addresses (sim provider): no host listens at them\n"
			    "\n"
			    "Host kiln-c-ws-login-0\n"
			    "  HostName 203.0.113.7\n"
			    "  User alice\n"
			    "  StrictHostKeyChecking accept-new\n"
			    "\n"
			    "Host kiln-c-ws-trainers-0\n"
			    "  HostName 10.0.1.10\n"
			    "  User alice\n"
			    "  ProxyJump kiln-c-ws-login-0\n"
			    "  StrictHostKeyChecking accept-new\n"
			    "\n"
			    "# kiln-c-ws-trainers-1 (i-3): no address yet\n");
	free(text);
}

static void test_test_endpoint_sends_every_node_to_one_sshd(void **state)
{
	struct hosts_fx *h = *state;
	struct kiln_error err = {0};
	char *text;

	h->hosts = access_hosts(&h->e, h->res, "trainers", &err);
	assert_non_null(h->hosts);
	text = access_ssh_config(h->hosts, h->e.spec, "127.0.0.1:2222", &err);
	assert_non_null(strstr(text, "Host kiln-c-ws-trainers-1\n"
				     "  HostName 127.0.0.1\n"
				     "  Port 2222\n"
				     "  User alice\n"
				     "  ProxyJump kiln-c-ws-login-0\n"
				     "  StrictHostKeyChecking accept-new\n"
				     "  UserKnownHostsFile /dev/null\n"
				     "  LogLevel ERROR\n"));
	assert_null(strstr(text, "Host kiln-c-ws-login-0"));
	free(text);
}

static void test_find_names_the_groups_and_indexes_there_are(void **state)
{
	struct hosts_fx *h = *state;
	struct kiln_error err = {0};
	const json_t *n;

	h->hosts = access_hosts(&h->e, h->res, NULL, &err);
	n = access_find(h->hosts, NULL, &err);
	assert_string_equal(json_string_value(json_object_get(n, "name")), "kiln-c-ws-login-0");
	n = access_find(h->hosts, "trainers/1", &err);
	assert_string_equal(json_string_value(json_object_get(n, "id")), "i-3");
	assert_null(access_find(h->hosts, "trainers/2", &err));
	assert_string_equal(err.msg,
			    "node group 'trainers' has 2 nodes (index 0 to 1); there is no node 2");
	assert_string_equal(err.hint, "kiln hosts trainers lists them");
	memset(&err, 0, sizeof(err));
	assert_null(access_find(h->hosts, "gpu", &err));
	assert_string_equal(err.msg, "workspace 'ws' has no node group 'gpu' with nodes");
	assert_string_equal(err.hint,
			    "the groups with nodes are: login, trainers (kiln hosts lists them)");
	memset(&err, 0, sizeof(err));
	assert_null(access_find(h->hosts, "trainers/x", &err));
	assert_string_equal(err.msg,
			    "'trainers/x' is not GROUP or GROUP/N (N a node's index from 0)");
}

static void test_private_groups_without_a_public_one_are_unreachable(void **state)
{
	struct hosts_fx *h = *state;
	struct kiln_error err = {0};
	char *why;

	json_object_del(h->res, "sim_node_group.login");
	h->hosts = access_hosts(&h->e, h->res, NULL, &err);
	assert_true(json_is_null(json_object_get(h->hosts, "login")));
	why = access_unreachable(h->hosts);
	assert_string_equal(why, "compute.trainers is private and no group is public: reachable "
				 "only from inside the VPC");
	free(why);
}

/* The user data of the spec's only group, on m7i.xlarge. */
static char *group_user_data(const struct spec *spec)
{
	static const struct boot_cloud cloud = {"true", NULL};
	struct kiln_error err = {0};
	char *doc = bootstrap_group_document(spec, &spec->groups[0], "sim_node_group.g",
					     catalog_find(&catalog_aws, "m7i.xlarge"), 0, &cloud,
					     false, NULL, &err);

	assert_non_null(doc);
	return doc;
}

static void test_user_data_authorizes_the_keys_for_the_default_user(void **state)
{
	struct fx *f = *state;
	char *doc;

	assert_int_equal(fx_load(f, HEAD "compute: {g: {instance_type: m7i.xlarge}}\n"
					 "access: {ssh_keys: [" ED25519 "]}\n"),
			 0);
	doc = group_user_data(f->spec);
	assert_non_null(strstr(doc, "\nssh_authorized_keys:\n  - \"" ED25519 "\"\n"));
	assert_null(strstr(doc, "users:"));
	free(doc);
}

static void test_user_data_makes_access_user_with_the_keys(void **state)
{
	struct fx *f = *state;
	char *doc;

	assert_int_equal(fx_load(f, HEAD "compute: {g: {instance_type: m7i.xlarge}}\n"
					 "access: {user: alice, ssh_keys: [" ED25519 "]}\n"),
			 0);
	doc = group_user_data(f->spec);
	assert_non_null(strstr(doc, "users:\n  - default\n  - name: \"alice\"\n"));
	assert_non_null(strstr(doc, "    ssh_authorized_keys:\n      - \"" ED25519 "\"\n"));
	free(doc);
}

#define hosts_test(fn) cmocka_unit_test_setup_teardown(fn, hosts_setup, hosts_teardown)

/* A node's values as a hostile cloud or image could give them: each refused, naming it. */
static void assert_config_refused(struct hosts_fx *h, const char *msg, const char *hint)
{
	struct kiln_error err = {0};

	assert_null(access_ssh_config(h->hosts, h->e.spec, NULL, &err));
	assert_string_equal(err.msg, msg);
	assert_string_equal(err.hint, hint);
}

static void test_ssh_config_refuses_what_ssh_would_read_otherwise(void **state)
{
	struct hosts_fx *h = *state;
	struct kiln_error err = {0};
	json_t *login;
	char *text;

	h->hosts = access_hosts(&h->e, h->res, NULL, &err);
	login = json_array_get(json_object_get(h->hosts, "nodes"), 0);
	json_object_set_new(login, "public_ip", json_string("203.0.113.7\n  ProxyCommand sh"));
	assert_config_refused(h,
			      "kiln-c-ws-login-0's address '203.0.113.7\n  ProxyCommand sh' is "
			      "not an IP address or a DNS name",
			      "kiln hosts --refresh shows what the cloud reports for it; kiln "
			      "writes no ssh configuration for such an address");
	json_object_set_new(login, "public_ip", json_string("-oProxyCommand=x"));
	assert_config_refused(h,
			      "kiln-c-ws-login-0's address '-oProxyCommand=x' is not an IP "
			      "address or a DNS name",
			      "kiln hosts --refresh shows what the cloud reports for it; kiln "
			      "writes no ssh configuration for such an address");
	json_object_set_new(login, "public_ip", json_string("login.example.org"));
	json_object_set_new(login, "user", json_string("ubuntu\"x"));
	assert_config_refused(h,
			      "kiln-c-ws-login-0's login user 'ubuntu\"x' has a space, a control "
			      "character or '\"'",
			      "set access.user in the spec to the image's login name");
	json_object_set_new(login, "user", json_string("alice"));
	h->base.spec->access.keys[0].identity = xstrdup("/home/a/id\"\n  Include /x");
	assert_config_refused(h,
			      "the key file '/home/a/id\"\n  Include /x' has a control character "
			      "or '\"' in its name, which ssh_config cannot quote",
			      "rename the key pair (and its .pub) and name the new file in "
			      "access.ssh_keys");
	free(h->base.spec->access.keys[0].identity);
	h->base.spec->access.keys[0].identity = xstrdup("/home/a b/id");
	text = access_ssh_config(h->hosts, h->e.spec, NULL, &err);
	assert_non_null(text);
	assert_non_null(strstr(text, "Host kiln-c-ws-login-0\n"
				     "  HostName login.example.org\n"
				     "  User alice\n"
				     "  IdentityFile \"/home/a b/id\"\n"));
	free(text);
}

/* The temporary configuration's text in buf; the file removed, path freed. */
static void slurp_config(char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
	unlink(path);
	free(path);
}

static void test_ssh_config_file_ends_with_batch_mode_for_every_host(void **state)
{
	struct hosts_fx *h = *state;
	struct kiln_error err = {0};
	char *path = NULL, buf[4096];

	h->hosts = access_hosts(&h->e, h->res, NULL, &err);
	setenv("TMPDIR", "/tmp/a b;touch x", 1);
	assert_int_equal(access_ssh_config_file(h->hosts, h->e.spec, NULL, 5, &path, &err), 0);
	unsetenv("TMPDIR");
	assert_int_equal(strncmp(path, "/tmp/kiln-ssh-config.", 21), 0);
	slurp_config(path, buf, sizeof(buf));
	assert_non_null(strstr(buf, "  StrictHostKeyChecking accept-new\n"
				    "\n"
				    "# kiln-c-ws-trainers-1 (i-3): no address yet\n"
				    "\n"
				    "Host *\n"
				    "  BatchMode yes\n"
				    "  ConnectTimeout 5\n"));
	assert_int_equal(access_ssh_config_file(h->hosts, h->e.spec, NULL, -1, &path, &err), 0);
	slurp_config(path, buf, sizeof(buf));
	assert_null(strstr(buf, "Host *"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ed25519_key_parses_with_ssh_keygens_fingerprint),
	    cmocka_unit_test(test_rsa_key_size_is_read_from_its_modulus),
	    cmocka_unit_test(test_dsa_key_is_weak_and_ecdsa_is_not),
	    cmocka_unit_test(test_malformed_keys_are_refused_with_the_cause),
	    cmocka_unit_test(test_private_keys_are_told_from_their_first_line),
	    kiln_test(test_inline_keys_and_user_are_loaded),
	    kiln_test(test_malformed_inline_key_is_reported_at_its_line),
	    kiln_test(test_key_file_is_read_and_names_its_private_key),
	    kiln_test(test_private_key_file_is_refused),
	    kiln_test(test_missing_key_file_is_refused),
	    kiln_test(test_bad_user_and_unknown_key_are_refused),
	    kiln_test(test_user_data_authorizes_the_keys_for_the_default_user),
	    kiln_test(test_user_data_makes_access_user_with_the_keys),
	    hosts_test(test_hosts_name_every_node_and_jump_through_the_login_node),
	    hosts_test(test_ssh_config_has_a_block_per_addressed_node),
	    hosts_test(test_test_endpoint_sends_every_node_to_one_sshd),
	    hosts_test(test_find_names_the_groups_and_indexes_there_are),
	    hosts_test(test_private_groups_without_a_public_one_are_unreachable),
	    hosts_test(test_ssh_config_refuses_what_ssh_would_read_otherwise),
	    hosts_test(test_ssh_config_file_ends_with_batch_mode_for_every_host),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
