/* The probe workload; see workload_probe.c. */
#ifndef PANES_LOAD_WORKLOAD_PROBE_H
#define PANES_LOAD_WORKLOAD_PROBE_H

#include "workload.h"

extern const struct workload workload_probe;

#endif
