/*
 * The Panes protocol (panes.v1): text frames holding one JSON object each.
 * A client sends `connect` (id 1); an observer then sends `observe` (id 2)
 * on the benchmark's key path and is ready when that is acknowledged. The
 * writer sends `setPreference` with id 1000+seq and a value carrying `seq`;
 * observers match the `preferenceChanged` they get by that `seq`.
 *
 * Documents (docs workload): `createDocument` is id 3 (with --doc-bytes of
 * initial text), `openDocument` id 4, and an editor's edit k is `edit` with
 * id 1000+k and opId "e<editor>:<k>", by which the others match the
 * `documentOperation` they get.
 *
 * Preferences (writes workload): write seq is `setPreference` with id
 * 1000+seq on the key path the workload names; its reply acknowledges it.
 *
 * Resumes (storm workload): a client with credentials (g.resumes) connects
 * as the session's user with `session: {id, secret}`; the connect reply's
 * session and `created` go to the workload's `session`. A round trip
 * (`ping`) is the `ping` request, id 5.
 */
#include "proto_panes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "clock.h"
#include "json_scan.h"
#include "load.h"
#include "payload.h"
#include "sessions.h"
#include "workload.h"

#define WRITE_ID_BASE 1000
#define CREATE_ID 3
#define OPEN_ID 4
#define PING_ID 5

static const char *
panes_path(const struct client *c)
{
	(void)c;
	return "/ws";
}

static void
send_text(struct client *c, const char *text, int len, uint32_t seq)
{
	client_send(c, text, (size_t)len, SEND_TEXT, seq);
}

static int is(const char *v, const char *end, const char *text);

/* The session client `c` resumes, or NULL for a new one. */
static const struct session_cred *
resume_of(const struct client *c)
{
	return g.resumes && (int)c->index >= g.resume_base ? &g.resumes[c->index - (uint32_t)g.resume_base]
							  : NULL;
}

/* The user client `c` connects as: its session's, or USER-i over --users. */
static void
user_of(const struct client *c, char *user, size_t cap)
{
	const struct session_cred *s = resume_of(c);

	if (s)
		snprintf(user, cap, "%s", s->user);
	else if (g.opt.users > 1)
		snprintf(user, cap, "%s-%u", g.opt.user,
			 (c->index + (uint32_t)g.opt.first_index) % (uint32_t)g.opt.users);
	else
		snprintf(user, cap, "%s", g.opt.user);
}

static void
panes_opened(struct client *c)
{
	char msg[640], user[128], session[256] = "";
	const struct session_cred *s = resume_of(c);
	int n;

	user_of(c, user, sizeof(user));
	if (s)
		snprintf(session, sizeof(session), ",\"session\":{\"id\":\"%s\",\"secret\":\"%s\"}", s->id,
			 s->secret);
	n = snprintf(msg, sizeof(msg),
		     "{\"type\":\"connect\",\"id\":1,\"protocol\":1,\"client\":\"panes-load/1\","
		     "\"workspace\":\"%s\",\"auth\":{\"name\":\"%s\"}%s}",
		     g.opt.workspace, user, session);
	send_text(c, msg, n, 0);
}

/* A connect was answered: hands its session to the workload, if it wants it. */
static void
connected_session(struct client *c, const char *buf, size_t len)
{
	char user[128], id[80], secret[96];

	if (!g.work->session)
		return;
	if (!json_copy_string(buf, len, "persistentIdentifier", id, sizeof(id)) ||
	    !json_copy_string(buf, len, "secret", secret, sizeof(secret))) {
		note_error("client %u: a connect reply without the session's identifier or secret", c->index);
		return;
	}
	user_of(c, user, sizeof(user));
	g.work->session(c, user, id, secret, is(json_value(buf, len, "created"), buf + len, "true"));
}

static void
send_observe(struct client *c)
{
	char msg[512];
	int n = snprintf(msg, sizeof(msg),
			 "{\"type\":\"observe\",\"id\":2,\"domain\":\"%s\",\"keyPath\":\"%s\","
			 "\"options\":[\"new\"]}",
			 g.opt.domain, g.opt.key_path);
	send_text(c, msg, n, 0);
}

/* "code: message" out of a failed reply, for the report. */
static void
reply_error(const char *buf, size_t len, const char *what, char *out, size_t cap)
{
	char code[64], message[160];

	json_copy_string(buf, len, "code", code, sizeof(code));
	json_copy_string(buf, len, "message", message, sizeof(message));
	snprintf(out, cap, "%s refused: %s: %s", what, code[0] ? code : "?", message);
}

static int
is(const char *v, const char *end, const char *text)
{
	size_t n = strlen(text);
	return v && (size_t)(end - v) >= n && !memcmp(v, text, n);
}

/* Reads `"e<editor>:<k>"` at `v`; 0 if it is not one of ours. */
static int
parse_op_id(const char *v, const char *end, uint32_t *author, uint32_t *k)
{
	unsigned long long a = 0, n = 0;
	int da = 0, dn = 0;

	if (!v || end - v < 5 || v[0] != '"' || v[1] != 'e')
		return 0;
	for (v += 2; v < end && *v >= '0' && *v <= '9'; v++, da++)
		a = a * 10 + (unsigned)(*v - '0');
	if (v >= end || *v != ':')
		return 0;
	for (v++; v < end && *v >= '0' && *v <= '9'; v++, dn++)
		n = n * 10 + (unsigned)(*v - '0');
	if (!da || !dn || v >= end || *v != '"')
		return 0;
	*author = (uint32_t)a;
	*k = (uint32_t)n;
	return 1;
}

static void
document_operation(struct client *c, const char *buf, size_t len)
{
	uint32_t author, k;
	long long revision = json_int(buf, len, "revision", -1);

	if (!g.work->doc_operation)
		return;
	if (!parse_op_id(json_value(buf, len, "opId"), buf + len, &author, &k) || revision < 0) {
		note_error("client %u: a documentOperation without our opId or revision", c->index);
		return;
	}
	g.work->doc_operation(c, author, k, (uint64_t)revision, now_ns());
}

static void
refused(struct client *c, const char *buf, size_t len, const char *what, char *why, size_t cap)
{
	reply_error(buf, len, what, why, cap);
	g.refused++;
	if (g.work->refused)
		g.work->refused(c, what, why);
}

static void
panes_message(struct client *c, const unsigned char *ubuf, size_t len, int binary)
{
	const char *buf = (const char *)ubuf, *end = buf + len;
	const char *type = json_value(buf, len, "type");
	char why[256];

	if (binary || !type)
		return;
	if (is(type, end, "\"preferenceChanged\"")) {
		const char *nv = json_value(buf, len, "new");
		long long seq = nv ? json_int(nv, (size_t)(end - nv), "seq", -1) : -1;
		if (seq > 0 && c->role == ROLE_OBSERVER && g.work->delivered)
			g.work->delivered(c, (uint32_t)seq, now_ns());
		return;
	}
	if (is(type, end, "\"documentOperation\"")) {
		document_operation(c, buf, len);
		return;
	}
	if (!is(type, end, "\"reply\""))
		return; /* other pushes (scene state, …) are not measured */

	long long re = json_int(buf, len, "re", -1);
	int ok = is(json_value(buf, len, "ok"), end, "true");

	if (g.work->doc_acked && (re == CREATE_ID || re == OPEN_ID || re >= WRITE_ID_BASE)) {
		const char *what = re == CREATE_ID ? "createDocument" : re == OPEN_ID ? "openDocument" : "edit";
		char doc[128];
		if (!ok) {
			refused(c, buf, len, what, why, sizeof(why));
			note_error("client %u: %s", c->index, why);
		} else if (re == CREATE_ID) {
			if (json_copy_string(buf, len, "id", doc, sizeof(doc)) && g.work->doc_created)
				g.work->doc_created(c, doc);
			else
				note_error("createDocument: no document id in the reply");
		} else if (re == OPEN_ID) {
			long long revision = json_int(buf, len, "revision", -1);
			long long length = json_int(buf, len, "length", -1);
			if (revision < 0 || length < 0)
				note_error("openDocument: no revision or length in the reply");
			else if (g.work->doc_opened)
				g.work->doc_opened(c, (uint64_t)revision, (uint64_t)length, now_ns());
		} else {
			long long revision = json_int(buf, len, "revision", -1);
			g.work->doc_acked(c, (uint32_t)(re - WRITE_ID_BASE), revision < 0 ? 0 : (uint64_t)revision,
					  now_ns());
		}
		return;
	}
	if (!ok)
		g.refused++;
	if (re == 1) {
		if (ok)
			connected_session(c, buf, len);
		if (!ok) {
			reply_error(buf, len, "connect", why, sizeof(why));
			client_fail(c, why);
		} else if (c->role == ROLE_OBSERVER && g.observe)
			send_observe(c);
		else
			client_ready(c);
	} else if (re == 2) {
		if (!ok) {
			reply_error(buf, len, "observe", why, sizeof(why));
			client_fail(c, why);
		} else
			client_ready(c);
	} else if (re == PING_ID) {
		if (g.work->pong)
			g.work->pong(c, now_ns());
	} else if (re > WRITE_ID_BASE) {
		if (!ok) {
			reply_error(buf, len, "setPreference", why, sizeof(why));
			note_error("%s", why);
			if (g.work->write_refused)
				g.work->write_refused((uint32_t)(re - WRITE_ID_BASE));
		} else if (g.work->acked)
			g.work->acked((uint32_t)(re - WRITE_ID_BASE), now_ns());
	}
}

static void
panes_ping(struct client *c)
{
	char msg[64];
	int n = snprintf(msg, sizeof(msg), "{\"type\":\"ping\",\"id\":%d}", PING_ID);

	send_text(c, msg, n, 0);
}

static void
panes_write(struct client *w, uint32_t seq)
{
	char value[8192], msg[8192 + 512];
	size_t vlen = make_payload(value, sizeof(value), seq, g.opt.payload);
	int n = snprintf(msg, sizeof(msg),
			 "{\"type\":\"setPreference\",\"id\":%u,\"domain\":\"%s\",\"keyPath\":\"%s\","
			 "\"value\":%.*s}",
			 WRITE_ID_BASE + seq, g.opt.domain, g.opt.key_path, (int)vlen, value);
	send_text(w, msg, n, seq);
}

static void
panes_pref_set(struct client *c, uint32_t seq, const char *key_path)
{
	char value[8192], msg[8192 + 512], key[64] = "";
	size_t vlen = make_payload(value, sizeof(value), seq, g.opt.payload);
	/* --idempotency-keys: each write with a key of its own, as the JS client sends them. */
	if (g.opt.idempotency_keys)
		snprintf(key, sizeof(key), "\"idempotencyKey\":\"%u-%u-%u\",", g.opt.first_index, c->index, seq);
	int n = snprintf(msg, sizeof(msg),
			 "{\"type\":\"setPreference\",\"id\":%u,%s\"domain\":\"%s\",\"keyPath\":\"%s\","
			 "\"value\":%.*s}",
			 WRITE_ID_BASE + seq, key, g.opt.domain, key_path, (int)vlen, value);
	send_text(c, msg, n, seq);
}

/* The initial text: lines of lower-case letters, so a 1 MB document looks like prose, not one run. */
static void
panes_doc_create(struct client *c, size_t text_bytes)
{
	size_t cap = 128 + text_bytes * 2, n;
	char *msg = malloc(cap);

	if (!msg) {
		note_error("createDocument: no memory for %zu bytes of text", text_bytes);
		return;
	}
	n = (size_t)snprintf(msg, cap, "{\"type\":\"createDocument\",\"id\":%d,\"title\":\"bench %s\",\"text\":\"",
			     CREATE_ID, g.work->name);
	for (size_t i = 0; i < text_bytes; i++) {
		if (i % 64 == 63) {
			memcpy(msg + n, "\\n", 2); /* an escaped newline: one byte of text */
			n += 2;
		} else
			msg[n++] = (char)('a' + (i * 7 + i / 64) % 26);
	}
	memcpy(msg + n, "\"}", 2);
	n += 2;
	send_text(c, msg, (int)n, 0);
	free(msg);
}

static void
panes_doc_open(struct client *c, const char *doc)
{
	char msg[256];
	int n = snprintf(msg, sizeof(msg), "{\"type\":\"openDocument\",\"id\":%d,\"document\":\"%s\"}",
			 OPEN_ID, doc);
	send_text(c, msg, n, 0);
}

/* One character inserted at `pos`: [pos, "c", length - pos], zero retains left out. */
static void
panes_doc_edit(struct client *c, const char *doc, uint32_t k, uint64_t revision, uint64_t pos,
	       uint64_t length)
{
	char msg[512], head[32] = "", tail[32] = "";
	uint32_t editor = c->index + (uint32_t)g.opt.first_index;

	if (pos > length)
		pos = length;
	if (pos)
		snprintf(head, sizeof(head), "%llu,", (unsigned long long)pos);
	if (length > pos)
		snprintf(tail, sizeof(tail), ",%llu", (unsigned long long)(length - pos));
	int n = snprintf(msg, sizeof(msg),
			 "{\"type\":\"edit\",\"id\":%u,\"document\":\"%s\",\"revision\":%llu,"
			 "\"operation\":[%s\"%c\"%s],\"opId\":\"e%u:%u\"}",
			 WRITE_ID_BASE + k, doc, (unsigned long long)revision, head, 'a' + (int)(editor % 26),
			 tail, editor, k);
	send_text(c, msg, n, 0);
}

static int
panes_prepare(void)
{
	return 0;
}

const struct protocol proto_panes = {
	.name = "panes",
	.subprotocol = "panes.v1",
	.prepare = panes_prepare,
	.path = panes_path,
	.opened = panes_opened,
	.message = panes_message,
	.ping = panes_ping,
	.write = panes_write,
	.pref_set = panes_pref_set,
	.doc_create = panes_doc_create,
	.doc_open = panes_doc_open,
	.doc_edit = panes_doc_edit,
};
