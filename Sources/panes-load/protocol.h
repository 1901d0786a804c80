/*
 * How to speak to one kind of server (Panes, the raw broadcast server, nchan,
 * y-websocket). A protocol turns the workload's requests into frames and the
 * server's frames into the workload's callbacks (workload.h). Every callback
 * is given the run (load.h).
 */
#ifndef PANES_LOAD_PROTOCOL_H
#define PANES_LOAD_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>

struct client;
struct load;

struct protocol {
	const char *name;
	const char *subprotocol;         /* WebSocket subprotocol to offer, or NULL */
	int writer_is_raw;               /* the writer is a raw TCP (HTTP) connection */
	int (*prepare)(struct load *L);            /* load files, build templates; nonzero = fatal */
	const char *(*path)(struct load *L, const struct client *c);
	/** The socket is open: send a hello, or call client_ready(). */
	void (*opened)(struct load *L, struct client *c);
	/** One whole message (or raw chunk) arrived. */
	void (*message)(struct load *L, struct client *c, const unsigned char *buf, size_t len, int binary);
	/**
	 * A round trip through the server's loop, answered through the workload's
	 * pong: Panes' `ping` request; a WebSocket ping where a server has no
	 * request of its own.
	 */
	void (*ping)(struct load *L, struct client *c);
	/** Publish change `seq` through the writer. */
	void (*write)(struct load *L, struct client *writer, uint32_t seq);
	/**
	 * Preferences (the writes workload); NULL where a protocol has none. Sets
	 * `key_path` in the configured domain to a value carrying `seq`; the
	 * answer comes back through the workload's acked or write_refused.
	 */
	void (*pref_set)(struct load *L, struct client *c, uint32_t seq, const char *key_path);
	/*
	 * Documents (the docs workload); NULL where a protocol has none. Each
	 * answer comes back through the workload's doc_* callbacks.
	 */
	/** Create the benchmark's document holding `text_bytes` of initial text -> doc_created. */
	void (*doc_create)(struct load *L, struct client *c, size_t text_bytes);
	/** Open document `doc` -> doc_opened. */
	void (*doc_open)(struct load *L, struct client *c, const char *doc);
	/**
	 * Send this editor's edit number `k` (from 0): one character inserted at
	 * `pos` of a document `length` scalars long at `revision` -> doc_acked for
	 * the author, doc_operation for every other editor.
	 */
	void (*doc_edit)(struct load *L, struct client *c, const char *doc, uint32_t k, uint64_t revision,
			 uint64_t pos, uint64_t length);
};

#endif
