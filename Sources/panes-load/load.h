/*
 * panes-load: a WebSocket load generator for the Panes benchmarks.
 *
 * Threading: one thread. Everything below, every client, timer and
 * histogram, is touched only from the epoll loop in net.c. Signal handlers
 * only set a flag.
 *
 * Shape: a *protocol* (proto_*.c) knows how to speak to one kind of server
 * (Panes, the raw broadcast server, nchan, y-websocket); a *workload*
 * (workload_*.c) decides what the clients do once connected and what is
 * measured. client.c paces connections and reports their fate; ws.c is the
 * WebSocket client itself; net.c the loop and timers. Adding a workload is
 * one file with a `struct workload` and one line in main.c.
 *
 * Why not libwebsockets' client: Debian's lws 4.1.6 has only its poll()
 * loop (no LWS_WITH_EXTERNAL_POLL), which scans every socket on every turn.
 * At 10k connections that made the generator cost as much CPU as the
 * server it measures. Here a received frame costs one epoll event and one
 * recv(): the least any client can pay.
 */
#ifndef PANES_LOAD_H
#define PANES_LOAD_H

#include <stdint.h>
#include <stdio.h>

#include "hist.h"

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

/** How to speak to one kind of server. */
struct protocol {
	const char *name;
	const char *subprotocol;         /* WebSocket subprotocol to offer, or NULL */
	int writer_is_raw;               /* the writer is a raw TCP (HTTP) connection */
	int (*prepare)(void);            /* load files, build templates; nonzero = fatal */
	const char *(*path)(const struct client *c);
	/** The socket is open: send a hello, or call client_ready(). */
	void (*opened)(struct client *c);
	/** One whole message (or raw chunk) arrived. */
	void (*message)(struct client *c, const unsigned char *buf, size_t len, int binary);
	/** Publish change `seq` through the writer. */
	void (*write)(struct client *writer, uint32_t seq);
	/*
	 * Documents (the docs workload); NULL where a protocol has none. Each
	 * answer comes back through the workload's doc_* callbacks.
	 */
	/** Create the benchmark's document -> doc_created. */
	void (*doc_create)(struct client *c);
	/** Open document `doc` -> doc_opened. */
	void (*doc_open)(struct client *c, const char *doc);
	/**
	 * Send this editor's edit number `k` (from 0): one character inserted at
	 * `pos` of a document `length` scalars long at `revision` -> doc_acked for
	 * the author, doc_operation for every other editor.
	 */
	void (*doc_edit)(struct client *c, const char *doc, uint32_t k, uint64_t revision, uint64_t pos,
			 uint64_t length);
};

/** What the clients do once connected, and what is measured. */
struct workload {
	const char *name;
	/** Sets roles and g.total from the options; nonzero = fatal. */
	int (*setup)(void);
	/** Everyone is connected (and "go" was given, if asked for). */
	void (*start)(void);
	/** An observer has change `seq`. */
	void (*delivered)(struct client *c, uint32_t seq, uint64_t now);
	/** The writer's change `seq` was handed to the socket / acknowledged by the server. */
	void (*sent)(uint32_t seq, uint64_t now);
	void (*acked)(uint32_t seq, uint64_t now);
	/** A ready observer went away. */
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
	/** The server refused a request (a reply with ok:false); `what` names the request. */
	void (*refused)(struct client *c, const char *what, const char *why);
};

struct options {
	const char *host;
	int port;
	const char *workload;
	int n;                  /* observers (fanout) or idle connections (connect) */
	int concurrency;        /* connects in flight at once */
	int writes, warmup;
	double rate;            /* writes per second; 0 = as fast as `inflight` allows */
	int inflight;           /* writes outstanding at once */
	int payload;            /* application payload bytes per write */
	double hold;            /* connect: seconds to hold after ready; <0 = until stdin EOF */
	int wait_go;            /* wait for a "go" line on stdin before starting */
	double timeout;         /* whole run, seconds */
	double connect_timeout; /* one connection's TCP + upgrade + hello, seconds */
	double write_timeout;   /* a write not seen by every observer in this long is lost */
	int stop_after_failures;/* consecutive connect failures before giving up */
	const char *sources[64];/* local source addresses to bind, round by round */
	int nsources;
	int per_source;         /* connections per source address */
	const char *user;
	int users;              /* spread connections over this many users (>1: USER-i) */
	const char *workspace;
	const char *domain;     /* Panes preference domain */
	const char *key_path;
	const char *channel;    /* nchan channel / yjs document name */
	const char *updates;    /* yjs: file of prepared update messages */
	int first_index;        /* index offset, so several processes name users apart */
	double duration;        /* docs: seconds measured */
	double warmup_time;     /* docs: seconds typed before measuring */
};

struct rusage_snap {
	double user, sys;
};

struct load {
	struct options opt;
	const struct protocol *proto;
	const struct workload *work;
	struct client *clients;
	int total;              /* clients, writer included */
	int next_connect;       /* next index to start connecting */
	int inflight_connects;
	int ready, failed, closed;
	int consecutive_failures;
	int gave_up;            /* stopped connecting after too many failures */
	int observe;            /* observers must subscribe after the hello (fanout) */
	int started, finished, stdin_eof, go;
	/** Called (once) on the next "go" line after the first: a workload's later stage. */
	void (*on_go)(void);
	uint64_t refused;       /* replies with ok:false, of any request */
	volatile int interrupted;
	int exit_code;
	uint64_t t_begin, t_all_ready, t_start, t_end;
	struct rusage_snap cpu_begin, cpu_ready, cpu_end;
	char first_error[256];
	struct hist connect_hist; /* connect start -> ready, per client */
};

extern struct load g;

/* main.c */
uint64_t now_ns(void);
void finish(int exit_code);
void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void note_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* net.c: the epoll loop and timers */
struct timer {
	uint64_t due;           /* ns, 0 = not armed */
	void (*cb)(struct timer *t);
};
int net_init(void);
/** Arms `t` to fire once, `delay_ns` from now (re-arming moves it). */
void timer_set(struct timer *t, uint64_t delay_ns, void (*cb)(struct timer *t));
void timer_cancel(struct timer *t);
/** Registers `c`'s socket for input and output, edge-triggered, once. */
int net_watch(struct client *c);
void net_forget(struct client *c);
void net_run(void);

/* ws.c: the WebSocket (or raw TCP) client */
int ws_resolve(const char *host, int port);
/** Starts a non-blocking connect; the outcome arrives through client.c. */
int ws_connect(struct client *c, const char *source);
/** Handles readiness (or an error) on `c`'s socket. */
void ws_service(struct client *c, int readable, int writable, int error);
int ws_send(struct client *c, const void *buf, size_t len, enum frame_kind kind);
void ws_close(struct client *c);

/* client.c */
void clients_pump(void);
void clients_check_timeouts(uint64_t now);
/** The socket is open (WebSocket upgraded, or raw TCP connected). */
void client_opened(struct client *c);
void client_ready(struct client *c);
void client_fail(struct client *c, const char *why);
/** Sends a message; `seq` marks a measured write (its send time is taken now). */
int client_send(struct client *c, const void *buf, size_t len, enum frame_kind kind, uint32_t seq);
struct client *writer_client(void);

/* report.c */
void snap_cpu(struct rusage_snap *s);
void report_ready(void);
void report_result(void);
void json_string(FILE *out, const char *s);

/* json_scan.c: small scanners for the JSON the servers send; not a parser. */
const char *json_value(const char *buf, size_t len, const char *key);
long long json_int(const char *buf, size_t len, const char *key, long long fallback);
size_t json_copy_string(const char *buf, size_t len, const char *key, char *out, size_t cap);
/** Writes `{"seq":SEQ,"pad":"xx…"}` padded to `size` bytes (at least the bare object). */
size_t make_payload(char *out, size_t cap, uint32_t seq, int size);
/* An observer received a text frame carrying a "seq": report the delivery to the workload. */
void deliver_seq(struct client *c, const unsigned char *buf, size_t len, int binary);

/* Registered protocols and workloads. */
extern const struct protocol proto_panes, proto_raw, proto_nchan, proto_yjs;
extern const struct workload workload_connect, workload_fanout, workload_docs;

#endif
