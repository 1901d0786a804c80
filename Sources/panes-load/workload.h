/*
 * What the clients do once connected, and what is measured. A workload is one
 * workload_*.c with one of these, and one entry in main.c's table. Every
 * callback is given the run (load.h).
 */
#ifndef PANES_LOAD_WORKLOAD_H
#define PANES_LOAD_WORKLOAD_H

#include <stdint.h>
#include <stdio.h>

struct client;
struct load;

struct workload {
	const char *name;
	/** Sets roles and L->total from the options; nonzero = fatal. */
	int (*setup)(struct load *L);
	/** Everyone is connected (and "go" was given, if asked for). */
	void (*start)(struct load *L);
	/** A client finished its handshake (ok) or failed to; probe reports each one. */
	void (*connected)(struct load *L, struct client *c, int ok, uint64_t now);
	/** An observer has change `seq`. */
	void (*delivered)(struct load *L, struct client *c, uint32_t seq, uint64_t now);
	/** The writer's change `seq` was handed to the socket / acknowledged by the server. */
	void (*sent)(struct load *L, uint32_t seq, uint64_t now);
	void (*acked)(struct load *L, uint32_t seq, uint64_t now);
	/** The server refused write `seq` (a reply with ok:false). */
	void (*write_refused)(struct load *L, uint32_t seq);
	/** A ready client went away. */
	void (*dropped)(struct load *L, struct client *c);
	/** Extra fields for the result object, each written as `,"key":value`. */
	void (*report)(struct load *L, FILE *out);
	/* Documents: the answers to the protocol's doc_* requests (docs workload). */
	void (*doc_created)(struct load *L, struct client *c, const char *doc);
	void (*doc_opened)(struct load *L, struct client *c, uint64_t revision, uint64_t length,
			   uint64_t now);
	/** The author's edit `k` was accepted as `revision`. */
	void (*doc_acked)(struct load *L, struct client *c, uint32_t k, uint64_t revision, uint64_t now);
	/** Editor `author`'s edit `k` reached `c` as `revision`. */
	void (*doc_operation)(struct load *L, struct client *c, uint32_t author, uint32_t k, uint64_t revision,
			      uint64_t now);
	/**
	 * Panes: `c`'s connect was answered with session `id` and `secret` of `user`;
	 * `created` if it is a new session (or a fork), not the one it asked to resume.
	 */
	void (*session)(struct load *L, struct client *c, const char *user, const char *id, const char *secret,
			int created);
	/** The round trip the protocol's `ping` started came back to `c`. */
	void (*pong)(struct load *L, struct client *c, uint64_t now);
	/** The server refused a request (a reply with ok:false); `what` names the request. */
	void (*refused)(struct load *L, struct client *c, const char *what, const char *why);
};

#endif
