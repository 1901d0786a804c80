// lws's allocator, with its upgrade header tables kept in a region of their own.
//
// For every HTTP request, a WebSocket upgrade included, lws allocates a header table: "ah struct"
// (976 bytes in Debian's 4.1.6) and "ah data" (`max_http_header_data2`: Panes'
// `maxHTTPHeaderBytes`, 4,096 by default), and frees both once the request is done or the
// WebSocket is open. Through malloc, a connect burst left their chunks among the ones an open
// connection keeps (its 2 KiB receive buffer, its wsi): later receive buffers were cut from them
// and left 2,032-byte holes no later block filled, and glibc could give none of it back (no whole
// free page): 0.2–0.6 KiB a connection of RSS at 10,000 idle ones (bench/README.md, wp/idle-mem5
// and wp/idle-mem6). Here the two reasons are served from a region of reserved address space in
// blocks of 64 KiB, each cut into slots of one power of two (1 KiB for "ah struct", 4 KiB for
// "ah data" at the default). Empty blocks keep their pages while there are no more of them than
// blocks in use (a burst in progress reuses them) or than `keep` (a lone request's tables cost
// no system call and no page fault); the rest give their pages back (madvise MADV_DONTNEED), so
// a settled burst leaves `keep` blocks' pages at most. Every other reason, a table
// over 64 KiB (`maxHTTPHeaderBytes` is at most 32 KiB) and a table when the region is full go
// to malloc as lws's own allocator does; a pointer is the region's by its address alone, so
// frees and resizes reach the allocator that made the block.
//
// lws calls its allocator on the thread that serves a context; several servers in one process
// (the tests) serve on several threads, and the allocator is process-wide: a pool's slots and
// blocks change under its mutex, taken only for a header table (four times a request). Other
// calls read only what is fixed before the allocator is installed (the region's bounds).
//
// A block's slots and pages are given back only when no slot in it is in use; a free of a
// pointer the region never handed out, or of a slot already free, aborts (memory in use is
// never handed out twice).
//
// Memory checkers (valgrind's memcheck, AddressSanitizer) see malloc's blocks only: a header
// table in the region is invisible to them, so an overrun of one or a use after its free goes
// unreported. `PANES_LWS_HEADER_POOL=off` in the environment leaves lws on malloc for such runs.
// The pool is not turned off by detecting valgrind (valgrind.h's RUNNING_ON_VALGRIND): callgrind
// runs under it too (bench/callgrind.py), and measures the allocator the server ships.
#include "lws_alloc.h"

#include <libwebsockets.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

_Static_assert(__builtin_types_compatible_p(__typeof__(lws_set_allocator),
                                            void(void *(*)(void *, size_t, const char *))),
               "lws_set_allocator is not what pws_lws_allocator_install passes");

enum {
    PWS_BLOCK_SHIFT = 16,  // 64 KiB blocks: the largest slot, and 64 slots of the smallest
    PWS_MIN_SHIFT = 10,    // 1 KiB slots: "ah struct" (976) and anything smaller
    PWS_CLASSES = PWS_BLOCK_SHIFT - PWS_MIN_SHIFT + 1,
};

// The process's pool: 1,024 blocks, 64 MiB of address space (reserved, not memory): the tables of
// ~13,000 requests at once at the default 4 KiB (a slot each of 1 and 4 KiB), more than lws
// serves in one burst at once; beyond it tables go to malloc. Two empty blocks keep their pages
// once a burst has settled (at most 128 KiB): one per size a lone request takes.
enum { PWS_PROCESS_BLOCKS = 1024, PWS_PROCESS_KEEP = 2 };

#define PWS_NONE (-1)

struct pws_block {
    uint64_t free;       // bit i: slot i is free (only the block's slots' bits are ever set)
    int32_t prev, next;  // its class's list of blocks with a free slot, or the empty blocks' list
    uint16_t used;       // slots in use
    uint8_t shift;       // slot bytes = 1 << shift; 0 while the block is empty
};

struct pws_pool {
    pthread_mutex_t lock;
    char *base;                        // the region: `blocks` blocks, fixed once made
    size_t blocks;
    size_t keep;
    size_t fresh;                      // blocks from here on were never written
    int32_t partial[PWS_CLASSES];      // per slot size, blocks with a free slot and one in use
    int32_t kept;                      // empty blocks that still have their pages (a stack)
    int32_t clean;                     // emptied blocks whose pages were given back (a stack)
    struct pws_pool_counts counts;
    struct pws_block *block;           // `blocks` records, one a block
};

size_t pws_pool_block_bytes(void) { return (size_t)1 << PWS_BLOCK_SHIFT; }

static int pws_pool_init(struct pws_pool *pool, struct pws_block *block, size_t blocks, size_t keep) {
    void *region = mmap(NULL, blocks << PWS_BLOCK_SHIFT, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (region == MAP_FAILED) return 0;
    pthread_mutex_init(&pool->lock, NULL);
    pool->base = region;
    pool->block = block;
    pool->blocks = blocks;
    pool->keep = keep;
    pool->fresh = 0;
    for (int c = 0; c < PWS_CLASSES; c++) pool->partial[c] = PWS_NONE;
    pool->kept = PWS_NONE;
    pool->clean = PWS_NONE;
    memset(&pool->counts, 0, sizeof pool->counts);
    return 1;
}

struct pws_pool *pws_pool_create(size_t blocks, size_t keep) {
    if (blocks == 0 || blocks > INT32_MAX) return NULL;
    struct pws_pool *pool = calloc(1, sizeof *pool);
    struct pws_block *block = calloc(blocks, sizeof *block);
    if (!pool || !block || !pws_pool_init(pool, block, blocks, keep)) {
        free(pool);
        free(block);
        return NULL;
    }
    return pool;
}

void pws_pool_destroy(struct pws_pool *pool) {
    if (!pool) return;
    munmap(pool->base, pool->blocks << PWS_BLOCK_SHIFT);
    pthread_mutex_destroy(&pool->lock);
    free(pool->block);
    free(pool);
}

int pws_pool_owns(const struct pws_pool *pool, const void *p) {
    return (uintptr_t)p - (uintptr_t)pool->base < (pool->blocks << PWS_BLOCK_SHIFT);
}

void *pws_pool_region(const struct pws_pool *pool, size_t *bytes) {
    *bytes = pool->blocks << PWS_BLOCK_SHIFT;
    return pool->base;
}

struct pws_pool_counts pws_pool_counts(struct pws_pool *pool) {
    pthread_mutex_lock(&pool->lock);
    struct pws_pool_counts counts = pool->counts;
    pthread_mutex_unlock(&pool->lock);
    return counts;
}

/// lws's two names for a header table's parts (lib/roles/http/parsers.c, `_lws_create_ah`).
static inline int pws_is_header_table(const char *reason) {
    return reason && reason[0] == 'a' && reason[1] == 'h' && reason[2] == ' '
        && (strcmp(reason + 3, "data") == 0 || strcmp(reason + 3, "struct") == 0);
}

static void pws_unlink(struct pws_pool *pool, int32_t *head, int32_t i) {
    struct pws_block *b = &pool->block[i];
    if (b->prev != PWS_NONE) pool->block[b->prev].next = b->next; else *head = b->next;
    if (b->next != PWS_NONE) pool->block[b->next].prev = b->prev;
    b->prev = b->next = PWS_NONE;
}

static void pws_push(struct pws_pool *pool, int32_t *head, int32_t i) {
    struct pws_block *b = &pool->block[i];
    b->prev = PWS_NONE;
    b->next = *head;
    if (*head != PWS_NONE) pool->block[*head].prev = i;
    *head = i;
}

/// An empty block for slots of 1 << shift: the last emptied that kept its pages, else one given
/// back, else one never used; PWS_NONE when the region is full.
static int32_t pws_take_block(struct pws_pool *pool, unsigned shift) {
    int32_t i;
    if (pool->kept != PWS_NONE) {
        i = pool->kept;
        pws_unlink(pool, &pool->kept, i);
        pool->counts.blocks_kept--;
    } else if (pool->clean != PWS_NONE) {
        i = pool->clean;
        pws_unlink(pool, &pool->clean, i);
    } else if (pool->fresh < pool->blocks) {
        i = (int32_t)pool->fresh++;
    } else {
        return PWS_NONE;
    }
    struct pws_block *b = &pool->block[i];
    unsigned slots = 1u << (PWS_BLOCK_SHIFT - shift);
    b->free = slots == 64 ? UINT64_MAX : (UINT64_C(1) << slots) - 1;
    b->used = 0;
    b->shift = (uint8_t)shift;
    pool->counts.blocks_in_use++;
    pws_push(pool, &pool->partial[shift - PWS_MIN_SHIFT], i);
    return i;
}

/// A slot of at least `size` bytes (at most a block), or NULL when the region is full.
static void *pws_pool_alloc(struct pws_pool *pool, size_t size) {
    unsigned shift = PWS_MIN_SHIFT;
    while (((size_t)1 << shift) < size) shift++;
    pthread_mutex_lock(&pool->lock);
    int32_t *head = &pool->partial[shift - PWS_MIN_SHIFT];
    int32_t i = *head != PWS_NONE ? *head : pws_take_block(pool, shift);
    if (i == PWS_NONE) {
        pool->counts.overflowed++;
        pthread_mutex_unlock(&pool->lock);
        return NULL;
    }
    struct pws_block *b = &pool->block[i];
    unsigned slot = (unsigned)__builtin_ctzll(b->free);
    b->free &= b->free - 1;
    b->used++;
    if (b->free == 0) pws_unlink(pool, head, i);
    pool->counts.slots_in_use++;
    pool->counts.pooled++;
    pthread_mutex_unlock(&pool->lock);
    return pool->base + ((size_t)i << PWS_BLOCK_SHIFT) + ((size_t)slot << shift);
}

/// The bytes of the slot `p` (the region's) starts, read under the lock as its block may be
/// another thread's to change.
static size_t pws_slot_bytes(struct pws_pool *pool, const void *p) {
    size_t i = (size_t)((const char *)p - pool->base) >> PWS_BLOCK_SHIFT;
    pthread_mutex_lock(&pool->lock);
    unsigned shift = pool->block[i].shift;
    pthread_mutex_unlock(&pool->lock);
    return shift ? (size_t)1 << shift : 0;
}

static void pws_pool_free(struct pws_pool *pool, void *p) {
    size_t offset = (size_t)((char *)p - pool->base);
    int32_t i = (int32_t)(offset >> PWS_BLOCK_SHIFT);
    pthread_mutex_lock(&pool->lock);
    struct pws_block *b = &pool->block[i];
    size_t within = offset & (((size_t)1 << PWS_BLOCK_SHIFT) - 1);
    // Not a slot this pool handed out, or one already free: the caller's memory is corrupt.
    if (b->shift == 0 || (within & (((size_t)1 << b->shift) - 1)) != 0) abort();
    uint64_t bit = UINT64_C(1) << (within >> b->shift);
    if (b->free & bit) abort();
    int32_t *head = &pool->partial[b->shift - PWS_MIN_SHIFT];
    if (b->free == 0) pws_push(pool, head, i);
    b->free |= bit;
    b->used--;
    pool->counts.slots_in_use--;
    if (b->used == 0) {
        pws_unlink(pool, head, i);
        b->shift = 0;
        b->free = 0;
        pool->counts.blocks_in_use--;
        pws_push(pool, &pool->kept, i);
        pool->counts.blocks_kept++;
        // Kept: as many empty blocks as blocks in use, at least `keep`. While a burst goes on its
        // tables come and go in blocks that stay written (no system call, no page fault a
        // request); as it settles the blocks in use fall to none and every empty block but the
        // last `keep` is given back, one or two at each block that empties. The kept list is a
        // stack, so the block given back is the one that just emptied (its pages the most
        // recently written) and the older ones stay: which ones stay does not change how many.
        size_t limit = pool->counts.blocks_in_use > pool->keep ? pool->counts.blocks_in_use : pool->keep;
        while (pool->counts.blocks_kept > limit) {
            int32_t given = pool->kept;
            pws_unlink(pool, &pool->kept, given);
            pool->counts.blocks_kept--;
            // No slot of the block is in use, and it is handed out again only through `clean`,
            // as zeroed pages the kernel supplies on the first write.
            madvise(pool->base + ((size_t)given << PWS_BLOCK_SHIFT), (size_t)1 << PWS_BLOCK_SHIFT, MADV_DONTNEED);
            pws_push(pool, &pool->clean, given);
            pool->counts.blocks_given_back++;
        }
    }
    pthread_mutex_unlock(&pool->lock);
}

void *pws_pool_realloc(struct pws_pool *pool, void *p, size_t size, const char *reason) {
    if (p && pws_pool_owns(pool, p)) {
        if (size == 0) {
            pws_pool_free(pool, p);
            return NULL;
        }
        size_t capacity = pws_slot_bytes(pool, p);
        if (size <= capacity) return p;
        void *moved = malloc(size);
        if (!moved) return NULL;  // as realloc: the old block stays the caller's
        memcpy(moved, p, capacity);
        pws_pool_free(pool, p);
        return moved;
    }
    if (!p && size && size <= ((size_t)1 << PWS_BLOCK_SHIFT) && pws_is_header_table(reason)) {
        void *slot = pws_pool_alloc(pool, size);
        if (slot) return slot;
    }
    if (size == 0) {
        free(p);
        return NULL;
    }
    return realloc(p, size);
}

// The process's pool; static, so the installed allocator reaches it without a load.
static struct pws_pool pws_process;
static struct pws_block pws_process_blocks[PWS_PROCESS_BLOCKS];
static pthread_once_t pws_process_once = PTHREAD_ONCE_INIT;
// What `pws_lws_allocator_install` returns: 1 installed, 0 not (no region), -1 turned off.
static _Atomic int pws_process_installed;

static void *pws_lws_allocator(void *p, size_t size, const char *reason) {
    return pws_pool_realloc(&pws_process, p, size, reason);
}

static void pws_process_install(void) {
    const char *setting = getenv("PANES_LWS_HEADER_POOL");
    if (setting && strcmp(setting, "off") == 0) {
        atomic_store_explicit(&pws_process_installed, -1, memory_order_release);
        return;
    }
    if (!pws_pool_init(&pws_process, pws_process_blocks, PWS_PROCESS_BLOCKS, PWS_PROCESS_KEEP)) return;
    // Installed before the process's only `lws_create_context` (WebSocketServer.start), when
    // lws has allocated nothing and no other thread calls it: lws keeps the allocator in a
    // plain global, so installing it while another thread's lws allocates would be a data
    // race. Blocks lws took from malloc before would still be freed right: the allocator hands
    // a pointer outside the region to free or realloc.
    lws_set_allocator(pws_lws_allocator);
    atomic_store_explicit(&pws_process_installed, 1, memory_order_release);
}

int pws_lws_allocator_install(void) {
    pthread_once(&pws_process_once, pws_process_install);
    return atomic_load_explicit(&pws_process_installed, memory_order_acquire);
}

struct pws_pool_counts pws_lws_allocator_counts(void) {
    if (atomic_load_explicit(&pws_process_installed, memory_order_acquire) != 1) {
        struct pws_pool_counts none = {0};
        return none;
    }
    return pws_pool_counts(&pws_process);
}
