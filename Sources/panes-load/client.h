/*
 * One connection to the server under test, and its fate: pacing connects,
 * counting who is ready, failed or gone, and handing sends to ws.c. ws.c
 * reports back through the callbacks clients_init() gives it, never by
 * calling in here.
 *
 * Threading: the only thread (see main.c).
 */
#ifndef PANES_LOAD_CLIENT_H
#define PANES_LOAD_CLIENT_H

#include <stddef.h>
#include <stdint.h>

struct load;

enum role { ROLE_OBSERVER, ROLE_WRITER };

enum client_state {
	CS_IDLE,       /* not yet asked to connect */
	CS_CONNECTING, /* TCP connect + WebSocket upgrade in progress */
	CS_HELLO,      /* socket open, protocol handshake (e.g. Panes connect) in progress */
	CS_READY,      /* fully set up: counted as connected */
	CS_FAILED,     /* never became ready */
	CS_CLOSED,     /* was ready, then the server closed it */
};

enum frame_kind { SEND_TEXT = 1, SEND_BINARY = 2, SEND_RAW = 0 };

struct client {
	int fd;
	uint32_t index;
	uint8_t role;
	uint8_t state;
	uint8_t raw;           /* a raw TCP connection (nchan's HTTP publisher), not a WebSocket */
	uint8_t phase;         /* ws.c's own progress: TCP, upgrade, open */
	uint8_t msg_binary;    /* opcode of the fragmented message being reassembled */
	uint32_t last_seq;     /* highest write seq delivered to this client */
	uint32_t frames;       /* update frames counted (for protocols matched by arrival order) */
	uint64_t t_connect;    /* when the connect started, ns */
	unsigned char *in;     /* bytes read but not yet parsed (partial frame or HTTP head) */
	size_t in_len, in_cap;
	unsigned char *out;    /* bytes not yet accepted by the socket */
	size_t out_len, out_cap;
	unsigned char *msg;    /* a message arriving in fragments */
	size_t msg_len, msg_cap;
};

/** Resolves the server's address and hands ws.c the callbacks that report to `L`; 0 or -1. */
int clients_init(struct load *L);
/** Workload setup: --n clients that only hold their connections, until stdin closes (connect, probe). */
void clients_hold_idle(struct load *L);
/** Starts connects while fewer than `concurrency` are in flight and the limit allows. */
void clients_pump(struct load *L);
/** Fails connects that have taken longer than --connect-timeout. */
void clients_check_timeouts(struct load *L, uint64_t now);
void client_ready(struct load *L, struct client *c);
void client_fail(struct load *L, struct client *c, const char *why);
/** Sends a message; `seq` marks a measured write (its send time is taken now). */
int client_send(struct load *L, struct client *c, const void *buf, size_t len, enum frame_kind kind,
		uint32_t seq);
/** A protocol's `ping` where the server has no request of its own: a WebSocket ping. */
void client_ws_ping(struct load *L, struct client *c);
/** The fanout writer (client 0), or NULL if this workload has none. */
struct client *writer_client(struct load *L);

#endif
