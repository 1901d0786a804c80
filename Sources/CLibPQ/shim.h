// What Swift cannot do comfortably with libpq. Each wrapper is `ppq_` prefixed and says why.
#ifndef PANES_CLIBPQ_SHIM_H
#define PANES_CLIBPQ_SHIM_H

#include <libpq-fe.h>

/// libpq prints server NOTICEs (`CREATE TABLE IF NOT EXISTS … skipping`) to stderr by default;
/// the server's log is ours to write. A C function pointer, so no Swift closure is kept alive.
static void ppq_ignore_notice(void *arg, const char *message) { (void)arg; (void)message; }
static inline void ppq_silence_notices(PGconn *conn) { PQsetNoticeProcessor(conn, ppq_ignore_notice, (void *)0); }

#endif
