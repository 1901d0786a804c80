/* See load.h: finishing the run and saying how it goes. */
#include "load.h"

#include <stdarg.h>
#include <stdio.h>

#include "clock.h"
#include "cpu.h"
#include "report.h"

void
progress(const struct load *L, const char *fmt, ...)
{
	va_list ap;

	if (L->opt.quiet)
		return;
	va_start(ap, fmt);
	fputs("panes-load: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* Keep the first error for the report; print the first few. */
void
note_error(struct load *L, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (!L->first_error[0])
		snprintf(L->first_error, sizeof(L->first_error), "%s", buf);
	if (L->errors_printed++ < 5)
		fprintf(stderr, "panes-load: %s\n", buf);
	else if (L->errors_printed == 6)
		fputs("panes-load: (further errors not shown)\n", stderr);
}

void
finish(struct load *L, int exit_code)
{
	if (L->finished)
		return;
	L->finished = 1;
	L->exit_code = exit_code;
	L->t_end = now_ns();
	cpu_snap(&L->cpu_end);
	report_result(L);
}
