/*
 * aws_access.c - who logs in to an aws node: the default user of its AMI,
 * for `kiln ssh`, `kiln ssh-config` and the plan's note when the spec's
 * access.user names none.
 *
 * The image is asked for once (DescribeImages) and its name and
 * description matched against the distributions whose images document a
 * default user: Canonical's Ubuntu images (and the Deep Learning AMIs built
 * on them) log in as ubuntu, Amazon Linux as ec2-user, Debian's as admin,
 * Rocky Linux's as rocky. Anything else is said to be unrecognised, with the
 * fix (set access.user), rather than guessed silently.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "aws_int.h"
#include "awsxml.h"

static const struct {
	const char *word; /* matched case-insensitively in the image's name or description */
	const char *user;
	const char *distro;
} image_users[] = {
    {"ubuntu", "ubuntu", "an Ubuntu image, whose default user is ubuntu"},
    {"amazon linux", "ec2-user", "an Amazon Linux image, whose default user is ec2-user"},
    {"amzn", "ec2-user", "an Amazon Linux image, whose default user is ec2-user"},
    {"al2023", "ec2-user", "an Amazon Linux image, whose default user is ec2-user"},
    {"debian", "admin", "a Debian image, whose default user is admin"},
    {"rocky", "rocky", "a Rocky Linux image, whose default user is rocky"},
};

static bool has_word(const char *s, const char *word)
{
	size_t n = strlen(word);

	for (; s && *s; s++)
		if (strncasecmp(s, word, n) == 0)
			return true;
	return false;
}

static int no_image(struct prov_ctx *ctx, const char *image, struct kiln_error *err)
{
	memset(err, 0, sizeof(*err));
	kiln_error_set(err,
		       "aws: image %s does not exist in region %s, so its default user cannot be "
		       "told",
		       image, ctx->region);
	kiln_error_hint(err, "check the group's image, or set access.user");
	return PROV_ERROR;
}

int aws_login_user(struct prov_ctx *ctx, const char *image, char **user, char **why,
		   struct kiln_error *err)
{
	struct aws_params p = {{0}};
	json_t *resp = NULL, *items;
	const char *name, *desc;
	size_t i;
	int rc;

	if (!image) {
		kiln_error_set(err, "aws: a node group without an image has no default user");
		kiln_error_hint(err, "set access.user");
		return PROV_ERROR;
	}
	aws_param(&p, "ImageId.1", image);
	rc = aws_query(ctx, AWS_EC2, "DescribeImages", &p, &resp, err);
	aws_params_release(&p);
	if (rc == PROV_NOTFOUND || (rc == PROV_ERROR && strstr(err->msg, "InvalidAMIID")))
		return no_image(ctx, image, err);
	if (rc != PROV_OK)
		return rc;
	items = awsxml_list(resp, "imagesSet");
	name = awsxml_str(json_array_get(items, 0), "name");
	desc = awsxml_str(json_array_get(items, 0), "description");
	for (i = 0; i < ARRAY_SIZE(image_users); i++)
		if (has_word(name, image_users[i].word) || has_word(desc, image_users[i].word))
			break;
	if (i < ARRAY_SIZE(image_users)) {
		*user = xstrdup(image_users[i].user);
		*why = xasprintf("image %s ('%s') is %s", image, name ? name : "no name",
				 image_users[i].distro);
		rc = PROV_OK;
	} else if (!json_array_size(items)) {
		rc = no_image(ctx, image, err);
	} else {
		kiln_error_set(err,
			       "aws: image %s ('%s') is not one whose default user kiln knows "
			       "(Ubuntu, Amazon Linux, Debian, Rocky Linux)",
			       image, name ? name : "no name");
		kiln_error_hint(err, "set access.user to the user its documentation names");
		rc = PROV_ERROR;
	}
	json_decref(items);
	json_decref(resp);
	return rc;
}
