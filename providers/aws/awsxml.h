/*
 * awsxml.h - AWS XML responses as jansson values.
 *
 * EC2 and IAM/STS (query protocol) and S3 (REST) answer in XML. This module
 * turns such a document into plain JSON once, through libxml2, so that the
 * provider code reads every response the same way; and it offers accessors
 * that hide the places where XML does not say what shape a value has (one
 * child or a list of one, an empty list or an empty string). It knows no
 * service's operations and keeps no state.
 *
 * Every response is hostile: no DTD, no entities beyond the predefined five,
 * no network access, at most AWSXML_MAX_DEPTH nested elements.
 */
#ifndef KILN_AWSXML_H
#define KILN_AWSXML_H

#include <stddef.h>
#include <jansson.h>

#include "util.h"

/* The deepest nesting of elements accepted (the root element is depth 1). */
#define AWSXML_MAX_DEPTH 64
/*
 * A backstop for callers that forgot to bound the body they read; libxml2
 * also takes the length as an int. The real limit is the caller's.
 */
#define AWSXML_MAX_SIZE ((size_t)64 << 20)

/*
 * Parse an AWS XML document (EC2 and IAM/STS query responses, S3 REST
 * responses) of len bytes; xml need not be NUL-terminated. Returns a new
 * object {ROOT_ELEMENT_NAME: value}, where value is:
 *  - for an element with only text, or empty: a string ("" when empty);
 *  - for an element with child elements: an object of its children, a name
 *    that repeats giving an array of the values in document order;
 *  - for an element whose children are all "item" (EC2) or all "member"
 *    (IAM): an array of their values, even when there is just one.
 * Attributes and namespaces are dropped, whitespace-only text between
 * elements is ignored, other text is kept as is (never trimmed).
 * On failure returns NULL and err says
 * "malformed XML from SERVICE: <cause>, line N".
 */
json_t *awsxml_parse(const char *xml, size_t len, const char *service, struct kiln_error *err);

/*
 * The value at a dotted path ("DescribeVpcsResponse.vpcSet"), borrowed, or
 * NULL when absent. A segment of digits indexes an array; index 0 of a value
 * that is not an array is the value itself, since a child that appeared once
 * is a list of one, except for "", an empty list. A NULL or "" path is v.
 */
json_t *awsxml_get(json_t *v, const char *path);

/* The string at path, or NULL when absent or not a string. */
const char *awsxml_str(json_t *v, const char *path);

/*
 * Always a new array (the caller decrefs): the array at path (a shallow
 * copy), a single object or non-empty string wrapped in one, and [] for ""
 * (an empty list element) or an absent path.
 */
json_t *awsxml_list(json_t *v, const char *path);

/*
 * The tags at path as a new object {"key": "value"}: an EC2 tagSet
 * [{key, value}], IAM Tags [{Key, Value}], or S3's TagSet (whose Tag
 * children are the entries; a path ending in TagSet.Tag works too).
 * Entries without a key are skipped; a missing value is "".
 */
json_t *awsxml_tags(json_t *v, const char *path);

/*
 * A copy of n bytes of response text fit for an error message: control
 * characters become spaces, bytes that are not UTF-8 become '?', and the
 * result is cut at a character boundary to at most cap bytes (cap >= 4),
 * ending in "..." when cut. Caller frees.
 */
char *awsxml_sanitize(const char *s, size_t n, size_t cap);

#endif
