// What Swift cannot import from libwebsockets: macros with casts, and fields behind
// bitfields or variadics. Each wrapper is `pws_` prefixed and says why it exists.
#ifndef PANES_CLIBWEBSOCKETS_SHIM_H
#define PANES_CLIBWEBSOCKETS_SHIM_H

#include <libwebsockets.h>
#include <string.h>
#include <arpa/inet.h>

/// LWS_PRE is a macro: the headroom lws needs in front of every payload it writes.
static inline size_t pws_pre(void) { return LWS_PRE; }

/// Server option bits are macros built from casts that Swift does not import.
static inline uint64_t pws_option_disable_ipv6(void) { return LWS_SERVER_OPTION_DISABLE_IPV6; }
static inline uint64_t pws_option_libev(void) { return LWS_SERVER_OPTION_LIBEV; }
static inline uint64_t pws_option_explicit_vhosts(void) { return LWS_SERVER_OPTION_EXPLICIT_VHOSTS; }
static inline uint64_t pws_option_fail_upon_unable_to_bind(void) { return LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND; }

/// A message is complete only when this is the final fragment and nothing of it is left
/// to arrive (lws may split one frame over several RECEIVE callbacks).
static inline int pws_message_complete(struct lws *wsi) {
    return lws_is_final_fragment(wsi) && lws_remaining_packet_payload(wsi) == 0;
}

/// lwsl_* are variadic macros; these route one preformatted line through lws's logger.

/// A scheduled callback needs a stable C struct with room to find its owner again; Swift
/// cannot declare C structs, so the timer and its owner pointer live together here.
struct pws_timer {
    lws_sorted_usec_list_t sul;
    void (*fire)(void *owner);
    void *owner;
};

static void pws_timer_fired(lws_sorted_usec_list_t *sul) {
    struct pws_timer *timer = (struct pws_timer *)sul; /* the entry is the first member */
    timer->fire(timer->owner);
}

static inline void pws_timer_init(struct pws_timer *timer, void (*fire)(void *owner), void *owner) {
    memset(timer, 0, sizeof *timer);
    timer->fire = fire;
    timer->owner = owner;
}

static inline void pws_timer_schedule(struct lws_context *context, struct pws_timer *timer, int64_t microseconds) {
    lws_sul_schedule(context, 0, &timer->sul, pws_timer_fired, microseconds);
}

static inline void pws_timer_cancel(struct pws_timer *timer) { lws_sul_cancel(&timer->sul); }

/// Whether the timer is waiting to fire (lws keeps it in its list until then).
static inline int pws_timer_is_scheduled(struct pws_timer *timer) {
    return !lws_dll2_is_detached(&timer->sul.list);
}

/// lws_rx_flow_control's flag word is built from enum values Swift imports as a distinct type.
static inline int pws_rx_flow(struct lws *wsi, int enable) {
    return lws_rx_flow_control(wsi, (enable ? LWS_RXFLOW_REASON_APPLIES_ENABLE : LWS_RXFLOW_REASON_APPLIES_DISABLE)
                                        | LWS_RXFLOW_REASON_USER_BOOL);
}

/// Services a connection as lws's libev glue does when the kernel reports it writable
/// (`lws_accept_cb`: a pollfd with POLLOUT in `events` and `revents`): lws writes what it holds
/// first (the rest of a partial write, a pong it owes, a close), and only when nothing of its
/// own is waiting calls the protocol's WRITEABLE callback. Only from outside lws's callbacks.
/// Returns what `lws_service_fd` returns (1: the connection was closed).
static inline int pws_service_writable(struct lws_context *context, struct lws *wsi) {
    struct lws_pollfd pollfd;
    pollfd.fd = lws_get_socket_fd(wsi);
    pollfd.events = LWS_POLLOUT;
    pollfd.revents = LWS_POLLOUT;
    return lws_service_fd(context, &pollfd);
}

/// Drops a connection that cannot be closed politely (its peer reads nothing, so a close frame
/// never gets out), at once. Only from outside that connection's own callbacks (a timer).
/// LWS_TO_KILL_SYNC is a macro.
static inline void pws_drop_now(struct lws *wsi) {
    lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_SYNC);
}

/// The peer address of a connection lws has accepted but not yet adopted
/// (LWS_CALLBACK_FILTER_NETWORK_CONNECTION's `user`): its bytes in network order copied to
/// `bytes` (room for 16), and their count, 4 for IPv4, 16 for IPv6, 0 for another family.
/// Swift would have to rebind sockaddr_storage to reach the address.
static inline size_t pws_filtered_address(const void *user, uint8_t *bytes) {
    const struct lws_filter_network_conn_args *args = (const struct lws_filter_network_conn_args *)user;
    if (args->cli_addr.ss_family == AF_INET) {
        memcpy(bytes, &((const struct sockaddr_in *)&args->cli_addr)->sin_addr, 4);
        return 4;
    }
    if (args->cli_addr.ss_family == AF_INET6) {
        memcpy(bytes, &((const struct sockaddr_in6 *)&args->cli_addr)->sin6_addr, 16);
        return 16;
    }
    return 0;
}

#endif
