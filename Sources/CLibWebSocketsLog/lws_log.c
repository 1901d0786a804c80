// lws's log entry point, defined again in the executable so that lws's own calls reach this one.
//
// Debian's lws 4.1.6 is built with _DEBUG, so its parser and service paths call `_lws_log` for
// debug, parser and header lines about 310 times a resume (a header byte at a time while the
// upgrade is parsed), all of them at levels the transport leaves off. lws's own `_lws_log`
// spills every argument register and checks the stack guard (va_start) and calls `_lws_logv`
// through the PLT before `_lws_logv` compares the line's level with the levels that are on:
// ~28 instructions a call, 8,650 of a resume's ~166,000 (bench/README.md, wp/cpu-cuts3). lws calls
// `_lws_log` through its PLT (it is exported, default visibility), so a definition in the
// executable takes its place for every caller, lws's included (ELF symbol interposition: the
// linker exports it because the library defines it, which `nm -D panes` shows).
//
// On x86-64 the check is four instructions with no frame: the line's level against the levels
// `pws_set_log_level` turned on, and a line that is on is handed on by a jump, every argument
// register (and %al, the count of vector registers a variadic call passes) as the caller left
// them, to a C function that formats it through lws's `_lws_logv`, which checks lws's own level
// and emits it as before. A C function that tests first still spills the registers in its
// prologue (va_start), which was ~24 instructions a call. Elsewhere the C version below asks
// lws (`lwsl_visible`).
//
// The levels are a copy of what `pws_set_log_level` gave lws; they start as every level, so
// until it is called lws alone decides. Calling `lws_set_log_level` directly to turn more levels
// on would leave them filtered out here: the transport sets lws's levels only through
// `pws_set_log_level`.
//
// Declared here rather than through libwebsockets.h: the header is not needed for four
// prototypes, and this file must not depend on how lws's headers spell `_lws_log` (a macro on
// some platforms).
#include "lws_log.h"

#include <stdarg.h>
#include <stdatomic.h>

int lwsl_visible(int level);
void lws_set_log_level(int level, void (*emit)(int level, const char *line));
void _lws_logv(int filter, const char *format, va_list vl);
void _lws_log(int filter, const char *format, ...) __attribute__((format(printf, 2, 3)));

// Read by the check below; written as a server starts, before lws serves (servers in one process,
// as in tests, may start on several threads at once: relaxed atomics, a plain load on x86-64).
__attribute__((visibility("hidden"))) _Atomic int pws_log_levels = -1;
// Per thread: each server's service thread counts its own, read there (tests), no atomics.
__attribute__((visibility("hidden"))) _Thread_local unsigned long pws_log_skipped;

void pws_set_log_level(int levels) {
    atomic_store_explicit(&pws_log_levels, levels, memory_order_relaxed);
    lws_set_log_level(levels, 0);
}

unsigned long pws_log_calls_skipped(void) { return pws_log_skipped; }

#if defined(__x86_64__) && defined(__ELF__)

// A line whose level is on: formatted and emitted by lws.
__attribute__((visibility("hidden"), used)) void pws_log_on(int filter, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    _lws_logv(filter, format, arguments);
    va_end(arguments);
}

// %fs:…@tpoff (local-exec TLS) holds in an executable, which is where this target is linked.
__asm__(
    "    .text\n"
    "    .globl _lws_log\n"
    "    .type _lws_log, @function\n"
    "    .p2align 4\n"
    "_lws_log:\n"
    "    .cfi_startproc\n"
    "    testl %edi, pws_log_levels(%rip)\n"
    "    jnz pws_log_on\n"
    "    addq $1, %fs:pws_log_skipped@tpoff\n"
    "    ret\n"
    "    .cfi_endproc\n"
    "    .size _lws_log, .-_lws_log\n");

#else

void _lws_log(int filter, const char *format, ...) {
    if (!(filter & atomic_load_explicit(&pws_log_levels, memory_order_relaxed)) || !lwsl_visible(filter)) {
        pws_log_skipped++;
        return;
    }
    va_list arguments;
    va_start(arguments, format);
    _lws_logv(filter, format, arguments);
    va_end(arguments);
}

#endif
