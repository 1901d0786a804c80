/* The authflood workload; see workload_authflood.c. */
#ifndef PANES_LOAD_WORKLOAD_AUTHFLOOD_H
#define PANES_LOAD_WORKLOAD_AUTHFLOOD_H

#include "workload.h"

extern const struct workload workload_authflood;

#endif
