/*
 * nchan (nginx): observers are WebSocket subscribers on /sub/CHANNEL; the
 * writer is one keep-alive HTTP/1.1 connection that POSTs each payload to
 * /pub/CHANNEL. Responses come back in order, so the k-th 2xx acknowledges
 * write k. Observers read `seq` out of the message body nchan relays.
 */
#include "proto_nchan.h"

#include <string.h>

#include "client.h"
#include "clock.h"
#include "load.h"
#include "payload.h"
#include "workload.h"

static char sub_path[256];
static uint32_t acks;

static const char *
nchan_path(struct load *L, const struct client *c)
{
	(void)L;
	(void)c;
	return sub_path;
}

static void
nchan_opened(struct load *L, struct client *c)
{
	client_ready(L, c);
}

/* Count the status lines in a chunk of responses. A status line split across
 * two chunks is missed: that loses one ack sample, never a delivery. */
static void
publisher_rx(struct load *L, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;
	static const char tag[] = "HTTP/1.1 ";

	while (p < end) {
		const char *q = memmem(p, (size_t)(end - p), tag, sizeof(tag) - 1);
		if (!q || q + sizeof(tag) + 2 > end)
			return;
		q += sizeof(tag) - 1;
		acks++;
		if (*q == '2') {
			if (L->work->acked)
				L->work->acked(L, acks, now_ns());
		} else
			note_error(L, "nchan publish %u answered %.3s", acks, q);
		p = q;
	}
}

static void
nchan_message(struct load *L, struct client *c, const unsigned char *buf, size_t len, int binary)
{
	if (c->raw) {
		publisher_rx(L, (const char *)buf, len);
		return;
	}
	deliver_seq(L, c, buf, len, binary);
}

static void
nchan_write(struct load *L, struct client *w, uint32_t seq)
{
	char payload[8192], req[8192 + 512];
	size_t n = make_payload(payload, sizeof(payload), seq, L->opt.payload);
	int r = snprintf(req, sizeof(req),
			 "POST /pub/%s HTTP/1.1\r\nHost: %s:%d\r\n"
			 "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%.*s",
			 L->opt.channel, L->opt.host, L->opt.port, n, (int)n, payload);

	client_send(L, w, req, (size_t)r, SEND_RAW, seq);
}

static int
nchan_prepare(struct load *L)
{
	snprintf(sub_path, sizeof(sub_path), "/sub/%s", L->opt.channel);
	return 0;
}

const struct protocol proto_nchan = {
	.name = "nchan",
	.subprotocol = NULL,
	.writer_is_raw = 1,
	.prepare = nchan_prepare,
	.path = nchan_path,
	.opened = nchan_opened,
	.message = nchan_message,
	.write = nchan_write,
	.ping = client_ws_ping, /* nginx answers a WebSocket ping */
};
