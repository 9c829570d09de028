/*
 * awsxml.c - AWS XML responses as jansson values, through libxml2.
 *
 * Owns the libxml2 parser setup for responses: the document is read with
 * the network off and entities left alone, and a guard wrapped around the
 * SAX callbacks stops the parser at the first DOCTYPE (so an entity
 * declaration is never even read) and at the first element nested deeper
 * than AWSXML_MAX_DEPTH, before a tree of it is built. The tree is then
 * turned into JSON by the rules in awsxml.h and freed; nothing of libxml2
 * leaves this file.
 */
#include "awsxml.h"

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/SAX2.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

/* libxml2 2.12 made the error passed to structured handlers const. */
#if LIBXML_VERSION >= 21200
typedef const xmlError awsxml_xml_error;
#else
typedef xmlError awsxml_xml_error;
#endif

/* libxml2's messages can quote the input (names, bytes); keep them short. */
#define MSG_CAP 300

/*
 * What the guard saw while libxml2 parsed. The parser context's _private
 * points here; the original SAX2 element callbacks build the tree.
 */
struct parse_guard {
	startElementNsSAX2Func start;
	endElementNsSAX2Func end;
	int depth;
	const char *refused; /* why the guard stopped the parser, or NULL */
	int refused_line;
	char *first_error; /* libxml2's first fatal error, sanitised */
	int first_error_line;
};

static pthread_once_t xml_once = PTHREAD_ONCE_INIT;

/* libxml2's global state must be set up once, before any two threads parse. */
static void xml_init_once(void)
{
	xmlInitParser();
}

static void guard_refuse(xmlParserCtxtPtr ctxt, const char *why)
{
	struct parse_guard *g = ctxt->_private;

	if (!g->refused) {
		g->refused = why;
		g->refused_line = xmlSAX2GetLineNumber(ctxt);
	}
	xmlStopParser(ctxt);
}

/*
 * Called as soon as "<!DOCTYPE name ..." is read, before the internal
 * subset: stopping here means no entity declaration is ever parsed.
 */
static void guard_internal_subset(void *ctx, const xmlChar *name, const xmlChar *external_id,
				  const xmlChar *system_id)
{
	(void)name;
	(void)external_id;
	(void)system_id;
	guard_refuse(ctx, "document type declarations are refused");
}

static void guard_start(void *ctx, const xmlChar *localname, const xmlChar *prefix,
			const xmlChar *uri, int nb_namespaces, const xmlChar **namespaces,
			int nb_attributes, int nb_defaulted, const xmlChar **attributes)
{
	xmlParserCtxtPtr ctxt = ctx;
	struct parse_guard *g = ctxt->_private;

	if (++g->depth > AWSXML_MAX_DEPTH) {
		guard_refuse(ctxt, "elements nested deeper than 64");
		return;
	}
	if (g->start)
		g->start(ctx, localname, prefix, uri, nb_namespaces, namespaces, nb_attributes,
			 nb_defaulted, attributes);
}

static void guard_end(void *ctx, const xmlChar *localname, const xmlChar *prefix,
		      const xmlChar *uri)
{
	xmlParserCtxtPtr ctxt = ctx;
	struct parse_guard *g = ctxt->_private;

	g->depth--;
	if (g->end)
		g->end(ctx, localname, prefix, uri);
}

/* Keep the first fatal error: later ones are usually its consequences. */
static void guard_error(void *ctx, awsxml_xml_error *e)
{
	xmlParserCtxtPtr ctxt = ctx;
	struct parse_guard *g = ctxt->_private;
	size_t n;

	if (!e || e->level != XML_ERR_FATAL || g->first_error)
		return;
	n = e->message ? strlen(e->message) : 0;
	/* libxml2 ends its messages with a newline. */
	while (n > 0 && (e->message[n - 1] == '\n' || e->message[n - 1] == ' '))
		n--;
	g->first_error = awsxml_sanitize(e->message ? e->message : "", n, MSG_CAP);
	g->first_error_line = e->line;
}

static json_t *element_value(xmlNode *el);

/* All element children are called name ("item" or "member"); there is one at least. */
static bool children_all_named(xmlNode *el, const char *name)
{
	xmlNode *c;
	bool any = false;

	for (c = el->children; c; c = c->next) {
		if (c->type != XML_ELEMENT_NODE)
			continue;
		if (strcmp((const char *)c->name, name) != 0)
			return false;
		any = true;
	}
	return any;
}

static json_t *element_list(xmlNode *el)
{
	json_t *arr = json_array();
	xmlNode *c;

	for (c = el->children; c; c = c->next) {
		json_t *v;

		if (c->type != XML_ELEMENT_NODE)
			continue;
		v = element_value(c);
		if (!v || json_array_append_new(arr, v) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

/*
 * A child name seen a second time turns its member into an array; repeated
 * remembers which members were made so, because a member whose own value is
 * an array (an item list) must not be mistaken for one.
 */
static int object_add(json_t *obj, json_t *repeated, const char *name, json_t *v)
{
	json_t *prev = json_object_get(obj, name);
	json_t *arr;

	if (!prev)
		return json_object_set_new(obj, name, v);
	if (json_object_get(repeated, name))
		return json_array_append_new(prev, v);
	arr = json_array();
	if (json_array_append(arr, prev) < 0 || json_array_append_new(arr, v) < 0) {
		json_decref(arr);
		return -1;
	}
	json_object_set_new(repeated, name, json_true());
	return json_object_set_new(obj, name, arr);
}

static json_t *element_object(xmlNode *el)
{
	json_t *obj = json_object();
	json_t *repeated = json_object();
	xmlNode *c;

	for (c = el->children; c; c = c->next) {
		json_t *v;

		if (c->type != XML_ELEMENT_NODE)
			continue;
		v = element_value(c);
		if (!v || object_add(obj, repeated, (const char *)c->name, v) < 0) {
			json_decref(obj);
			obj = NULL;
			break;
		}
	}
	json_decref(repeated);
	return obj;
}

static json_t *element_text(xmlNode *el)
{
	struct strbuf sb = {0};
	xmlNode *c;
	json_t *s;

	for (c = el->children; c; c = c->next)
		if ((c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) && c->content)
			sb_adds(&sb, (const char *)c->content);
	s = json_stringn(sb.buf ? sb.buf : "", sb.len);
	sb_release(&sb);
	return s;
}

/*
 * The JSON value of one element; NULL only when jansson refuses text (not
 * UTF-8, which libxml2 should have caught). The guard bounded the depth, so
 * the recursion is at most AWSXML_MAX_DEPTH deep.
 */
static json_t *element_value(xmlNode *el)
{
	xmlNode *c;

	for (c = el->children; c; c = c->next)
		if (c->type == XML_ELEMENT_NODE)
			break;
	if (!c)
		return element_text(el);
	if (children_all_named(el, "item") || children_all_named(el, "member"))
		return element_list(el);
	return element_object(el);
}

/* Parse with the guard in place; the document, or NULL with g saying why. */
static xmlDocPtr parse_guarded(const char *xml, size_t len, struct parse_guard *g)
{
	xmlParserCtxtPtr ctxt;
	xmlDocPtr doc = NULL;

	ctxt = xmlCreateMemoryParserCtxt(xml, (int)len);
	if (!ctxt)
		return NULL;
	/* No NOENT: entities stay references; no DTDLOAD; NONET for anything else. */
	xmlCtxtUseOptions(ctxt, XML_PARSE_NONET | XML_PARSE_NOCDATA | XML_PARSE_NOERROR |
				    XML_PARSE_NOWARNING);
	ctxt->_private = g;
	g->start = ctxt->sax->startElementNs;
	g->end = ctxt->sax->endElementNs;
	ctxt->sax->startElementNs = guard_start;
	ctxt->sax->endElementNs = guard_end;
	ctxt->sax->internalSubset = guard_internal_subset;
	ctxt->sax->serror = guard_error;

	xmlParseDocument(ctxt);
	if (ctxt->wellFormed && !g->refused && ctxt->myDoc) {
		doc = ctxt->myDoc;
		ctxt->myDoc = NULL;
	}
	if (ctxt->myDoc)
		xmlFreeDoc(ctxt->myDoc);
	ctxt->myDoc = NULL;
	xmlFreeParserCtxt(ctxt);
	return doc;
}

json_t *awsxml_parse(const char *xml, size_t len, const char *service, struct kiln_error *err)
{
	struct parse_guard g = {0};
	xmlDocPtr doc;
	xmlNode *root;
	json_t *v, *out = NULL;

	if (len == 0) {
		kiln_error_set(err, "malformed XML from %s: Document is empty, line 1", service);
		return NULL;
	}
	if (len > AWSXML_MAX_SIZE || len > INT_MAX) {
		kiln_error_set(
		    err, "malformed XML from %s: %zu bytes is more than the %zu MiB kiln reads",
		    service, len, AWSXML_MAX_SIZE >> 20);
		return NULL;
	}
	pthread_once(&xml_once, xml_init_once);
	doc = parse_guarded(xml, len, &g);
	if (!doc) {
		if (g.refused)
			kiln_error_set(err, "malformed XML from %s: %s, line %d", service,
				       g.refused, g.refused_line);
		else if (g.first_error)
			kiln_error_set(err, "malformed XML from %s: %s, line %d", service,
				       g.first_error, g.first_error_line);
		else
			kiln_error_set(err, "malformed XML from %s: not well-formed, line 1",
				       service);
		goto out;
	}
	root = xmlDocGetRootElement(doc);
	v = root ? element_value(root) : NULL;
	if (!v) {
		kiln_error_set(err, "malformed XML from %s: text that is not UTF-8, line %ld",
			       service, root ? xmlGetLineNo(root) : 1L);
		goto out;
	}
	out = json_object();
	json_object_set_new(out, (const char *)root->name, v);
out:
	if (doc)
		xmlFreeDoc(doc);
	free(g.first_error);
	return out;
}

/* True when seg (of n bytes) is a non-empty run of digits; *idx gets its value. */
static bool segment_index(const char *seg, size_t n, size_t *idx)
{
	size_t i, v = 0;

	if (n == 0 || n > 9)
		return false;
	for (i = 0; i < n; i++) {
		if (seg[i] < '0' || seg[i] > '9')
			return false;
		v = v * 10 + (size_t)(seg[i] - '0');
	}
	*idx = v;
	return true;
}

static json_t *get_segment(json_t *v, const char *seg, size_t n)
{
	size_t idx;
	char *key;
	json_t *r;

	if (segment_index(seg, n, &idx)) {
		if (json_is_array(v))
			return json_array_get(v, idx);
		/* "" is the empty list: it has no first element. */
		if (json_is_string(v) && json_string_length(v) == 0)
			return NULL;
		return idx == 0 ? v : NULL;
	}
	if (!json_is_object(v))
		return NULL;
	key = xstrndup(seg, n);
	r = json_object_get(v, key);
	free(key);
	return r;
}

json_t *awsxml_get(json_t *v, const char *path)
{
	const char *p = path, *dot;

	if (!v || !path || !*path)
		return v;
	for (;;) {
		dot = strchr(p, '.');
		v = get_segment(v, p, dot ? (size_t)(dot - p) : strlen(p));
		if (!v || !dot)
			return v;
		p = dot + 1;
	}
}

const char *awsxml_str(json_t *v, const char *path)
{
	return json_string_value(awsxml_get(v, path));
}

json_t *awsxml_list(json_t *v, const char *path)
{
	json_t *at = awsxml_get(v, path);
	json_t *arr;

	if (json_is_array(at))
		return json_copy(at);
	arr = json_array();
	if (!at || (json_is_string(at) && json_string_length(at) == 0))
		return arr;
	json_array_append(arr, at);
	return arr;
}

static const char *member_str(json_t *o, const char *lower, const char *upper)
{
	const char *s = json_string_value(json_object_get(o, lower));

	return s ? s : json_string_value(json_object_get(o, upper));
}

json_t *awsxml_tags(json_t *v, const char *path)
{
	json_t *at = awsxml_get(v, path);
	json_t *tags = json_object();
	json_t *list, *entry;
	size_t i;

	/* S3's TagSet holds Tag elements, which are not a list by name. */
	if (json_is_object(at) && json_object_get(at, "Tag"))
		list = awsxml_list(at, "Tag");
	else
		list = awsxml_list(at, NULL);
	json_array_foreach(list, i, entry)
	{
		const char *key = member_str(entry, "key", "Key");
		const char *value = member_str(entry, "value", "Value");

		if (key)
			json_object_set_new(tags, key, json_string(value ? value : ""));
	}
	json_decref(list);
	return tags;
}

/* The length of the valid UTF-8 sequence at s (of n bytes), or 0 when invalid. */
static size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t need, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		need = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		need = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		need = 4;
	else
		return 0;
	/* Overlong forms, surrogates and code points above U+10FFFF. */
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (n < need || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < need; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return need;
}

char *awsxml_sanitize(const char *s, size_t n, size_t cap)
{
	const unsigned char *u = (const unsigned char *)s;
	struct strbuf sb = {0};
	size_t i = 0, k, cut;

	while (i < n) {
		if (u[i] < 0x80) {
			sb_addc(&sb, u[i] < 0x20 || u[i] == 0x7f ? ' ' : (char)u[i]);
			i++;
		} else if ((k = utf8_seq_len(u + i, n - i)) == 0) {
			sb_addc(&sb, '?');
			i++;
		} else if (k == 2 && u[i] == 0xc2 && u[i + 1] < 0xa0) {
			/* C1 controls: a terminal acts on them too. */
			sb_addc(&sb, ' ');
			i += k;
		} else {
			sb_add(&sb, s + i, k);
			i += k;
		}
		/* Stop early on a huge input; the cap cuts what is left anyway. */
		if (sb.len > cap)
			break;
	}
	if (sb.len > cap && cap >= 4) {
		cut = cap - 3;
		while (cut > 0 && ((unsigned char)sb.buf[cut] & 0xc0) == 0x80)
			cut--;
		sb.len = cut;
		sb.buf[cut] = '\0';
		sb_adds(&sb, "...");
	}
	return sb_detach(&sb);
}
