/*
 * writes: durable preference writes from W writers (acklat, prefwrite).
 *
 * Stages, each announced on stdout (with --wait-go each waits for a "go"):
 *   1. every writer is connected (`ready`);
 *   2. with --keys K, writer 0 fills its domain with K keys
 *      (`<key-path>.k<j>`, 64 writes in flight) and prints `filled`;
 *   3. writing, for --warmup-time unmeasured seconds and then --duration
 *      measured ones; then the last replies are waited for (at most
 *      --write-timeout: a write not acknowledged by then is lost) and
 *      `result` follows.
 *
 * Writer i writes `<key-path>.w<i>` (its own key, in its own domain when
 * every writer is its own user), each write a new value, so every write
 * changes something and is committed.
 *
 * Open loop (--rate R > 0): write j is *scheduled* at t0 + j/R, round robin
 * over the writers, and sent when its time comes whatever is outstanding.
 * Its latency is measured from the scheduled time, not from the send, so a
 * stall of the server (or of this generator) shows in full and is not
 * hidden by sending later (coordinated omission). The latency from the
 * actual send is reported beside it, and how late sends were.
 *
 * Closed loop (--rate 0): each writer keeps --inflight writes outstanding;
 * latency is from the send. What it sustains is the durable write ceiling.
 *
 * Threading: the only thread (see main.c).
 */
#include "workload_writes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "clock.h"
#include "cpu.h"
#include "hist.h"
#include "load.h"
#include "net.h"
#include "protocol.h"

#define RING (1u << 18)      /* writes that may be outstanding at once */
#define FILL_INFLIGHT 64
#define MAX_SECONDS 3600

enum { ST_IDLE, ST_FILL, ST_WRITE, ST_DRAIN };

struct slot {
	uint32_t seq;
	uint32_t writer;
	uint64_t t_due;     /* scheduled (open loop) or sent (closed loop) */
	uint64_t t_sent;
	uint8_t open, measured;
};

static struct slot *slots;
static int stage, writers;
static uint32_t next_seq = 1;
static uint64_t fill_next, fill_done, fill_refused;
static uint64_t t_fill0, t_fill1, t_write0, t_mb, t_me, t_stop, t_done;
static uint64_t scheduled, sent, sent_measured, acked, acked_window, refused, lost, stray,
	outstanding, max_late_ns;
static uint32_t *outstanding_by_writer;
static uint32_t per_second[MAX_SECONDS];
static struct hist ack_hist, ack_sent_hist, fill_hist;
static struct timer tick_timer, drain_timer;
static struct cpu_snap cpu_fill0, cpu_fill1, cpu_w0, cpu_w1;
static char key[160];

static void fill_pump(struct load *L);
static void begin_writing(struct load *L);

static int
writes_setup(struct load *L)
{
	if (!L->proto->pref_set) {
		fprintf(stderr, "panes-load: protocol %s has no preferences\n", L->proto->name);
		return 1;
	}
	if (L->opt.duration <= 0 || L->opt.warmup_time < 0 || L->opt.rate < 0) {
		fprintf(stderr, "panes-load: writes needs --duration > 0, --warmup-time >= 0, --rate >= 0\n");
		return 1;
	}
	L->total = writers = L->opt.n;
	for (int i = 0; i < L->total; i++)
		L->clients[i].role = ROLE_WRITER;
	L->observe = 0;
	if (L->opt.inflight < 1)
		L->opt.inflight = 1;
	slots = calloc(RING, sizeof(*slots));
	outstanding_by_writer = calloc((size_t)writers, sizeof(*outstanding_by_writer));
	if (!slots || !outstanding_by_writer)
		return 1;
	hist_init(&ack_hist);
	hist_init(&ack_sent_hist);
	hist_init(&fill_hist);
	return 0;
}

static int
live(struct load *L, int i)
{
	return L->clients[i].state == CS_READY;
}

static struct slot *
open_slot(uint32_t writer, uint64_t due, int measured)
{
	uint32_t seq = next_seq++;
	struct slot *s = &slots[seq % RING];

	if (s->open) { /* RING writes later and still no reply: lost */
		s->open = 0;
		outstanding--;
		outstanding_by_writer[s->writer]--;
		lost++;
	}
	*s = (struct slot){ .seq = seq, .writer = writer, .t_due = due, .open = 1, .measured = (uint8_t)measured };
	outstanding++;
	outstanding_by_writer[writer]++;
	return s;
}

static void
send_slot(struct load *L, struct slot *s, const char *key_path)
{
	s->t_sent = now_ns();
	L->proto->pref_set(L, &L->clients[s->writer], s->seq, key_path);
}

static void
writer_key(struct load *L, uint32_t writer)
{
	snprintf(key, sizeof(key), "%s.w%u", L->opt.key_path, writer + (uint32_t)L->opt.first_index);
}

/* Stage 2: the domain's K keys, FILL_INFLIGHT at a time from writer 0. */
static void
fill_pump(struct load *L)
{
	while (stage == ST_FILL && fill_next < (uint64_t)L->opt.keys && outstanding < FILL_INFLIGHT) {
		if (!live(L, 0)) {
			note_error(L, "writes: writer 0 is gone while filling");
			finish(L, 2);
			return;
		}
		struct slot *s = open_slot(0, now_ns(), 0);
		snprintf(key, sizeof(key), "%s.k%llu", L->opt.key_path, (unsigned long long)fill_next++);
		send_slot(L, s, key);
	}
	if (stage == ST_FILL && fill_done + fill_refused >= (uint64_t)L->opt.keys) {
		t_fill1 = now_ns();
		cpu_snap(&cpu_fill1);
		fprintf(stdout, "{\"event\":\"filled\",\"tool\":\"panes-load\",\"pid\":%d,\"keys\":%d,\"refused\":%llu,"
			"\"fill_seconds\":%.6f,\"cpu_fill_s\":%.4f,\"fill_ns\":",
			(int)getpid(), L->opt.keys, (unsigned long long)fill_refused,
			(double)(t_fill1 - t_fill0) / 1e9, cpu_between(&cpu_fill0, &cpu_fill1));
		hist_write_json(&fill_hist, stdout);
		fputs("}\n", stdout);
		fflush(stdout);
		stage = ST_IDLE;
		if (L->opt.wait_go)
			L->on_go = begin_writing;
		else
			begin_writing(L);
	}
}

static void
writes_start(struct load *L)
{
	int any = 0;

	for (int i = 0; i < writers; i++)
		any |= live(L, i);
	if (!any) {
		note_error(L, "nothing to measure: no writer connected");
		finish(L, 2);
		return;
	}
	if (L->opt.keys > 0) {
		stage = ST_FILL;
		t_fill0 = now_ns();
		cpu_snap(&cpu_fill0);
		progress(L, "filling the domain with %d keys", L->opt.keys);
		fill_pump(L);
	} else
		begin_writing(L);
}

static void
finish_writes(struct load *L)
{
	if (L->finished)
		return;
	t_done = now_ns();
	cpu_snap(&cpu_w1);
	finish(L, lost || refused ? 2 : 0);
}

static void
drain_check(struct timer *t)
{
	struct load *L = t->ctx;
	uint64_t now = now_ns();

	if (!outstanding) {
		finish_writes(L);
		return;
	}
	if (now - t_stop < (uint64_t)(L->opt.write_timeout * 1e9)) {
		timer_set(t, 100 * NS_PER_MS, drain_check, L);
		return;
	}
	for (uint32_t i = 0; i < RING; i++)
		if (slots[i].open) {
			slots[i].open = 0;
			lost++;
		}
	note_error(L, "%llu writes were not acknowledged %.0f s after writing stopped",
		   (unsigned long long)outstanding, L->opt.write_timeout);
	outstanding = 0;
	finish_writes(L);
}

static void
stop_writing(struct load *L, uint64_t now)
{
	stage = ST_DRAIN;
	t_stop = now;
	drain_timer.ctx = L; /* the first check runs now, not from the loop */
	drain_check(&drain_timer);
}

/* Open loop: every write due by now goes out, whatever is outstanding. */
static void
open_tick(struct timer *t)
{
	struct load *L = t->ctx;
	uint64_t now = now_ns();
	double period = 1e9 / L->opt.rate;

	while (stage == ST_WRITE && !L->finished) {
		uint64_t due = t_write0 + (uint64_t)((double)scheduled * period);
		if (due >= t_me) {
			stop_writing(L, now);
			return;
		}
		if (due > now) {
			timer_set(t, due - now, open_tick, L);
			return;
		}
		uint32_t w = (uint32_t)(scheduled++ % (uint64_t)writers);
		if (!live(L, (int)w))
			continue; /* not counted as sent: the writer is gone (its drop is reported) */
		int measured = due >= t_mb;
		struct slot *s = open_slot(w, due, measured);
		writer_key(L, w);
		send_slot(L, s, key);
		sent++;
		sent_measured += (uint64_t)measured;
		if (s->t_sent - due > max_late_ns && measured)
			max_late_ns = s->t_sent - due;
		now = s->t_sent;
	}
}

/* Closed loop: top every writer up to --inflight outstanding. */
static void
closed_pump(struct load *L)
{
	uint64_t now = now_ns();

	if (stage != ST_WRITE)
		return;
	if (now >= t_me) {
		stop_writing(L, now);
		return;
	}
	for (int i = 0; i < writers; i++) {
		if (!live(L, i))
			continue;
		while (outstanding_by_writer[i] < (uint32_t)L->opt.inflight) {
			struct slot *s = open_slot((uint32_t)i, now, now >= t_mb);
			writer_key(L, (uint32_t)i);
			send_slot(L, s, key);
			sent++;
			sent_measured += s->measured;
			s->t_due = s->t_sent;
		}
	}
}

static void
closed_tick(struct timer *t)
{
	struct load *L = t->ctx;
	closed_pump(L);
	if (stage == ST_WRITE)
		timer_set(t, 50 * NS_PER_MS, closed_tick, L); /* ends the window on time if replies stop */
}

static void
begin_writing(struct load *L)
{
	cpu_snap(&cpu_w0);
	t_write0 = now_ns();
	t_mb = t_write0 + (uint64_t)(L->opt.warmup_time * 1e9);
	t_me = t_mb + (uint64_t)(L->opt.duration * 1e9);
	stage = ST_WRITE;
	tick_timer.ctx = L; /* the first tick runs now, not from the loop */
	if (L->opt.rate > 0) {
		progress(L, "writing: %g writes/s over %d writers, open loop", L->opt.rate, writers);
		open_tick(&tick_timer);
	} else {
		progress(L, "writing: %d writers, %d in flight each, closed loop", writers, L->opt.inflight);
		closed_tick(&tick_timer);
	}
}

static struct slot *
take(uint32_t seq)
{
	struct slot *s = &slots[seq % RING];

	if (s->seq != seq || !s->open) {
		stray++;
		return NULL;
	}
	s->open = 0;
	outstanding--;
	outstanding_by_writer[s->writer]--;
	return s;
}

static void
after_reply(struct load *L)
{
	if (stage == ST_FILL)
		fill_pump(L);
	else if (stage == ST_WRITE && L->opt.rate <= 0)
		closed_pump(L);
	else if (stage == ST_DRAIN && !outstanding)
		finish_writes(L);
}

static void
writes_acked(struct load *L, uint32_t seq, uint64_t now)
{
	struct slot *s = take(seq);

	if (!s)
		return;
	if (stage == ST_FILL) {
		fill_done++;
		hist_record(&fill_hist, now - s->t_sent);
	} else {
		acked++;
		if (now >= t_mb && now < t_me) {
			acked_window++;
			uint64_t sec = (now - t_mb) / NS_PER_S;
			if (sec < MAX_SECONDS)
				per_second[sec]++;
		}
		if (s->measured) {
			hist_record(&ack_hist, now - s->t_due);
			hist_record(&ack_sent_hist, now - s->t_sent);
		}
	}
	after_reply(L);
}

static void
writes_refused(struct load *L, uint32_t seq)
{
	if (!take(seq))
		return;
	if (stage == ST_FILL)
		fill_refused++;
	else
		refused++;
	after_reply(L);
}

static void
writes_dropped(struct load *L, struct client *c)
{
	uint32_t w = c->index;

	for (uint32_t i = 0; i < RING && outstanding_by_writer[w]; i++)
		if (slots[i].open && slots[i].writer == w) {
			slots[i].open = 0;
			outstanding--;
			outstanding_by_writer[w]--;
			lost++;
		}
	note_error(L, "writer %u was closed by the server", w);
	after_reply(L);
}

static void
writes_report(struct load *L, FILE *out)
{
	double d = L->opt.duration;
	uint32_t lo = UINT32_MAX, hi = 0;

	for (uint64_t s = 0; s < (uint64_t)d && s < MAX_SECONDS; s++) {
		lo = per_second[s] < lo ? per_second[s] : lo;
		hi = per_second[s] > hi ? per_second[s] : hi;
	}
	if (lo == UINT32_MAX)
		lo = 0;
	fprintf(out, ",\"writers\":%d,\"mode\":\"%s\",\"rate\":%g,\"inflight\":%d,\"keys\":%d", writers,
		L->opt.rate > 0 ? "open" : "closed", L->opt.rate, L->opt.inflight, L->opt.keys);
	fprintf(out, ",\"warmup_seconds\":%g,\"measure_seconds\":%g", L->opt.warmup_time, d);
	fprintf(out, ",\"sent\":%llu,\"sent_measured\":%llu,\"acked\":%llu,\"acked_in_window\":%llu,"
		"\"refused_writes\":%llu,\"lost\":%llu,\"stray\":%llu",
		(unsigned long long)sent, (unsigned long long)sent_measured, (unsigned long long)acked,
		(unsigned long long)acked_window, (unsigned long long)refused, (unsigned long long)lost,
		(unsigned long long)stray);
	fprintf(out, ",\"writes_per_sec\":%.2f,\"writes_per_second_min\":%u,\"writes_per_second_max\":%u",
		(double)acked_window / d, lo, hi);
	fprintf(out, ",\"max_send_late_ns\":%llu,\"fill_seconds\":%.6f", (unsigned long long)max_late_ns,
		t_fill1 > t_fill0 ? (double)(t_fill1 - t_fill0) / 1e9 : 0.0);
	fprintf(out, ",\"write_seconds\":%.3f,\"drain_seconds\":%.3f,\"cpu_write_s\":%.4f",
		t_done > t_write0 && t_write0 ? (double)(t_done - t_write0) / 1e9 : 0.0,
		t_done > t_stop && t_stop ? (double)(t_done - t_stop) / 1e9 : 0.0,
		t_write0 && t_done ? cpu_between(&cpu_w0, &cpu_w1) : 0.0);
	fputs(",\"ack_ns\":", out);
	hist_write_json(&ack_hist, out);
	fputs(",\"ack_from_send_ns\":", out);
	hist_write_json(&ack_sent_hist, out);
	fputs(",\"fill_ns\":", out);
	hist_write_json(&fill_hist, out);
}

const struct workload workload_writes = {
	.name = "writes",
	.setup = writes_setup,
	.start = writes_start,
	.acked = writes_acked,
	.write_refused = writes_refused,
	.dropped = writes_dropped,
	.report = writes_report,
};
