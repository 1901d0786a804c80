// See include/allocation_counter.h. The __libc_* entry points are glibc's exported names for
// its allocator, so forwarding to them cannot recurse into these definitions.
#include "allocation_counter.h"
#include <errno.h>
#include <malloc.h>
#include <stddef.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

static uint64_t allocations;

static inline void pac_count(void) { __atomic_fetch_add(&allocations, 1, __ATOMIC_RELAXED); }

uint64_t pac_allocations(void) { return __atomic_load_n(&allocations, __ATOMIC_RELAXED); }

size_t pac_heap_in_use(void) { return mallinfo2().uordblks; }

void *malloc(size_t size) {
    pac_count();
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    pac_count();
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    pac_count();
    return __libc_realloc(pointer, size);
}

void *memalign(size_t alignment, size_t size) {
    pac_count();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    pac_count();
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    pac_count();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}
