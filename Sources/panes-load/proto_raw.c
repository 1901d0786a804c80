/*
 * The raw broadcast server (panes-raw-broadcast): no handshake, every frame a
 * client sends reaches every other client. The writer sends the payload
 * object itself; observers read `seq` out of it.
 */
#include "proto_raw.h"

#include "client.h"
#include "load.h"
#include "payload.h"

static const char *
raw_path(struct load *L, const struct client *c)
{
	(void)L;
	(void)c;
	return "/";
}

static void
raw_opened(struct load *L, struct client *c)
{
	client_ready(L, c);
}

static void
raw_message(struct load *L, struct client *c, const unsigned char *buf, size_t len, int binary)
{
	deliver_seq(L, c, buf, len, binary);
}

static void
raw_write(struct load *L, struct client *w, uint32_t seq)
{
	char payload[8192];
	size_t n = make_payload(payload, sizeof(payload), seq, L->opt.payload);

	client_send(L, w, payload, n, SEND_TEXT, seq);
}

static int
raw_prepare(struct load *L)
{
	(void)L;
	return 0;
}

const struct protocol proto_raw = {
	.name = "raw",
	.subprotocol = NULL,
	.prepare = raw_prepare,
	.path = raw_path,
	.opened = raw_opened,
	.message = raw_message,
	.ping = client_ws_ping, /* the raw server has no requests: lws answers a WebSocket ping */
	.write = raw_write,
};
