/*
 * The loop (see net.h). Sockets are registered once, edge-triggered for
 * input and output, so a connection costs no epoll_ctl calls after the
 * first: ws.c reads until a short read (the socket is drained; new data
 * raises a new edge) and writes until the socket refuses (its next EPOLLOUT
 * edge resumes the rest).
 *
 * Threading: the only thread.
 */
#include "net.h"

#include <errno.h>
#include <stddef.h>
#include <sys/epoll.h>

#include "clock.h"

#define MAX_TIMERS 32
#define BATCH 1024
#define MAX_WAIT_NS (100 * NS_PER_MS)

static int epfd = -1;
static net_handler *on_event;
static struct timer *timers[MAX_TIMERS];
static int ntimers;

int
net_init(net_handler *handler)
{
	on_event = handler;
	epfd = epoll_create1(EPOLL_CLOEXEC);
	return epfd < 0 ? -1 : 0;
}

void
timer_set(struct timer *t, uint64_t delay_ns, void (*cb)(struct timer *t), void *ctx)
{
	int known = 0;

	t->due = now_ns() + delay_ns;
	if (!t->due)
		t->due = 1;
	t->cb = cb;
	t->ctx = ctx;
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
net_watch(int fd, void *ptr)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.ptr = ptr };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

void
net_forget(int fd)
{
	if (fd >= 0)
		epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
}

/* Runs due timers; returns ms until the next one (at most 100). */
static int
run_timers(int (*stop)(void *ctx), void *ctx)
{
	uint64_t now = now_ns(), next = now + MAX_WAIT_NS;

	for (int i = 0; i < ntimers && !stop(ctx); i++) {
		struct timer *t = timers[i];
		if (t->due && t->due <= now) {
			t->due = 0;
			t->cb(t);
			now = now_ns();
		}
		if (t->due && t->due < next)
			next = t->due;
	}
	return next <= now ? 0 : (int)((next - now + NS_PER_MS - 1) / NS_PER_MS);
}

int
net_run(int (*stop)(void *ctx), void *ctx)
{
	struct epoll_event evs[BATCH];

	while (!stop(ctx)) {
		int wait_ms = run_timers(stop, ctx);
		if (stop(ctx))
			break;
		int n = epoll_wait(epfd, evs, BATCH, wait_ms);
		if (n < 0 && errno != EINTR)
			return -1;
		for (int i = 0; i < n && !stop(ctx); i++) {
			uint32_t e = evs[i].events;
			on_event(evs[i].data.ptr, !!(e & (EPOLLIN | EPOLLRDHUP | EPOLLHUP)), !!(e & EPOLLOUT),
				 !!(e & EPOLLERR));
		}
	}
	return 0;
}
