/*
 * The connections: pacing connects, the lws callback, reassembly of
 * fragmented messages and a small send queue per client.
 *
 * Threading: lws service thread only (see load.h).
 *
 * Connects are paced: at most `concurrency` clients are between "connect
 * started" and "ready or failed" at once, so the server's listen backlog is
 * never overrun and the connect time measures the server, not SYN retries.
 * A client binds to a source address from --sources, `per_source` clients
 * to each, so more than one address's ~28k ephemeral ports can be used
 * towards one server port.
 */
#include "load.h"

#include <stdlib.h>
#include <string.h>

static int pumping;

/*
 * No validity (ping/hangup) timer per connection. lws re-inserts that timer
 * into one sorted list on every frame received, which is O(connections) per
 * frame and was the generator's largest user-space cost at 10k clients.
 * Servers ping on their own schedule and lws answers pings regardless.
 */
static const lws_retry_bo_t no_validity_checks = { .secs_since_valid_hangup = 0 };

struct client *
writer_client(void)
{
	return g.clients[0].role == ROLE_WRITER ? &g.clients[0] : NULL;
}

static void
settle_check(void)
{
	if (g.t_all_ready || g.ready + g.failed < g.total)
		return;
	g.t_all_ready = now_ns();
	snap_cpu(&g.cpu_ready);
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
	struct lws_client_connect_info i;
	char host[96];

	memset(&i, 0, sizeof(i));
	snprintf(host, sizeof(host), "%s:%d", g.opt.host, g.opt.port);
	i.context = g.ctx;
	i.address = g.opt.host;
	i.port = g.opt.port;
	i.path = c->raw ? "/" : g.proto->path(c);
	i.host = host;
	i.origin = host;
	i.local_protocol_name = load_protocols[0].name;
	if (c->raw)
		i.method = "RAW";
	else
		i.protocol = g.proto->subprotocol;
	if (g.opt.nsources) {
		int s = (int)(c->index / (uint32_t)g.opt.per_source) % g.opt.nsources;
		i.iface = g.opt.sources[s];
	}
	i.retry_and_idle_policy = &no_validity_checks;
	i.opaque_user_data = c;
	i.pwsi = &c->wsi;

	c->state = CS_CONNECTING;
	c->t_connect = now_ns();
	g.inflight_connects++;
	if (!lws_client_connect_via_info(&i) && c->state == CS_CONNECTING)
		client_fail(c, "lws_client_connect_via_info failed");
}

void
clients_pump(void)
{
	if (pumping)
		return; /* lws may call back into us from inside connect_one */
	pumping = 1;
	while (!g.finished && !g.gave_up && g.next_connect < g.total &&
	       g.inflight_connects < g.opt.concurrency)
		connect_one(&g.clients[g.next_connect++]);
	pumping = 0;
	settle_check();
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
	clients_pump();
}

void
client_fail(struct client *c, const char *why)
{
	int was = c->state;

	if (g.finished)
		return; /* tearing down: every socket closes now, that is no failure */
	if (was != CS_CONNECTING && was != CS_HELLO && was != CS_READY)
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
		if (++g.consecutive_failures >= g.opt.stop_after_failures && !g.gave_up) {
			g.gave_up = 1;
			progress("giving up after %d consecutive connect failures",
				 g.consecutive_failures);
			/* Everyone not yet started counts as failed: the server's cap is reached. */
			for (int k = g.next_connect; k < g.total; k++)
				g.clients[k].state = CS_FAILED;
			g.failed += g.total - g.next_connect;
			g.next_connect = g.total;
		}
	}
	note_error("client %u: %s", c->index, why ? why : "failed");
	if (c->wsi)
		lws_set_timeout(c->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
	clients_pump();
}

int
client_send(struct client *c, const void *buf, size_t len, enum lws_write_protocol type,
	    uint32_t seq)
{
	struct txmsg *m;

	if (!c->wsi)
		return -1;
	m = malloc(sizeof(*m) + LWS_PRE + len);
	if (!m)
		return -1;
	m->next = NULL;
	m->seq = seq;
	m->type = type;
	m->len = len;
	memcpy(m->buf + LWS_PRE, buf, len);
	if (c->tx_tail)
		c->tx_tail->next = m;
	else
		c->tx_head = m;
	c->tx_tail = m;
	lws_callback_on_writable(c->wsi);
	return 0;
}

static void
free_client_buffers(struct client *c)
{
	while (c->tx_head) {
		struct txmsg *m = c->tx_head;
		c->tx_head = m->next;
		free(m);
	}
	c->tx_tail = NULL;
	free(c->rx);
	c->rx = NULL;
	c->rx_len = c->rx_cap = 0;
}

/* One lws_write per WRITEABLE callback; ask again if more is queued. */
static int
write_one(struct client *c)
{
	struct txmsg *m = c->tx_head;
	int n;

	if (!m)
		return 0;
	c->tx_head = m->next;
	if (!c->tx_head)
		c->tx_tail = NULL;
	if (m->seq && g.work->sent)
		g.work->sent(m->seq, now_ns());
	n = lws_write(c->wsi, m->buf + LWS_PRE, m->len, m->type);
	free(m);
	if (n < 0)
		return -1;
	if (c->tx_head)
		lws_callback_on_writable(c->wsi);
	return 0;
}

/* Deliver a WebSocket message only once it is whole. */
static void
receive(struct client *c, struct lws *wsi, const unsigned char *in, size_t len)
{
	int first = lws_is_first_fragment(wsi), final = lws_is_final_fragment(wsi);
	int whole = final && lws_remaining_packet_payload(wsi) == 0;

	if (first && whole && !c->rx_len) {
		g.proto->message(c, in, len, lws_frame_is_binary(wsi));
		return;
	}
	if (c->rx_len + len + 1 > c->rx_cap) {
		size_t cap = (c->rx_len + len + 1) * 2;
		unsigned char *p = realloc(c->rx, cap);
		if (!p) {
			client_fail(c, "out of memory reassembling a message");
			return;
		}
		c->rx = p;
		c->rx_cap = cap;
	}
	memcpy(c->rx + c->rx_len, in, len);
	c->rx_len += len;
	if (whole) {
		c->rx[c->rx_len] = 0;
		g.proto->message(c, c->rx, c->rx_len, lws_frame_is_binary(wsi));
		c->rx_len = 0;
	}
}

static int
callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
	struct client *c = wsi ? lws_get_opaque_user_data(wsi) : NULL;

	(void)user;
	switch (reason) {
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
		if (c) {
			c->wsi = NULL;
			client_fail(c, in ? (const char *)in : "connection error");
		}
		return 0;

	case LWS_CALLBACK_CLIENT_ESTABLISHED:
	case LWS_CALLBACK_RAW_CONNECTED:
		if (!c)
			return -1;
		c->wsi = wsi;
		c->state = CS_HELLO;
		g.proto->opened(c);
		return 0;

	case LWS_CALLBACK_CLIENT_RECEIVE:
		if (c)
			receive(c, wsi, in, len);
		return 0;

	case LWS_CALLBACK_RAW_RX:
		if (c)
			g.proto->message(c, in, len, 0);
		return 0;

	case LWS_CALLBACK_CLIENT_WRITEABLE:
	case LWS_CALLBACK_RAW_WRITEABLE:
		return c ? write_one(c) : 0;

	case LWS_CALLBACK_CLIENT_CLOSED:
	case LWS_CALLBACK_RAW_CLOSE:
		if (c && c->wsi == wsi) {
			c->wsi = NULL;
			free_client_buffers(c);
			client_fail(c, "closed by server");
		}
		return 0;

	default:
		return 0;
	}
}

const struct lws_protocols load_protocols[] = {
	{ "panes-load", callback, 0, 0, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 }
};
