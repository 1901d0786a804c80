// jansson allocates a block for every value, key and string it parses, and frees each again
// when the document is released: about 40 of each for a `connect` frame, a sixth of its
// decoding. While a thread decodes (`pjs_arena_begin` … `pjs_arena_end`), those blocks are
// carved from a buffer of the thread's own, 16-byte aligned like malloc's, and freeing one
// does nothing. Any other block (another thread's, libjwt's, one past the buffer's end, one
// from before) is malloc's and is given to free. Each thread that decodes holds its buffer
// (`PJS_ARENA_BYTES`, thread-local storage) for its life. A document whose every block came
// from the buffer need not be released at all (`pjs_arena_held_all`): its blocks are gone when
// the next decode starts the buffer over.
#include "jansson_arena.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>

#define PJS_ARENA_BYTES 4096

struct pjs_arena {
    uintptr_t next;
    uintptr_t end;
    /// Set when a block asked for between begin and end came from malloc (the buffer was full).
    int spilled;
    _Alignas(16) unsigned char bytes[PJS_ARENA_BYTES];
};

static _Thread_local struct pjs_arena arena;

static void *arena_malloc(size_t size) {
    size_t rounded = (size + 15) & ~(size_t)15;
    if (rounded >= size && arena.end - arena.next >= rounded) {
        void *block = (void *)arena.next;
        arena.next += rounded;
        return block;
    }
    if (arena.end) arena.spilled = 1;
    return malloc(size);
}

static void arena_free(void *block) {
    uintptr_t address = (uintptr_t)block;
    if (address >= (uintptr_t)arena.bytes && address < (uintptr_t)arena.bytes + PJS_ARENA_BYTES) return;
    free(block);
}

void pjs_arena_install(void) { json_set_alloc_funcs(arena_malloc, arena_free); }

void pjs_arena_begin(void) {
    arena.next = (uintptr_t)arena.bytes;
    arena.end = (uintptr_t)arena.bytes + PJS_ARENA_BYTES;
    arena.spilled = 0;
}

int pjs_arena_held_all(void) { return arena.end && !arena.spilled; }

void pjs_arena_end(void) {
    arena.next = 0;
    arena.end = 0;
}
