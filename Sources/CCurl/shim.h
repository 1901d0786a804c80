// What Swift cannot import from libcurl: its option and info setters are variadic, and a few
// constants are macros. Each wrapper is `pcu_` prefixed, typed for one kind of value, and says
// why it exists.
#ifndef PANES_CCURL_SHIM_H
#define PANES_CCURL_SHIM_H

// The type-checking macros curl.h wraps its variadics in are for C callers; the wrappers
// below are typed already.
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>

/// curl_global_init's flags are macros; once per process, before any thread uses curl.
static inline CURLcode pcu_global_init(void) { return curl_global_init(CURL_GLOBAL_DEFAULT); }

/// curl_easy_setopt is variadic: one wrapper per kind of value an option takes.
static inline CURLcode pcu_setopt_long(CURL *easy, CURLoption option, long value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode pcu_setopt_string(CURL *easy, CURLoption option, const char *value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode pcu_setopt_pointer(CURL *easy, CURLoption option, void *value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode pcu_setopt_size(CURL *easy, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode pcu_setopt_headers(CURL *easy, struct curl_slist *headers) {
    return curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
}

/// The body callback's C type, so Swift can pass a @convention(c) function for it.
typedef size_t (*pcu_write_callback)(char *data, size_t size, size_t count, void *owner);
static inline CURLcode pcu_setopt_write_function(CURL *easy, pcu_write_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, callback);
}

/// curl_easy_getinfo is variadic too.
static inline CURLcode pcu_getinfo_long(CURL *easy, CURLINFO info, long *value) {
    return curl_easy_getinfo(easy, info, value);
}
static inline CURLcode pcu_getinfo_private(CURL *easy, void **value) {
    char *pointer = NULL;
    CURLcode code = curl_easy_getinfo(easy, CURLINFO_PRIVATE, &pointer);
    *value = pointer;
    return code;
}

/// curl_multi_setopt is variadic.
static inline CURLMcode pcu_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

/// The finished transfer a CURLMsg reports, and its result: a union Swift reads awkwardly.
static inline CURL *pcu_message_handle(CURLMsg *message) { return message->easy_handle; }
static inline CURLcode pcu_message_result(CURLMsg *message) { return message->data.result; }
static inline int pcu_message_is_done(CURLMsg *message) { return message->msg == CURLMSG_DONE; }

/// A response header's value (the last one of that name), or NULL: curl_easy_header's origin
/// flags are macros.
static inline const char *pcu_response_header(CURL *easy, const char *name) {
    struct curl_header *header = NULL;
    if (curl_easy_header(easy, name, 0, CURLH_HEADER, -1, &header) != CURLHE_OK || header == NULL) return NULL;
    return header->value;
}

#endif
