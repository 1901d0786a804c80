// A thread's jansson allocations carved from a buffer of its own while it decodes. C, because
// Swift can neither declare a thread-local nor lend a stack buffer of this size without asking
// for the thread's stack bounds (which, for the main thread, reads /proc/self/maps).
#ifndef PANES_JANSSON_ARENA_H
#define PANES_JANSSON_ARENA_H

/// Makes jansson allocate through the arena's functions; once, before the first decode. Blocks
/// jansson allocated before, or allocates outside a decode, stay malloc's and free's.
void pjs_arena_install(void);

/// Until `pjs_arena_end`, this thread's jansson blocks come from its buffer, from its start,
/// and freeing them does nothing; past the buffer's end they are malloc's again. Every value
/// parsed in between must be released before `pjs_arena_end`, or dropped unreleased when
/// `pjs_arena_held_all` says all its blocks are the buffer's (and never used after).
void pjs_arena_begin(void);
void pjs_arena_end(void);

/// Non-zero when every block jansson took since `pjs_arena_begin` came from the buffer: then the
/// values parsed need no `json_decref` (freeing an arena block does nothing, and a decref walks
/// the whole document to do nothing). Zero outside begin … end.
int pjs_arena_held_all(void);

#endif
