/*
 * connect: open N idle connections (Panes scenes: connect, nothing else),
 * report how long they took, then hold them so the caller can read the
 * server's memory, until --hold seconds pass or stdin reaches EOF.
 *
 * With --sessions-out FILE (Panes), each scene's session (user, identifier,
 * secret) is written there as it connects, for `storm` to resume after the
 * server restarted; the file is complete when `ready` is printed.
 */
#include "workload_connect.h"

#include <stdio.h>

#include "client.h"
#include "load.h"
#include "net.h"
#include "sessions.h"

static struct timer hold_timer;
static FILE *sessions_out;

static int
connect_setup(struct load *L)
{
	clients_hold_idle(L);
	if (L->opt.sessions_out && !(sessions_out = fopen(L->opt.sessions_out, "w"))) {
		fprintf(stderr, "panes-load: cannot write %s\n", L->opt.sessions_out);
		return 1;
	}
	return 0;
}

static void
connect_session(struct load *L, struct client *c, const char *user, const char *id, const char *secret,
		int created)
{
	(void)L;
	(void)c;
	(void)created;
	if (sessions_out)
		sessions_write(sessions_out, user, id, secret);
}

static void
connect_ready(struct load *L, struct client *c, int ok, uint64_t now)
{
	(void)c;
	(void)ok;
	(void)now;
	/* Everyone has settled once the last one has: the file is complete before `ready`. */
	if (sessions_out && L->ready + L->failed == L->connect_limit) {
		fclose(sessions_out);
		sessions_out = NULL;
	}
}

static void
hold_over(struct timer *t)
{
	struct load *L = t->ctx;
	(void)t;
	finish(L, 0);
}

static void
connect_start(struct load *L)
{
	if (sessions_out) { /* some gave up without settling one by one */
		fclose(sessions_out);
		sessions_out = NULL;
	}
	if (L->opt.hold >= 0)
		timer_set(&hold_timer, (uint64_t)(L->opt.hold * 1e9), hold_over, L);
	else if (L->stdin_eof)
		finish(L, 0);
	/* else main.c finishes when stdin closes */
}

static void
connect_report(struct load *L, FILE *out)
{
	fprintf(out, ",\"still_connected\":%d", L->ready - L->closed);
}

const struct workload workload_connect = {
	.name = "connect",
	.setup = connect_setup,
	.start = connect_start,
	.connected = connect_ready,
	.session = connect_session,
	.report = connect_report,
};
