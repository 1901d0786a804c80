// The few libev calls Panes makes itself: creating, running, breaking and destroying the one
// loop lws runs on (a "foreign" loop, so the server decides when it stops). Everything else
// about libev happens inside lws's libev plugin. The loop is handed around as `void *` so
// Swift never sees `struct ev_loop`, which ev.h also declares as a function name.
#ifndef PANES_CLIBEV_SHIM_H
#define PANES_CLIBEV_SHIM_H

#define EV_COMPAT3 0
#include <ev.h>

/// A new loop on the best backend the kernel has (epoll on Linux); NULL if none.
static inline void *pev_loop_new(void) { return ev_loop_new(EVFLAG_AUTO); }

/// Runs the loop until `pev_break` (or until nothing is left to watch).
static inline void pev_run(void *loop) { ev_run((struct ev_loop *)loop, 0); }

/// Makes `pev_run` return after the current iteration; call on the loop's own thread.
static inline void pev_break(void *loop) { ev_break((struct ev_loop *)loop, EVBREAK_ALL); }

static inline void pev_loop_destroy(void *loop) { ev_loop_destroy((struct ev_loop *)loop); }

/// The backend libev picked, for the start-up log line ("epoll", "poll", ...).
static inline const char *pev_backend_name(void *loop) {
    switch (ev_backend((struct ev_loop *)loop)) {
    case EVBACKEND_EPOLL: return "epoll";
    case EVBACKEND_POLL: return "poll";
    case EVBACKEND_SELECT: return "select";
    default: return "other";
    }
}

/// A one-shot timer on the loop that calls `fire(owner)`. Panes schedules its own timers here
/// rather than with lws_sul: lws 4.1's libev plugin re-arms its single timer with
/// ev_timer_set on a running watcher, which libev ignores, so a lws_sul due sooner than the
/// one already armed fires only when that later one does.
struct pev_timer {
    ev_timer watcher;
    void (*fire)(void *owner);
    void *owner;
};

static void pev_timer_fired(struct ev_loop *loop, ev_timer *watcher, int revents) {
    (void)loop; (void)revents;
    struct pev_timer *timer = (struct pev_timer *)watcher;
    timer->fire(timer->owner);
}

static inline void pev_timer_init(struct pev_timer *timer, void (*fire)(void *owner), void *owner) {
    ev_timer_init(&timer->watcher, pev_timer_fired, 0., 0.);
    timer->fire = fire;
    timer->owner = owner;
}

/// (Re)schedules the timer `seconds` from now, measured from the current time rather than
/// the loop's cached one, so it never fires early by however long this turn has run.
static inline void pev_timer_schedule(void *loop, struct pev_timer *timer, double seconds) {
    struct ev_loop *ev = (struct ev_loop *)loop;
    ev_timer_stop(ev, &timer->watcher);
    ev_now_update(ev);
    ev_timer_set(&timer->watcher, seconds, 0.);
    ev_timer_start(ev, &timer->watcher);
}

static inline void pev_timer_cancel(void *loop, struct pev_timer *timer) {
    ev_timer_stop((struct ev_loop *)loop, &timer->watcher);
}

static inline int pev_timer_is_scheduled(struct pev_timer *timer) { return ev_is_active(&timer->watcher); }

/// A prepare watcher: libev calls it at the start of each loop turn, before it hands its
/// descriptor changes to the kernel and waits. The server starts it only while it has work
/// for that moment (`WebSocketServer.beforeWaiting`: write turns, `serverWillWait`) and stops
/// it once done.
struct pev_prepare {
    ev_prepare watcher;
    void (*fire)(void *owner);
    void *owner;
};

static void pev_prepare_fired(struct ev_loop *loop, ev_prepare *watcher, int revents) {
    (void)loop; (void)revents;
    struct pev_prepare *prepare = (struct pev_prepare *)watcher;
    prepare->fire(prepare->owner);
}

static inline void pev_prepare_init(struct pev_prepare *prepare, void (*fire)(void *owner), void *owner) {
    ev_prepare_init(&prepare->watcher, pev_prepare_fired);
    prepare->fire = fire;
    prepare->owner = owner;
}

static inline void pev_prepare_start(void *loop, struct pev_prepare *prepare) {
    ev_prepare_start((struct ev_loop *)loop, &prepare->watcher);
}

static inline void pev_prepare_stop(void *loop, struct pev_prepare *prepare) {
    ev_prepare_stop((struct ev_loop *)loop, &prepare->watcher);
}

#endif
