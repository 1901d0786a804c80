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

#endif
