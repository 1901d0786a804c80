/*
 * The connections' fate: pacing connects, counting who is ready, failed or
 * gone, and handing sends to ws.c; and what ws.c reports (`ws_events`), each
 * passed on to the protocol or the workload with the run.
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


struct client *
writer_client(struct load *L)
{
	return L->clients[0].role == ROLE_WRITER ? &L->clients[0] : NULL;
}

void
clients_hold_idle(struct load *L)
{
	L->total = L->opt.n;
	for (int i = 0; i < L->total; i++)
		L->clients[i].role = ROLE_OBSERVER;
	L->observe = 0;
	L->hold_until_eof = 1;
}

static void
settle_check(struct load *L)
{
	if (L->t_all_ready || L->ready + L->failed < L->connect_limit)
		return;
	L->t_all_ready = now_ns();
	cpu_snap(&L->cpu_ready);
	report_ready(L);
	if (!L->opt.wait_go || L->go) {
		L->started = 1;
		L->t_start = now_ns();
		L->work->start(L);
	}
}

static void
connect_one(struct load *L, struct client *c)
{
	const char *source = NULL;

	if (L->opt.nsources)
		source = L->opt.sources[(c->index / (uint32_t)L->opt.per_source) % (uint32_t)L->opt.nsources];
	c->state = CS_CONNECTING;
	c->t_connect = now_ns();
	L->inflight_connects++;
	if (ws_connect(c, source) < 0)
		client_fail(L, c, strerror(errno));
}

void
clients_pump(struct load *L)
{
	if (L->pumping)
		return; /* a failure inside connect_one calls back here */
	L->pumping = 1;
	while (!L->finished && !L->gave_up && L->next_connect < L->connect_limit &&
	       L->inflight_connects < L->opt.concurrency)
		connect_one(L, &L->clients[L->next_connect++]);
	L->pumping = 0;
	settle_check(L);
}

void
clients_check_timeouts(struct load *L, uint64_t now)
{
	uint64_t limit = (uint64_t)(L->opt.connect_timeout * 1e9);

	if (!L->inflight_connects)
		return;
	for (int i = 0; i < L->next_connect; i++) {
		struct client *c = &L->clients[i];
		if ((c->state == CS_CONNECTING || c->state == CS_HELLO) && now - c->t_connect > limit)
			client_fail(L, c, c->state == CS_CONNECTING ? "timed out connecting"
								    : "timed out in the protocol handshake");
	}
}

static void
leave_connecting(struct load *L, struct client *c)
{
	if (c->state == CS_CONNECTING || c->state == CS_HELLO)
		L->inflight_connects--;
}


void
client_ready(struct load *L, struct client *c)
{
	uint64_t now = now_ns();

	if (c->state != CS_CONNECTING && c->state != CS_HELLO)
		return;
	leave_connecting(L, c);
	c->state = CS_READY;
	L->ready++;
	L->consecutive_failures = 0;
	hist_record(&L->connect_hist, now - c->t_connect);
	if (L->work->connected)
		L->work->connected(L, c, 1, now);
	clients_pump(L);
}

void
client_fail(struct load *L, struct client *c, const char *why)
{
	int was = c->state;

	ws_close(c);
	if (L->finished || (was != CS_CONNECTING && was != CS_HELLO && was != CS_READY))
		return;
	leave_connecting(L, c);
	if (was == CS_READY) {
		/* Counted as connected; the workload decides what losing it means. */
		c->state = CS_CLOSED;
		L->closed++;
		if (L->work->dropped)
			L->work->dropped(L, c);
	} else {
		c->state = CS_FAILED;
		L->failed++;
		if (L->work->connected)
			L->work->connected(L, c, 0, now_ns());
		if (++L->consecutive_failures >= L->opt.stop_after_failures && !L->gave_up) {
			L->gave_up = 1;
			progress(L, "giving up after %d consecutive connect failures",
				 L->consecutive_failures);
			/* Everyone not yet started counts as failed: the server's cap is reached. */
			for (int k = L->next_connect; k < L->total; k++)
				L->clients[k].state = CS_FAILED;
			L->failed += L->connect_limit - L->next_connect;
			L->next_connect = L->connect_limit;
		}
	}
	note_error(L, "client %u: %s", c->index, why ? why : "failed");
	clients_pump(L);
}

void
client_ws_ping(struct load *L, struct client *c)
{
	(void)L;
	ws_ping(c);
}

int
client_send(struct load *L, struct client *c, const void *buf, size_t len, enum frame_kind kind,
	    uint32_t seq)
{
	if (seq && L->work->sent)
		L->work->sent(L, seq, now_ns());
	return ws_send(c, buf, len, kind);
}

/* What ws.c reports, passed on with the run (`ctx`). */

static const char *
ws_path(void *ctx, const struct client *c)
{
	struct load *L = ctx;

	return L->proto->path(L, c);
}

static void
ws_opened(void *ctx, struct client *c)
{
	struct load *L = ctx;

	if (c->state != CS_CONNECTING)
		return;
	c->state = CS_HELLO;
	L->proto->opened(L, c);
}

static void
ws_message(void *ctx, struct client *c, const unsigned char *buf, size_t len, int binary)
{
	struct load *L = ctx;

	L->proto->message(L, c, buf, len, binary);
}

static void
ws_pong(void *ctx, struct client *c)
{
	struct load *L = ctx;

	if (L->work->pong)
		L->work->pong(L, c, now_ns());
}

static void
ws_failed(void *ctx, struct client *c, const char *why)
{
	client_fail(ctx, c, why);
}

static const struct ws_events ws_events = {
	.path = ws_path,
	.opened = ws_opened,
	.message = ws_message,
	.pong = ws_pong,
	.failed = ws_failed,
};

int
clients_init(struct load *L)
{
	return ws_init(L->opt.host, L->proto->subprotocol, &ws_events, L);
}
