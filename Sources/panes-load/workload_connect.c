/*
 * connect: open N idle connections (Panes scenes: connect, nothing else),
 * report how long they took, then hold them so the caller can read the
 * server's memory, until --hold seconds pass or stdin reaches EOF.
 */
#include "workload_connect.h"

#include "client.h"
#include "load.h"
#include "net.h"

static struct timer hold_timer;

static int
connect_setup(void)
{
	g.total = g.opt.n;
	for (int i = 0; i < g.total; i++)
		g.clients[i].role = ROLE_OBSERVER;
	g.observe = 0;
	g.hold_until_eof = 1;
	return 0;
}

static void
hold_over(struct timer *t)
{
	(void)t;
	finish(0);
}

static void
connect_start(void)
{
	if (g.opt.hold >= 0)
		timer_set(&hold_timer, (uint64_t)(g.opt.hold * 1e9), hold_over);
	else if (g.stdin_eof)
		finish(0);
	/* else main.c finishes when stdin closes */
}

static void
connect_report(FILE *out)
{
	fprintf(out, ",\"still_connected\":%d", g.ready - g.closed);
}

const struct workload workload_connect = {
	.name = "connect",
	.setup = connect_setup,
	.start = connect_start,
	.report = connect_report,
};
