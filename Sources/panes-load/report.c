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
common_fields(FILE *out, const char *event)
{
	fprintf(out, "{\"event\":\"%s\",\"tool\":\"panes-load\",\"pid\":%d,\"workload\":\"%s\","
		"\"protocol\":\"%s\",\"n\":%d,\"total\":%d",
		event, (int)getpid(), g.work->name, g.proto->name, g.opt.n, g.total);
	fprintf(out, ",\"ready\":%d,\"failed\":%d,\"closed\":%d,\"gave_up\":%s", g.ready, g.failed,
		g.closed, g.gave_up ? "true" : "false");
	fprintf(out, ",\"connect_seconds\":%.6f",
		g.t_all_ready ? (double)(g.t_all_ready - g.t_begin) / 1e9 : -1.0);
	fputs(",\"connect_latency_ns\":", out);
	hist_write_json(&g.connect_hist, out);
	fprintf(out, ",\"rss_kb\":%ld", self_rss_kb());
	fputs(",\"first_error\":", out);
	json_string(out, g.first_error);
}

void
report_ready(void)
{
	common_fields(stdout, "ready");
	fprintf(stdout, ",\"cpu_connect_s\":%.4f}\n", cpu_between(&g.cpu_begin, &g.cpu_ready));
	fflush(stdout);
}

void
report_result(void)
{
	struct cpu_snap end = g.cpu_end;

	common_fields(stdout, "result");
	fprintf(stdout, ",\"exit_code\":%d,\"interrupted\":%s", g.exit_code,
		g.interrupted ? "true" : "false");
	fprintf(stdout, ",\"cpu_connect_s\":%.4f,\"cpu_run_s\":%.4f,\"cpu_total_s\":%.4f",
		g.t_all_ready ? cpu_between(&g.cpu_begin, &g.cpu_ready) : cpu_between(&g.cpu_begin, &end),
		g.t_all_ready ? cpu_between(&g.cpu_ready, &end) : 0.0, cpu_between(&g.cpu_begin, &end));
	fprintf(stdout, ",\"run_seconds\":%.6f,\"refused\":%llu",
		g.t_start ? (double)(g.t_end - g.t_start) / 1e9 : 0.0, (unsigned long long)g.refused);
	if (g.work->report && g.started)
		g.work->report(stdout);
	fputs("}\n", stdout);
	fflush(stdout);
}
