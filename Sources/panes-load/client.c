/*
 * The connections' fate: pacing connects, counting who is ready, failed or
 * gone, and handing sends to ws.c; and what ws.c reports (`ws_events`), each
 * passed on to the protocol or the workload.
 *
 * Threading: the only thread (see main.c).
 *
 * Connects are paced: at most `concurrency` clients are between "connect
 * started" and "ready or failed" at once, so the server's listen backlog is
 * never overrun and the connect time measures the server, not SYN retries.
 * A client binds to a source address from --sources, `per_source` clients
 * to each in turn, so connections from several generator processes (or more
 * than one address's ~28k ephemeral ports) can reach one server port.
 */
#include "client.h"

#include <errno.h>
#include <string.h>

#include "clock.h"
#include "cpu.h"
#include "hist.h"
#include "load.h"
#include "protocol.h"
#include "report.h"
#include "workload.h"
#include "ws.h"

static int pumping;

struct client *
writer_client(void)
{
	return g.clients[0].role == ROLE_WRITER ? &g.clients[0] : NULL;
}

static void
settle_check(void)
{
	if (g.t_all_ready || g.ready + g.failed < g.connect_limit)
		return;
	g.t_all_ready = now_ns();
	cpu_snap(&g.cpu_ready);
	report_ready();
	if (!g.opt.wait_go || g.go) {
		g.started = 1;
		g.t_start = now_ns();
		g.work->start();
	}
}

static void
connect_one(struct client *c)
{
	const char *source = NULL;

	if (g.opt.nsources)
		source = g.opt.sources[(c->index / (uint32_t)g.opt.per_source) % (uint32_t)g.opt.nsources];
	c->state = CS_CONNECTING;
	c->t_connect = now_ns();
	g.inflight_connects++;
	if (ws_connect(c, source) < 0)
		client_fail(c, strerror(errno));
}

void
clients_pump(void)
{
	if (pumping)
		return; /* a failure inside connect_one calls back here */
	pumping = 1;
	while (!g.finished && !g.gave_up && g.next_connect < g.connect_limit &&
	       g.inflight_connects < g.opt.concurrency)
		connect_one(&g.clients[g.next_connect++]);
	pumping = 0;
	settle_check();
}

void
clients_check_timeouts(uint64_t now)
{
	uint64_t limit = (uint64_t)(g.opt.connect_timeout * 1e9);

	if (!g.inflight_connects)
		return;
	for (int i = 0; i < g.next_connect; i++) {
		struct client *c = &g.clients[i];
		if ((c->state == CS_CONNECTING || c->state == CS_HELLO) && now - c->t_connect > limit)
			client_fail(c, c->state == CS_CONNECTING ? "timed out connecting"
								 : "timed out in the protocol handshake");
	}
}

static void
leave_connecting(struct client *c)
{
	if (c->state == CS_CONNECTING || c->state == CS_HELLO)
		g.inflight_connects--;
}

void
client_ready(struct client *c)
{
	uint64_t now = now_ns();

	if (c->state != CS_CONNECTING && c->state != CS_HELLO)
		return;
	leave_connecting(c);
	c->state = CS_READY;
	g.ready++;
	g.consecutive_failures = 0;
	hist_record(&g.connect_hist, now - c->t_connect);
	if (g.work->connected)
		g.work->connected(c, 1, now);
	clients_pump();
}

void
client_fail(struct client *c, const char *why)
{
	int was = c->state;

	ws_close(c);
	if (g.finished || (was != CS_CONNECTING && was != CS_HELLO && was != CS_READY))
		return;
	leave_connecting(c);
	if (was == CS_READY) {
		/* Counted as connected; the workload decides what losing it means. */
		c->state = CS_CLOSED;
		g.closed++;
		if (g.work->dropped)
			g.work->dropped(c);
	} else {
		c->state = CS_FAILED;
		g.failed++;
		if (g.work->connected)
			g.work->connected(c, 0, now_ns());
		if (++g.consecutive_failures >= g.opt.stop_after_failures && !g.gave_up) {
			g.gave_up = 1;
			progress("giving up after %d consecutive connect failures",
				 g.consecutive_failures);
			/* Everyone not yet started counts as failed: the server's cap is reached. */
			for (int k = g.next_connect; k < g.total; k++)
				g.clients[k].state = CS_FAILED;
			g.failed += g.connect_limit - g.next_connect;
			g.next_connect = g.connect_limit;
		}
	}
	note_error("client %u: %s", c->index, why ? why : "failed");
	clients_pump();
}

int
client_send(struct client *c, const void *buf, size_t len, enum frame_kind kind, uint32_t seq)
{
	if (seq && g.work->sent)
		g.work->sent(seq, now_ns());
	return ws_send(c, buf, len, kind);
}

/* What ws.c reports, passed on to the protocol or the workload. */

static const char *
ws_path(void *ctx, const struct client *c)
{
	(void)ctx;
	return g.proto->path(c);
}

static void
ws_opened(void *ctx, struct client *c)
{
	(void)ctx;
	if (c->state != CS_CONNECTING)
		return;
	c->state = CS_HELLO;
	g.proto->opened(c);
}

static void
ws_message(void *ctx, struct client *c, const unsigned char *buf, size_t len, int binary)
{
	(void)ctx;
	g.proto->message(c, buf, len, binary);
}

static void
ws_pong(void *ctx, struct client *c)
{
	(void)ctx;
	if (g.work->pong)
		g.work->pong(c, now_ns());
}

static void
ws_failed(void *ctx, struct client *c, const char *why)
{
	(void)ctx;
	client_fail(c, why);
}

static const struct ws_events ws_events = {
	.path = ws_path,
	.opened = ws_opened,
	.message = ws_message,
	.pong = ws_pong,
	.failed = ws_failed,
};

int
clients_init(void)
{
	return ws_init(g.opt.host, g.proto->subprotocol, &ws_events, NULL);
}
