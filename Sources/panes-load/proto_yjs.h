/* The yjs protocol; see proto_yjs.c. */
#ifndef PANES_LOAD_PROTO_YJS_H
#define PANES_LOAD_PROTO_YJS_H

#include "protocol.h"

extern const struct protocol proto_yjs;

#endif
