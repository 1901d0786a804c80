/*
 * See report.h. The generator's own CPU time is in `ready` and `result`, so
 * a caller can put it beside the server's for the same phase.
 */
#include "report.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu.h"
#include "hist.h"
#include "load.h"
#include "protocol.h"
#include "workload.h"

static long
self_rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6)) {
			kb = strtol(line + 6, NULL, 10);
			break;
		}
	fclose(f);
	return kb;
}

void
json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(out, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(out, "\\u%04x", ch);
		else
			fputc(ch, out);
	}
	fputc('"', out);
}

static void
common_fields(struct load *L, FILE *out, const char *event)
{
	fprintf(out, "{\"event\":\"%s\",\"tool\":\"panes-load\",\"pid\":%d,\"workload\":\"%s\","
		"\"protocol\":\"%s\",\"n\":%d,\"total\":%d",
		event, (int)getpid(), L->work->name, L->proto->name, L->opt.n, L->total);
	fprintf(out, ",\"ready\":%d,\"failed\":%d,\"closed\":%d,\"gave_up\":%s", L->ready, L->failed,
		L->closed, L->gave_up ? "true" : "false");
	fprintf(out, ",\"connect_seconds\":%.6f",
		L->t_all_ready ? (double)(L->t_all_ready - L->t_begin) / 1e9 : -1.0);
	fputs(",\"connect_latency_ns\":", out);
	hist_write_json(&L->connect_hist, out);
	fprintf(out, ",\"rss_kb\":%ld", self_rss_kb());
	fputs(",\"first_error\":", out);
	json_string(out, L->first_error);
}

void
report_ready(struct load *L)
{
	common_fields(L, stdout, "ready");
	fprintf(stdout, ",\"cpu_connect_s\":%.4f}\n", cpu_between(&L->cpu_begin, &L->cpu_ready));
	fflush(stdout);
}

void
report_result(struct load *L)
{
	struct cpu_snap end = L->cpu_end;

	common_fields(L, stdout, "result");
	fprintf(stdout, ",\"exit_code\":%d,\"interrupted\":%s", L->exit_code,
		L->interrupted ? "true" : "false");
	fprintf(stdout, ",\"cpu_connect_s\":%.4f,\"cpu_run_s\":%.4f,\"cpu_total_s\":%.4f",
		L->t_all_ready ? cpu_between(&L->cpu_begin, &L->cpu_ready) : cpu_between(&L->cpu_begin, &end),
		L->t_all_ready ? cpu_between(&L->cpu_ready, &end) : 0.0, cpu_between(&L->cpu_begin, &end));
	fprintf(stdout, ",\"run_seconds\":%.6f,\"refused\":%llu",
		L->t_start ? (double)(L->t_end - L->t_start) / 1e9 : 0.0, (unsigned long long)L->refused);
	if (L->work->report && L->started)
		L->work->report(L, stdout);
	fputs("}\n", stdout);
	fflush(stdout);
}
