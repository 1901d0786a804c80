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

static void pump(void);

static int
fanout_setup(void)
{
	g.total = g.opt.n + 1;
	g.clients[0].role = ROLE_WRITER;
	g.clients[0].raw = (uint8_t)g.proto->writer_is_raw;
	for (int i = 1; i < g.total; i++)
		g.clients[i].role = ROLE_OBSERVER;
	g.observe = 1;
	total_writes = (uint32_t)(g.opt.writes + g.opt.warmup);
	if (g.opt.inflight < 1)
		g.opt.inflight = 1;
	if (g.opt.inflight > WINDOW / 2)
		g.opt.inflight = WINDOW / 2;
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
measured(uint32_t seq)
{
	return seq > (uint32_t)g.opt.warmup;
}

static void
maybe_finish(void)
{
	if (completed + lost >= total_writes && !g.finished)
		finish(lost ? 2 : 0);
}

static void
close_slot(struct slot *s, uint64_t now, int ok)
{
	s->open = 0;
	outstanding--;
	if (ok) {
		completed++;
		if (measured(s->seq)) {
			hist_record(&last_hist, now - t0_of(s));
			t_measure_end = now;
		}
	} else {
		lost++;
		missing += (uint64_t)(live_observers > (int)s->got ? live_observers - (int)s->got : 0);
		note_error("change %u reached %u of %d observers in time", s->seq, s->got,
			   live_observers);
	}
}

static void
send_next(uint64_t now)
{
	struct client *w = writer_client();
	uint32_t seq = next_seq++;
	struct slot *s = &slots[seq % WINDOW];

	memset(s, 0, sizeof(*s));
	s->seq = seq;
	s->open = 1;
	s->t_queued = now;
	outstanding++;
	if (measured(seq) && !t_measure_begin)
		t_measure_begin = now;
	g.proto->write(w, seq);
}

static void
pace(struct timer *t)
{
	(void)t;
	pump();
}

static void
pump(void)
{
	struct client *w = writer_client();

	if (!g.started || g.finished)
		return;
	if (!w || w->state != CS_READY) {
		note_error("the writer is not connected");
		finish(2);
		return;
	}
	while (outstanding < g.opt.inflight && next_seq <= total_writes) {
		uint64_t now = now_ns();
		if (g.opt.rate > 0) {
			uint64_t due = g.t_start + (uint64_t)((double)(next_seq - 1) * 1e9 / g.opt.rate);
			if (now < due) {
				timer_set(&pace_timer, due - now, pace);
				return;
			}
		}
		send_next(now);
	}
}

/* Close changes that every live observer now has (after a drop) or that timed out. */
static void
sweep(uint64_t now, int timeouts)
{
	uint64_t limit = (uint64_t)(g.opt.write_timeout * 1e9);

	for (uint32_t seq = next_seq > WINDOW ? next_seq - WINDOW : 1; seq < next_seq; seq++) {
		struct slot *s = &slots[seq % WINDOW];
		if (!s->open || s->seq != seq)
			continue;
		if ((int)s->got >= live_observers)
			close_slot(s, now, 1);
		else if (timeouts && now - t0_of(s) > limit)
			close_slot(s, now, 0);
	}
}

static void
watchdog(struct timer *t)
{
	sweep(now_ns(), 1);
	maybe_finish();
	pump();
	if (!g.finished)
		timer_set(t, 100 * NS_PER_MS, watchdog);
}

static void
fanout_start(void)
{
	live_observers = 0;
	for (int i = 1; i < g.total; i++)
		live_observers += g.clients[i].state == CS_READY;
	if (live_observers == 0 || !writer_client() || writer_client()->state != CS_READY) {
		note_error("nothing to measure: writer %s, %d observers ready",
			   writer_client() && writer_client()->state == CS_READY ? "ready" : "not ready",
			   live_observers);
		finish(2);
		return;
	}
	timer_set(&watchdog_timer, 100 * NS_PER_MS, watchdog);
	pump();
}

static void
fanout_sent(uint32_t seq, uint64_t now)
{
	struct slot *s = &slots[seq % WINDOW];

	if (s->seq == seq)
		s->t_sent = now;
}

static void
fanout_delivered(struct client *c, uint32_t seq, uint64_t now)
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
	if (measured(seq)) {
		hist_record(&each_hist, now - t0_of(s));
		hist_record(node_of(c) == node_of(writer_client()) ? &same_node_hist : &cross_node_hist,
			    now - t0_of(s));
	}
	if ((int)++s->got >= live_observers) {
		close_slot(s, now, 1);
		maybe_finish();
		pump();
	}
}

static void
fanout_acked(uint32_t seq, uint64_t now)
{
	struct slot *s = &slots[seq % WINDOW];

	if (s->seq == seq && measured(seq))
		hist_record(&ack_hist, now - t0_of(s));
}

static void
fanout_dropped(struct client *c)
{
	if (c->role != ROLE_OBSERVER || !g.started)
		return;
	live_observers--;
	sweep(now_ns(), 0);
	maybe_finish();
	pump();
}

static void
fanout_report(FILE *out)
{
	double secs = t_measure_end > t_measure_begin ? (double)(t_measure_end - t_measure_begin) / 1e9 : 0;
	uint64_t measured_done = last_hist.count;

	fprintf(out, ",\"writes\":%d,\"warmup\":%d,\"inflight\":%d,\"rate\":%g,\"payload_bytes\":%d",
		g.opt.writes, g.opt.warmup, g.opt.inflight, g.opt.rate, g.opt.payload);
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
