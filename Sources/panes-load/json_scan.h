/*
 * Just enough JSON scanning to read the servers' replies without a parser:
 * find a key, skip whitespace and the colon, read an integer or a string.
 * Every read is bounded by `len`: received buffers are not NUL-terminated.
 * Good for the flat, known messages of the benchmark; not a general parser.
 */
#ifndef PANES_LOAD_JSON_SCAN_H
#define PANES_LOAD_JSON_SCAN_H

#include <stddef.h>

/** The first byte of `key`'s value (the first occurrence of `"key":` anywhere), or NULL. */
const char *json_value(const char *buf, size_t len, const char *key);
/** `key`'s value as an integer, or `fallback` if it is absent or not a number. */
long long json_int(const char *buf, size_t len, const char *key, long long fallback);
/** Copies `key`'s string value (escapes dropped, truncated to `cap`); returns its length. */
size_t json_copy_string(const char *buf, size_t len, const char *key, char *out, size_t cap);

#endif
