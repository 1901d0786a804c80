/*
 * A minimal WebSocket client (RFC 6455) for load generation, or raw TCP for
 * nchan's HTTP publisher. See ws.c for what it deliberately does not check.
 *
 * Threading: the only thread (see main.c).
 */
#ifndef PANES_LOAD_WS_H
#define PANES_LOAD_WS_H

#include <stddef.h>

#include "client.h"

/** Resolves each node's address (nodes.h) on `host`, makes the upgrade key and mask; 0 or -1. */
int ws_resolve(const char *host);
/** Starts a non-blocking connect; the outcome arrives through client.c. */
int ws_connect(struct client *c, const char *source);
/** Handles readiness (or an error) on a client's socket: a net_handler for net_init(). */
void ws_service(void *client, int readable, int writable, int error);
int ws_send(struct client *c, const void *buf, size_t len, enum frame_kind kind);
/** Sends a WebSocket ping; its pong reaches the workload's `pong`. */
void ws_ping(struct client *c);
void ws_close(struct client *c);

#endif
