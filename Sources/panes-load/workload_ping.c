/*
 * ping (issue 26, item 5): one scene (client 0; --token, else --user) sends `ping` --rate
 * times a second and times each reply: what a legitimate window feels while something else
 * loads the server. Every "go" line on stdin after the start ends a phase: its round trips are
 * printed as a `phase` line ({"index", "pings", "lost", "latency_ns"}) and the next phase
 * begins, so a caller can put an idle phase and a loaded one side by side in one run. Ends at
 * stdin EOF.
 *
 * A reply that has not come --write-timeout seconds after its ping counts as lost.
 *
 * Threading: the only thread (see main.c).
 */
#include "workload_ping.h"

#include <stdio.h>
#include <string.h>

#include "client.h"
#include "clock.h"
#include "hist.h"
#include "load.h"
#include "net.h"

#define WRITE_ID_BASE 1000
#define RING 4096

static struct hist phase_hist;
static uint64_t sent_at[RING];
static uint32_t next_seq = 1, phase_index, phase_lost;
static struct timer ping_timer;

static void cut_phase(struct load *L);

static int
ping_setup(struct load *L)
{
	L->total = 1;
	L->clients[0].role = ROLE_OBSERVER;
	L->observe = 0;
	L->hold_until_eof = 1;
	if (L->opt.rate <= 0)
		L->opt.rate = 100;
	hist_init(&phase_hist);
	return 0;
}

static void
send_ping(struct timer *t)
{
	struct load *L = t->ctx;
	struct client *c = &L->clients[0];
	uint64_t now = now_ns(), limit = (uint64_t)(L->opt.write_timeout * 1e9);
	char msg[128];
	uint32_t seq = next_seq++;

	if (L->finished)
		return;
	/* The slot this ping takes held one sent RING pings ago: still unanswered, it is lost. */
	if (sent_at[seq % RING] && now - sent_at[seq % RING] > limit)
		phase_lost++;
	int n = snprintf(msg, sizeof(msg), "{\"type\":\"ping\",\"id\":%u}", WRITE_ID_BASE + seq);
	client_send(L, c, msg, (size_t)n, SEND_TEXT, seq);
	timer_set(t, (uint64_t)(1e9 / L->opt.rate), send_ping, L);
}

static void
ping_sent(struct load *L, uint32_t seq, uint64_t now)
{
	(void)L;
	sent_at[seq % RING] = now;
}

static void
ping_acked(struct load *L, uint32_t seq, uint64_t now)
{
	(void)L;
	uint64_t at = sent_at[seq % RING];

	if (!at)
		return;
	sent_at[seq % RING] = 0;
	hist_record(&phase_hist, now - at);
}

static void
ping_start(struct load *L)
{
	L->on_go = cut_phase;
	timer_set(&ping_timer, 1, send_ping, L);
}

static void
cut_phase(struct load *L)
{
	fprintf(stdout, "{\"event\":\"phase\",\"index\":%u,\"pings\":%llu,\"lost\":%u,\"latency_ns\":", phase_index++,
		(unsigned long long)phase_hist.count, phase_lost);
	hist_write_json(&phase_hist, stdout);
	fputs("}\n", stdout);
	fflush(stdout);
	hist_init(&phase_hist);
	phase_lost = 0;
	L->on_go = cut_phase;
}

static void
ping_dropped(struct load *L, struct client *c)
{
	note_error(L, "client %u: the pinging scene was closed", c->index);
	finish(L, 2);
}

static void
ping_report(struct load *L, FILE *out)
{
	(void)L;
	fprintf(out, ",\"phases\":%u,\"pings_sent\":%u", phase_index, next_seq - 1);
}

const struct workload workload_ping = {
	.name = "ping",
	.setup = ping_setup,
	.start = ping_start,
	.sent = ping_sent,
	.acked = ping_acked,
	.dropped = ping_dropped,
	.report = ping_report,
};
