// lws's log call, with the level asked first (see lws_log.c).
#ifndef PANES_LWS_LOG_H
#define PANES_LWS_LOG_H

/// Turns lws's log levels `levels` (LLL_ bits) on and every other off, for lws and for the
/// check in front of it (lws_log.c), and sets lws's emitter to `emit` (NULL: the one it has;
/// lws's own writes to stderr). Use instead of `lws_set_log_level`, which the check would not see.
void pws_set_log_level(int levels, void (*emit)(int level, const char *line));

/// 1 when this module defines `_lws_log` in front of lws's (lws 4.1.x), 0 when lws logs alone.
int pws_log_interposing(void);

/// 1 when lws's own log calls reach the `_lws_log` here (asked by having lws log one error line,
/// which is noted and not emitted), 0 when they do not or nothing is interposed. The transport
/// calls it as it starts and warns if 0 while `pws_log_interposing()` is 1.
int pws_log_calls_reach_here(void);

#endif
