// lws's log entry point, defined again in the executable so that lws's own calls reach this one.
//
// Debian's lws 4.1.6 is built with _DEBUG, so its parser and service paths call `_lws_log` for
// debug, parser and header lines about 230 times a resume (a header byte at a time while the
// upgrade is parsed), and lws's `_lws_log` spills every argument register (va_start) and calls
// `_lws_logv` through the PLT before `_lws_logv` compares the line's level with the levels that
// are on: ~45 instructions a call, ~5 % of a resume's (bench/README.md, wp/cpu-cuts3). lws calls
// `_lws_log` through its PLT (it is exported, default visibility), so a definition in the
// executable takes its place for every caller, lws's included (ELF symbol interposition; the
// linker exports it because the library defines it). This one asks lws whether the level is on
// (`lwsl_visible`, lws's own answer from the level `lws_set_log_level` set) before touching the
// variable arguments, and hands a line that is on to lws's `_lws_logv`, which formats and emits
// it as before: what is logged, and how, is unchanged.
//
// Declared here rather than through libwebsockets.h: the header is not needed for two
// prototypes, and this file must not depend on how lws's headers spell `_lws_log` (a macro on
// some platforms).
#include "lws_log.h"

#include <stdarg.h>

int lwsl_visible(int level);
void _lws_logv(int filter, const char *format, va_list vl);
void _lws_log(int filter, const char *format, ...) __attribute__((format(printf, 2, 3)));

// Per thread: each server's service thread counts its own, read there (tests), no atomics.
static _Thread_local unsigned long skipped;

void _lws_log(int filter, const char *format, ...) {
    if (!lwsl_visible(filter)) {
        skipped++;
        return;
    }
    va_list arguments;
    va_start(arguments, format);
    _lws_logv(filter, format, arguments);
    va_end(arguments);
}

unsigned long pws_log_calls_skipped(void) { return skipped; }
