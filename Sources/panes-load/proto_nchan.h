/* The nchan protocol; see proto_nchan.c. */
#ifndef PANES_LOAD_PROTO_NCHAN_H
#define PANES_LOAD_PROTO_NCHAN_H

#include "protocol.h"

extern const struct protocol proto_nchan;

#endif
