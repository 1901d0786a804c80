/* The server's nodes and which client goes to which (see nodes.h). */
#include "nodes.h"

#include <stdlib.h>
#include <string.h>

#include "client.h"

static int ports[MAX_NODES];
static int count;
static int single_port, index_offset; /* --port, --first-index */

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
	return count ? 0 : -1;
}

void
nodes_init(int port, int first_index)
{
	single_port = port;
	index_offset = first_index;
}

int
nodes_count(void)
{
	return count ? count : 1;
}

int
node_of(const struct client *c)
{
	return (int)((c->index + (uint32_t)index_offset) % (uint32_t)nodes_count());
}

int
node_port(int node)
{
	return count ? ports[node] : single_port;
}
