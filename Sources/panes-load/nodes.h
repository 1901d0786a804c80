/*
 * The server's nodes: a cluster of Panes nodes sharing one store, each on a
 * port of its own on --host (`--ports P1,P2,...`; without it, one node on
 * --port). Client i goes to node (i + --first-index) mod nodes: the fanout
 * writer (client 0) and editor 0 are on the first node, the others spread
 * evenly, so a workload can tell a same-node delivery from a cross-node one.
 *
 * Threading: set up before the loop starts, read-only after (see main.c).
 */
#ifndef PANES_LOAD_NODES_H
#define PANES_LOAD_NODES_H

#define MAX_NODES 16

struct client;

/** Parses "P1,P2,..." into the node list; 0, or -1 if a port is bad or there are too many. */
int nodes_parse(char *list);
/** The single node's port (used without --ports) and --first-index, once the options are read. */
void nodes_init(int port, int first_index);
/** The number of nodes: 1 when --ports was not given (the node is --port). */
int nodes_count(void);
/** The node client `c` connects to, in [0, nodes_count()). */
int node_of(const struct client *c);
/** Node `node`'s port (node 0 without --ports: --port). */
int node_port(int node);

#endif
