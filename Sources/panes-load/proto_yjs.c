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
 *
 * Documents (docs workload): every editor is already in the document once
 * connected, so creating and opening it are immediate. The file then holds
 * each editor's own updates, editor after editor, K each
 * (scripts/bench_lib/yjs_editors.js): editor i's Y.Doc has client id i+1 and
 * its k-th update inserts one character after its own previous one, so it
 * needs nothing but its own earlier updates and the server integrates them
 * in any interleaving. A received update names its author and edit by the
 * client id and clock of its first struct (one character = one clock).
 */
#include "proto_yjs.h"

#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "clock.h"
#include "load.h"
#include "workload.h"

static char doc_path[256];
static unsigned char *file;
static size_t file_len;
static const unsigned char **msgs;
static uint32_t *lens;
static uint32_t count;
static uint32_t per_editor; /* docs: updates per editor */

/* lib0's varUint: 7 bits a byte, least significant first. */
static int
read_var(const unsigned char **p, const unsigned char *end, uint64_t *out)
{
	uint64_t v = 0;

	for (int shift = 0; *p < end && shift < 64; shift += 7) {
		unsigned char b = *(*p)++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return 1;
		}
	}
	return 0;
}

/* [0 sync][2 update][len] then the update: [clients][structs][client][clock]… */
static void
doc_update(struct load *L, struct client *c, const unsigned char *buf, size_t len)
{
	const unsigned char *p = buf + 2, *end = buf + len;
	uint64_t ulen, clients, structs, client, clock;

	if (!read_var(&p, end, &ulen) || !read_var(&p, end, &clients) || !read_var(&p, end, &structs) ||
	    !read_var(&p, end, &client) || !read_var(&p, end, &clock) || clients < 1 || client < 1) {
		note_error(L, "client %u: a Yjs update that does not name its client and clock", c->index);
		return;
	}
	uint32_t author = (uint32_t)(client - 1);
	if (author == c->index + (uint32_t)L->opt.first_index) {
		if (L->work->doc_acked)
			L->work->doc_acked(L, c, (uint32_t)clock, 0, now_ns()); /* our own, applied and echoed */
	} else if (L->work->doc_operation)
		L->work->doc_operation(L, c, author, (uint32_t)clock, 0, now_ns());
}

static const char *
yjs_path(struct load *L, const struct client *c)
{
	(void)L;
	(void)c;
	return doc_path;
}

static void
yjs_opened(struct load *L, struct client *c)
{
	client_ready(L, c);
}

static void
yjs_message(struct load *L, struct client *c, const unsigned char *buf, size_t len, int binary)
{
	/* Only sync/update frames; sync step 1 (0,0,…) and awareness (1,…) are not changes. */
	if (!binary || len < 2 || buf[0] != 0 || buf[1] != 2)
		return;
	if (L->work->doc_operation) {
		doc_update(L, c, buf, len);
		return;
	}
	c->frames++;
	if (c->role == ROLE_WRITER) {
		if (L->work->acked)
			L->work->acked(L, c->frames, now_ns()); /* our own update, applied and echoed */
	} else if (L->work->delivered)
		L->work->delivered(L, c, c->frames, now_ns());
}

static void
yjs_write(struct load *L, struct client *w, uint32_t seq)
{
	if (seq == 0 || seq > count) {
		note_error(L, "yjs: no prepared update %u (file has %u)", seq, count);
		return;
	}
	client_send(L, w, msgs[seq - 1], lens[seq - 1], SEND_BINARY, seq);
}

static void
yjs_doc_create(struct load *L, struct client *c, size_t text_bytes)
{
	if (text_bytes)
		note_error(L, "yjs: documents start empty here (--doc-bytes is for Panes)");
	if (L->work->doc_created)
		L->work->doc_created(L, c, L->opt.channel);
}

static void
yjs_doc_open(struct load *L, struct client *c, const char *doc)
{
	(void)doc; /* joined when connected: ws://HOST:PORT/CHANNEL */
	if (L->work->doc_opened)
		L->work->doc_opened(L, c, 0, 0, now_ns());
}

static void
yjs_doc_edit(struct load *L, struct client *c, const char *doc, uint32_t k, uint64_t revision, uint64_t pos,
	     uint64_t length)
{
	static int warned;
	uint32_t editor = c->index + (uint32_t)L->opt.first_index;

	(void)doc, (void)revision, (void)pos, (void)length;
	if (k >= per_editor || (uint64_t)editor * per_editor + k >= count) {
		if (!warned++)
			note_error(L, "yjs: no prepared update %u for editor %u (%u each)", k, editor, per_editor);
		return;
	}
	client_send(L, c, msgs[editor * per_editor + k], lens[editor * per_editor + k], SEND_BINARY, 0);
}

static int
yjs_prepare(struct load *L)
{
	FILE *f;
	size_t cap = 0, off;

	snprintf(doc_path, sizeof(doc_path), "/%s", L->opt.channel);
	if (!L->opt.updates)
		return 0; /* connect-only runs need no updates */
	f = fopen(L->opt.updates, "rb");
	if (!f) {
		note_error(L, "yjs: cannot open %s", L->opt.updates);
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
	if (L->work->doc_operation) {
		per_editor = count / (uint32_t)(L->opt.n + L->opt.first_index);
		if (!per_editor) {
			note_error(L, "yjs: %s holds %u updates, too few for %d editors", L->opt.updates, count,
				   L->opt.n);
			return 1;
		}
		return 0;
	}
	if (count < (uint32_t)(L->opt.writes + L->opt.warmup)) {
		note_error(L, "yjs: %s holds %u updates, the run needs %d", L->opt.updates, count,
			   L->opt.writes + L->opt.warmup);
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
	.doc_create = yjs_doc_create,
	.doc_open = yjs_doc_open,
	.doc_edit = yjs_doc_edit,
};
