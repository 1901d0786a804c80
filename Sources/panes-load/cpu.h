/*
 * The generator's own CPU time (getrusage), taken at the edges of a phase so
 * a caller can put it beside the server's for the same phase.
 */
#ifndef PANES_LOAD_CPU_H
#define PANES_LOAD_CPU_H

struct cpu_snap {
	double user, sys; /* seconds */
};

void cpu_snap(struct cpu_snap *s);
/** CPU seconds (user + system) used from `a` to `b`. */
double cpu_between(const struct cpu_snap *a, const struct cpu_snap *b);

#endif
