/*
 * authflood (issue 26, item 5): what an attacker with one address does to a server that
 * checks tokens. Each attempt is a new connection (TCP, upgrade) sending one `connect` with a
 * forged token (--forge PREFIX --forge-bytes B: a JWT whose signature is B random bytes, so
 * the server must verify it to refuse it), --rate attempts a second, at most --n, until
 * --duration seconds pass or stdin closes. A new connection per token is what a flood is
 * left with once the server closes a limited connection (4012); against a server without the
 * limit it costs the attacker more than reusing one, and the server the same.
 *
 * Counts the answers: turned away before the handshake (an HTTP refusal of the upgrade, the
 * server's 429 for an address that failed too often), `rate_limited` (refused unchecked),
 * `unauthenticated` (checked and refused), anything else (other refusals, timeouts). A forged
 * token that connects is an error.
 *
 * Threading: the only thread (see main.c).
 */
#include "workload_authflood.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "clock.h"
#include "load.h"
#include "net.h"

static struct timer pace_timer, end_timer;
static uint64_t started_at;
static unsigned long limited, checked, other, accepted, failures;

static int
flood_setup(struct load *L)
{
	if (!L->opt.forge) {
		note_error(L, "authflood needs --forge");
		return 1;
	}
	L->total = L->opt.n;
	for (int i = 0; i < L->total; i++)
		L->clients[i].role = ROLE_OBSERVER;
	L->observe = 0;
	L->hold_until_eof = 1;
	L->connect_limit = 0;     /* none until paced in */
	L->opt.stop_after_failures = INT_MAX;  /* every attempt is meant to fail */
	if (L->opt.rate <= 0)
		L->opt.rate = 100;
	return 0;
}

/* Lets in as many attempts as the rate allows by now. */
static void
pace(struct timer *t)
{
	struct load *L = t->ctx;
	double elapsed = (double)(now_ns() - started_at) / 1e9;
	int due = (int)(elapsed * L->opt.rate) + 1;

	if (L->finished)
		return;
	if (due > L->total)
		due = L->total;
	if (due > L->connect_limit) {
		L->connect_limit = due;
		clients_pump(L);
	}
	timer_set(t, 2 * NS_PER_MS, pace, L);
}

static void
over(struct timer *t)
{
	finish(t->ctx, 0);
}

static void
flood_start(struct load *L)
{
	started_at = now_ns();
	timer_set(&pace_timer, 1, pace, L);
	if (L->opt.duration > 0)
		timer_set(&end_timer, (uint64_t)(L->opt.duration * 1e9), over, L);
}

static void
flood_refused(struct load *L, struct client *c, const char *what, const char *why)
{
	(void)L;
	(void)c;
	(void)what;
	if (strstr(why, "rate_limited"))
		limited++;
	else if (strstr(why, "unauthenticated"))
		checked++;
	else
		other++;
}

static void
flood_connected(struct load *L, struct client *c, int ok, uint64_t now)
{
	(void)now;
	if (!ok)
		failures++;
	if (ok) {
		accepted++;
		note_error(L, "client %u: a forged token was accepted", c->index);
		client_fail(L, c, "accepted");
	}
}

static void
flood_report(struct load *L, FILE *out)
{
	double seconds = (double)(now_ns() - started_at) / 1e9;
	unsigned long answered = limited + checked + other;
	fprintf(out, ",\"attempts\":%d,\"seconds\":%.3f,\"attempts_per_sec\":%.1f,\"turned_away\":%lu,"
		"\"limited\":%lu,\"checked\":%lu,\"other\":%lu,\"accepted\":%lu",
		L->next_connect, seconds, seconds > 0 ? L->next_connect / seconds : 0.0,
		failures > answered ? failures - answered : 0, limited, checked, other, accepted);
}

const struct workload workload_authflood = {
	.name = "authflood",
	.setup = flood_setup,
	.start = flood_start,
	.connected = flood_connected,
	.refused = flood_refused,
	.report = flood_report,
};
