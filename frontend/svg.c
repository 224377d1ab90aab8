/* topoplace command — the SVG writer: a handful of elements written as
 * text, XML-escaped, with coordinates rounded to a tenth of a pixel so that
 * the same picture always has the same bytes. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "svg.h"

/* A coordinate: one decimal, no "-0", no trailing ".0". */
static void num(FILE *f, double v)
{
	if (!isfinite(v))
		v = 0;
	long t = lround(v * 10);
	if (t < 0) {
		fputc('-', f);
		t = -t;
	}
	if (t % 10)
		fprintf(f, "%ld.%ld", t / 10, t % 10);
	else
		fprintf(f, "%ld", t / 10);
}

static void colour(FILE *f, const char *attr, uint32_t c)
{
	if (c == SVG_NONE)
		fprintf(f, " %s=\"none\"", attr);
	else
		fprintf(f, " %s=\"#%06x\"", attr, (unsigned)(c & 0xffffffu));
}

static void attr_num(FILE *f, const char *attr, double v)
{
	fprintf(f, " %s=\"", attr);
	num(f, v);
	fputc('"', f);
}

/* The length of the UTF-8 sequence starting at s (1..4), or 0 when it is
 * not a valid one (overlong forms and surrogates included). */
static int utf8_len(const unsigned char *s)
{
	unsigned c = s[0];
	int n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
	if (!n)
		return 0;
	for (int i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if (n == 3 && ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0)))
		return 0;
	if (n == 4 && ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90)))
		return 0;
	return n;
}

void svg_escape(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	while (*p) {
		unsigned c = *p;
		int n;
		switch (c) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			if (c < 0x20 || c == 0x7f) {
				fputc('?', f);
			} else if (c < 0x80) {
				fputc((int)c, f);
			} else if ((n = utf8_len(p)) > 0) {
				fwrite(p, 1, (size_t)n, f);
				p += n;
				continue;
			} else {
				fputc('?', f);
			}
		}
		p++;
	}
}

void svg_begin(FILE *f, double w, double h, const char *title)
{
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\"", f);
	attr_num(f, "width", w);
	attr_num(f, "height", h);
	fputs(" viewBox=\"0 0 ", f);
	num(f, w);
	fputc(' ', f);
	num(f, h);
	fputs("\" font-family=\"DejaVu Sans, Verdana, sans-serif\">\n<title>", f);
	svg_escape(f, title);
	fputs("</title>\n", f);
	svg_rect(f, 0, 0, w, h, (struct svg_paint){ SVG_BG, SVG_NONE, 0 },
		 NULL);
}

void svg_end(FILE *f)
{
	fputs("</svg>\n", f);
}

void svg_group(FILE *f, const char *id, double x, double y)
{
	fputs("<g", f);
	if (id) {
		fputs(" id=\"", f);
		svg_escape(f, id);
		fputc('"', f);
	}
	if (x != 0 || y != 0) {
		fputs(" transform=\"translate(", f);
		num(f, x);
		fputc(' ', f);
		num(f, y);
		fputs(")\"", f);
	}
	fputs(">\n", f);
}

void svg_group_end(FILE *f)
{
	fputs("</g>\n", f);
}

static void close_elem(FILE *f, const char *name, const char *tip)
{
	if (!tip) {
		fputs("/>\n", f);
		return;
	}
	fputs("><title>", f);
	svg_escape(f, tip);
	fprintf(f, "</title></%s>\n", name);
}

/* The fill and stroke attributes of a shape. */
static void paint_attrs(FILE *f, struct svg_paint p)
{
	colour(f, "fill", p.fill);
	if (p.stroke != SVG_NONE) {
		colour(f, "stroke", p.stroke);
		attr_num(f, "stroke-width", p.stroke_w);
	}
}

void svg_rect(FILE *f, double x, double y, double w, double h,
	      struct svg_paint paint, const char *tip)
{
	fputs("<rect", f);
	attr_num(f, "x", x);
	attr_num(f, "y", y);
	attr_num(f, "width", w);
	attr_num(f, "height", h);
	paint_attrs(f, paint);
	close_elem(f, "rect", tip);
}

void svg_line(FILE *f, double x1, double y1, double x2, double y2,
	      struct svg_pen pen, const char *tip)
{
	fputs("<line", f);
	attr_num(f, "x1", x1);
	attr_num(f, "y1", y1);
	attr_num(f, "x2", x2);
	attr_num(f, "y2", y2);
	colour(f, "stroke", pen.colour);
	attr_num(f, "stroke-width", pen.width);
	close_elem(f, "line", tip);
}

void svg_circle(FILE *f, double cx, double cy, double r,
		struct svg_paint paint)
{
	fputs("<circle", f);
	attr_num(f, "cx", cx);
	attr_num(f, "cy", cy);
	attr_num(f, "r", r);
	paint_attrs(f, paint);
	fputs("/>\n", f);
}

void svg_curve(FILE *f, struct svg_pt a, struct svg_pt c, struct svg_pt b,
	       struct svg_pen pen, const char *tip)
{
	fputs("<path d=\"M", f);
	num(f, a.x);
	fputc(' ', f);
	num(f, a.y);
	fputs(" Q", f);
	num(f, c.x);
	fputc(' ', f);
	num(f, c.y);
	fputc(' ', f);
	num(f, b.x);
	fputc(' ', f);
	num(f, b.y);
	fputc('"', f);
	colour(f, "fill", SVG_NONE);
	colour(f, "stroke", pen.colour);
	attr_num(f, "stroke-width", pen.width);
	close_elem(f, "path", tip);
}

void svg_text(FILE *f, double x, double y, struct svg_font font,
	      const char *fmt, ...)
{
	double size = font.size;
	enum svg_anchor a = font.anchor;
	bool bold = font.bold;
	uint32_t c = font.colour;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	static const char *const anchors[] = { "start", "middle", "end" };
	fputs("<text", f);
	attr_num(f, "x", x);
	attr_num(f, "y", y);
	attr_num(f, "font-size", size);
	if (a != SVG_START)
		fprintf(f, " text-anchor=\"%s\"", anchors[a]);
	if (bold)
		fputs(" font-weight=\"bold\"", f);
	colour(f, "fill", c);
	fputc('>', f);
	svg_escape(f, buf);
	fputs("</text>\n", f);
}

/* ---- colour scales ---- */

struct stop {
	double t;
	uint32_t c;
};

static uint32_t lerp_stops(const struct stop *s, int n, double t)
{
	if (!(t > 0))
		t = 0;
	if (t > 1)
		t = 1;
	int i = 0;
	while (i < n - 2 && t > s[i + 1].t)
		i++;
	double u = (t - s[i].t) / (s[i + 1].t - s[i].t);
	uint32_t out = 0;
	for (int sh = 16; sh >= 0; sh -= 8) {
		double a = (s[i].c >> sh) & 0xff, b = (s[i + 1].c >> sh) & 0xff;
		out |= (uint32_t)lround(a + (b - a) * u) << sh;
	}
	return out;
}

uint32_t svg_heat(double frac)
{
	/* ColorBrewer's YlOrRd: light loads stay visible on white */
	static const struct stop s[] = {
		{ 0.0, 0xfed976 }, { 0.25, 0xfeb24c }, { 0.5, 0xfd8d3c },
		{ 0.75, 0xe31a1c }, { 1.0, 0x800026 },
	};
	if (!(frac > 0))
		return SVG_LINE;
	return lerp_stops(s, 5, frac);
}

uint32_t svg_ramp(double t)
{
	/* viridis, five stops */
	static const struct stop s[] = {
		{ 0.0, 0x440154 }, { 0.25, 0x3b528b }, { 0.5, 0x21918c },
		{ 0.75, 0x5ec962 }, { 1.0, 0xfde725 },
	};
	return lerp_stops(s, 5, t);
}

uint32_t svg_category(int i)
{
	/* ColorBrewer's Paired, darker and lighter alternating */
	static const uint32_t c[12] = {
		0x1f78b4, 0x33a02c, 0xe31a1c, 0xff7f00, 0x6a3d9a, 0xb15928,
		0xa6cee3, 0xb2df8a, 0xfb9a99, 0xfdbf6f, 0xcab2d6, 0xffff99,
	};
	return c[(i % 12 + 12) % 12];
}

uint32_t svg_ink_on(uint32_t bg)
{
	double l = 0.299 * ((bg >> 16) & 0xff) + 0.587 * ((bg >> 8) & 0xff) +
		   0.114 * (bg & 0xff);
	return l < 128 ? 0xffffffu : SVG_INK;
}

void svg_amount(char *buf, size_t len, double v, bool bytes)
{
	if (!bytes) {
		snprintf(buf, len, "%.3g", v);
		return;
	}
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB",
					    "PiB", "EiB" };
	int u = 0;
	while (v >= 1024 && u < 6) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.3g %s" : "%.0f %s", v, unit[u]);
}

void svg_heat_legend(FILE *f, double x, double y, double w, double max,
		     bool bytes, const char *caption)
{
	const int steps = 20;
	svg_text(f, x, y - 4,
		 (struct svg_font){ 11, SVG_START, false, SVG_INK }, "%s",
		 caption);
	for (int i = 0; i < steps; i++)
		svg_rect(f, x + w * i / steps, y, w / steps + 0.3, 10,
			 (struct svg_paint){ svg_heat((i + 1.0) / steps),
					     SVG_NONE, 0 },
			 NULL);
	svg_rect(f, x, y, w, 10, (struct svg_paint){ SVG_NONE, SVG_LINE, 0.5 },
		 NULL);
	char a[32];
	svg_amount(a, sizeof a, max, bytes);
	svg_text(f, x, y + 22,
		 (struct svg_font){ 10, SVG_START, false, SVG_INK }, "%s",
		 bytes ? "0 B" : "0");
	svg_text(f, x + w, y + 22,
		 (struct svg_font){ 10, SVG_END, false, SVG_INK }, "%s", a);
}
