/*
 * The Panes protocol (panes.v1): text frames holding one JSON object each.
 * A client sends `connect` (id 1); an observer then sends `observe` (id 2)
 * on the benchmark's key path and is ready when that is acknowledged. The
 * writer sends `setPreference` with id 1000+seq and a value carrying `seq`;
 * observers match the `preferenceChanged` they get by that `seq`.
 */
#include "load.h"

#include <string.h>

#define WRITE_ID_BASE 1000

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

static void
panes_opened(struct client *c)
{
	char msg[512], user[128];
	int n;

	if (g.opt.users > 1)
		snprintf(user, sizeof(user), "%s-%u", g.opt.user,
			 (c->index + (uint32_t)g.opt.first_index) % (uint32_t)g.opt.users);
	else
		snprintf(user, sizeof(user), "%s", g.opt.user);
	n = snprintf(msg, sizeof(msg),
		     "{\"type\":\"connect\",\"id\":1,\"protocol\":1,\"client\":\"panes-load/1\","
		     "\"workspace\":\"%s\",\"auth\":{\"name\":\"%s\"}}",
		     g.opt.workspace, user);
	send_text(c, msg, n, 0);
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
	if (!is(type, end, "\"reply\""))
		return; /* other pushes (scene state, …) are not measured */

	long long re = json_int(buf, len, "re", -1);
	int ok = is(json_value(buf, len, "ok"), end, "true");

	if (re == 1) {
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
	} else if (re > WRITE_ID_BASE) {
		if (!ok) {
			reply_error(buf, len, "setPreference", why, sizeof(why));
			note_error("%s", why);
		} else if (g.work->acked)
			g.work->acked((uint32_t)(re - WRITE_ID_BASE), now_ns());
	}
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
	.write = panes_write,
};
