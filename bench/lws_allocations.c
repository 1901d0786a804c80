/*
 * lws's allocations in a running server, for the memory experiments of bench/README.md
 * ("Memory per idle scene: where RSS is above the live heap"). An LD_PRELOAD library that
 * installs its own lws allocator (lws_set_allocator) before main, in one of two modes:
 *
 *   LWS_ALLOC=count  counts lws's allocations by the reason lws gives ("ah data", "rx_ubuf",
 *                    ...): how many, how many bytes; frees come as "lws_free"/"free". Written
 *                    to LWS_ALLOC_OUT (default /tmp/lws_allocations.txt) once a second.
 *   LWS_ALLOC=pool   serves the reasons named in LWS_ALLOC_POOL (comma-separated, e.g.
 *                    "ah struct,ah data": the upgrade's header table) from a region of their
 *                    own, in 64-byte classes up to 8 KiB, each class's freed blocks reused
 *                    last-freed first and never handed back: what the heap looks like when
 *                    those blocks are not freed among the ones a connection keeps.
 *
 * Neither is for production: the pool never returns memory, and both take a lock per call.
 * Panes since wp/idle-mem6 installs its own allocator as its transport starts
 * (Sources/CLibWebSocketsAlloc), in place of this one: against such a build this library counts
 * or pools only what lws allocates before then (nothing). Use it on raw lws or older builds.
 *
 *   cc -O2 -shared -fPIC -o /tmp/lws_allocations.so bench/lws_allocations.c -lpthread -lwebsockets
 *   bench/idle_memory.py --bin BIN --n 10000 --malloc --env LD_PRELOAD=/tmp/lws_allocations.so \
 *       --env LWS_ALLOC=pool "--env=LWS_ALLOC_POOL=ah struct,ah data"
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

extern void lws_set_allocator(void *(*realloc)(void *, size_t, const char *));

enum { COUNT = 1, POOL = 2 };
static int mode;
static char pooled_reasons[512];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* count: lws passes string literals, so a reason is told by its address. */
#define REASONS 256
static struct { const char *reason; unsigned long calls, bytes; } counts[REASONS];
static int reasons;

/* pool: [class (8 bytes) | pad | block], classes of 64 bytes; freed blocks in a list per class. */
#define REGION (256ul << 20)
#define CLASS 64
#define MAX_BLOCK 8192
static char *region;
static size_t used;
static void *freed[MAX_BLOCK / CLASS + 1];

static int is_pooled(const char *reason) {
    char key[160];
    if (!reason) return 0;
    snprintf(key, sizeof key, ",%s,", reason);
    return strstr(pooled_reasons, key) != NULL;
}

static int in_region(void *p) { return region && (char *)p >= region && (char *)p < region + REGION; }

static void pool_free(void *p) {
    size_t class = *(size_t *)((char *)p - 16);
    pthread_mutex_lock(&lock);
    *(void **)p = freed[class];
    freed[class] = p;
    pthread_mutex_unlock(&lock);
}

static void *pool_alloc(size_t size) {
    size_t class = (size + CLASS - 1) / CLASS;
    void *p = NULL;
    pthread_mutex_lock(&lock);
    if (!region) {
        region = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (region == MAP_FAILED) region = NULL;
    }
    if (freed[class]) {
        p = freed[class];
        freed[class] = *(void **)p;
    } else if (region && used + 16 + class * CLASS <= REGION) {
        *(size_t *)(region + used) = class;
        p = region + used + 16;
        used += 16 + class * CLASS;
    }
    pthread_mutex_unlock(&lock);
    return p;
}

static void *allocator(void *p, size_t size, const char *reason) {
    if (mode == COUNT && reason) {
        pthread_mutex_lock(&lock);
        int i = 0;
        while (i < reasons && counts[i].reason != reason) i++;
        if (i == reasons && reasons < REASONS) counts[reasons++].reason = reason;
        if (i < REASONS) {
            counts[i].calls++;
            counts[i].bytes += size;
        }
        pthread_mutex_unlock(&lock);
    }
    if (in_region(p)) {
        size_t capacity = *(size_t *)((char *)p - 16) * CLASS;
        if (size == 0) {
            pool_free(p);
            return NULL;
        }
        if (size <= capacity) return p;
        void *moved = malloc(size);
        if (moved) memcpy(moved, p, capacity);
        pool_free(p);
        return moved;
    }
    if (mode == POOL && !p && size && size <= MAX_BLOCK && is_pooled(reason)) {
        void *block = pool_alloc(size);
        if (block) return block;
    }
    if (size == 0) {
        free(p);
        return NULL;
    }
    return realloc(p, size);
}

static void write_counts(void) {
    const char *path = getenv("LWS_ALLOC_OUT");
    FILE *out = fopen(path ? path : "/tmp/lws_allocations.txt", "w");
    if (!out) return;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < reasons; i++)
        fprintf(out, "%10lu calls %12lu bytes  %s\n", counts[i].calls, counts[i].bytes, counts[i].reason);
    pthread_mutex_unlock(&lock);
    fclose(out);
}

/* The servers end on SIGTERM without running destructors: the counts are written as they go. */
static void *writer(void *unused) {
    (void)unused;
    for (;;) {
        sleep(1);
        write_counts();
    }
    return NULL;
}

__attribute__((constructor)) static void install(void) {
    const char *m = getenv("LWS_ALLOC");
    if (!m) return;
    mode = !strcmp(m, "count") ? COUNT : !strcmp(m, "pool") ? POOL : 0;
    if (!mode) return;
    const char *names = getenv("LWS_ALLOC_POOL");
    snprintf(pooled_reasons, sizeof pooled_reasons, ",%s,", names ? names : "");
    lws_set_allocator(allocator);
    if (mode == COUNT) {
        pthread_t thread;
        pthread_create(&thread, NULL, writer, NULL);
    }
}
