/* See cpu.h. */
#include "cpu.h"

#include <sys/resource.h>

void
cpu_snap(struct cpu_snap *s)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	s->user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
	s->sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

double
cpu_between(const struct cpu_snap *a, const struct cpu_snap *b)
{
	return (b->user + b->sys) - (a->user + a->sys);
}
