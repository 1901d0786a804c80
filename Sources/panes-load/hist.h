/*
 * An HdrHistogram-style latency histogram: log-linear buckets holding about
 * three significant decimal digits (2048 sub-buckets per power of two), so a
 * value is recorded in O(1) with no allocation and percentiles are exact to
 * within 0.1 %. Values are nanoseconds; anything up to 2^43 ns (about 2.4
 * hours) is recorded, larger values are clamped.
 *
 * Threading: none. A histogram is owned by whoever records into it.
 */
#ifndef PANES_LOAD_HIST_H
#define PANES_LOAD_HIST_H

#include <stdint.h>
#include <stdio.h>

#define HIST_SUB_BITS 11 /* 2048 sub-buckets: 3 significant digits */
#define HIST_MAX_BITS 43
#define HIST_BUCKETS (HIST_MAX_BITS - HIST_SUB_BITS + 1)
#define HIST_LEN ((HIST_BUCKETS + 1) << (HIST_SUB_BITS - 1))

struct hist {
	uint64_t count;
	uint64_t min, max;
	double sum;
	uint64_t counts[HIST_LEN];
};

void hist_init(struct hist *h);
void hist_record(struct hist *h, uint64_t value);
/** The smallest recorded value v such that at least `percentile` % of values are <= v. */
uint64_t hist_percentile(const struct hist *h, double percentile);
/** Writes `{"count":…,"min":…,"p50":…,…,"max":…}` (values in ns) to `out`. */
void hist_write_json(const struct hist *h, FILE *out);

#endif
