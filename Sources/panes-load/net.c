/*
 * The loop: one epoll set for every client socket, and a handful of one-shot
 * timers. A turn costs O(ready sockets + timers), never O(connections).
 *
 * Sockets are registered once, edge-triggered for input and output, so a
 * connection costs no epoll_ctl calls after the first: ws.c reads until a
 * short read (the socket is drained; new data raises a new edge) and writes
 * until the socket refuses (its next EPOLLOUT edge resumes the rest).
 *
 * Threading: the only thread (see load.h).
 */
#include "load.h"

#include <errno.h>
#include <sys/epoll.h>

#define MAX_TIMERS 32
#define BATCH 1024

static int epfd = -1;
static struct timer *timers[MAX_TIMERS];
static int ntimers;

int
net_init(void)
{
	epfd = epoll_create1(EPOLL_CLOEXEC);
	return epfd < 0 ? -1 : 0;
}

void
timer_set(struct timer *t, uint64_t delay_ns, void (*cb)(struct timer *t))
{
	int known = 0;

	t->due = now_ns() + delay_ns;
	if (!t->due)
		t->due = 1;
	t->cb = cb;
	for (int i = 0; i < ntimers; i++)
		known |= timers[i] == t;
	if (!known && ntimers < MAX_TIMERS)
		timers[ntimers++] = t;
}

void
timer_cancel(struct timer *t)
{
	t->due = 0;
}

int
net_watch(struct client *c)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.ptr = c };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev);
}

void
net_forget(struct client *c)
{
	if (c->fd >= 0)
		epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
}

/* Runs due timers; returns ms until the next one (at most 100). */
static int
run_timers(void)
{
	uint64_t now = now_ns(), next = now + 100 * 1000000ull;

	for (int i = 0; i < ntimers && !g.finished; i++) {
		struct timer *t = timers[i];
		if (t->due && t->due <= now) {
			t->due = 0;
			t->cb(t);
			now = now_ns();
		}
		if (t->due && t->due < next)
			next = t->due;
	}
	return next <= now ? 0 : (int)((next - now + 999999) / 1000000);
}

void
net_run(void)
{
	struct epoll_event evs[BATCH];

	while (!g.finished) {
		int wait_ms = run_timers();
		if (g.finished)
			break;
		int n = epoll_wait(epfd, evs, BATCH, wait_ms);
		if (n < 0 && errno != EINTR) {
			note_error("epoll_wait failed");
			finish(1);
			break;
		}
		for (int i = 0; i < n && !g.finished; i++) {
			struct client *c = evs[i].data.ptr;
			uint32_t e = evs[i].events;
			if (c->fd >= 0)
				ws_service(c, !!(e & (EPOLLIN | EPOLLRDHUP | EPOLLHUP)), !!(e & EPOLLOUT),
					   !!(e & EPOLLERR));
		}
		if (g.interrupted && !g.finished)
			finish(g.work == &workload_connect && g.t_all_ready ? 0 : 130);
	}
}
