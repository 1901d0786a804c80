/* The raw protocol; see proto_raw.c. */
#ifndef PANES_LOAD_PROTO_RAW_H
#define PANES_LOAD_PROTO_RAW_H

#include "protocol.h"

extern const struct protocol proto_raw;

#endif
