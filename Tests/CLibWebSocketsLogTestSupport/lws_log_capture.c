// Test-only: calls `_lws_log` from C with an emitter that keeps the calling thread's lines.
// Other threads (servers of other tests in the process) log through it meanwhile: their lines
// go on to lws's stderr emitter as before.
#include "lws_log_capture.h"

#include "lws_log.h"

#include <libwebsockets.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char *capture;
static _Thread_local size_t capture_capacity, capture_used;
static _Thread_local int capture_lines;

static void capture_emit(int level, const char *line) {
    if (!capture) {
        lwsl_emit_stderr(level, line);
        return;
    }
    capture_lines++;
    size_t length = strlen(line), room = capture_capacity - 1 - capture_used;
    if (length > room) length = room;
    memcpy(capture + capture_used, line, length);
    capture_used += length;
    capture[capture_used] = 0;
}

// Under lws's 256-byte line buffer. Ten arguments after the format: with the level and the
// format, ten of the integer class (six in registers, four on the stack) and two doubles.
#define FORMAT "int %d str %s long %ld double %.6f char %c unsigned %u double %.4e str %s llong %lld hex %x\n"
#define ARGUMENTS -42, "bytes", 1234567890123L, 3.14159265, 'q', 4000000000u, 6.02214076e23, "tail", \
                  -9007199254740993LL, 0xbeefu

// Calls `log` as lws calls `_lws_log` (a variadic call: %al and the stack as a caller leaves them).
static int forward(void (*log)(int filter, const char *format, ...), char *captured, char *expected, size_t capacity) {
    capture = captured;
    capture_capacity = capacity;
    capture_used = 0;
    capture_lines = 0;
    captured[0] = 0;
    pws_set_log_level(LLL_ERR | LLL_WARN, capture_emit);
    // lws itself is told to show debug lines too, so only the check in front of it can drop this
    // one: a check that stopped filtering (or levels it was never given) lets it through.
    if (pws_log_interposing()) lws_set_log_level(LLL_ERR | LLL_WARN | LLL_DEBUG, NULL);
    log(LLL_DEBUG, "off %d %s %f\n", 1, "x", 2.5);
    int off_lines = capture_lines;
    lws_set_log_level(LLL_ERR | LLL_WARN, NULL);
    log(LLL_ERR, FORMAT, ARGUMENTS);
    snprintf(expected, capacity, FORMAT, ARGUMENTS);
    pws_set_log_level(LLL_ERR | LLL_WARN, lwsl_emit_stderr);
    capture = NULL;
    return off_lines;
}

int pws_test_log_forwarding(char *captured, char *expected, size_t capacity) {
    return forward(_lws_log, captured, expected, capacity);
}

int pws_test_c_check_forwarding(char *captured, char *expected, size_t capacity) {
    return forward(pws_test_lws_log_c_check, captured, expected, capacity);
}

const char *pws_test_lws_runtime_version(void) { return lws_get_library_version(); }

const char *pws_test_lws_header_version(void) { return LWS_LIBRARY_VERSION; }
