/* See json_scan.h. */
#include "json_scan.h"

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
