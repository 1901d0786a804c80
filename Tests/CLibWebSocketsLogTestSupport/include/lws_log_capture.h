// Test-only: C callers of lws's variadic `_lws_log`, which Swift cannot call (lws_log_capture.c).
#ifndef PANES_LWS_LOG_CAPTURE_H
#define PANES_LWS_LOG_CAPTURE_H

#include <stddef.h>

/// Calls `_lws_log` at a level that is off and then at LLL_ERR with ten arguments after the
/// format (two doubles: %al is 2, and four arguments go on the stack), with the emitter set
/// (through `pws_set_log_level`) to one that keeps this thread's lines; writes what was emitted
/// to `captured` and what snprintf makes of the same call to `expected` (each `capacity` bytes,
/// NUL-terminated) and returns how many lines the call at the level that is off emitted. Leaves
/// lws's levels and emitter as the transport sets them (errors and warnings, to stderr).
int pws_test_log_forwarding(char *captured, char *expected, size_t capacity);

/// As `pws_test_log_forwarding`, through lws_log.c's check in C (its `_lws_log` off x86-64 or
/// without ELF), compiled for the tests as `pws_test_lws_log_c_check` (lws_log_c_check.c).
int pws_test_c_check_forwarding(char *captured, char *expected, size_t capacity);

/// lws_log.c's C check under a test name; Swift cannot call it (variadic).
void pws_test_lws_log_c_check(int filter, const char *format, ...);

/// The lws this process runs (`lws_get_library_version()`, "4.1.6-…"), and the one its headers,
/// and so lws_log.c, were compiled against (LWS_LIBRARY_VERSION).
const char *pws_test_lws_runtime_version(void);
const char *pws_test_lws_header_version(void);

#endif
