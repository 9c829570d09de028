/*
 * arn_aws.h - the grammar of an ARN, the resource of a role's allow:
 * statement, which the aws provider and sim (a model of AWS) both name in
 * their provider table: a spec's statements are checked against it while
 * it loads, and audit asks it which resources mean every resource.
 */
#ifndef KILN_ARN_AWS_H
#define KILN_ARN_AWS_H

#include "provider.h"

extern const struct spec_grammar arn_aws_grammar;

#endif
