// What Swift cannot import from SQLite. Each wrapper is `psq_` prefixed and says why.
#ifndef PANES_CSQLITE_SHIM_H
#define PANES_CSQLITE_SHIM_H

#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro casting -1 to a function pointer; it tells SQLite to copy
/// bound text, which Swift's temporary buffers need.
static inline sqlite3_destructor_type psq_transient(void) { return SQLITE_TRANSIENT; }

#endif
