/*
 * The application payload of a fan-out change: a JSON object carrying the
 * change's `seq`, padded to the asked size, by which observers match it.
 */
#ifndef PANES_LOAD_PAYLOAD_H
#define PANES_LOAD_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>

struct client;
struct load;

/** Writes `{"seq":SEQ,"pad":"xx…"}` padded to `size` bytes (at least the bare object). */
size_t make_payload(char *out, size_t cap, uint32_t seq, int size);
/** An observer received a text frame carrying a "seq": report the delivery to the workload. */
void deliver_seq(struct load *L, struct client *c, const unsigned char *buf, size_t len, int binary);

#endif
