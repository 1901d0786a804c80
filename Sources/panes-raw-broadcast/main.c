/*
 * panes-raw-broadcast: the smallest useful libwebsockets broadcast server,
 * for the benchmarks only. Every whole message a client sends (text or
 * binary) is sent to every other connected client, in order. No protocol,
 * no JSON, no state: what Panes would cost if those were free.
 *
 *   panes-raw-broadcast [--host 127.0.0.1] [--port 0] [--event-loop poll|libev]
 *                       [--rx-buffer BYTES]
 * prints "listening on http://HOST:PORT" once it accepts connections.
 *
 * --event-loop picks lws's loop, so Panes can be compared with it on the
 * same one: `poll` (lws's default: poll() over every socket, every turn) or
 * `libev` (LWS_SERVER_OPTION_LIBEV: Debian's libwebsockets-evlib-ev plugin,
 * epoll underneath; lws runs its own ev loop inside lws_service()).
 *
 * --rx-buffer sets lws's receive buffer per connection (the protocol's
 * rx_buffer_size; lws allocates it when the WebSocket opens and keeps it for
 * the connection's life). Without it lws's default (4096) is used. Panes sets
 * its own smaller (WebSocketServer.receiveBufferBytes): the idle row runs this
 * server both ways, so memory per connection is compared with lws as it comes
 * and with the same buffer as Panes.
 *
 * Threading: one lws service thread; everything below is touched only from
 * its callbacks (LWS_MAX_SMP is 1, as in lws's minimal-ws-server-ring).
 *
 * Fan-out is O(clients) per message, as it must be, and never O(clients^2):
 * each message is stored once, reference-counted by the clients connected
 * when it arrived, and every client keeps a pointer to the next message it
 * has to send. Messages are freed in order as the last client passes them.
 * (lws_ring's "update oldest tail" walks every client on every consume,
 * which is quadratic for a broadcast to thousands.)
 */
#include <libwebsockets.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct msg {
	struct msg *next;
	struct lws *from;
	int refs;           /* clients that still have to pass this message */
	int binary;
	size_t len;
	unsigned char buf[]; /* LWS_PRE headroom, then the payload; shared: servers don't mask */
};

struct peer {
	struct peer *prev, *next; /* every connected client */
	struct lws *wsi;
	struct msg *pending;      /* next message to pass, NULL when caught up */
	unsigned char *rx;        /* a message arriving in fragments */
	size_t rx_len, rx_cap;
};

static struct peer *peers;
static struct msg *newest;
static volatile sig_atomic_t interrupted;
static int use_libev;
static struct lws_context *ctx;
static const lws_retry_bo_t no_idle_policy; /* all zero: no validity pings or hangups */

/* Pass one message: drop our reference, free it if we were the last. */
static void
advance(struct peer *p)
{
	struct msg *m = p->pending;

	p->pending = m->next;
	if (--m->refs == 0) {
		/* Everyone who counted in m is past it, so m is the oldest live message. */
		if (newest == m)
			newest = NULL;
		free(m);
	}
}

static void
broadcast(struct peer *from, const unsigned char *data, size_t len, int binary)
{
	struct msg *m = malloc(sizeof(*m) + LWS_PRE + len);

	if (!m)
		return;
	m->next = NULL;
	m->from = from->wsi;
	m->refs = 0;
	m->binary = binary;
	m->len = len;
	memcpy(m->buf + LWS_PRE, data, len);
	if (newest)
		newest->next = m;
	newest = m;
	for (struct peer *p = peers; p; p = p->next)
		m->refs++; /* count everyone first: the sender's advance() may drop a reference */
	for (struct peer *p = peers; p; p = p->next) {
		if (!p->pending) {
			p->pending = m;
			if (p == from)
				advance(p); /* the sender is caught up at once */
			else
				lws_callback_on_writable(p->wsi);
		}
	}
}

static int
callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
	struct peer *p = user;

	switch (reason) {
	case LWS_CALLBACK_ESTABLISHED:
		memset(p, 0, sizeof(*p));
		p->wsi = wsi;
		p->next = peers;
		if (peers)
			peers->prev = p;
		peers = p;
		break;

	case LWS_CALLBACK_CLOSED:
		while (p->pending)
			advance(p);
		if (p->prev)
			p->prev->next = p->next;
		else
			peers = p->next;
		if (p->next)
			p->next->prev = p->prev;
		free(p->rx);
		break;

	case LWS_CALLBACK_RECEIVE: {
		int whole = lws_is_final_fragment(wsi) && !lws_remaining_packet_payload(wsi);
		if (whole && !p->rx_len) {
			broadcast(p, in, len, lws_frame_is_binary(wsi));
			break;
		}
		if (p->rx_len + len > p->rx_cap) {
			unsigned char *r = realloc(p->rx, (p->rx_len + len) * 2);
			if (!r)
				return -1;
			p->rx = r;
			p->rx_cap = (p->rx_len + len) * 2;
		}
		memcpy(p->rx + p->rx_len, in, len);
		p->rx_len += len;
		if (whole) {
			broadcast(p, p->rx, p->rx_len, lws_frame_is_binary(wsi));
			p->rx_len = 0;
		}
		break;
	}

	case LWS_CALLBACK_SERVER_WRITEABLE:
		/* Skip our own messages; write one other, and ask again if more wait. */
		while (p->pending && p->pending->from == wsi)
			advance(p);
		if (p->pending) {
			struct msg *m = p->pending;
			if (lws_write(wsi, m->buf + LWS_PRE, m->len,
				      m->binary ? LWS_WRITE_BINARY : LWS_WRITE_TEXT) < (int)m->len)
				return -1;
			advance(p);
			if (p->pending)
				lws_callback_on_writable(wsi);
		}
		break;

	default:
		break;
	}
	return 0;
}

static struct lws_protocols protocols[] = {
	{ "broadcast", callback, sizeof(struct peer), 0, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 }
};

static void
on_signal(int sig)
{
	(void)sig;
	if (use_libev)
		_exit(0); /* ev_run() does not return for a cancel; nothing here needs flushing */
	interrupted = 1;
	if (ctx)
		lws_cancel_service(ctx);
}

int
main(int argc, char **argv)
{
	struct lws_context_creation_info info;
	const char *host = "127.0.0.1";
	int port = 0;
	long rx_buffer = 0; /* 0: lws's default */
	char *end;

	for (int i = 1; i < argc; i += 2) {
		if (i + 1 < argc && !strcmp(argv[i], "--host"))
			host = argv[i + 1];
		else if (i + 1 < argc && !strcmp(argv[i], "--port"))
			port = atoi(argv[i + 1]);
		else if (i + 1 < argc && !strcmp(argv[i], "--event-loop") &&
			 (!strcmp(argv[i + 1], "poll") || !strcmp(argv[i + 1], "libev")))
			use_libev = !strcmp(argv[i + 1], "libev");
		else if (i + 1 < argc && !strcmp(argv[i], "--rx-buffer") &&
			 (rx_buffer = strtol(argv[i + 1], &end, 10)) >= 128 && !*end &&
			 rx_buffer <= 1 << 24)
			;
		else {
			fprintf(stderr, "usage: panes-raw-broadcast [--host ADDR] [--port N] "
					"[--event-loop poll|libev] [--rx-buffer 128..16777216]\n");
			return 2;
		}
	}
	protocols[0].rx_buffer_size = (size_t)rx_buffer;
	/* As Panes does with its buffer: lws would otherwise also cut every send to rx_buffer_size. */
	if (rx_buffer)
		protocols[0].tx_packet_size = 128 * 1024;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	lws_set_log_level(LLL_ERR, NULL);

	memset(&info, 0, sizeof(info));
	info.port = port;
	info.iface = host;
	info.protocols = protocols;
	/* IPv4 only, as Panes: bind the address asked for, not every interface's IPv6 wildcard. */
	info.options = LWS_SERVER_OPTION_DISABLE_OS_CA_CERTS | LWS_SERVER_OPTION_DISABLE_IPV6;
	if (use_libev)
		info.options |= LWS_SERVER_OPTION_LIBEV;
	/*
	 * No lws idle pings ("validity"), as Panes: with them lws keeps every
	 * connection's timer in one sorted list and re-inserts it, walking the
	 * list, on each connect (lws_dll2_add_sorted was 70 % of this server's
	 * CPU for 10k connects on libev). A ceiling must not pay what Panes
	 * does not.
	 */
	info.retry_and_idle_policy = &no_idle_policy;
	ctx = lws_create_context(&info);
	if (!ctx) {
		fprintf(stderr, "panes-raw-broadcast: cannot create the lws context%s\n",
			use_libev ? " (is libwebsockets-evlib-ev installed?)" : "");
		return 1;
	}
	printf("listening on http://%s:%d\n", host,
	       lws_get_vhost_listen_port(lws_get_vhost_by_name(ctx, "default")));
	fflush(stdout);

	/* poll: one turn per call. libev: the whole ev loop runs inside the first call. */
	while (!interrupted && lws_service(ctx, 0) >= 0 && !use_libev)
		;
	lws_context_destroy(ctx);
	return 0;
}
