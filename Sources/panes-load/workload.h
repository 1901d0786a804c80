/*
 * What the clients do once connected, and what is measured. A workload is one
 * workload_*.c with one of these, and one entry in main.c's table.
 */
#ifndef PANES_LOAD_WORKLOAD_H
#define PANES_LOAD_WORKLOAD_H

#include <stdint.h>
#include <stdio.h>

struct client;

struct workload {
	const char *name;
	/** Sets roles and g.total from the options; nonzero = fatal. */
	int (*setup)(void);
	/** Everyone is connected (and "go" was given, if asked for). */
	void (*start)(void);
	/** A client finished its handshake (ok) or failed to; probe reports each one. */
	void (*connected)(struct client *c, int ok, uint64_t now);
	/** An observer has change `seq`. */
	void (*delivered)(struct client *c, uint32_t seq, uint64_t now);
	/** The writer's change `seq` was handed to the socket / acknowledged by the server. */
	void (*sent)(uint32_t seq, uint64_t now);
	void (*acked)(uint32_t seq, uint64_t now);
	/** The server refused write `seq` (a reply with ok:false). */
	void (*write_refused)(uint32_t seq);
	/** A ready client went away. */
	void (*dropped)(struct client *c);
	/** Extra fields for the result object, each written as `,"key":value`. */
	void (*report)(FILE *out);
	/* Documents: the answers to the protocol's doc_* requests (docs workload). */
	void (*doc_created)(struct client *c, const char *doc);
	void (*doc_opened)(struct client *c, uint64_t revision, uint64_t length, uint64_t now);
	/** The author's edit `k` was accepted as `revision`. */
	void (*doc_acked)(struct client *c, uint32_t k, uint64_t revision, uint64_t now);
	/** Editor `author`'s edit `k` reached `c` as `revision`. */
	void (*doc_operation)(struct client *c, uint32_t author, uint32_t k, uint64_t revision, uint64_t now);
	/**
	 * Panes: `c`'s connect was answered with session `id` and `secret` of `user`;
	 * `created` if it is a new session (or a fork), not the one it asked to resume.
	 */
	void (*session)(struct client *c, const char *user, const char *id, const char *secret, int created);
	/** The round trip the protocol's `ping` started came back to `c`. */
	void (*pong)(struct client *c, uint64_t now);
	/** The server refused a request (a reply with ok:false); `what` names the request. */
	void (*refused)(struct client *c, const char *what, const char *why);
};

#endif
