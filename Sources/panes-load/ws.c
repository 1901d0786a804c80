/*
 * A minimal WebSocket client (RFC 6455) for load generation: non-blocking
 * connect (optionally from a chosen source address), the HTTP/1.1 upgrade,
 * masked frames out, unmasked frames in, fragments reassembled, pings
 * answered. A client in `raw` mode skips the upgrade and passes bytes
 * straight through (nchan's HTTP publisher).
 *
 * Deliberately not checked, since only our own loopback servers are
 * spoken to: the Sec-WebSocket-Accept value (any 101 is accepted) and
 * extensions (none are offered, so none may be used).
 *
 * Threading: the only thread (see main.c).
 */
#include "ws.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net.h"
#include "nodes.h"

#ifndef IP_BIND_ADDRESS_NO_PORT
#define IP_BIND_ADDRESS_NO_PORT 24
#endif

#define MAX_MESSAGE (16u << 20)
#define MAX_HTTP_HEAD 16384

enum { PH_TCP, PH_UPGRADE, PH_OPEN };
enum { OP_CONT = 0, OP_TEXT = 1, OP_BINARY = 2, OP_CLOSE = 8, OP_PING = 9, OP_PONG = 10 };

/* One address and Host header per node (nodes.h); a single server is node 0. */
static struct sockaddr_in dest[MAX_NODES];
static char host_header[MAX_NODES][128];
static char upgrade_key[32];
static unsigned char mask_key[4];
static unsigned char rbuf[1 << 16];
/* Set once by ws_init, before the loop; read-only after. */
static const char *subprotocol;
static const struct ws_events *events;
static void *events_ctx;

int
ws_init(const char *host, const char *sub, const struct ws_events *ev, void *ctx)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res;
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	unsigned char nonce[16];
	int k = 0;

	subprotocol = sub;
	events = ev;
	events_ctx = ctx;
	if (getaddrinfo(host, NULL, &hints, &res))
		return -1;
	for (int i = 0; i < nodes_count(); i++) {
		dest[i] = *(struct sockaddr_in *)res->ai_addr;
		dest[i].sin_port = htons((uint16_t)node_port(i));
		snprintf(host_header[i], sizeof(host_header[i]), "%s:%d", host, node_port(i));
	}
	freeaddrinfo(res);

	if (getrandom(nonce, sizeof(nonce), 0) != sizeof(nonce) ||
	    getrandom(mask_key, sizeof(mask_key), 0) != sizeof(mask_key))
		return -1;
	for (int i = 0; i < 16; i += 3) { /* base64 of the 16-byte nonce */
		uint32_t v = (uint32_t)nonce[i] << 16 | (i + 1 < 16 ? (uint32_t)nonce[i + 1] << 8 : 0) |
			     (i + 2 < 16 ? nonce[i + 2] : 0);
		upgrade_key[k++] = b64[v >> 18 & 63];
		upgrade_key[k++] = b64[v >> 12 & 63];
		upgrade_key[k++] = i + 1 < 16 ? b64[v >> 6 & 63] : '=';
		upgrade_key[k++] = i + 2 < 16 ? b64[v & 63] : '=';
	}
	upgrade_key[k] = 0;
	return 0;
}

static int
grow(unsigned char **buf, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 256;
	while (n < need)
		n *= 2;
	unsigned char *p = realloc(*buf, n);
	if (!p)
		return -1;
	*buf = p;
	*cap = n;
	return 0;
}

void
ws_close(struct client *c)
{
	if (c->fd >= 0) {
		net_forget(c->fd);
		close(c->fd);
		c->fd = -1;
	}
	free(c->in);
	free(c->out);
	free(c->msg);
	c->in = c->out = c->msg = NULL;
	c->in_len = c->in_cap = c->out_len = c->out_cap = c->msg_len = c->msg_cap = 0;
}

static void
fail(struct client *c, const char *why)
{
	events->failed(events_ctx, c, why); /* closes the socket */
}

int
ws_connect(struct client *c, const char *source)
{
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	/* The writer sends change after change: no waiting for ACKs (Nagle). Others send one hello. */
	if (c->role == ROLE_WRITER)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (source) {
		/* Pick the port at connect() time, per destination, not at bind() time. */
		struct sockaddr_in src = { .sin_family = AF_INET };
		setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
		if (inet_pton(AF_INET, source, &src.sin_addr) != 1 ||
		    bind(fd, (struct sockaddr *)&src, sizeof(src)) < 0) {
			int e = errno;
			close(fd);
			errno = e ? e : EINVAL;
			return -1;
		}
	}
	if (connect(fd, (struct sockaddr *)&dest[node_of(c)], sizeof(dest[0])) < 0 && errno != EINPROGRESS) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	c->fd = fd;
	c->phase = PH_TCP;
	if (net_watch(fd, c) < 0) {
		int e = errno;
		close(fd);
		c->fd = -1;
		errno = e;
		return -1;
	}
	return 0;
}

/* Hands as much of the pending output to the socket as it takes. */
static void
flush(struct client *c)
{
	size_t off = 0;

	while (off < c->out_len) {
		ssize_t n = send(c->fd, c->out + off, c->out_len - off, MSG_NOSIGNAL);
		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		fail(c, n < 0 ? strerror(errno) : "send failed");
		return;
	}
	memmove(c->out, c->out + off, c->out_len - off);
	c->out_len -= off; /* the rest goes on the next EPOLLOUT edge */
}

static int
queue(struct client *c, const void *a, size_t alen, const unsigned char *payload, size_t plen,
      int masked)
{
	if (grow(&c->out, &c->out_cap, c->out_len + alen + plen))
		return -1;
	memcpy(c->out + c->out_len, a, alen);
	c->out_len += alen;
	for (size_t i = 0; i < plen; i++)
		c->out[c->out_len + i] = masked ? payload[i] ^ mask_key[i & 3] : payload[i];
	c->out_len += plen;
	return 0;
}

static int
send_frame(struct client *c, int op, const void *buf, size_t len)
{
	unsigned char h[14];
	size_t n = 0;

	h[n++] = (unsigned char)(0x80 | op);
	if (len < 126)
		h[n++] = (unsigned char)(0x80 | len);
	else if (len < 65536) {
		h[n++] = 0x80 | 126;
		h[n++] = (unsigned char)(len >> 8);
		h[n++] = (unsigned char)len;
	} else {
		h[n++] = 0x80 | 127;
		for (int s = 56; s >= 0; s -= 8)
			h[n++] = (unsigned char)((uint64_t)len >> s);
	}
	memcpy(h + n, mask_key, 4);
	n += 4;
	if (queue(c, h, n, buf, len, 1))
		return -1;
	if (c->phase == PH_OPEN)
		flush(c);
	return c->fd >= 0 ? 0 : -1;
}

void
ws_ping(struct client *c)
{
	if (c->fd >= 0 && !c->raw)
		send_frame(c, OP_PING, "panes-load", 10);
}

int
ws_send(struct client *c, const void *buf, size_t len, enum frame_kind kind)
{
	if (c->fd < 0)
		return -1;
	if (c->raw || kind == SEND_RAW) {
		if (queue(c, "", 0, buf, len, 0))
			return -1;
		if (c->phase == PH_OPEN)
			flush(c);
		return c->fd >= 0 ? 0 : -1;
	}
	return send_frame(c, kind == SEND_BINARY ? OP_BINARY : OP_TEXT, buf, len);
}

static void
send_upgrade(struct client *c)
{
	char req[1024];
	const char *sub = subprotocol;
	int n = snprintf(req, sizeof(req),
			 "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
			 "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\nOrigin: http://%s\r\n"
			 "%s%s%s\r\n",
			 events->path(events_ctx, c), host_header[node_of(c)], upgrade_key, host_header[node_of(c)],
			 sub ? "Sec-WebSocket-Protocol: " : "", sub ? sub : "", sub ? "\r\n" : "");

	c->phase = PH_UPGRADE;
	if (queue(c, req, (size_t)n, NULL, 0, 0) == 0)
		flush(c);
}

/* The response to the upgrade: returns bytes used, 0 if incomplete. */
static size_t
parse_upgrade(struct client *c, const unsigned char *p, size_t len)
{
	const unsigned char *end = memmem(p, len, "\r\n\r\n", 4);
	char why[160];

	if (!end) {
		if (len > MAX_HTTP_HEAD)
			fail(c, "upgrade response too long");
		return 0;
	}
	if (len < 12 || memcmp(p, "HTTP/1.1 101", 12)) {
		const unsigned char *eol = memchr(p, '\r', len);
		snprintf(why, sizeof(why), "upgrade refused: %.*s", (int)((eol ? eol : p + len) - p), p);
		fail(c, why);
		return 0;
	}
	c->phase = PH_OPEN;
	if (c->out_len)
		flush(c);
	events->opened(events_ctx, c);
	return (size_t)(end + 4 - p);
}

static void
deliver(struct client *c, const unsigned char *p, size_t len, int binary)
{
	events->message(events_ctx, c, p, len, binary);
}

/* Frames out of `p`: returns bytes used (whole frames only). */
static size_t
parse_frames(struct client *c, const unsigned char *p, size_t len)
{
	size_t used = 0;

	while (c->fd >= 0 && len - used >= 2) {
		const unsigned char *f = p + used;
		size_t avail = len - used, hdr = 2;
		int fin = f[0] & 0x80, op = f[0] & 0x0f, masked = f[1] & 0x80;
		uint64_t plen = f[1] & 0x7f;

		if (plen == 126) {
			if (avail < 4)
				break;
			plen = (uint64_t)f[2] << 8 | f[3];
			hdr = 4;
		} else if (plen == 127) {
			if (avail < 10)
				break;
			plen = 0;
			for (int i = 2; i < 10; i++)
				plen = plen << 8 | f[i];
			hdr = 10;
		}
		if (masked)
			hdr += 4; /* servers must not mask; unmasked below if one does */
		if (plen > MAX_MESSAGE) {
			fail(c, "frame too large");
			break;
		}
		if (avail < hdr + plen)
			break;
		unsigned char *pl = (unsigned char *)f + hdr;
		if (masked)
			for (uint64_t i = 0; i < plen; i++)
				pl[i] ^= f[hdr - 4 + (i & 3)];
		used += hdr + (size_t)plen;

		switch (op) {
		case OP_TEXT:
		case OP_BINARY:
			if (fin && !c->msg_len) {
				deliver(c, pl, (size_t)plen, op == OP_BINARY);
				break;
			}
			c->msg_len = 0;
			c->msg_binary = op == OP_BINARY;
			__attribute__((fallthrough)); /* the first fragment */
		case OP_CONT:
			if (c->msg_len + plen > MAX_MESSAGE ||
			    grow(&c->msg, &c->msg_cap, c->msg_len + (size_t)plen + 1)) {
				fail(c, "message too large");
				break;
			}
			memcpy(c->msg + c->msg_len, pl, (size_t)plen);
			c->msg_len += (size_t)plen;
			if (fin) {
				size_t n = c->msg_len;
				c->msg_len = 0;
				deliver(c, c->msg, n, c->msg_binary);
			}
			break;
		case OP_PING:
			send_frame(c, OP_PONG, pl, (size_t)plen);
			break;
		case OP_CLOSE: {
			char why[64];
			snprintf(why, sizeof(why), "closed by server (code %d)",
				 plen >= 2 ? pl[0] << 8 | pl[1] : 1005);
			fail(c, why);
			break;
		}
		case OP_PONG:
			events->pong(events_ctx, c);
			break;
		default:
			break; /* reserved */
		}
	}
	return used;
}

static size_t
parse(struct client *c, const unsigned char *p, size_t len)
{
	size_t used = 0;

	if (c->raw) {
		events->message(events_ctx, c, p, len, 0);
		return len;
	}
	if (c->phase == PH_UPGRADE) {
		used = parse_upgrade(c, p, len);
		if (!used || c->fd < 0)
			return used;
	}
	return used + parse_frames(c, p + used, len - used);
}

static void
consume(struct client *c, const unsigned char *data, size_t len)
{
	const unsigned char *p = data;
	size_t avail = len, used;

	if (c->in_len) { /* a partial frame is waiting: join it */
		if (grow(&c->in, &c->in_cap, c->in_len + len)) {
			fail(c, "out of memory");
			return;
		}
		memcpy(c->in + c->in_len, data, len);
		c->in_len += len;
		p = c->in;
		avail = c->in_len;
	}
	used = parse(c, p, avail);
	if (c->fd < 0)
		return; /* closed while parsing; its buffers are gone */
	if (p == c->in) {
		memmove(c->in, c->in + used, avail - used);
		c->in_len = avail - used;
	} else if (used < avail) {
		if (grow(&c->in, &c->in_cap, avail - used)) {
			fail(c, "out of memory");
			return;
		}
		memcpy(c->in, p + used, avail - used);
		c->in_len = avail - used;
	}
}

static void
connect_failed(struct client *c)
{
	int err = 0;
	socklen_t l = sizeof(err);

	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &l) < 0 || !err)
		err = errno ? errno : ECONNREFUSED;
	fail(c, strerror(err));
}

static void
connected(struct client *c)
{
	if (c->raw) {
		c->phase = PH_OPEN;
		events->opened(events_ctx, c);
		if (c->fd >= 0 && c->out_len)
			flush(c);
	} else
		send_upgrade(c);
}

void
ws_service(void *client, int readable, int writable, int error)
{
	struct client *c = client;

	if (c->fd < 0)
		return; /* closed earlier in this batch of events */
	if (c->phase == PH_TCP) {
		if (error)
			connect_failed(c);
		else if (writable)
			connected(c); /* the connect's EPOLLOUT edge: no SO_ERROR query needed */
		if (c->fd < 0 || !readable)
			return;
	}
	if (error && !readable) {
		connect_failed(c);
		return;
	}
	if (writable && c->out_len)
		flush(c);
	while (readable && c->fd >= 0) {
		ssize_t n = recv(c->fd, rbuf, sizeof(rbuf), 0);
		if (n > 0) {
			consume(c, rbuf, (size_t)n);
			if ((size_t)n < sizeof(rbuf))
				break; /* drained: data arriving after this raises a new edge */
			continue;
		}
		if (n == 0)
			fail(c, "closed by server");
		else if (errno == EINTR)
			continue;
		else if (errno != EAGAIN && errno != EWOULDBLOCK)
			fail(c, strerror(errno));
		break;
	}
}
