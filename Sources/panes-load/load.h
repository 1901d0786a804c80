/*
 * The run: its options and its state, and the few things every module may
 * do to it (finish it, say how it goes; load.c). There is one run, made by
 * main.c, and it is passed by pointer, as `L`, to whatever touches it: the
 * protocol and workload callbacks, client.c, report.c, the timers (their
 * ctx). Nothing else reaches it (but main.c's signal handler), so each file
 * depends one way: main.c on everything, client.c on ws.c and the vtables,
 * ws.c on net.c and nodes.c only (its events go back through the callbacks
 * client.c gives it). A workload's own counters stay in its file.
 *
 * Threading: one thread. Everything, every client, timer and histogram, is
 * touched only from the epoll loop (net.c). Signal handlers only set a flag.
 */
#ifndef PANES_LOAD_LOAD_H
#define PANES_LOAD_LOAD_H

#include <stdint.h>

#include "cpu.h"
#include "hist.h"

struct client;
struct protocol;
struct session_cred;
struct workload;

struct options {
	const char *host;
	int port;
	const char *workload;
	int n;                  /* observers (fanout), idle connections (connect), editors (docs), writers */
	int concurrency;        /* connects in flight at once */
	int writes, warmup;
	double rate;            /* writes per second; 0 = as fast as `inflight` allows */
	int inflight;           /* writes outstanding at once (writes: per writer) */
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
	double duration;        /* docs, writes: seconds measured */
	double warmup_time;     /* docs, writes: seconds before measuring */
	long doc_bytes;         /* docs: initial text of the document, bytes */
	int keys;               /* writes: keys written into the domain before measuring */
	const char *sessions_out; /* connect (Panes): write each scene's session here (sessions.h) */
	const char *sessions;   /* storm (Panes): resume these sessions (sessions.h) */
	double interval;        /* storm: ms between the normal client's rounds; 0 = no normal client */
	int idempotency_keys;   /* writes: each setPreference carries an idempotencyKey */
	int quiet;              /* no progress on stderr */
	const char *token;      /* Panes: connect with auth.token instead of a name */
	const char *forge;      /* Panes: connect with this token prefix and ... */
	int forge_bytes;        /* ... this many random bytes, base64url, as its signature */
};

struct load {
	struct options opt;
	const struct protocol *proto;
	const struct workload *work;
	struct client *clients;
	int total;              /* clients, writer included */
	int connect_limit;      /* connect clients [0, connect_limit) only (probe raises it) */
	int next_connect;       /* next index to start connecting */
	int pumping;            /* clients_pump is running (a failure in it calls it again) */
	int inflight_connects;
	int ready, failed, closed;
	int consecutive_failures;
	int gave_up;            /* stopped connecting after too many failures */
	int observe;            /* observers must subscribe after the hello (fanout) */
	int hold_until_eof;     /* the workload ends when stdin closes (connect, probe) */
	int started, finished, stdin_eof, go;
	/** Called (once) on the next "go" line after the first: a workload's later stage. */
	void (*on_go)(struct load *L);
	uint64_t refused;       /* replies with ok:false, of any request */
	volatile int interrupted;
	int exit_code;
	uint64_t t_begin, t_all_ready, t_start, t_end;
	struct cpu_snap cpu_begin, cpu_ready, cpu_end;
	char first_error[256];
	int errors_printed;     /* note_error prints the first few */
	struct hist connect_hist; /* connect start -> ready, per client */
	/* storm (Panes): client i >= resume_base resumes resumes[i - resume_base]; NULL: none do */
	struct session_cred *resumes;
	int resume_base;
};

/** Ends the run: takes the end time and CPU, prints `result`. Later calls do nothing. */
void finish(struct load *L, int exit_code);
void progress(const struct load *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** Keeps the first error for the report and prints the first few. */
void note_error(struct load *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
