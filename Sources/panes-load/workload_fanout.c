/*
 * fanout: one writer, N observers. The writer publishes W changes (after a
 * few unmeasured warm-up ones), at most `inflight` outstanding at once and
 * at most `rate` per second. For each change this records
 *   - every delivery's latency (write -> this observer has it), and
 *   - the latency until the LAST observer has it, which is what a user
 *     sees as "every window shows the change";
 * and the changes per second sustained while measuring. A change that not
 * every observer has after --write-timeout seconds is counted as lost.
 *
 * Latencies start when the writer's frame is handed to the socket and end
 * when the observer's frame is read, on one monotonic clock.
 *
 * On a cluster (--ports, nodes.h) every delivery is also counted as
 * same-node (the observer is on the writer's node) or cross-node (its node
 * heard of the commit from another node), each with its own histogram.
 */
#include "workload_fanout.h"

#include <string.h>

#include "client.h"
#include "clock.h"
#include "hist.h"
#include "load.h"
#include "net.h"
#include "nodes.h"
#include "protocol.h"

#define WINDOW 4096 /* most changes ever outstanding at once */

struct slot {
	uint32_t seq;
	uint32_t got;
	uint64_t t_queued, t_sent;
	uint8_t open;
};

static struct slot slots[WINDOW];
static uint32_t next_seq = 1, total_writes;
static int outstanding, live_observers;
static uint64_t completed, lost, missing, stray, duplicates, deliveries;
static uint64_t t_measure_begin, t_measure_end;
static struct hist last_hist, each_hist, ack_hist, same_node_hist, cross_node_hist;
static struct timer pace_timer, watchdog_timer;

static void pump(struct load *L);

static int
fanout_setup(struct load *L)
{
	L->total = L->opt.n + 1;
	L->clients[0].role = ROLE_WRITER;
	L->clients[0].raw = (uint8_t)L->proto->writer_is_raw;
	for (int i = 1; i < L->total; i++)
		L->clients[i].role = ROLE_OBSERVER;
	L->observe = 1;
	total_writes = (uint32_t)(L->opt.writes + L->opt.warmup);
	if (L->opt.inflight < 1)
		L->opt.inflight = 1;
	if (L->opt.inflight > WINDOW / 2)
		L->opt.inflight = WINDOW / 2;
	hist_init(&last_hist);
	hist_init(&each_hist);
	hist_init(&ack_hist);
	hist_init(&same_node_hist);
	hist_init(&cross_node_hist);
	return 0;
}

static uint64_t
t0_of(const struct slot *s)
{
	return s->t_sent ? s->t_sent : s->t_queued;
}

static int
measured(struct load *L, uint32_t seq)
{
	return seq > (uint32_t)L->opt.warmup;
}

static void
maybe_finish(struct load *L)
{
	if (completed + lost >= total_writes && !L->finished)
		finish(L, lost ? 2 : 0);
}

static void
close_slot(struct load *L, struct slot *s, uint64_t now, int ok)
{
	s->open = 0;
	outstanding--;
	if (ok) {
		completed++;
		if (measured(L, s->seq)) {
			hist_record(&last_hist, now - t0_of(s));
			t_measure_end = now;
		}
	} else {
		lost++;
		missing += (uint64_t)(live_observers > (int)s->got ? live_observers - (int)s->got : 0);
		note_error(L, "change %u reached %u of %d observers in time", s->seq, s->got,
			   live_observers);
	}
}

static void
send_next(struct load *L, uint64_t now)
{
	struct client *w = writer_client(L);
	uint32_t seq = next_seq++;
	struct slot *s = &slots[seq % WINDOW];

	memset(s, 0, sizeof(*s));
	s->seq = seq;
	s->open = 1;
	s->t_queued = now;
	outstanding++;
	if (measured(L, seq) && !t_measure_begin)
		t_measure_begin = now;
	L->proto->write(L, w, seq);
}

static void
pace(struct timer *t)
{
	struct load *L = t->ctx;
	(void)t;
	pump(L);
}

static void
pump(struct load *L)
{
	struct client *w = writer_client(L);

	if (!L->started || L->finished)
		return;
	if (!w || w->state != CS_READY) {
		note_error(L, "the writer is not connected");
		finish(L, 2);
		return;
	}
	while (outstanding < L->opt.inflight && next_seq <= total_writes) {
		uint64_t now = now_ns();
		if (L->opt.rate > 0) {
			uint64_t due = L->t_start + (uint64_t)((double)(next_seq - 1) * 1e9 / L->opt.rate);
			if (now < due) {
				timer_set(&pace_timer, due - now, pace, L);
				return;
			}
		}
		send_next(L, now);
	}
}

/* Close changes that every live observer now has (after a drop) or that timed out. */
static void
sweep(struct load *L, uint64_t now, int timeouts)
{
	uint64_t limit = (uint64_t)(L->opt.write_timeout * 1e9);

	for (uint32_t seq = next_seq > WINDOW ? next_seq - WINDOW : 1; seq < next_seq; seq++) {
		struct slot *s = &slots[seq % WINDOW];
		if (!s->open || s->seq != seq)
			continue;
		if ((int)s->got >= live_observers)
			close_slot(L, s, now, 1);
		else if (timeouts && now - t0_of(s) > limit)
			close_slot(L, s, now, 0);
	}
}

static void
watchdog(struct timer *t)
{
	struct load *L = t->ctx;
	sweep(L, now_ns(), 1);
	maybe_finish(L);
	pump(L);
	if (!L->finished)
		timer_set(t, 100 * NS_PER_MS, watchdog, L);
}

static void
fanout_start(struct load *L)
{
	live_observers = 0;
	for (int i = 1; i < L->total; i++)
		live_observers += L->clients[i].state == CS_READY;
	if (live_observers == 0 || !writer_client(L) || writer_client(L)->state != CS_READY) {
		note_error(L, "nothing to measure: writer %s, %d observers ready",
			   writer_client(L) && writer_client(L)->state == CS_READY ? "ready" : "not ready",
			   live_observers);
		finish(L, 2);
		return;
	}
	timer_set(&watchdog_timer, 100 * NS_PER_MS, watchdog, L);
	pump(L);
}

static void
fanout_sent(struct load *L, uint32_t seq, uint64_t now)
{
	struct slot *s = &slots[seq % WINDOW];

	(void)L;
	if (s->seq == seq)
		s->t_sent = now;
}

static void
fanout_delivered(struct load *L, struct client *c, uint32_t seq, uint64_t now)
{
	struct slot *s = &slots[seq % WINDOW];

	if (c->state != CS_READY)
		return;
	if (seq <= c->last_seq) {
		duplicates++;
		return;
	}
	c->last_seq = seq;
	if (s->seq != seq || !s->open) {
		stray++; /* late (after its timeout) or never written */
		return;
	}
	deliveries++;
	if (measured(L, seq)) {
		hist_record(&each_hist, now - t0_of(s));
		hist_record(node_of(c) == node_of(writer_client(L)) ? &same_node_hist : &cross_node_hist,
			    now - t0_of(s));
	}
	if ((int)++s->got >= live_observers) {
		close_slot(L, s, now, 1);
		maybe_finish(L);
		pump(L);
	}
}

static void
fanout_acked(struct load *L, uint32_t seq, uint64_t now)
{
	struct slot *s = &slots[seq % WINDOW];

	if (s->seq == seq && measured(L, seq))
		hist_record(&ack_hist, now - t0_of(s));
}

static void
fanout_dropped(struct load *L, struct client *c)
{
	if (c->role != ROLE_OBSERVER || !L->started)
		return;
	live_observers--;
	sweep(L, now_ns(), 0);
	maybe_finish(L);
	pump(L);
}

static void
fanout_report(struct load *L, FILE *out)
{
	double secs = t_measure_end > t_measure_begin ? (double)(t_measure_end - t_measure_begin) / 1e9 : 0;
	uint64_t measured_done = last_hist.count;

	fprintf(out, ",\"writes\":%d,\"warmup\":%d,\"inflight\":%d,\"rate\":%g,\"payload_bytes\":%d",
		L->opt.writes, L->opt.warmup, L->opt.inflight, L->opt.rate, L->opt.payload);
	fprintf(out, ",\"observers\":%d,\"completed\":%llu,\"lost\":%llu,\"missing_deliveries\":%llu",
		live_observers, (unsigned long long)completed, (unsigned long long)lost,
		(unsigned long long)missing);
	fprintf(out, ",\"stray\":%llu,\"duplicates\":%llu,\"deliveries\":%llu",
		(unsigned long long)stray, (unsigned long long)duplicates, (unsigned long long)deliveries);
	fprintf(out, ",\"measure_seconds\":%.6f,\"changes_per_sec\":%.2f,\"deliveries_per_sec\":%.0f",
		secs, secs > 0 ? (double)measured_done / secs : 0,
		secs > 0 ? (double)each_hist.count / secs : 0);
	fputs(",\"latency_last_ns\":", out);
	hist_write_json(&last_hist, out);
	fputs(",\"latency_each_ns\":", out);
	hist_write_json(&each_hist, out);
	fputs(",\"ack_ns\":", out);
	hist_write_json(&ack_hist, out);
	fprintf(out, ",\"nodes\":%d,\"latency_same_node_ns\":", nodes_count());
	hist_write_json(&same_node_hist, out);
	fputs(",\"latency_cross_node_ns\":", out);
	hist_write_json(&cross_node_hist, out);
}

const struct workload workload_fanout = {
	.name = "fanout",
	.setup = fanout_setup,
	.start = fanout_start,
	.delivered = fanout_delivered,
	.sent = fanout_sent,
	.acked = fanout_acked,
	.dropped = fanout_dropped,
	.report = fanout_report,
};
