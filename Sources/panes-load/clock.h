/*
 * One monotonic clock for every timestamp the generator takes, so a send and
 * the receipt it is compared with are on the same time base.
 */
#ifndef PANES_LOAD_CLOCK_H
#define PANES_LOAD_CLOCK_H

#include <stdint.h>

#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull

/** CLOCK_MONOTONIC in nanoseconds. */
uint64_t now_ns(void);

#endif
