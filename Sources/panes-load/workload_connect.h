/* The connect workload; see workload_connect.c. */
#ifndef PANES_LOAD_WORKLOAD_CONNECT_H
#define PANES_LOAD_WORKLOAD_CONNECT_H

#include "workload.h"

extern const struct workload workload_connect;

#endif
