/*
 * Log-linear histogram, indexed the way HdrHistogram does it: the top bucket
 * bits come from the value's magnitude, the low bits are a linear sub-bucket.
 * See hist.h for precision and range.
 */
#include "hist.h"

#include <math.h>
#include <string.h>

#define SUB_COUNT (1u << HIST_SUB_BITS)
#define SUB_HALF (SUB_COUNT >> 1)
#define SUB_MASK ((uint64_t)SUB_COUNT - 1)
#define MAX_VALUE ((1ull << HIST_MAX_BITS) - 1)

void
hist_init(struct hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

static unsigned
bucket_of(uint64_t v)
{
	/* Position of the highest set bit, with small values all in bucket 0. */
	return (unsigned)(63 - __builtin_clzll(v | SUB_MASK)) - HIST_SUB_BITS + 1;
}

static size_t
index_of(uint64_t v)
{
	unsigned b = bucket_of(v);
	uint64_t sub = v >> b;

	return ((size_t)(b + 1) << (HIST_SUB_BITS - 1)) + (size_t)(sub - SUB_HALF);
}

/* The largest value that lands in the same slot as index `i`. */
static uint64_t
highest_of(size_t i)
{
	size_t k = i >> (HIST_SUB_BITS - 1);
	uint64_t sub = (i & (SUB_HALF - 1)) + SUB_HALF;

	if (k <= 1) /* bucket 0 covers 0 .. SUB_COUNT-1 one value per slot */
		return i;
	return ((sub + 1) << (k - 1)) - 1;
}

void
hist_record(struct hist *h, uint64_t v)
{
	if (v > MAX_VALUE)
		v = MAX_VALUE;
	h->counts[index_of(v)]++;
	h->count++;
	h->sum += (double)v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

uint64_t
hist_percentile(const struct hist *h, double percentile)
{
	uint64_t want, seen = 0;

	if (!h->count)
		return 0;
	want = (uint64_t)ceil(percentile / 100.0 * (double)h->count);
	if (want < 1)
		want = 1;
	for (size_t i = 0; i < HIST_LEN; i++) {
		seen += h->counts[i];
		if (seen >= want) {
			uint64_t v = highest_of(i);
			return v > h->max ? h->max : (v < h->min ? h->min : v);
		}
	}
	return h->max;
}

void
hist_write_json(const struct hist *h, FILE *out)
{
	static const struct { const char *name; double p; } ps[] = {
		{ "p50", 50 }, { "p90", 90 }, { "p99", 99 }, { "p99_9", 99.9 },
	};

	fprintf(out, "{\"count\":%llu", (unsigned long long)h->count);
	if (h->count) {
		fprintf(out, ",\"min\":%llu,\"mean\":%.0f", (unsigned long long)h->min,
			h->sum / (double)h->count);
		for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++)
			fprintf(out, ",\"%s\":%llu", ps[i].name,
				(unsigned long long)hist_percentile(h, ps[i].p));
		fprintf(out, ",\"max\":%llu", (unsigned long long)h->max);
	}
	fputc('}', out);
}
