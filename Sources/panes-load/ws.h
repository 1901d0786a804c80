/*
 * A minimal WebSocket client (RFC 6455) for load generation, or raw TCP for
 * nchan's HTTP publisher. See ws.c for what it deliberately does not check.
 * It knows nothing of the run: what happens on a socket goes back through
 * the `ws_events` it was given (client.c's), with their context.
 *
 * Threading: the only thread (see main.c).
 */
#ifndef PANES_LOAD_WS_H
#define PANES_LOAD_WS_H

#include <stddef.h>

#include "client.h"

/** What happens on the sockets, reported with the `ctx` given to ws_init. */
struct ws_events {
	/** The path the upgrade asks for. */
	const char *(*path)(void *ctx, const struct client *c);
	/** The socket is open (WebSocket upgraded, or raw TCP connected). */
	void (*opened)(void *ctx, struct client *c);
	/** One whole message (or, raw, whatever bytes arrived). */
	void (*message)(void *ctx, struct client *c, const unsigned char *buf, size_t len, int binary);
	/** The answer to a ws_ping. */
	void (*pong)(void *ctx, struct client *c);
	/** The connection failed or the server closed it; the callback closes it (ws_close). */
	void (*failed)(void *ctx, struct client *c, const char *why);
};

/**
 * Resolves each node's address (nodes.h) on `host`, makes the upgrade key and
 * mask, and keeps `subprotocol` to offer and where to report; 0 or -1.
 */
int ws_init(const char *host, const char *subprotocol, const struct ws_events *events, void *ctx);
/** Starts a non-blocking connect; the outcome arrives through the events. */
int ws_connect(struct client *c, const char *source);
/** Handles readiness (or an error) on a client's socket: a net_handler for net_init(). */
void ws_service(void *client, int readable, int writable, int error);
int ws_send(struct client *c, const void *buf, size_t len, enum frame_kind kind);
/** Sends a WebSocket ping; its pong reaches the workload's `pong`. */
void ws_ping(struct client *c);
void ws_close(struct client *c);

#endif
