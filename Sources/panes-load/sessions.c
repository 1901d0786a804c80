/* See sessions.h. */
#include "sessions.h"

#include <stdlib.h>
#include <string.h>

void
sessions_write(FILE *out, const char *user, const char *id, const char *secret)
{
	fprintf(out, "%s %s %s\n", user, id, secret);
}

struct session_cred *
sessions_read(const char *path, int first, int n)
{
	FILE *in = fopen(path, "r");
	struct session_cred *creds = calloc((size_t)n, sizeof(*creds));
	char line[512];
	int k = 0, got = 0;

	if (!in || !creds) {
		fprintf(stderr, "panes-load: cannot read sessions from %s\n", path);
		if (in)
			fclose(in);
		free(creds);
		return NULL;
	}
	while (got < n && fgets(line, sizeof(line), in)) {
		if (k++ < first)
			continue;
		struct session_cred *s = &creds[got];
		if (sscanf(line, "%63s %71s %87s", s->user, s->id, s->secret) != 3) {
			fprintf(stderr, "panes-load: %s line %d is not `user id secret`\n", path, k);
			break;
		}
		got++;
	}
	fclose(in);
	if (got < n) {
		fprintf(stderr, "panes-load: %s has %d sessions from line %d, %d needed\n", path, got,
			first + 1, n);
		free(creds);
		return NULL;
	}
	return creds;
}
