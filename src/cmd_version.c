/*
 * cmd_version.c - `kiln version`: kiln's version, the spec format it reads and
 * the versions of the libraries it was built with (what a bug report needs).
 */
#include <curl/curl.h>
#include <git2.h>
#include <jansson.h>
#include <libxml/xmlversion.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <yaml.h>

#include "cmds.h"
#include "util.h"
#include "jsonw.h"

enum {
	OPT_JSON = 1,
};

static const struct cli_option options[] = {
    {"json", 0, false, OPT_JSON, NULL, "print a JSON object"},
};

const struct cmd_info cmd_version_info = {
    .name = "version",
    .usage = "[--json]",
    .summary = "print the version of kiln and of the libraries it uses",
    .description = "Print kiln's version, the spec format it reads and the versions of\n"
		   "libcurl, OpenSSL, jansson, libgit2, libyaml and libxml2 it runs with.",
    .options = options,
    .noptions = sizeof(options) / sizeof(options[0]),
    .see_also = "kiln(1)",
};

int cmd_version(int argc, char **argv, struct cli *cli)
{
	struct cli_parser p;
	bool json = false;
	int c, major, minor, rev, ret = KILN_EXIT_OK;
	char git[32];
	json_t *o;

	cli_parser_init(&p, cli, &cmd_version_info, argc, argv);
	while ((c = cli_next(&p)) != CLI_DONE) {
		if (c == CLI_EXIT) {
			ret = p.exit_code;
			goto out;
		}
		if (c == OPT_JSON)
			json = true;
	}
	if (p.optind < argc) {
		cli_error(cli, NULL, "takes no arguments, got '%s'", argv[p.optind]);
		ret = KILN_EXIT_ERROR;
		goto out;
	}
	git_libgit2_version(&major, &minor, &rev);
	snprintf(git, sizeof(git), "%d.%d.%d", major, minor, rev);
	o = json_pack("{s:s, s:i, s:{s:s, s:s, s:s, s:s, s:s, s:s}}", "version", KILN_VERSION,
		      "spec_format", KILN_SPEC_FORMAT, "libraries", "libcurl",
		      curl_version_info(CURLVERSION_NOW)->version, "openssl",
		      OpenSSL_version(OPENSSL_VERSION), "jansson", JANSSON_VERSION, "libgit2", git,
		      "libyaml", yaml_get_version_string(), "libxml2", LIBXML_DOTTED_VERSION);
	if (json) {
		jsonw_dumpf(o, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
	} else {
		const char *k;
		json_t *v;

		printf("kiln %s (spec format %d)\n", KILN_VERSION, KILN_SPEC_FORMAT);
		json_object_foreach(json_object_get(o, "libraries"), k, v)
		    printf("  %-8s %s\n", k, json_string_value(v));
	}
	json_decref(o);
out:
	cli_parser_release(&p);
	return ret;
}
