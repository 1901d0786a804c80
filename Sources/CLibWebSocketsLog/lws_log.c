// lws's log entry point, defined again in the executable so that lws's own calls reach this one.
//
// Debian's lws 4.1.6 is built with _DEBUG, so its parser and service paths call `_lws_log` for
// debug, parser and header lines about 309 times a resume (a header byte at a time while the
// upgrade is parsed), all of them at levels the transport leaves off. lws's own `_lws_log`
// spills every argument register and checks the stack guard (va_start) and calls `_lws_logv`
// through the PLT before `_lws_logv` compares the line's level with the levels that are on:
// ~28 instructions a call, 8,650 of a resume's ~166,000 (bench/README.md, wp/cpu-cuts3). lws calls
// `_lws_log` through its PLT (it is exported, default visibility), so a definition in the
// executable takes its place for every caller, lws's included (ELF symbol interposition: the
// linker exports it because the library defines it, which `nm -D panes` shows). A build of lws
// that binds its own calls inside the library (-Bsymbolic) would not call this one:
// `pws_log_calls_reach_here` tells, and the transport warns once a start if so.
//
// On x86-64 the check is three instructions with no frame (four with CET's endbr64): the line's
// level against the levels `pws_set_log_level` turned on, and a line that is on is handed on by
// a jump, every argument register (and %al, the count of vector registers a variadic call
// passes) and the stack arguments as the caller left them, to a C function that formats it
// through lws's `_lws_logv`, which checks lws's own level and emits it as before. A C function
// that tests first still spills the registers in its prologue (va_start), which was ~24
// instructions a call. Elsewhere the C version in lws_log_line.h asks lws (`lwsl_visible`); the
// tests compile and run that one too, under another name, where the assembly ships.
//
// Only for lws 4.1.x, whose `_lws_log` this copies (what it is called with, and that it formats
// through `_lws_logv`, which asks the level again): with any other version this file defines no
// `_lws_log`, lws logs through its own, `pws_log_interposing` says 0 and the test of the check
// (Tests/CLibWebSocketsLogTests) is skipped. The prototypes come from libwebsockets.h and are
// checked against the ones the assembly assumes below.
//
// The levels are a copy of what `pws_set_log_level` gave lws; they start as every level, so
// until it is called lws alone decides. Calling `lws_set_log_level` directly to turn more levels
// on would leave them filtered out here: the transport sets lws's levels only through
// `pws_set_log_level` (scripts/lint/lws_log_level.py fails on any other caller).
#include "lws_log.h"

#include <libwebsockets.h>
#include <stdarg.h>
#include <stdatomic.h>

#if (LWS_LIBRARY_VERSION_NUMBER) >= 4001000 && (LWS_LIBRARY_VERSION_NUMBER) < 4002000 && \
    !defined(LWS_WITH_NO_LOGS) && !defined(LWS_PLAT_OPTEE)
#define PWS_INTERPOSE 1
#else
#define PWS_INTERPOSE 0
#endif

_Static_assert(__builtin_types_compatible_p(__typeof__(lws_set_log_level), void(int, void (*)(int, const char *))),
               "lws_set_log_level is not what pws_set_log_level passes on");

// Read by the check below; written as a server starts, before lws serves (servers in one process,
// as in tests, may start on several threads at once: relaxed atomics, a plain load on x86-64).
__attribute__((visibility("hidden"))) _Atomic int pws_log_levels = -1;

#if PWS_INTERPOSE
#if !(defined(__x86_64__) && defined(__ELF__))
// No assembly here: the check is lws_log_line.h's C function, as `_lws_log`.
#define PWS_LOG_C_CHECK _lws_log
#endif
// `pws_log_emit` (a line that is on: noted while probing, else formatted by lws) and the check in
// C; in a header of its own so the tests compile the C check too (lws_log_line.h).
#include "lws_log_line.h"
#endif

void pws_set_log_level(int levels, void (*emit)(int level, const char *line)) {
    atomic_store_explicit(&pws_log_levels, levels, memory_order_relaxed);
    lws_set_log_level(levels, emit);
}

int pws_log_interposing(void) { return PWS_INTERPOSE; }

int pws_log_calls_reach_here(void) {
#if PWS_INTERPOSE
    pws_log_probing = 1;
    pws_log_probe_reached = 0;
    // lws's `lwsl_hexdump_level` asks `lwsl_visible` and then calls `_lws_log` through its PLT
    // ("(hexdump: NULL ptr)"); errors are on in lws and here whatever the levels set (both
    // start with them on, the transport keeps them on). Were lws's calls bound inside it, its
    // own `_lws_log` would write that line to the emitter and nothing here would be reached.
    lwsl_hexdump_level(LLL_ERR, NULL, 1);
    pws_log_probing = 0;
    return pws_log_probe_reached;
#else
    return 0;
#endif
}

#if PWS_INTERPOSE

// Where the check below jumps for a line that is on.
__attribute__((visibility("hidden"), used)) void pws_log_on(int filter, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    pws_log_emit(filter, format, arguments);
    va_end(arguments);
}

_Static_assert(__builtin_types_compatible_p(__typeof__(_lws_log), void(int, const char *, ...)),
               "_lws_log is not what the check below assumes (its registers are handed on as they are)");
_Static_assert(__builtin_types_compatible_p(__typeof__(_lws_log), __typeof__(pws_log_on)),
               "pws_log_on must take what _lws_log takes: the check jumps to it");
_Static_assert(__builtin_types_compatible_p(__typeof__(_lws_logv), void(int, const char *, va_list)),
               "_lws_logv is not what pws_log_on calls");

#if defined(__x86_64__) && defined(__ELF__)

#if defined(__CET__)
#define PWS_ENDBR "    endbr64\n"
#else
#define PWS_ENDBR ""
#endif

// `_lws_log`'s level in %edi against the levels on; on: jump to pws_log_on, every argument
// register, %al and the stack as they came; off: return.
__asm__(
    "    .pushsection .text\n"
    "    .globl _lws_log\n"
    "    .type _lws_log, @function\n"
    "    .p2align 4\n"
    "_lws_log:\n"
    "    .cfi_startproc\n"
    PWS_ENDBR
    "    testl %edi, pws_log_levels(%rip)\n"
    "    jnz pws_log_on\n"
    "    ret\n"
    "    .cfi_endproc\n"
    "    .size _lws_log, .-_lws_log\n"
    "    .popsection\n");

#endif
#endif
