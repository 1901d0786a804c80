/*
 * The loop: one epoll set for every socket, and a handful of one-shot
 * timers. A turn costs O(ready sockets + timers), never O(connections).
 *
 * Threading: the only thread. Everything in panes-load runs from net_run().
 */
#ifndef PANES_LOAD_NET_H
#define PANES_LOAD_NET_H

#include <stdint.h>

struct timer {
	uint64_t due;           /* ns, 0 = not armed */
	void (*cb)(struct timer *t);
	void *ctx;              /* what timer_set was given, for the callback */
};

/** Called for every socket event: the pointer given to net_watch and what happened. */
typedef void net_handler(void *ptr, int readable, int writable, int error);

int net_init(net_handler *handler);
/** Arms `t` to fire once, `delay_ns` from now (re-arming moves it); `cb` finds `ctx` in t->ctx. */
void timer_set(struct timer *t, uint64_t delay_ns, void (*cb)(struct timer *t), void *ctx);
void timer_cancel(struct timer *t);
/** Registers `fd` for input and output, edge-triggered, once; events carry `ptr`. */
int net_watch(int fd, void *ptr);
void net_forget(int fd);
/**
 * Runs timers and socket events until `stop(ctx)` is true after a turn.
 * Returns 0, or -1 if epoll failed.
 */
int net_run(int (*stop)(void *ctx), void *ctx);

#endif
