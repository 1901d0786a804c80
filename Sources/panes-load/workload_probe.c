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

static void ask(struct load *L);

static int
probe_setup(struct load *L)
{
	clients_hold_idle(L);
	L->connect_limit = 0;
	return 0;
}

static void
probe_start(struct load *L)
{
	L->on_go = ask;
}

static void
ask(struct load *L)
{
	if (L->connect_limit >= L->total) {
		note_error(L, "probe: all %d connections used", L->total);
		fprintf(stdout, "{\"event\":\"connected\",\"ok\":false,\"why\":\"no connections left\"}\n");
		fflush(stdout);
		return;
	}
	L->connect_limit++;
	clients_pump(L);
}

static void
probe_connected(struct load *L, struct client *c, int ok, uint64_t now)
{
	fprintf(stdout, "{\"event\":\"connected\",\"index\":%u,\"ok\":%s,\"latency_ns\":%llu}\n", c->index,
		ok ? "true" : "false", (unsigned long long)(now - c->t_connect));
	fflush(stdout);
	if (L->started)
		L->on_go = ask;
}

static void
probe_report(struct load *L, FILE *out)
{
	fprintf(out, ",\"probes\":%d,\"still_connected\":%d", L->connect_limit, L->ready - L->closed);
}

const struct workload workload_probe = {
	.name = "probe",
	.setup = probe_setup,
	.start = probe_start,
	.connected = probe_connected,
	.report = probe_report,
};
