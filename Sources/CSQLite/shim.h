// What Swift cannot import from SQLite. Each wrapper is `psq_` prefixed and says why.
#ifndef PANES_CSQLITE_SHIM_H
#define PANES_CSQLITE_SHIM_H

#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro casting -1 to a function pointer; it tells SQLite to copy
/// bound text, which Swift's temporary buffers need.
static inline sqlite3_destructor_type psq_transient(void) { return SQLITE_TRANSIENT; }

/// sqlite3_db_config is variadic, which Swift cannot call; a read-only inspector uses this so
/// that closing it never checkpoints (writes) the database it only meant to read.
static inline int psq_disable_checkpoint_on_close(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0);
}

/// sqlite3_config is variadic too. With memory statistics on (the default), every allocation
/// SQLite makes takes a global mutex and updates counters that only `sqlite3_status` and the
/// soft heap limit read (neither is used here); Debian builds SQLite without its lookaside
/// allocator, so an UPDATE of a session row makes about a dozen such allocations. Must come
/// before SQLite initialises (the first open); afterwards it returns SQLITE_MISUSE and changes
/// nothing.
static inline int psq_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

#endif
