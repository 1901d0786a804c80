/*
 * storm: a reconnect storm, as every window of a server comes back after a
 * restart. A normal client connects first and keeps making requests; then N
 * clients connect at once (paced like every connect: --concurrency in
 * flight, so no listen backlog overflows). For Panes each of them resumes a
 * session created before the restart (--sessions FILE, written by `connect
 * --sessions-out`): a real `connect` with the session's identifier and
 * secret, which must answer `created: false`; a new or forked session counts
 * as `forked`. Other servers just connect.
 *
 * Stages, each announced on stdout:
 *   1. the normal client is connected (`ready`); with --wait-go the storm
 *      waits for a "go" line, so the caller can read the server's CPU;
 *   2. every storm client has resumed or failed (`stormed`: how long the
 *      storm took, and the normal client's latencies before and during it);
 *   3. the connections are held until stdin closes (the caller reads the
 *      server's memory), or for --hold seconds, then `result`.
 *
 * The normal client (--interval MS between rounds, 0 = none): each round
 * sends a round trip if none is outstanding (Panes: a `ping` request, which
 * goes through the server's loop and hub but not its disk; others: a
 * WebSocket ping) and, where the protocol has preferences, a durable write
 * (`setPreference` of its own key). Each is timed from its send to its
 * answer and counted as before or during the storm by when it was sent.
 *
 * Threading: the only thread (see main.c).
 */
#include "workload_storm.h"

#include <stdio.h>
#include <stdlib.h>

#include "client.h"
#include "clock.h"
#include "cpu.h"
#include "hist.h"
#include "load.h"
#include "net.h"
#include "protocol.h"
#include "report.h"
#include "sessions.h"

static int base;                /* index of the first storm client: 1 with a normal client */
static int settled, resumed, forked;
static uint64_t t_storm0, t_storm1;
static struct cpu_snap cpu_storm0, cpu_storm1;
static struct hist ping_before, ping_during, write_before, write_during;
static struct timer round_timer, hold_timer;
static uint64_t ping_sent, write_sent; /* 0 = none outstanding */
static uint32_t write_seq;
static uint64_t pings, writes, writes_refused;

static int
storm_setup(struct load *L)
{
	base = L->opt.interval > 0 ? 1 : 0;
	L->total = L->opt.n + base;
	for (int i = 0; i < L->total; i++)
		L->clients[i].role = ROLE_OBSERVER;
	L->observe = 0;
	L->hold_until_eof = 1;
	L->connect_limit = base; /* the normal client first; the storm on go */
	if (L->opt.sessions) {
		L->resumes = sessions_read(L->opt.sessions, L->opt.first_index, L->opt.n);
		if (!L->resumes)
			return 1;
		L->resume_base = base;
	}
	hist_init(&ping_before);
	hist_init(&ping_during);
	hist_init(&write_before);
	hist_init(&write_during);
	return 0;
}

static int
storming(uint64_t sent)
{
	return t_storm0 && sent >= t_storm0 && (!t_storm1 || sent <= t_storm1);
}

static void
normal_round(struct timer *t)
{
	struct load *L = t->ctx;
	struct client *c = &L->clients[0];
	uint64_t now = now_ns();

	if (c->state != CS_READY || L->finished)
		return;
	if (!ping_sent && L->proto->ping) {
		ping_sent = now;
		L->proto->ping(L, c);
	}
	if (!write_sent && L->proto->pref_set) {
		write_sent = now;
		L->proto->pref_set(L, c, ++write_seq, "bench.normal");
	}
	timer_set(t, (uint64_t)(L->opt.interval * NS_PER_MS), normal_round, L);
}

static void
storm_pong(struct load *L, struct client *c, uint64_t now)
{
	(void)L;
	if (c->index != 0 || !base || !ping_sent)
		return;
	hist_record(storming(ping_sent) ? &ping_during : &ping_before, now - ping_sent);
	pings++;
	ping_sent = 0;
}

static void
write_answered(uint32_t seq, uint64_t now, int ok)
{
	if (!base || !write_sent || seq != write_seq)
		return;
	if (ok)
		hist_record(storming(write_sent) ? &write_during : &write_before, now - write_sent);
	else
		writes_refused++;
	writes++;
	write_sent = 0;
}

static void
storm_acked(struct load *L, uint32_t seq, uint64_t now)
{
	(void)L;
	write_answered(seq, now, 1);
}

static void
storm_write_refused(struct load *L, uint32_t seq)
{
	(void)L;
	write_answered(seq, now_ns(), 0);
}

static void
report_stormed(struct load *L)
{
	fprintf(stdout, "{\"event\":\"stormed\",\"n\":%d,\"resumed\":%d,\"forked\":%d,\"failed\":%d,"
		"\"storm_seconds\":%.6f,\"cpu_storm_s\":%.4f,\"first_error\":",
		L->opt.n, resumed, forked, L->failed, (double)(t_storm1 - t_storm0) / 1e9,
		cpu_between(&cpu_storm0, &cpu_storm1));
	json_string(stdout, L->first_error);
	fputs("}\n", stdout);
	fflush(stdout);
}

static void
hold_over(struct timer *t)
{
	struct load *L = t->ctx;
	(void)t;
	finish(L, 0);
}

static void
storm_connected(struct load *L, struct client *c, int ok, uint64_t now)
{
	if ((int)c->index < base) {
		if (ok && L->opt.interval > 0)
			timer_set(&round_timer, 0, normal_round, L);
		else if (!ok)
			finish(L, 2);
		return;
	}
	if (ok && !L->resumes)
		resumed++; /* a plain connect: nothing to resume */
	if (++settled == L->opt.n) {
		t_storm1 = now;
		timer_cancel(&round_timer); /* "meanwhile" is over */
		cpu_snap(&cpu_storm1);
		report_stormed(L);
		if (L->opt.hold >= 0)
			timer_set(&hold_timer, (uint64_t)(L->opt.hold * 1e9), hold_over, L);
	}
}

static void
storm_session(struct load *L, struct client *c, const char *user, const char *id, const char *secret,
	      int created)
{
	(void)user;
	(void)id;
	(void)secret;
	if ((int)c->index < base || !L->resumes)
		return;
	if (created) {
		forked++;
		note_error(L, "client %u: got a new session instead of resuming %s", c->index,
			   L->resumes[c->index - (uint32_t)base].id);
	} else
		resumed++;
}

static void
storm_start(struct load *L)
{
	t_storm0 = now_ns();
	cpu_snap(&cpu_storm0);
	hist_init(&L->connect_hist); /* from here on: the resumes, storm clients only */
	L->connect_limit = L->total;
	clients_pump(L);
	if (!L->opt.n) {
		t_storm1 = t_storm0;
		report_stormed(L);
	}
}

static void
storm_report(struct load *L, FILE *out)
{
	fprintf(out, ",\"storm_seconds\":%.6f,\"resumed\":%d,\"forked\":%d,\"cpu_storm_s\":%.4f",
		t_storm1 ? (double)(t_storm1 - t_storm0) / 1e9 : -1.0, resumed, forked,
		t_storm1 ? cpu_between(&cpu_storm0, &cpu_storm1) : 0.0);
	fprintf(out, ",\"normal_pings\":%llu,\"normal_writes\":%llu,\"normal_writes_refused\":%llu",
		(unsigned long long)pings, (unsigned long long)writes, (unsigned long long)writes_refused);
	fputs(",\"normal_ping_before_ns\":", out);
	hist_write_json(&ping_before, out);
	fputs(",\"normal_ping_ns\":", out);
	hist_write_json(&ping_during, out);
	fputs(",\"normal_write_before_ns\":", out);
	hist_write_json(&write_before, out);
	fputs(",\"normal_write_ns\":", out);
	hist_write_json(&write_during, out);
	fprintf(out, ",\"still_connected\":%d", L->ready - L->closed);
}

const struct workload workload_storm = {
	.name = "storm",
	.setup = storm_setup,
	.start = storm_start,
	.connected = storm_connected,
	.acked = storm_acked,
	.write_refused = storm_write_refused,
	.session = storm_session,
	.pong = storm_pong,
	.report = storm_report,
};
