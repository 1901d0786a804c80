#ifndef PANES_LOAD_WORKLOAD_STORM_H
#define PANES_LOAD_WORKLOAD_STORM_H

#include "workload.h"

extern const struct workload workload_storm;

#endif
