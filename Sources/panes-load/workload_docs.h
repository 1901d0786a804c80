/* The docs workload; see workload_docs.c. */
#ifndef PANES_LOAD_WORKLOAD_DOCS_H
#define PANES_LOAD_WORKLOAD_DOCS_H

#include "workload.h"

extern const struct workload workload_docs;

#endif
