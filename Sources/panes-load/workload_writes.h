/* The writes workload; see workload_writes.c. */
#ifndef PANES_LOAD_WORKLOAD_WRITES_H
#define PANES_LOAD_WORKLOAD_WRITES_H

#include "workload.h"

extern const struct workload workload_writes;

#endif
