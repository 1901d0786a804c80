/* The ping workload; see workload_ping.c. */
#ifndef PANES_LOAD_WORKLOAD_PING_H
#define PANES_LOAD_WORKLOAD_PING_H

#include "workload.h"

extern const struct workload workload_ping;

#endif
