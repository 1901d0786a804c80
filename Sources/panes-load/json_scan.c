/*
 * Just enough JSON scanning to read the servers' replies without a parser:
 * find a key, skip whitespace and the colon, read an integer or a string.
 * Every read is bounded by `len`: received buffers are not NUL-terminated.
 * Good for the flat, known messages of the benchmark; not a general parser.
 */
#include "load.h"

#include <ctype.h>
#include <string.h>

const char *
json_value(const char *buf, size_t len, const char *key)
{
	size_t klen = strlen(key);
	const char *end = buf + len, *p = buf;

	while (p < end) {
		const char *q = memchr(p, '"', (size_t)(end - p));
		if (!q || q + klen + 2 > end)
			return NULL;
		if (!memcmp(q + 1, key, klen) && q[klen + 1] == '"') {
			const char *v = q + klen + 2;
			while (v < end && isspace((unsigned char)*v))
				v++;
			if (v < end && *v == ':') {
				v++;
				while (v < end && isspace((unsigned char)*v))
					v++;
				return v < end ? v : NULL;
			}
		}
		p = q + 1;
	}
	return NULL;
}

long long
json_int(const char *buf, size_t len, const char *key, long long fallback)
{
	const char *v = json_value(buf, len, key), *end = buf + len;
	long long n = 0;
	int neg = 0, digits = 0;

	if (!v)
		return fallback;
	if (*v == '-') {
		neg = 1;
		v++;
	}
	for (; v < end && *v >= '0' && *v <= '9'; v++, digits++)
		n = n * 10 + (*v - '0');
	return digits ? (neg ? -n : n) : fallback;
}

size_t
json_copy_string(const char *buf, size_t len, const char *key, char *out, size_t cap)
{
	const char *v = json_value(buf, len, key), *end = buf + len;
	size_t n = 0;

	if (!cap)
		return 0;
	if (v && *v == '"') {
		for (v++; v < end && *v != '"' && n + 1 < cap; v++) {
			if (*v == '\\' && v + 1 < end)
				v++;
			out[n++] = *v;
		}
	}
	out[n] = 0;
	return n;
}

size_t
make_payload(char *out, size_t cap, uint32_t seq, int size)
{
	int bare = snprintf(out, cap, "{\"seq\":%u,\"pad\":\"\"}", seq);
	int pad = size - bare;

	if (pad <= 0 || (size_t)size >= cap)
		return (size_t)bare;
	int n = snprintf(out, cap, "{\"seq\":%u,\"pad\":\"", seq);
	memset(out + n, 'x', (size_t)pad);
	memcpy(out + n + pad, "\"}", 3);
	return (size_t)size;
}

void
deliver_seq(struct client *c, const unsigned char *buf, size_t len, int binary)
{
	long long seq;

	if (binary || c->role != ROLE_OBSERVER || !g.work->delivered)
		return;
	seq = json_int((const char *)buf, len, "seq", -1);
	if (seq > 0)
		g.work->delivered(c, (uint32_t)seq, now_ns());
}
