/*
 * Sessions to resume (Panes): written by `connect --sessions-out FILE` as
 * each scene is connected, one line per session, and read back by `storm
 * --sessions FILE` after the server restarted, so every storm client resumes
 * a real session with its identifier and secret.
 *
 * A line is `<user> <persistentIdentifier> <secret>`: the three are names and
 * tokens without spaces (Panes' identifiers and secrets are URL-safe).
 *
 * Threading: the only thread (see main.c).
 */
#ifndef PANES_LOAD_SESSIONS_H
#define PANES_LOAD_SESSIONS_H

#include <stdio.h>

struct session_cred {
	char user[64];
	char id[72];
	char secret[88];
};

/** Appends one session to `out`. */
void sessions_write(FILE *out, const char *user, const char *id, const char *secret);
/**
 * Reads `n` sessions starting at line `first` (0-based) of `path` into a new
 * array; returns NULL (and says why on stderr) if the file has fewer.
 */
struct session_cred *sessions_read(const char *path, int first, int n);

#endif
