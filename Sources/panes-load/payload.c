/* See payload.h. */
#include "payload.h"

#include <stdio.h>
#include <string.h>

#include "client.h"
#include "clock.h"
#include "json_scan.h"
#include "load.h"
#include "workload.h"

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
deliver_seq(struct load *L, struct client *c, const unsigned char *buf, size_t len, int binary)
{
	long long seq;

	if (binary || c->role != ROLE_OBSERVER || !L->work->delivered)
		return;
	seq = json_int((const char *)buf, len, "seq", -1);
	if (seq > 0)
		L->work->delivered(L, c, (uint32_t)seq, now_ns());
}
