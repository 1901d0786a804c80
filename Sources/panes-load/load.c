/* See load.h: finishing the run and saying how it goes. */
#include "load.h"

#include <stdarg.h>
#include <stdio.h>

#include "clock.h"
#include "cpu.h"
#include "report.h"

void
progress(const char *fmt, ...)
{
	va_list ap;

	if (g.opt.quiet)
		return;
	va_start(ap, fmt);
	fputs("panes-load: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* Keep the first error for the report; print the first few. */
void
note_error(const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (!g.first_error[0])
		snprintf(g.first_error, sizeof(g.first_error), "%s", buf);
	if (g.errors_printed++ < 5)
		fprintf(stderr, "panes-load: %s\n", buf);
	else if (g.errors_printed == 6)
		fputs("panes-load: (further errors not shown)\n", stderr);
}

void
finish(int exit_code)
{
	if (g.finished)
		return;
	g.finished = 1;
	g.exit_code = exit_code;
	g.t_end = now_ns();
	cpu_snap(&g.cpu_end);
	report_result();
}
