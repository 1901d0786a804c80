/*
 * probe: one more connection at a time, on demand, beside whatever a server
 * already holds (connect-under-load). Nothing connects until asked: every
 * "go" line on stdin starts one connection (TCP, upgrade, the protocol's
 * hello); when it is ready (or has failed) a `connected` line reports how
 * long it took, and the caller, which reads the server's CPU around it, asks
 * for the next. Connections stay open until stdin closes, so closing one
 * never lands in the next one's measurement.
 *
 * Threading: the only thread (see main.c).
 */
#include "workload_probe.h"

#include <stdio.h>

#include "client.h"
#include "load.h"

static void ask(void);

static int
probe_setup(void)
{
	g.total = g.opt.n;
	for (int i = 0; i < g.total; i++)
		g.clients[i].role = ROLE_OBSERVER;
	g.observe = 0;
	g.hold_until_eof = 1;
	g.connect_limit = 0;
	return 0;
}

static void
probe_start(void)
{
	g.on_go = ask;
}

static void
ask(void)
{
	if (g.connect_limit >= g.total) {
		note_error("probe: all %d connections used", g.total);
		fprintf(stdout, "{\"event\":\"connected\",\"ok\":false,\"why\":\"no connections left\"}\n");
		fflush(stdout);
		return;
	}
	g.connect_limit++;
	clients_pump();
}

static void
probe_connected(struct client *c, int ok, uint64_t now)
{
	fprintf(stdout, "{\"event\":\"connected\",\"index\":%u,\"ok\":%s,\"latency_ns\":%llu}\n", c->index,
		ok ? "true" : "false", (unsigned long long)(now - c->t_connect));
	fflush(stdout);
	if (g.started)
		g.on_go = ask;
}

static void
probe_report(FILE *out)
{
	fprintf(out, ",\"probes\":%d,\"still_connected\":%d", g.connect_limit, g.ready - g.closed);
}

const struct workload workload_probe = {
	.name = "probe",
	.setup = probe_setup,
	.start = probe_start,
	.connected = probe_connected,
	.report = probe_report,
};
