// What Swift cannot import from libwebsockets: macros with casts, and fields behind
// bitfields or variadics. Each wrapper is `pws_` prefixed and says why it exists.
#ifndef PANES_CLIBWEBSOCKETS_SHIM_H
#define PANES_CLIBWEBSOCKETS_SHIM_H

#include <libwebsockets.h>
#include <sys/socket.h>

/// LWS_PRE is a macro: the headroom lws needs in front of every payload it writes.
static inline size_t pws_pre(void) { return LWS_PRE; }

/// Server option bits are macros built from casts that Swift does not import.
static inline uint64_t pws_option_validate_utf8(void) { return LWS_SERVER_OPTION_VALIDATE_UTF8; }
static inline uint64_t pws_option_http_headers_security_best_practices(void) {
    return LWS_SERVER_OPTION_HTTP_HEADERS_SECURITY_BEST_PRACTICES_ENFORCE;
}
static inline uint64_t pws_option_disable_ipv6(void) { return LWS_SERVER_OPTION_DISABLE_IPV6; }
static inline uint64_t pws_option_explicit_vhosts(void) { return LWS_SERVER_OPTION_EXPLICIT_VHOSTS; }

/// A message is complete only when this is the final fragment and nothing of it is left
/// to arrive (lws may split one frame over several RECEIVE callbacks).
static inline int pws_message_complete(struct lws *wsi) {
    return lws_is_final_fragment(wsi) && lws_remaining_packet_payload(wsi) == 0;
}

/// lwsl_* are variadic macros; these route one preformatted line through lws's logger.
static inline void pws_log_err(const char *line) { lwsl_err("%s\n", line); }
static inline void pws_log_notice(const char *line) { lwsl_notice("%s\n", line); }

/// CONTEXT_PORT_NO_LISTEN is a macro; a client-only context uses it.
static inline int pws_port_no_listen(void) { return CONTEXT_PORT_NO_LISTEN; }

/// A scheduled callback needs a stable C struct with room to find its owner again; Swift
/// cannot declare C structs, so the timer and its owner pointer live together here.
struct pws_timer {
    lws_sorted_usec_list_t sul;
    void *owner;
};

static inline void pws_timer_schedule(struct lws_context *context, struct pws_timer *timer,
                                      sul_cb_t callback, int64_t microseconds) {
    lws_sul_schedule(context, 0, &timer->sul, callback, microseconds);
}

/// Recovers the timer from the list entry lws hands back (the entry is the first member).
static inline void *pws_timer_owner(lws_sorted_usec_list_t *sul) {
    return ((struct pws_timer *)sul)->owner;
}

/// Ends a connection without a close frame, as a crashed peer would: for tests that need an
/// abnormal disconnect.
static inline void pws_shutdown_socket(struct lws *wsi) {
    shutdown(lws_get_socket_fd(wsi), SHUT_RDWR);
}

#endif
