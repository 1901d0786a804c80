// What Swift cannot import from jansson: the type-test macros and the flag macros that
// take arguments. Each wrapper is `pjs_` prefixed and says why it exists.
#ifndef PANES_CJANSSON_SHIM_H
#define PANES_CJANSSON_SHIM_H

#include <jansson.h>

/// json_typeof is a macro over the struct's `type` field.
static inline json_type pjs_typeof(const json_t *json) { return json_typeof(json); }

/// JSON_REAL_PRECISION(n) is a function-like macro; 17 digits round-trip every double. Keys
/// are sorted so the same message is the same bytes in every process (logs, golden files).
static inline size_t pjs_flags_compact_real17(void) {
    return JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17) | JSON_ENCODE_ANY;
}

/// The same flags, plus sorted keys and indentation, for files that people read.
static inline size_t pjs_flags_pretty(void) {
    return JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(17) | JSON_ENCODE_ANY;
}

/// json_decref is static inline with a refcount decrement Swift can import, but the
/// null check is spelled here once so callers never forget it.
static inline void pjs_release(json_t *json) { if (json) json_decref(json); }

#endif
