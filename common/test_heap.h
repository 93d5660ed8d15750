/* test_heap.h - for unit tests that bound memory: the heap's bytes in use. */
#ifndef TG_COMMON_TEST_HEAP_H
#define TG_COMMON_TEST_HEAP_H

#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__)
#define TG_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TG_TEST_ASAN 1
#endif
#endif

#ifdef TG_TEST_ASAN
/* ASan replaces malloc, so glibc's counters stay still: ask ASan. */
size_t __sanitizer_get_current_allocated_bytes(void);
static inline size_t tg_test_heap_in_use(void)
{
    return __sanitizer_get_current_allocated_bytes();
}
#else
#include <malloc.h>
/* Chunks from the heap and the large ones glibc maps on their own (a hash
 * table's bucket array): the process's RSS has both. */
static inline size_t tg_test_heap_in_use(void)
{
    struct mallinfo2 mi = mallinfo2();

    return mi.uordblks + mi.hblkhd;
}
#endif

#endif
