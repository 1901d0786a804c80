/* The server's nodes and which client goes to which (see nodes.h). */
#include "nodes.h"

#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "load.h"

static int ports[MAX_NODES];
static int count;

int
nodes_parse(char *list)
{
	count = 0;
	for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
		int port = atoi(tok);
		if (port <= 0 || port > 65535 || count == MAX_NODES)
			return -1;
		ports[count++] = port;
	}
	if (count)
		g.opt.port = ports[0]; /* --port names the first node */
	return count ? 0 : -1;
}

int
nodes_count(void)
{
	return count ? count : 1;
}

int
node_of(const struct client *c)
{
	return (int)((c->index + (uint32_t)g.opt.first_index) % (uint32_t)nodes_count());
}

int
node_port(int node)
{
	return count ? ports[node] : g.opt.port;
}
