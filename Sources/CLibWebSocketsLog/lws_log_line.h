// What lws_log.c does with a line of lws's that is on (`pws_log_emit`), and the check in C that
// is its `_lws_log` where the x86-64 assembly is not (off x86-64, or without ELF). Kept apart so
// that the tests compile the C check too, on a machine where the assembly is what ships: with
// PWS_LOG_C_CHECK naming it (lws_log.c: `_lws_log`; Tests/CLibWebSocketsLogTestSupport: another
// name). Every file that includes it has its own copy of what is static here.
#ifndef PANES_LWS_LOG_LINE_H
#define PANES_LWS_LOG_LINE_H

#include <libwebsockets.h>
#include <stdarg.h>
#include <stdatomic.h>

// The levels that are on, as `pws_set_log_level` gave them to lws (defined in lws_log.c).
extern __attribute__((visibility("hidden"))) _Atomic int pws_log_levels;

// Set by `pws_log_calls_reach_here` on its own thread while it asks lws to log one line; a line
// that is on then reaches `pws_log_emit`, which notes it instead of emitting it.
static _Thread_local int pws_log_probing, pws_log_probe_reached;

// A line whose level is on: formatted and emitted by lws (noted instead while probing).
static void pws_log_emit(int filter, const char *format, va_list arguments) {
    if (pws_log_probing) {
        pws_log_probe_reached = 1;
        return;
    }
    _lws_logv(filter, format, arguments);
}

#ifdef PWS_LOG_C_CHECK
// The line's level against the levels on here and in lws; on: formatted through `pws_log_emit`.
void PWS_LOG_C_CHECK(int filter, const char *format, ...) {
    if (!(filter & atomic_load_explicit(&pws_log_levels, memory_order_relaxed)) || !lwsl_visible(filter)) return;
    va_list arguments;
    va_start(arguments, format);
    pws_log_emit(filter, format, arguments);
    va_end(arguments);
}
#endif

#endif
