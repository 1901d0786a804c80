/*
 * What panes-load prints on stdout: one JSON object per line. A `ready`
 * line once every connection has settled (connected or failed), then one
 * `result` line at the end; workloads add lines of their own (docs:
 * `opened`; probe: `connected`; writes: `filled`).
 */
#ifndef PANES_LOAD_REPORT_H
#define PANES_LOAD_REPORT_H

#include <stdio.h>

struct load;

void report_ready(struct load *L);
void report_result(struct load *L);
/** Writes `s` as a JSON string literal. */
void json_string(FILE *out, const char *s);

#endif
