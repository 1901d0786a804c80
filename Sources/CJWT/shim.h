// What Swift needs from libjwt 1.10 (Debian 12): decoding a token against one key and
// reading its algorithm, and, for the tests only, signing one. Each wrapper is `pjw_`
// prefixed and says why it exists.
#ifndef PANES_CJWT_SHIM_H
#define PANES_CJWT_SHIM_H

#include <stdlib.h>
#include <jwt.h>

/// Strings libjwt returns (jwt_encode_str, jwt_get_grants_json) are malloc'd and 1.10 has no
/// jwt_free_str; Swift cannot call the C library's free through the module otherwise.
static inline void pjw_free_string(char *string) { free(string); }

#endif
