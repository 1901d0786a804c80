// lws's log call, with the level asked first (see lws_log.c).
#ifndef PANES_LWS_LOG_H
#define PANES_LWS_LOG_H

/// Log calls made on the calling thread at a level that is off, which returned before any
/// formatting: how a test tells that lws's own calls reach `_lws_log` here (read it on the
/// service thread, where lws logs while it serves).
unsigned long pws_log_calls_skipped(void);

#endif
