// lws's log call, with the level asked first (see lws_log.c).
#ifndef PANES_LWS_LOG_H
#define PANES_LWS_LOG_H

/// Turns lws's log levels `levels` (LLL_ bits) on and every other off, for lws and for the
/// check in front of it (lws_log.c). Use instead of `lws_set_log_level`, which the check would
/// not see; lines go to lws's own emitter (stderr).
void pws_set_log_level(int levels);

/// Log calls made on the calling thread at a level that is off, which returned before any
/// formatting: how a test tells that lws's own calls reach `_lws_log` here (read it on the
/// service thread, where lws logs while it serves).
unsigned long pws_log_calls_skipped(void);

#endif
