/*
 * y-websocket: every client joins document CHANNEL at ws://HOST:PORT/CHANNEL.
 * The writer replays prepared y-websocket messages (sync message type 0,
 * update type 2, then the Yjs update) from the file bench/yjs-updates.js
 * wrote, so each one really changes the document and is broadcast. The
 * server sends every update to every client of the document, the writer
 * included; no seq is visible in a Yjs update, so the k-th update frame a
 * client receives is matched to write k (all clients join before writing).
 *
 * File format: repeated [u32 little-endian length][message bytes].
 */
#include "load.h"

#include <stdlib.h>
#include <string.h>

static char doc_path[256];
static unsigned char *file;
static size_t file_len;
static const unsigned char **msgs;
static uint32_t *lens;
static uint32_t count;

static const char *
yjs_path(const struct client *c)
{
	(void)c;
	return doc_path;
}

static void
yjs_opened(struct client *c)
{
	client_ready(c);
}

static void
yjs_message(struct client *c, const unsigned char *buf, size_t len, int binary)
{
	/* Only sync/update frames; sync step 1 (0,0,…) and awareness (1,…) are not changes. */
	if (!binary || len < 2 || buf[0] != 0 || buf[1] != 2)
		return;
	c->frames++;
	if (c->role == ROLE_WRITER) {
		if (g.work->acked)
			g.work->acked(c->frames, now_ns()); /* our own update, applied and echoed */
	} else if (g.work->delivered)
		g.work->delivered(c, c->frames, now_ns());
}

static void
yjs_write(struct client *w, uint32_t seq)
{
	if (seq == 0 || seq > count) {
		note_error("yjs: no prepared update %u (file has %u)", seq, count);
		return;
	}
	client_send(w, msgs[seq - 1], lens[seq - 1], SEND_BINARY, seq);
}

static int
yjs_prepare(void)
{
	FILE *f;
	size_t cap = 0, off;

	snprintf(doc_path, sizeof(doc_path), "/%s", g.opt.channel);
	if (!g.opt.updates)
		return 0; /* connect-only runs need no updates */
	f = fopen(g.opt.updates, "rb");
	if (!f) {
		note_error("yjs: cannot open %s", g.opt.updates);
		return 1;
	}
	for (;;) {
		if (file_len + 65536 > cap) {
			cap = cap ? cap * 2 : 1 << 20;
			file = realloc(file, cap);
			if (!file)
				return 1;
		}
		size_t n = fread(file + file_len, 1, cap - file_len, f);
		if (!n)
			break;
		file_len += n;
	}
	fclose(f);
	for (off = 0; off + 4 <= file_len; count++) {
		uint32_t n = (uint32_t)file[off] | (uint32_t)file[off + 1] << 8 |
			     (uint32_t)file[off + 2] << 16 | (uint32_t)file[off + 3] << 24;
		if (off + 4 + n > file_len)
			break;
		msgs = realloc(msgs, (count + 1) * sizeof(*msgs));
		lens = realloc(lens, (count + 1) * sizeof(*lens));
		msgs[count] = file + off + 4;
		lens[count] = n;
		off += 4 + n;
	}
	if (count < (uint32_t)(g.opt.writes + g.opt.warmup)) {
		note_error("yjs: %s holds %u updates, the run needs %d", g.opt.updates, count,
			   g.opt.writes + g.opt.warmup);
		return 1;
	}
	return 0;
}

const struct protocol proto_yjs = {
	.name = "yjs",
	.subprotocol = NULL,
	.prepare = yjs_prepare,
	.path = yjs_path,
	.opened = yjs_opened,
	.message = yjs_message,
	.write = yjs_write,
};
