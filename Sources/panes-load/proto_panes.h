/* The panes protocol; see proto_panes.c. */
#ifndef PANES_LOAD_PROTO_PANES_H
#define PANES_LOAD_PROTO_PANES_H

#include "protocol.h"

extern const struct protocol proto_panes;

#endif
