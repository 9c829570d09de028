/*
 * creds.h - where kiln's AWS provider finds its credentials, region and
 * endpoints.
 *
 * Reads the environment and the AWS CLI's shared files the way the AWS CLI
 * does, for the plain cases only: static keys, with or without a session
 * token. Profiles that assume a role, use SSO or run a credential_process
 * are not resolved here; the error says how to export their keys instead.
 * Nothing here talks to the network.
 */
#ifndef KILN_AWS_CREDS_H
#define KILN_AWS_CREDS_H

#include <stdbool.h>

#include "aws/sigv4.h"
#include "util.h"

/*
 * AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN; else the profile
 * AWS_PROFILE (else "default") in AWS_SHARED_CREDENTIALS_FILE (else
 * ~/.aws/credentials, HOME from the environment), then in AWS_CONFIG_FILE
 * (else ~/.aws/config, where the section is "[profile NAME]" except
 * "[default]"). An empty variable counts as unset. Only one of the two
 * environment keys set, or a profile with only one of the two keys, is an
 * error naming what is missing. When nothing is found, the error lists every
 * place looked, in order, and has a hint. 0, or -1 with err set and *out
 * zeroed; release *out with aws_creds_release.
 */
int aws_creds_load(struct aws_creds *out, struct kiln_error *err);

/*
 * spec_region when non-NULL and non-empty, else AWS_REGION, else
 * AWS_DEFAULT_REGION, else "region" of the profile in the config file.
 * *out malloc'd; -1 with an error listing where it looked.
 */
int aws_region_resolve(const char *spec_region, char **out, struct kiln_error *err);

/*
 * The endpoint base URL for a service id ("ec2", "s3", "iam", "fsx", "efs",
 * "sts"): AWS_ENDPOINT_URL_<SERVICE> (upper case), else AWS_ENDPOINT_URL, else
 * the public one (https://ec2.REGION.amazonaws.com, https://iam.amazonaws.com,
 * https://elasticfilesystem.REGION.amazonaws.com, ...). Trailing '/' dropped.
 * *custom (when not NULL) says it came from the environment. Malloc'd; NULL
 * for an unknown service, or a regional service with no region and no
 * override.
 */
char *aws_endpoint(const char *service, const char *region, bool *custom);

/* The SigV4 signing name of a service id ("efs" signs as "elasticfilesystem"), or NULL. */
const char *aws_signing_name(const char *service);

/* The region to sign in: IAM is global and always signs in us-east-1. */
const char *aws_signing_region(const char *service, const char *region);

#endif
