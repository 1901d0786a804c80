// lws's upgrade header tables kept out of glibc's heap (see lws_alloc.c).
#ifndef PANES_LWS_ALLOC_H
#define PANES_LWS_ALLOC_H

#include <stddef.h>

/// A region of blocks for the allocations lws names "ah struct" and "ah data" (a request's
/// header table), apart from malloc's heap. The transport uses one per process, installed in lws
/// (`pws_lws_allocator_install`); tests make their own.
struct pws_pool;

/// What a pool holds now, and what it has done since it was made.
struct pws_pool_counts {
    /// Blocks handed out and not yet freed.
    size_t slots_in_use;
    /// Blocks of the region that hold at least one slot in use.
    size_t blocks_in_use;
    /// Empty blocks kept with their pages, for the next tables (at most the larger of
    /// `blocks_in_use` and the pool's `keep`).
    size_t blocks_kept;
    /// Times an emptied block's pages were given back to the kernel (madvise MADV_DONTNEED).
    size_t blocks_given_back;
    /// Header tables served from the pool since it was made.
    size_t pooled;
    /// Header tables malloc served because the region was full.
    size_t overflowed;
};

/// Bytes in one block of a pool's region: a slot is a power of two from 1 KiB up to this.
size_t pws_pool_block_bytes(void);

/// A pool over `blocks` blocks of reserved address space (no memory until written) that keeps
/// the pages of as many empty blocks as blocks in use, and of at least `keep`, and gives the
/// rest back. NULL if the address space or the pool's own record could not be had.
struct pws_pool *pws_pool_create(size_t blocks, size_t keep);

/// Unmaps a pool's region. Every block it handed out must be freed first; a test's own only
/// (the process's pool, installed in lws, is never destroyed).
void pws_pool_destroy(struct pws_pool *pool);

/// An lws allocator's call (lws_set_allocator): `size` 0 frees `p` (either allocator's) and
/// returns NULL; `p` NULL allocates, from the pool when `reason` is a header table's and a slot
/// fits, else from malloc; otherwise resizes, staying in the slot when the size still fits and
/// moving to malloc when not.
void *pws_pool_realloc(struct pws_pool *pool, void *p, size_t size, const char *reason);

/// 1 when `p` is in the pool's region (a slot it handed out), 0 when not.
int pws_pool_owns(const struct pws_pool *pool, const void *p);

/// The pool's counts, read under its lock.
struct pws_pool_counts pws_pool_counts(struct pws_pool *pool);

/// The start of the pool's region and, in `bytes`, its length (for tests that ask the kernel
/// which of its pages are resident).
void *pws_pool_region(const struct pws_pool *pool, size_t *bytes);

/// Makes the process's pool and installs it as lws's allocator, once (later calls, from any
/// thread, return what the first did). 1 when installed, 0 when the region could not be
/// reserved, -1 when the environment has `PANES_LWS_HEADER_POOL=off` (for memory checkers,
/// which see malloc's blocks only); lws keeps its own allocator, malloc, unless 1. Call before
/// lws allocates anything.
int pws_lws_allocator_install(void);

/// The process's pool's counts (all zero before `pws_lws_allocator_install`).
struct pws_pool_counts pws_lws_allocator_counts(void);

#endif
