/* topoplace — the hwloc XML checker's scanner: tags, attributes and
 * character references read with bounds (no recursion; names, values and
 * nesting bounded), comments, processing instructions and a DOCTYPE
 * skipped, each error one line with the line number. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "node/node_internal.h"
#include "node/node_xml.h"

__attribute__((format(printf, 2, 3)))
int tp__xml_err(struct xp *x, const char *fmt, ...)
{
	char msg[TP_ERROR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return tp_error_set(x->err, TP_EINVAL, "%s: hwloc XML line %d: %s", x->what,
			    x->line, msg);
}

/* ---- the scanner ---- */

void tp__xml_advance(struct xp *x, size_t n)
{
	for (size_t i = 0; i < n && x->p < x->end; i++, x->p++)
		if (*x->p == '\n')
			x->line++;
}

static void skip_ws(struct xp *x)
{
	while (x->p < x->end && (*x->p == ' ' || *x->p == '\t' || *x->p == '\r' ||
				 *x->p == '\n'))
		tp__xml_advance(x, 1);
}

static bool at(const struct xp *x, const char *lit)
{
	size_t n = strlen(lit);
	return (size_t)(x->end - x->p) >= n && !memcmp(x->p, lit, n);
}

/* Skip up to and past the literal end; error when it never comes. */
static int skip_past(struct xp *x, const char *endlit, const char *what)
{
	size_t n = strlen(endlit);
	while (x->p < x->end) {
		if (at(x, endlit)) {
			tp__xml_advance(x, n);
			return 0;
		}
		tp__xml_advance(x, 1);
	}
	return tp__xml_err(x, "unterminated %s", what);
}

static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.' ||
	       c == ':';
}

static int read_name(struct xp *x, char *out)
{
	size_t n = 0;
	while (x->p < x->end && name_char(*x->p)) {
		if (n == MAX_NAME)
			return tp__xml_err(x, "name longer than %d characters", MAX_NAME);
		out[n++] = *x->p;
		tp__xml_advance(x, 1);
	}
	out[n] = '\0';
	return n ? 0 : tp__xml_err(x, "expected a name");
}

/* Decode one entity at x->p (after '&') into *c. */
static int entity(struct xp *x, char *c)
{
	static const struct { const char *n; char c; } ents[] = {
		{ "amp;", '&' }, { "lt;", '<' }, { "gt;", '>' },
		{ "quot;", '"' }, { "apos;", '\'' },
	};
	for (size_t i = 0; i < sizeof ents / sizeof *ents; i++)
		if (at(x, ents[i].n)) {
			*c = ents[i].c;
			tp__xml_advance(x, strlen(ents[i].n));
			return 0;
		}
	if (at(x, "#")) {
		tp__xml_advance(x, 1);
		bool hex = at(x, "x");
		if (hex)
			tp__xml_advance(x, 1);
		unsigned v = 0;
		int nd = 0;
		while (x->p < x->end && nd < 6 &&
		       (hex ? isxdigit((unsigned char)*x->p) : isdigit((unsigned char)*x->p))) {
			char d = *x->p;
			v = v * (hex ? 16u : 10u) +
			    (unsigned)(isdigit((unsigned char)d) ? d - '0'
							       : (tolower((unsigned char)d) - 'a' + 10));
			nd++;
			tp__xml_advance(x, 1);
		}
		if (nd && at(x, ";") && v >= 0x20 && v < 0x7f) {
			tp__xml_advance(x, 1);
			*c = (char)v;
			return 0;
		}
	}
	return tp__xml_err(x, "bad character reference in an attribute value");
}

/* Attributes up to '>' or "/>"; *empty says which. */
static int read_attrs(struct xp *x, bool *empty)
{
	x->nattr = 0;
	for (;;) {
		skip_ws(x);
		if (x->p >= x->end)
			return tp__xml_err(x, "unterminated element");
		if (at(x, "/>")) {
			tp__xml_advance(x, 2);
			*empty = true;
			return 0;
		}
		if (at(x, ">")) {
			tp__xml_advance(x, 1);
			*empty = false;
			return 0;
		}
		if (x->nattr == MAX_ATTRS)
			return tp__xml_err(x, "more than %d attributes", MAX_ATTRS);
		struct xattr *a = &x->attr[x->nattr];
		int rc = read_name(x, a->name);
		if (rc)
			return rc;
		for (int i = 0; i < x->nattr; i++)
			if (!strcmp(x->attr[i].name, a->name))
				return tp__xml_err(x, "attribute %s given twice", a->name);
		skip_ws(x);
		if (!at(x, "="))
			return tp__xml_err(x, "attribute %s without a value", a->name);
		tp__xml_advance(x, 1);
		skip_ws(x);
		if (x->p >= x->end || (*x->p != '"' && *x->p != '\''))
			return tp__xml_err(x, "attribute %s: value not quoted", a->name);
		char q = *x->p;
		tp__xml_advance(x, 1);
		char *v = x->vbuf[x->nattr];
		size_t n = 0;
		for (;;) {
			if (x->p >= x->end)
				return tp__xml_err(x, "attribute %s: unterminated value", a->name);
			char c = *x->p;
			if (c == q) {
				tp__xml_advance(x, 1);
				break;
			}
			if (c == '<')
				return tp__xml_err(x, "attribute %s: '<' in a value", a->name);
			tp__xml_advance(x, 1);
			if (c == '&' && (rc = entity(x, &c)))
				return rc;
			if (n == MAX_VALUE)
				return tp__xml_err(x, "attribute %s: value longer than %d characters",
						   a->name, MAX_VALUE);
			v[n++] = c;
		}
		v[n] = '\0';
		a->value = v;
		x->nattr++;
	}
}

const char *tp__xml_attr(const struct xp *x, const char *name)
{
	for (int i = 0; i < x->nattr; i++)
		if (!strcmp(x->attr[i].name, name))
			return x->attr[i].value;
	return NULL;
}


/* The next tag, skipping comments, processing instructions, a DOCTYPE and
 * blank text.  Text other than blanks is an error unless skip_text. */
int tp__xml_next_tag(struct xp *x, enum tok *kind, char *name, bool *empty,
		     bool skip_text)
{
	for (;;) {
		skip_ws(x);
		if (x->p >= x->end) {
			*kind = TK_END;
			return 0;
		}
		int rc;
		if (at(x, "<!--")) {
			if ((rc = skip_past(x, "-->", "comment")))
				return rc;
		} else if (at(x, "<?")) {
			if ((rc = skip_past(x, "?>", "processing instruction")))
				return rc;
		} else if (at(x, "<!DOCTYPE")) {
			const char *q = x->p;
			while (q < x->end && *q != '>' && *q != '[')
				q++;
			if (q < x->end && *q == '[')
				return tp__xml_err(x, "a DOCTYPE with an internal subset");
			if ((rc = skip_past(x, ">", "DOCTYPE")))
				return rc;
		} else if (at(x, "<![CDATA[")) {
			return tp__xml_err(x, "CDATA section");
		} else if (at(x, "</")) {
			tp__xml_advance(x, 2);
			if ((rc = read_name(x, name)))
				return rc;
			skip_ws(x);
			if (!at(x, ">"))
				return tp__xml_err(x, "bad end tag </%s", name);
			tp__xml_advance(x, 1);
			*kind = TK_CLOSE;
			return 0;
		} else if (at(x, "<")) {
			tp__xml_advance(x, 1);
			if ((rc = read_name(x, name)) || (rc = read_attrs(x, empty)))
				return rc;
			*kind = TK_OPEN;
			return 0;
		} else {
			if (!skip_text)
				return tp__xml_err(x, "unexpected text");
			while (x->p < x->end && *x->p != '<')
				tp__xml_advance(x, 1);      /* text of dropped elements */
		}
	}
}

/* Skip the rest of an element whose start tag was just read (its name). */
int tp__xml_skip_element(struct xp *x, const char *name)
{
	char stack[TP__XML_MAX_DEPTH][MAX_NAME + 1];
	int depth = 0;
	snprintf(stack[depth++], sizeof stack[0], "%s", name);
	while (depth > 0) {
		enum tok k;
		char n[MAX_NAME + 1];
		bool empty;
		int rc = tp__xml_next_tag(x, &k, n, &empty, true);
		if (rc)
			return rc;
		if (k == TK_END)
			return tp__xml_err(x, "unterminated element <%s>", stack[depth - 1]);
		if (k == TK_CLOSE) {
			if (strcmp(n, stack[depth - 1]))
				return tp__xml_err(x, "</%s> closes <%s>", n, stack[depth - 1]);
			depth--;
		} else if (!empty) {
			if (depth == TP__XML_MAX_DEPTH)
				return tp__xml_err(x, "elements nested deeper than %d", TP__XML_MAX_DEPTH);
			snprintf(stack[depth++], sizeof stack[0], "%s", n);
		}
	}
	return 0;
}
