// Test-only: lws_log.c's check in C, its `_lws_log` off x86-64 or without ELF, compiled here under
// another name so that it runs on this machine too, where the `_lws_log` that ships is the
// assembly. The same source (lws_log_line.h): its level checks, its va_list, and `pws_log_emit`
// handing the line to lws's `_lws_logv`. `pws_test_c_check_forwarding` calls it as lws would.
#include "lws_log_capture.h"

#define PWS_LOG_C_CHECK pws_test_lws_log_c_check
#include "../../Sources/CLibWebSocketsLog/lws_log_line.h"
