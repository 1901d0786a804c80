/* The fanout workload; see workload_fanout.c. */
#ifndef PANES_LOAD_WORKLOAD_FANOUT_H
#define PANES_LOAD_WORKLOAD_FANOUT_H

#include "workload.h"

extern const struct workload workload_fanout;

#endif
