/*
 * docs (issue 5): E editors typing into one document at a steady rate.
 *
 * Stages, each announced on stdout so the caller can read the server's
 * memory in between (with --wait-go each waits for a "go" line):
 *   1. every editor is connected (`ready`);
 *   2. the first editor creates the document, every editor opens it
 *      (`opened`);
 *   3. typing: every editor attempts one edit every 1/rate seconds, the E
 *      editors' ticks spread evenly over the period, for --warmup-time
 *      unmeasured seconds and then --duration measured ones; then the last
 *      edits are waited for (at most --write-timeout) and `result` follows.
 *
 * An editor keeps at most one edit outstanding (ot.js's discipline, cut
 * down): a tick that finds its previous edit not yet acknowledged is
 * skipped and counted, which is the server's backpressure. An edit inserts
 * one character at a pseudo-random position of the document as the editor
 * last knew it: at the newest revision it has heard of (its last
 * acknowledgement or the last operation it received). Since every edit
 * inserts exactly one character, and transforming an insert past inserts
 * leaves it one insert, the length at revision r is the length at opening
 * plus (r - revision at opening): no text is kept. Stale revisions are
 * fine; the server transforms them.
 *
 * On a cluster (--ports, nodes.h), an editor on another node than the
 * creator's may be told document_not_found: its node has not heard of the
 * new document yet. It asks again every 10 ms, for at most 2 s; those
 * answers are counted as open_retries, not as refusals.
 *
 * Measured, for the edits whose tick falls in the measured window:
 *   - latency_last: from the author's send until the LAST of the other live
 *     editors has read the operation (matched by the editor and edit number
 *     the protocol carries: Panes' opId, Yjs' client id and clock);
 *   - latency_each: the same, for every delivery;
 *   - ack: until the author's acknowledgement (Panes: after durable commit);
 * and ops/s = acknowledgements read during the measured window / its length.
 *
 * Threading: the only thread (see main.c).
 */
#include "workload_docs.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "clock.h"
#include "cpu.h"
#include "hist.h"
#include "load.h"
#include "net.h"
#include "nodes.h"
#include "protocol.h"
#include "report.h"

#define RING 1024        /* an editor's edits that may still be travelling to the others (a cluster node
                          * catching up on a hot document may be seconds behind) */
#define MAX_SECONDS 3600 /* per-second acknowledgement counts kept */
#define S 1000000000ull
#define OPEN_RETRY_MS 10
#define OPEN_RETRIES 200 /* an editor's, OPEN_RETRY_MS apart */

struct op {
	uint32_t k;
	uint32_t got;        /* other editors that have it */
	uint64_t t_sent;
	uint8_t open;        /* not yet at every other editor */
	uint8_t measured;
};

struct editor {
	uint64_t revision;   /* the newest revision this editor knows of */
	uint64_t t_open;
	uint32_t next_k;
	uint8_t outstanding; /* an edit sent and not acknowledged */
	uint8_t opened, open_failed;
	uint8_t reopen;      /* asks again on the next reopen_timer */
	uint16_t open_tries;
	struct op ring[RING];
};

static struct editor *ed;
static int editors, live, opened, open_failed, typing, draining;
static char doc[128];
static uint64_t base_length, base_revision;
static uint64_t t_opening, t_all_opened, t_type, t_mb, t_me, t_stop, t_done;
static double period_ns; /* between two ticks of the whole group */
static uint64_t tick;
static uint64_t offered, skipped, sent, sent_measured, acked, acked_window, refused_edits,
	refused_other, lost, unacked, stray, deliveries, completed, open_ops, outstanding,
	max_revision, not_ready_ticks;
static uint32_t per_second[MAX_SECONDS];
static struct hist last_hist, each_hist, ack_hist, open_hist;
static struct timer tick_timer, drain_timer, reopen_timer;
static uint64_t open_retries;
static int unacked_by_node[MAX_NODES]; /* on a cluster: which node left edits unacknowledged */
static struct cpu_snap cpu_open0, cpu_open1, cpu_type0, cpu_type1;
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t
next_random(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

static int
docs_setup(struct load *L)
{
	if (!L->proto->doc_create || !L->proto->doc_open || !L->proto->doc_edit) {
		fprintf(stderr, "panes-load: protocol %s has no documents\n", L->proto->name);
		return 1;
	}
	L->total = editors = L->opt.n;
	for (int i = 0; i < L->total; i++)
		L->clients[i].role = ROLE_OBSERVER;
	L->observe = 0;
	if (L->opt.rate <= 0)
		L->opt.rate = 5;
	if (L->opt.duration <= 0 || L->opt.warmup_time < 0) {
		fprintf(stderr, "panes-load: docs needs --duration > 0 and --warmup-time >= 0\n");
		return 1;
	}
	ed = calloc((size_t)editors, sizeof(*ed));
	if (!ed)
		return 1;
	hist_init(&last_hist);
	hist_init(&each_hist);
	hist_init(&ack_hist);
	hist_init(&open_hist);
	return 0;
}

static int
is_live(struct load *L, int i)
{
	return L->clients[i].state == CS_READY;
}

static int
editor_of(const struct client *c)
{
	return (int)c->index;
}

static uint64_t
length_at(uint64_t revision)
{
	return base_length + (revision > base_revision ? revision - base_revision : 0);
}

static void
close_op(struct op *o, uint64_t now)
{
	o->open = 0;
	open_ops--;
	completed++;
	if (o->measured)
		hist_record(&last_hist, now - o->t_sent);
}

/* How many others must have editor `author`'s edit. */
static uint32_t
needed(struct load *L, int author)
{
	return (uint32_t)(live - (is_live(L, author) ? 1 : 0));
}

static void
finish_docs(struct load *L)
{
	if (L->finished)
		return;
	cpu_snap(&cpu_type1);
	t_done = now_ns();
	finish(L, lost || unacked || refused_edits ? 2 : 0);
}

static void
check_done(struct load *L)
{
	if (draining && !open_ops && !outstanding)
		finish_docs(L);
}

/* The last edits had --write-timeout to arrive; what is still out is lost. */
static void
drain_check(struct timer *t)
{
	struct load *L = t->ctx;
	uint64_t now = now_ns();

	check_done(L);
	if (L->finished)
		return;
	if (now - t_stop < (uint64_t)(L->opt.write_timeout * 1e9)) {
		timer_set(t, 100 * NS_PER_MS, drain_check, L);
		return;
	}
	for (int i = 0; i < editors; i++) {
		for (int r = 0; r < RING; r++) {
			struct op *o = &ed[i].ring[r];
			if (o->open) {
				o->open = 0;
				open_ops--;
				lost++;
			}
		}
		if (ed[i].outstanding) {
			ed[i].outstanding = 0;
			outstanding--;
			unacked++;
			unacked_by_node[node_of(&L->clients[i])]++;
		}
	}
	note_error(L, "%llu edits had not reached every editor and %llu were not acknowledged %.0f s after typing stopped",
		   (unsigned long long)lost, (unsigned long long)unacked, L->opt.write_timeout);
	finish_docs(L);
}

static void
send_edit(struct load *L, int i, uint64_t now, int measured)
{
	struct editor *e = &ed[i];
	uint32_t k = e->next_k++;
	struct op *o = &e->ring[k % RING];
	uint64_t length = length_at(e->revision);

	if (o->open) { /* RING edits later, still not everywhere: give up on it */
		o->open = 0;
		open_ops--;
		lost++;
		note_error(L, "editor %d's edit %u reached %u of %u others before %d more were sent", i, o->k,
			   o->got, needed(L, i), RING);
	}
	*o = (struct op){ .k = k, .t_sent = now, .open = 1, .measured = (uint8_t)measured };
	open_ops++;
	e->outstanding = 1;
	outstanding++;
	sent++;
	sent_measured += (uint64_t)measured;
	L->proto->doc_edit(L, &L->clients[i], doc, k, e->revision, next_random() % (length + 1), length);
}

/* Tick j of the group belongs to editor j % E and is due at t_type + j * period. */
static void
on_tick(struct timer *t)
{
	struct load *L = t->ctx;
	uint64_t now = now_ns();

	while (!L->finished) {
		uint64_t due = t_type + (uint64_t)((double)tick * period_ns);
		if (due >= t_me) {
			typing = 0;
			draining = 1;
			t_stop = now;
			timer_set(&drain_timer, 100 * NS_PER_MS, drain_check, L);
			check_done(L);
			return;
		}
		if (due > now) {
			timer_set(t, due - now, on_tick, L);
			return;
		}
		int i = (int)(tick++ % (uint64_t)editors);
		int measured = due >= t_mb;
		if (!is_live(L, i) || !ed[i].opened) {
			not_ready_ticks++;
			continue;
		}
		offered += (uint64_t)measured;
		if (ed[i].outstanding) {
			skipped += (uint64_t)measured;
			continue;
		}
		send_edit(L, i, now, measured);
		now = now_ns();
	}
}

static void
begin_typing(struct load *L)
{
	cpu_snap(&cpu_type0);
	t_type = now_ns();
	t_mb = t_type + (uint64_t)(L->opt.warmup_time * 1e9);
	t_me = t_mb + (uint64_t)(L->opt.duration * 1e9);
	period_ns = 1e9 / (L->opt.rate * editors);
	typing = 1;
	progress(L, "typing: %d editors, %g edits/s each, %g s warm-up + %g s measured", live, L->opt.rate,
		 L->opt.warmup_time, L->opt.duration);
	tick_timer.ctx = L; /* the first tick runs now, not from the loop */
	on_tick(&tick_timer);
}

static void
report_opened(struct load *L)
{
	t_all_opened = now_ns();
	cpu_snap(&cpu_open1);
	fprintf(stdout, "{\"event\":\"opened\",\"tool\":\"panes-load\",\"pid\":%d,\"workload\":\"docs\","
		"\"protocol\":\"%s\",\"editors\":%d,\"opened\":%d,\"open_failed\":%d,\"document\":",
		(int)getpid(), L->proto->name, live, opened, open_failed);
	json_string(stdout, doc);
	fprintf(stdout, ",\"revision\":%llu,\"length\":%llu,\"open_seconds\":%.6f,\"cpu_open_s\":%.4f,"
		"\"open_ns\":",
		(unsigned long long)base_revision, (unsigned long long)base_length,
		(double)(t_all_opened - t_opening) / 1e9,
		(cpu_open1.user + cpu_open1.sys) - (cpu_open0.user + cpu_open0.sys));
	hist_write_json(&open_hist, stdout);
	fputs(",\"first_error\":", stdout);
	json_string(stdout, L->first_error);
	fputs("}\n", stdout);
	fflush(stdout);
}

static void
check_opened(struct load *L)
{
	if (typing || draining || L->finished || opened + open_failed < live)
		return;
	report_opened(L);
	if (opened < 2) {
		note_error(L, "only %d editors opened the document", opened);
		finish(L, 2);
		return;
	}
	if (L->opt.wait_go)
		L->on_go = begin_typing; /* the caller reads the server's memory first */
	else
		begin_typing(L);
}

static void
docs_start(struct load *L)
{
	int creator = -1;

	live = 0;
	for (int i = 0; i < editors; i++)
		if (is_live(L, i)) {
			live++;
			if (creator < 0)
				creator = i;
		}
	if (live < 2) {
		note_error(L, "nothing to measure: %d editors connected", live);
		finish(L, 2);
		return;
	}
	cpu_snap(&cpu_open0);
	t_opening = now_ns();
	L->proto->doc_create(L, &L->clients[creator], (size_t)L->opt.doc_bytes);
}

static void
docs_created(struct load *L, struct client *c, const char *id)
{
	(void)c;
	if (doc[0])
		return;
	snprintf(doc, sizeof(doc), "%s", id);
	for (int i = 0; i < editors && !L->finished; i++)
		if (is_live(L, i)) {
			ed[i].t_open = now_ns();
			L->proto->doc_open(L, &L->clients[i], doc);
		}
}

static void
docs_opened(struct load *L, struct client *c, uint64_t revision, uint64_t length, uint64_t now)
{
	struct editor *e = &ed[editor_of(c)];

	if (e->opened)
		return;
	if (!opened) {
		base_revision = revision;
		base_length = length;
	} else if (revision != base_revision || length != base_length)
		note_error(L, "client %u opened revision %llu (length %llu), others %llu (%llu)", c->index,
			   (unsigned long long)revision, (unsigned long long)length,
			   (unsigned long long)base_revision, (unsigned long long)base_length);
	e->opened = 1;
	e->revision = revision;
	opened++;
	hist_record(&open_hist, now - e->t_open);
	check_opened(L);
}

static void
count_ack(uint64_t now)
{
	acked++;
	if (now >= t_mb && now < t_me) {
		acked_window++;
		uint64_t s = (now - t_mb) / S;
		if (s < MAX_SECONDS)
			per_second[s]++;
	}
}

static void
docs_acked(struct load *L, struct client *c, uint32_t k, uint64_t revision, uint64_t now)
{
	struct editor *e = &ed[editor_of(c)];
	struct op *o = &e->ring[k % RING];

	if (!e->outstanding || k + 1 != e->next_k) {
		stray++;
		return;
	}
	e->outstanding = 0;
	outstanding--;
	if (revision > e->revision)
		e->revision = revision;
	if (revision > max_revision)
		max_revision = revision;
	count_ack(now);
	if (o->k == k && o->measured)
		hist_record(&ack_hist, now - o->t_sent);
	check_done(L);
}

static void
docs_operation(struct load *L, struct client *c, uint32_t author, uint32_t k, uint64_t revision, uint64_t now)
{
	struct editor *e = &ed[editor_of(c)];
	int a = (int)author - L->opt.first_index;

	if (revision > e->revision)
		e->revision = revision;
	if (revision > max_revision)
		max_revision = revision;
	if (a < 0 || a >= editors || a == editor_of(c)) {
		stray++;
		return;
	}
	struct op *o = &ed[a].ring[k % RING];
	if (o->k != k || !o->open) {
		stray++; /* after it was given up on, or never sent */
		return;
	}
	deliveries++;
	if (o->measured)
		hist_record(&each_hist, now - o->t_sent);
	if (++o->got >= needed(L, a)) {
		close_op(o, now);
		check_done(L);
	}
}

/* Editors told document_not_found by a node that has not heard of it yet ask again. */
static void
reopen(struct timer *t)
{
	struct load *L = t->ctx;
	(void)t;
	for (int i = 0; i < editors && !L->finished; i++)
		if (ed[i].reopen && is_live(L, i)) {
			ed[i].reopen = 0;
			L->proto->doc_open(L, &L->clients[i], doc);
		}
}

static void
docs_refused(struct load *L, struct client *c, const char *what, const char *why)
{
	struct editor *e = &ed[editor_of(c)];

	(void)why;
	if (!strcmp(what, "edit")) {
		refused_edits++;
		if (e->outstanding) {
			struct op *o = &e->ring[(e->next_k - 1) % RING];
			if (o->open) {
				o->open = 0;
				open_ops--;
			}
			e->outstanding = 0;
			outstanding--;
		}
		check_done(L);
		return;
	}
	if (!strcmp(what, "openDocument") && !e->opened && !e->open_failed && nodes_count() > 1 &&
	    strstr(why, "document_not_found") && e->open_tries < OPEN_RETRIES) {
		e->open_tries++;
		e->reopen = 1;
		open_retries++;
		L->refused--; /* not a refusal: the node has yet to hear of the document */
		timer_set(&reopen_timer, OPEN_RETRY_MS * NS_PER_MS, reopen, L);
		return;
	}
	refused_other++;
	if (!strcmp(what, "openDocument") && !e->opened && !e->open_failed) {
		e->open_failed = 1;
		open_failed++;
		check_opened(L);
	} else if (!strcmp(what, "createDocument"))
		finish(L, 2);
}

static void
docs_dropped(struct load *L, struct client *c)
{
	uint64_t now = now_ns();
	struct editor *e = &ed[editor_of(c)];

	if (!L->started)
		return;
	live--;
	if (e->outstanding) {
		e->outstanding = 0;
		outstanding--;
		unacked++;
	}
	for (int i = 0; i < editors; i++)
		for (int r = 0; r < RING; r++) {
			struct op *o = &ed[i].ring[r];
			if (o->open && o->got >= needed(L, i))
				close_op(o, now);
		}
	if (!typing && !draining)
		check_opened(L);
	check_done(L);
	if (live < 1)
		finish(L, 2);
}

static void
per_second_range(struct load *L, FILE *out)
{
	uint64_t full = (uint64_t)L->opt.duration; /* whole seconds inside the window */
	uint32_t lo = UINT32_MAX, hi = 0;

	for (uint64_t s = 0; s < full && s < MAX_SECONDS; s++) {
		if (per_second[s] < lo)
			lo = per_second[s];
		if (per_second[s] > hi)
			hi = per_second[s];
	}
	if (!full)
		lo = 0;
	fprintf(out, ",\"ops_per_second_min\":%u,\"ops_per_second_max\":%u", lo, hi);
}

static void
docs_report(struct load *L, FILE *out)
{
	double d = L->opt.duration;
	int behind = 0, behind_by_node[MAX_NODES] = { 0 };
	uint64_t lowest_by_node[MAX_NODES];

	for (int k = 0; k < MAX_NODES; k++)
		lowest_by_node[k] = max_revision;
	for (int i = 0; i < editors; i++) {
		if (!is_live(L, i) || !ed[i].opened)
			continue;
		int k = node_of(&L->clients[i]);
		behind += ed[i].revision != max_revision;
		behind_by_node[k] += ed[i].revision != max_revision;
		if (ed[i].revision < lowest_by_node[k])
			lowest_by_node[k] = ed[i].revision;
	}
	/* Per node (one entry without --ports): where a cluster's editors ended up. */
	fputs(",\"editors_behind_by_node\":[", out);
	for (int k = 0; k < nodes_count(); k++)
		fprintf(out, "%s%d", k ? "," : "", behind_by_node[k]);
	fputs("],\"lowest_revision_by_node\":[", out);
	for (int k = 0; k < nodes_count(); k++)
		fprintf(out, "%s%llu", k ? "," : "", (unsigned long long)lowest_by_node[k]);
	fputs("],\"unacked_by_node\":[", out);
	for (int k = 0; k < nodes_count(); k++)
		fprintf(out, "%s%d", k ? "," : "", unacked_by_node[k]);
	fputc(']', out);
	fprintf(out, ",\"editors\":%d,\"live_editors\":%d,\"opened\":%d,\"document\":", editors, live, opened);
	json_string(out, doc);
	fprintf(out, ",\"rate_per_editor\":%g,\"warmup_seconds\":%g,\"measure_seconds\":%g", L->opt.rate,
		L->opt.warmup_time, d);
	fprintf(out, ",\"offered\":%llu,\"skipped\":%llu,\"sent\":%llu,\"sent_measured\":%llu,\"acked\":%llu,"
		"\"acked_in_window\":%llu",
		(unsigned long long)offered, (unsigned long long)skipped, (unsigned long long)sent,
		(unsigned long long)sent_measured, (unsigned long long)acked, (unsigned long long)acked_window);
	fprintf(out, ",\"offered_ops_per_sec\":%.2f,\"ops_per_sec\":%.2f,\"skipped_share\":%.4f",
		(double)offered / d, (double)acked_window / d, offered ? (double)skipped / (double)offered : 0.0);
	per_second_range(L, out);
	fprintf(out, ",\"completed\":%llu,\"lost\":%llu,\"unacked\":%llu,\"stray\":%llu,\"deliveries\":%llu,"
		"\"refused_edits\":%llu,\"refused_other\":%llu,\"ticks_not_ready\":%llu,\"open_retries\":%llu",
		(unsigned long long)completed, (unsigned long long)lost, (unsigned long long)unacked,
		(unsigned long long)stray, (unsigned long long)deliveries, (unsigned long long)refused_edits,
		(unsigned long long)refused_other, (unsigned long long)not_ready_ticks,
		(unsigned long long)open_retries);
	fprintf(out, ",\"base_revision\":%llu,\"final_revision\":%llu,\"final_length\":%llu,\"editors_behind\":%d",
		(unsigned long long)base_revision, (unsigned long long)max_revision,
		(unsigned long long)length_at(max_revision), max_revision ? behind : 0);
	fprintf(out, ",\"typing_seconds\":%.3f,\"drain_seconds\":%.3f,\"cpu_typing_s\":%.4f",
		t_type && t_done ? (double)(t_done - t_type) / 1e9 : 0.0,
		t_stop && t_done ? (double)(t_done - t_stop) / 1e9 : 0.0,
		t_type && t_done ? (cpu_type1.user + cpu_type1.sys) - (cpu_type0.user + cpu_type0.sys) : 0.0);
	fputs(",\"latency_last_ns\":", out);
	hist_write_json(&last_hist, out);
	fputs(",\"latency_each_ns\":", out);
	hist_write_json(&each_hist, out);
	fputs(",\"ack_ns\":", out);
	hist_write_json(&ack_hist, out);
	fputs(",\"open_ns\":", out);
	hist_write_json(&open_hist, out);
}

const struct workload workload_docs = {
	.name = "docs",
	.setup = docs_setup,
	.start = docs_start,
	.dropped = docs_dropped,
	.report = docs_report,
	.doc_created = docs_created,
	.doc_opened = docs_opened,
	.doc_acked = docs_acked,
	.doc_operation = docs_operation,
	.refused = docs_refused,
};
