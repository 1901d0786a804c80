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
 * Resumes (storm workload): a client with credentials (L->resumes) connects
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
panes_path(struct load *L, const struct client *c)
{
	(void)L;
	(void)c;
	return "/ws";
}

static void
send_text(struct load *L, struct client *c, const char *text, int len, uint32_t seq)
{
	client_send(L, c, text, (size_t)len, SEND_TEXT, seq);
}

static int is(const char *v, const char *end, const char *text);

/* The session client `c` resumes, or NULL for a new one. */
static const struct session_cred *
resume_of(struct load *L, const struct client *c)
{
	return L->resumes && (int)c->index >= L->resume_base ? &L->resumes[c->index - (uint32_t)L->resume_base]
							    : NULL;
}

/* The user client `c` connects as: its session's, or USER-i over --users. */
static void
user_of(struct load *L, const struct client *c, char *user, size_t cap)
{
	const struct session_cred *s = resume_of(L, c);

	if (s)
		snprintf(user, cap, "%s", s->user);
	else if (L->opt.users > 1)
		snprintf(user, cap, "%s-%u", L->opt.user,
			 (c->index + (uint32_t)L->opt.first_index) % (uint32_t)L->opt.users);
	else
		snprintf(user, cap, "%s", L->opt.user);
}

/* --forge: the prefix (a JWT's header and claims, and the dot) and random bytes, base64url,
 * as its signature: a token that must be verified to be refused. */
static int
forged_token(const struct load *L, char *out, size_t cap)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	size_t n = (size_t)snprintf(out, cap, "%s", L->opt.forge);
	int bits = L->opt.forge_bytes * 8;

	for (int i = 0; i < (bits + 5) / 6 && n + 1 < cap; i++)
		out[n++] = b64[(unsigned)random() & 63];
	out[n] = 0;
	return (int)n;
}

static void
panes_opened(struct load *L, struct client *c)
{
	char msg[10240], user[128], token[8192], session[256] = "";
	const struct session_cred *s = resume_of(L, c);
	int n;

	user_of(L, c, user, sizeof(user));
	if (s)
		snprintf(session, sizeof(session), ",\"session\":{\"id\":\"%s\",\"secret\":\"%s\"}", s->id,
			 s->secret);
	if (L->opt.forge || L->opt.token) {
		if (L->opt.forge)
			forged_token(L, token, sizeof(token));
		else
			snprintf(token, sizeof(token), "%s", L->opt.token);
		n = snprintf(msg, sizeof(msg),
			     "{\"type\":\"connect\",\"id\":1,\"protocol\":1,\"client\":\"panes-load/1\","
			     "\"workspace\":\"%s\",\"auth\":{\"token\":\"%s\"}%s}",
			     L->opt.workspace, token, session);
	} else
		n = snprintf(msg, sizeof(msg),
			     "{\"type\":\"connect\",\"id\":1,\"protocol\":1,\"client\":\"panes-load/1\","
			     "\"workspace\":\"%s\",\"auth\":{\"name\":\"%s\"}%s}",
			     L->opt.workspace, user, session);
	send_text(L, c, msg, n, 0);
}

/* A connect was answered: hands its session to the workload, if it wants it. */
static void
connected_session(struct load *L, struct client *c, const char *buf, size_t len)
{
	char user[128], id[80], secret[96];

	if (!L->work->session)
		return;
	if (!json_copy_string(buf, len, "persistentIdentifier", id, sizeof(id)) ||
	    !json_copy_string(buf, len, "secret", secret, sizeof(secret))) {
		note_error(L, "client %u: a connect reply without the session's identifier or secret", c->index);
		return;
	}
	user_of(L, c, user, sizeof(user));
	L->work->session(L, c, user, id, secret, is(json_value(buf, len, "created"), buf + len, "true"));
}

static void
send_observe(struct load *L, struct client *c)
{
	char msg[512];
	int n = snprintf(msg, sizeof(msg),
			 "{\"type\":\"observe\",\"id\":2,\"domain\":\"%s\",\"keyPath\":\"%s\","
			 "\"options\":[\"new\"]}",
			 L->opt.domain, L->opt.key_path);
	send_text(L, c, msg, n, 0);
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
document_operation(struct load *L, struct client *c, const char *buf, size_t len)
{
	uint32_t author, k;
	long long revision = json_int(buf, len, "revision", -1);

	if (!L->work->doc_operation)
		return;
	if (!parse_op_id(json_value(buf, len, "opId"), buf + len, &author, &k) || revision < 0) {
		note_error(L, "client %u: a documentOperation without our opId or revision", c->index);
		return;
	}
	L->work->doc_operation(L, c, author, k, (uint64_t)revision, now_ns());
}

static void
refused(struct load *L, struct client *c, const char *buf, size_t len, const char *what, char *why,
	size_t cap)
{
	reply_error(buf, len, what, why, cap);
	L->refused++;
	if (L->work->refused)
		L->work->refused(L, c, what, why);
}

static void
panes_message(struct load *L, struct client *c, const unsigned char *ubuf, size_t len, int binary)
{
	const char *buf = (const char *)ubuf, *end = buf + len;
	const char *type = json_value(buf, len, "type");
	char why[256];

	if (binary || !type)
		return;
	if (is(type, end, "\"preferenceChanged\"")) {
		const char *nv = json_value(buf, len, "new");
		long long seq = nv ? json_int(nv, (size_t)(end - nv), "seq", -1) : -1;
		if (seq > 0 && c->role == ROLE_OBSERVER && L->work->delivered)
			L->work->delivered(L, c, (uint32_t)seq, now_ns());
		return;
	}
	if (is(type, end, "\"documentOperation\"")) {
		document_operation(L, c, buf, len);
		return;
	}
	if (!is(type, end, "\"reply\""))
		return; /* other pushes (scene state, …) are not measured */

	long long re = json_int(buf, len, "re", -1);
	int ok = is(json_value(buf, len, "ok"), end, "true");

	if (L->work->doc_acked && (re == CREATE_ID || re == OPEN_ID || re >= WRITE_ID_BASE)) {
		const char *what = re == CREATE_ID ? "createDocument" : re == OPEN_ID ? "openDocument" : "edit";
		char doc[128];
		if (!ok) {
			refused(L, c, buf, len, what, why, sizeof(why));
			note_error(L, "client %u: %s", c->index, why);
		} else if (re == CREATE_ID) {
			if (json_copy_string(buf, len, "id", doc, sizeof(doc)) && L->work->doc_created)
				L->work->doc_created(L, c, doc);
			else
				note_error(L, "createDocument: no document id in the reply");
		} else if (re == OPEN_ID) {
			long long revision = json_int(buf, len, "revision", -1);
			long long length = json_int(buf, len, "length", -1);
			if (revision < 0 || length < 0)
				note_error(L, "openDocument: no revision or length in the reply");
			else if (L->work->doc_opened)
				L->work->doc_opened(L, c, (uint64_t)revision, (uint64_t)length, now_ns());
		} else {
			long long revision = json_int(buf, len, "revision", -1);
			L->work->doc_acked(L, c, (uint32_t)(re - WRITE_ID_BASE), revision < 0 ? 0 : (uint64_t)revision,
					  now_ns());
		}
		return;
	}
	if (!ok)
		L->refused++;
	if (re == 1) {
		if (ok)
			connected_session(L, c, buf, len);
		if (!ok) {
			reply_error(buf, len, "connect", why, sizeof(why));
			if (L->work->refused)
				L->work->refused(L, c, "connect", why);
			client_fail(L, c, why);
		} else if (c->role == ROLE_OBSERVER && L->observe)
			send_observe(L, c);
		else
			client_ready(L, c);
	} else if (re == 2) {
		if (!ok) {
			reply_error(buf, len, "observe", why, sizeof(why));
			client_fail(L, c, why);
		} else
			client_ready(L, c);
	} else if (re == PING_ID) {
		if (L->work->pong)
			L->work->pong(L, c, now_ns());
	} else if (re > WRITE_ID_BASE) {
		if (!ok) {
			reply_error(buf, len, "setPreference", why, sizeof(why));
			note_error(L, "%s", why);
			if (L->work->write_refused)
				L->work->write_refused(L, (uint32_t)(re - WRITE_ID_BASE));
		} else if (L->work->acked)
			L->work->acked(L, (uint32_t)(re - WRITE_ID_BASE), now_ns());
	}
}

static void
panes_ping(struct load *L, struct client *c)
{
	char msg[64];
	int n = snprintf(msg, sizeof(msg), "{\"type\":\"ping\",\"id\":%d}", PING_ID);

	send_text(L, c, msg, n, 0);
}

static void
panes_write(struct load *L, struct client *w, uint32_t seq)
{
	char value[8192], msg[8192 + 512];
	size_t vlen = make_payload(value, sizeof(value), seq, L->opt.payload);
	int n = snprintf(msg, sizeof(msg),
			 "{\"type\":\"setPreference\",\"id\":%u,\"domain\":\"%s\",\"keyPath\":\"%s\","
			 "\"value\":%.*s}",
			 WRITE_ID_BASE + seq, L->opt.domain, L->opt.key_path, (int)vlen, value);
	send_text(L, w, msg, n, seq);
}

static void
panes_pref_set(struct load *L, struct client *c, uint32_t seq, const char *key_path)
{
	char value[8192], msg[8192 + 512], key[64] = "";
	size_t vlen = make_payload(value, sizeof(value), seq, L->opt.payload);
	/* --idempotency-keys: each write with a key of its own, as the JS client sends them. */
	if (L->opt.idempotency_keys)
		snprintf(key, sizeof(key), "\"idempotencyKey\":\"%u-%u-%u\",", L->opt.first_index, c->index, seq);
	int n = snprintf(msg, sizeof(msg),
			 "{\"type\":\"setPreference\",\"id\":%u,%s\"domain\":\"%s\",\"keyPath\":\"%s\","
			 "\"value\":%.*s}",
			 WRITE_ID_BASE + seq, key, L->opt.domain, key_path, (int)vlen, value);
	send_text(L, c, msg, n, seq);
}

/* The initial text: lines of lower-case letters, so a 1 MB document looks like prose, not one run. */
static void
panes_doc_create(struct load *L, struct client *c, size_t text_bytes)
{
	size_t cap = 128 + text_bytes * 2, n;
	char *msg = malloc(cap);

	if (!msg) {
		note_error(L, "createDocument: no memory for %zu bytes of text", text_bytes);
		return;
	}
	n = (size_t)snprintf(msg, cap, "{\"type\":\"createDocument\",\"id\":%d,\"title\":\"bench %s\",\"text\":\"",
			     CREATE_ID, L->work->name);
	for (size_t i = 0; i < text_bytes; i++) {
		if (i % 64 == 63) {
			memcpy(msg + n, "\\n", 2); /* an escaped newline: one byte of text */
			n += 2;
		} else
			msg[n++] = (char)('a' + (i * 7 + i / 64) % 26);
	}
	memcpy(msg + n, "\"}", 2);
	n += 2;
	send_text(L, c, msg, (int)n, 0);
	free(msg);
}

static void
panes_doc_open(struct load *L, struct client *c, const char *doc)
{
	char msg[256];
	int n = snprintf(msg, sizeof(msg), "{\"type\":\"openDocument\",\"id\":%d,\"document\":\"%s\"}",
			 OPEN_ID, doc);
	send_text(L, c, msg, n, 0);
}

/* One character inserted at `pos`: [pos, "c", length - pos], zero retains left out. */
static void
panes_doc_edit(struct load *L, struct client *c, const char *doc, uint32_t k, uint64_t revision, uint64_t pos,
	       uint64_t length)
{
	char msg[512], head[32] = "", tail[32] = "";
	uint32_t editor = c->index + (uint32_t)L->opt.first_index;

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
	send_text(L, c, msg, n, 0);
}

static int
panes_prepare(struct load *L)
{
	(void)L;
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
