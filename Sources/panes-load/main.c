/*
 * panes-load: open many WebSocket connections from one process and measure
 * what a server does with them. `panes-load --help` lists the options.
 *
 *   panes-load connect --protocol panes --port P --n 10000 --hold -1
 *   panes-load fanout  --protocol raw   --port P --n 1000 --writes 200
 *   panes-load docs    --protocol panes --port P --n 100 --users 100 --rate 5 --duration 30
 *   panes-load writes  --protocol panes --port P --n 10 --users 10 --rate 1000 --duration 10
 *   panes-load probe   --protocol panes --port P --n 50 --hold -1    # one connect per "go" line
 *   panes-load connect --protocol panes --port P --n 10000 --users 100 --sessions-out S --hold -1
 *   panes-load storm   --protocol panes --port P --n 10000 --sessions S --hold -1   # after a restart
 *   panes-load ping    --protocol panes --port P --n 1 --rate 200 --token T   # a phase per "go" line
 *   panes-load authflood --protocol panes --port P --n 8000 --rate 700 --forge H.C. --forge-bytes 256
 *
 * stdout: JSON lines (`ready`, [docs: `opened`; writes: `filled`; probe:
 * `connected`; storm: `stormed`], then `result`); stderr: progress and errors.
 * Exit code: 0 ok, 1 bad usage or setup, 2 the run measured less than asked
 * (lost changes, nobody connected), 3 timed out, 130 interrupted.
 *
 * Shape: a *protocol* (proto_*.c, protocol.h) knows how to speak to one
 * kind of server (Panes, the raw broadcast server, nchan, y-websocket); a
 * *workload* (workload_*.c, workload.h) decides what the clients do once
 * connected and what is measured. client.c paces connections and reports
 * their fate; ws.c is the WebSocket client itself; net.c the loop and
 * timers; load.h the run's options and state, passed to each as `L`;
 * load.c finishing it. Adding a workload is one file with a `struct
 * workload` and one line in `workloads[]` below.
 *
 * Threading: one thread; everything runs from net.c's epoll loop. Signal
 * handlers only set a flag.
 *
 * Why not libwebsockets' client: Debian's lws 4.1.6 has only its poll()
 * loop for a client that owns its sockets (no LWS_WITH_EXTERNAL_POLL),
 * which scans every socket on every turn. At 10k connections that made the
 * generator cost as much CPU as the server it measures. Here a received
 * frame costs one epoll event and one recv(): the least any client can pay.
 */
#include "load.h"

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "clock.h"
#include "cpu.h"
#include "hist.h"
#include "net.h"
#include "nodes.h"
#include "proto_nchan.h"
#include "proto_panes.h"
#include "proto_raw.h"
#include "proto_yjs.h"
#include "workload_connect.h"
#include "workload_docs.h"
#include "workload_fanout.h"
#include "workload_authflood.h"
#include "workload_ping.h"
#include "workload_probe.h"
#include "workload_storm.h"
#include "workload_writes.h"
#include "ws.h"

/*
 * The run. Everything else is handed a pointer to it; only the signal
 * handler, which cannot be, reaches it here.
 */
static struct load run;

static const struct protocol *const protocols[] = { &proto_panes, &proto_raw, &proto_nchan,
						    &proto_yjs };
/* A new workload is one file with a `struct workload`, and one entry here. */
static const struct workload *const workloads[] = { &workload_connect, &workload_fanout, &workload_docs,
						    &workload_probe, &workload_writes, &workload_storm, &workload_ping,
						    &workload_authflood };

static struct timer progress_timer, stdin_timer, deadline_timer, connect_timer;

static void
on_signal(int sig)
{
	(void)sig;
	run.interrupted = 1; /* epoll_wait returns EINTR; the loop finishes */
}

#define MS NS_PER_MS

static void
show_progress(struct timer *t)
{
	struct load *L = t->ctx;

	if (L->t_all_ready)
		return;
	progress(L, "%d/%d ready, %d failed, %d connecting", L->ready, L->total, L->failed,
		 L->inflight_connects);
	timer_set(t, 1000 * MS, show_progress, L);
}

static void
check_connects(struct timer *t)
{
	struct load *L = t->ctx;

	clients_check_timeouts(L, now_ns());
	/* Connects can start after `ready` (probe, storm): keep watching while any may come. */
	if (!L->t_all_ready || L->next_connect < L->total || L->inflight_connects)
		timer_set(t, 250 * MS, check_connects, L);
}

/* stdin carries "go" (start measuring) and EOF (stop holding, finish). */
static void
watch_stdin(struct timer *t)
{
	struct load *L = t->ctx;
	static char line[64];
	static size_t used;
	struct pollfd p = { .fd = 0, .events = POLLIN };

	while (!L->stdin_eof && poll(&p, 1, 0) > 0) {
		char ch;
		ssize_t n = read(0, &ch, 1);
		if (n <= 0) {
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				break;
			L->stdin_eof = 1;
			break;
		}
		if (ch != '\n') {
			if (used + 1 < sizeof(line))
				line[used++] = ch;
			continue;
		}
		line[used] = 0;
		used = 0;
		if (strcmp(line, "go"))
			continue;
		if (!L->started) {
			L->go = 1;
			if (L->t_all_ready) {
				L->started = 1;
				L->t_start = now_ns();
				L->work->start(L);
			}
		} else if (L->on_go) {
			/* A workload's later stage (docs: start typing; probe: one more connect). */
			void (*stage)(struct load *L) = L->on_go;
			L->on_go = NULL;
			stage(L);
		}
	}
	if (L->stdin_eof) {
		/* Holding connections for a reader, or waiting for a go that will never come. */
		if (L->opt.hold < 0 || (L->opt.wait_go && !L->started) || L->on_go) {
			finish(L, L->started || L->hold_until_eof ? 0 : 130);
			return;
		}
	}
	if (!L->finished && !L->stdin_eof)
		timer_set(t, 20 * MS, watch_stdin, L);
}

static int
stop_running(void *ctx)
{
	struct load *L = ctx;

	return L->finished || L->interrupted;
}

static void
deadline(struct timer *t)
{
	struct load *L = t->ctx;

	note_error(L, "timed out after %.0f s", L->opt.timeout);
	finish(L, 3);
}

static void
usage(FILE *out)
{
	fputs("usage: panes-load connect|fanout|docs|writes|probe|storm|ping|authflood [options]\n"
	      "  --protocol panes|raw|nchan|yjs   what the server speaks (panes)\n"
	      "  --host ADDR --port N             server address (127.0.0.1, required port)\n"
	      "  --ports P1,P2,..                 a cluster: one node per port on --host; client i goes to\n"
	      "                                   node (i + first index) mod nodes (the writer: the first)\n"
	      "  --n N                            idle connections (connect), observers (fanout), editors (docs),\n"
	      "                                   writers (writes), most connects (probe), clients reconnecting (storm)\n"
	      "  --concurrency K                  connects in flight at once (256)\n"
	      "  --sources A,B,..  --per-source M bind local addresses, M connections each (25000)\n"
	      "  --stop-after-failures F          give up connecting after F failures in a row (200)\n"
	      "  --connect-timeout S              one connection's connect + handshake limit (10)\n"
	      "  --hold S                         connect: hold S seconds after ready; -1 = until stdin EOF (0)\n"
	      "  --wait-go                        after `ready`, wait for a \"go\" line on stdin\n"
	      "  --writes W --warmup U            measured and unmeasured changes (100, 10)\n"
	      "  --inflight K --rate R            changes outstanding at once (1), per second (0 = no limit)\n"
	      "  --payload B                      application payload bytes per change (64)\n"
	      "  --write-timeout S                a change not everywhere after S seconds is lost (10)\n"
	      "  --duration S --warmup-time U     docs, writes: seconds measured, and before measuring (10, 2)\n"
	      "                                   (--rate R: docs, edits per second per editor; 0 = 5;\n"
	      "                                    writes: all writers together, open loop; 0 = closed loop)\n"
	      "  --doc-bytes B                    docs: the document starts with B bytes of text (0)\n"
	      "  --keys K                         writes: first fill the domain with K keys (0)\n"
	      "  --sessions-out FILE              connect (panes): write each scene's `user id secret` to FILE\n"
	      "  --sessions FILE                  storm (panes): client i resumes line (first index + i) of FILE\n"
	      "  --interval MS                    storm: the normal client's rounds, ms apart; 0 = none (10)\n"
	      "  --idempotency-keys               writes: every write carries an idempotencyKey of its own\n"
	      "  --timeout S                      give up on the whole run after S seconds (600)\n"
	      "  --user NAME --users K            Panes auth name; spread over K users NAME-i (bench, 1)\n"
	      "  --workspace W --domain D --key-path K   Panes preference (bench, user, bench.value)\n"
	      "  --channel C                      nchan channel / y-websocket document (bench)\n"
	      "  --updates FILE                   yjs: prepared updates from bench/yjs-updates.js\n"
	      "                                   (docs: every editor's own, scripts/bench_lib/yjs_editors.js)\n"
	      "  --first-index I                  offset of this process's clients, to name users apart\n"
	      "  --token T                        Panes: connect with auth.token T instead of a name\n"
	      "  --forge PREFIX --forge-bytes B   Panes: connect with the token PREFIX followed by B random\n"
	      "                                   bytes, base64url (a JWT with a random signature; authflood)\n"
	      "  --quiet                          no progress on stderr\n",
	      out);
}

static void
split_sources(struct load *L, char *list)
{
	for (char *tok = strtok(list, ","); tok && L->opt.nsources < 64; tok = strtok(NULL, ","))
		L->opt.sources[L->opt.nsources++] = tok;
}

static int
parse(struct load *L, int argc, char **argv)
{
	enum { O_HOST = 256, O_PORT, O_PROTO, O_N, O_CONC, O_SOURCES, O_PER_SOURCE, O_STOP, O_HOLD,
	       O_GO, O_WRITES, O_WARMUP, O_INFLIGHT, O_RATE, O_PAYLOAD, O_WTIMEOUT, O_TIMEOUT, O_CTIMEOUT,
	       O_USER, O_USERS, O_WORKSPACE, O_DOMAIN, O_KEYPATH, O_CHANNEL, O_UPDATES, O_FIRST,
	       O_DURATION, O_WARMUP_TIME, O_DOC_BYTES, O_KEYS, O_PORTS, O_SESSIONS_OUT, O_SESSIONS,
	       O_INTERVAL, O_TOKEN, O_FORGE, O_FORGE_BYTES, O_QUIET, O_HELP, O_IDEMPOTENCY };
	static const struct option longs[] = {
		{ "host", 1, 0, O_HOST }, { "port", 1, 0, O_PORT }, { "protocol", 1, 0, O_PROTO },
		{ "n", 1, 0, O_N }, { "concurrency", 1, 0, O_CONC }, { "sources", 1, 0, O_SOURCES },
		{ "per-source", 1, 0, O_PER_SOURCE }, { "stop-after-failures", 1, 0, O_STOP },
		{ "hold", 1, 0, O_HOLD }, { "wait-go", 0, 0, O_GO }, { "writes", 1, 0, O_WRITES },
		{ "warmup", 1, 0, O_WARMUP }, { "inflight", 1, 0, O_INFLIGHT }, { "rate", 1, 0, O_RATE },
		{ "payload", 1, 0, O_PAYLOAD }, { "write-timeout", 1, 0, O_WTIMEOUT },
		{ "timeout", 1, 0, O_TIMEOUT }, { "connect-timeout", 1, 0, O_CTIMEOUT }, { "user", 1, 0, O_USER }, { "users", 1, 0, O_USERS },
		{ "workspace", 1, 0, O_WORKSPACE }, { "domain", 1, 0, O_DOMAIN },
		{ "key-path", 1, 0, O_KEYPATH }, { "channel", 1, 0, O_CHANNEL },
		{ "updates", 1, 0, O_UPDATES }, { "first-index", 1, 0, O_FIRST },
		{ "duration", 1, 0, O_DURATION }, { "warmup-time", 1, 0, O_WARMUP_TIME },
		{ "doc-bytes", 1, 0, O_DOC_BYTES }, { "keys", 1, 0, O_KEYS }, { "ports", 1, 0, O_PORTS },
		{ "sessions-out", 1, 0, O_SESSIONS_OUT }, { "sessions", 1, 0, O_SESSIONS },
		{ "interval", 1, 0, O_INTERVAL }, { "idempotency-keys", 0, 0, O_IDEMPOTENCY },
		{ "token", 1, 0, O_TOKEN }, { "forge", 1, 0, O_FORGE }, { "forge-bytes", 1, 0, O_FORGE_BYTES },
		{ "quiet", 0, 0, O_QUIET }, { "help", 0, 0, O_HELP }, { 0, 0, 0, 0 }
	};
	struct options *o = &L->opt;
	const char *proto = "panes";
	int ch;

	*o = (struct options){ .host = "127.0.0.1", .concurrency = 256, .writes = 100, .warmup = 10,
			       .inflight = 1, .payload = 64, .timeout = 600, .write_timeout = 10,
			       .connect_timeout = 10,
			       .stop_after_failures = 200, .per_source = 25000, .user = "bench",
			       .users = 1, .workspace = "bench", .domain = "user",
			       .key_path = "bench.value", .channel = "bench", .duration = 10,
			       .warmup_time = 2, .interval = 10 };
	if (argc < 2 || argv[1][0] == '-') {
		usage(argc >= 2 && !strcmp(argv[1], "--help") ? stdout : stderr);
		return argc >= 2 && !strcmp(argv[1], "--help") ? -1 : 1;
	}
	o->workload = argv[1];
	optind = 2;
	while ((ch = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (ch) {
		case O_HOST: o->host = optarg; break;
		case O_PORT: o->port = atoi(optarg); break;
		case O_PROTO: proto = optarg; break;
		case O_N: o->n = atoi(optarg); break;
		case O_CONC: o->concurrency = atoi(optarg); break;
		case O_SOURCES: split_sources(L, optarg); break;
		case O_PER_SOURCE: o->per_source = atoi(optarg); break;
		case O_STOP: o->stop_after_failures = atoi(optarg); break;
		case O_HOLD: o->hold = atof(optarg); break;
		case O_GO: o->wait_go = 1; break;
		case O_WRITES: o->writes = atoi(optarg); break;
		case O_WARMUP: o->warmup = atoi(optarg); break;
		case O_INFLIGHT: o->inflight = atoi(optarg); break;
		case O_RATE: o->rate = atof(optarg); break;
		case O_PAYLOAD: o->payload = atoi(optarg); break;
		case O_WTIMEOUT: o->write_timeout = atof(optarg); break;
		case O_TIMEOUT: o->timeout = atof(optarg); break;
		case O_CTIMEOUT: o->connect_timeout = atof(optarg); break;
		case O_USER: o->user = optarg; break;
		case O_USERS: o->users = atoi(optarg); break;
		case O_WORKSPACE: o->workspace = optarg; break;
		case O_DOMAIN: o->domain = optarg; break;
		case O_KEYPATH: o->key_path = optarg; break;
		case O_CHANNEL: o->channel = optarg; break;
		case O_UPDATES: o->updates = optarg; break;
		case O_FIRST: o->first_index = atoi(optarg); break;
		case O_DURATION: o->duration = atof(optarg); break;
		case O_WARMUP_TIME: o->warmup_time = atof(optarg); break;
		case O_DOC_BYTES: o->doc_bytes = atol(optarg); break;
		case O_KEYS: o->keys = atoi(optarg); break;
		case O_SESSIONS_OUT: o->sessions_out = optarg; break;
		case O_SESSIONS: o->sessions = optarg; break;
		case O_INTERVAL: o->interval = atof(optarg); break;
		case O_IDEMPOTENCY: o->idempotency_keys = 1; break;
		case O_TOKEN: o->token = optarg; break;
		case O_FORGE: o->forge = optarg; break;
		case O_FORGE_BYTES: o->forge_bytes = atoi(optarg); break;
		case O_PORTS:
			if (nodes_parse(optarg)) {
				fprintf(stderr, "panes-load: bad --ports %s\n", optarg);
				return 1;
			}
			o->port = node_port(0); /* --port names the first node */
			break;
		case O_QUIET: o->quiet = 1; break;
		case O_HELP: usage(stdout); return -1;
		default: usage(stderr); return 1;
		}
	}
	for (size_t i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++)
		if (!strcmp(workloads[i]->name, o->workload))
			L->work = workloads[i];
	for (size_t i = 0; i < sizeof(protocols) / sizeof(protocols[0]); i++)
		if (!strcmp(protocols[i]->name, proto))
			L->proto = protocols[i];
	if (!L->work || !L->proto || o->port <= 0 || o->n <= 0 || o->concurrency <= 0 ||
	    o->per_source <= 0 || o->stop_after_failures <= 0 || o->payload > 4096 || o->doc_bytes < 0 ||
	    o->keys < 0 || o->interval < 0 || o->forge_bytes < 0 || o->forge_bytes > 4096 ||
	    (o->forge && strlen(o->forge) > 1024) || (o->token && strlen(o->token) > 4096)) {
		fprintf(stderr, "panes-load: bad arguments (workload %s, protocol %s, port %d, n %d)\n",
			o->workload, proto, o->port, o->n);
		return 1;
	}
	nodes_init(o->port, o->first_index);
	return 0;
}

int
main(int argc, char **argv)
{
	struct load *L = &run;
	int rc = parse(L, argc, argv);

	if (rc)
		return rc < 0 ? 0 : rc;
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	L->clients = calloc((size_t)L->opt.n + 1, sizeof(*L->clients));
	if (!L->clients)
		return 1;
	for (int i = 0; i <= L->opt.n; i++) {
		L->clients[i].index = (uint32_t)i;
		L->clients[i].fd = -1;
	}
	hist_init(&L->connect_hist);
	L->connect_limit = -1;
	if (L->work->setup(L) || L->proto->prepare(L))
		return 1;
	if (L->connect_limit < 0)
		L->connect_limit = L->total; /* probe sets its own: none until asked */
	if (net_init(ws_service) || clients_init(L)) {
		fprintf(stderr, "panes-load: cannot set up (epoll, address %s)\n", L->opt.host);
		return 1;
	}

	progress(L, "%s over %s: %d clients to %s:%d%s", L->work->name, L->proto->name, L->total, L->opt.host,
		 L->opt.port, nodes_count() > 1 ? " and the other nodes" : "");
	L->t_begin = now_ns();
	cpu_snap(&L->cpu_begin);
	timer_set(&progress_timer, 1000 * MS, show_progress, L);
	timer_set(&connect_timer, 250 * MS, check_connects, L);
	timer_set(&deadline_timer, (uint64_t)(L->opt.timeout * 1e9), deadline, L);
	if (L->opt.wait_go || L->opt.hold < 0)
		timer_set(&stdin_timer, 20 * MS, watch_stdin, L);
	clients_pump(L);

	if (net_run(stop_running, L) < 0) {
		note_error(L, "epoll_wait failed: %s", strerror(errno));
		finish(L, 1);
	}
	if (L->interrupted && !L->finished)
		finish(L, L->hold_until_eof && L->t_all_ready ? 0 : 130);
	if (!L->finished)
		finish(L, 1);
	return L->exit_code;
}
