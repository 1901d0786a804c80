// Counts heap allocations in the process that links this target: for the document
// micro-benchmark only (panes-docbench), which reports allocations per operation.
//
// It defines malloc, calloc, realloc, posix_memalign, aligned_alloc and memalign, counts the
// call and forwards to glibc's own allocator (__libc_*), so every library in the process,
// the Swift runtime included, is counted. Nothing the server ships links it.
#pragma once
#include <stddef.h>
#include <stdint.h>

/// Allocations (successful or not) since the process started.
uint64_t pac_allocations(void);

/// Heap bytes handed out and not yet freed (glibc's mallinfo2, which Swift's Glibc module
/// does not import).
size_t pac_heap_in_use(void);
