/* test_file_pages.c - clean file pages are dropped from RSS and read back
 * unchanged; a page this process modified is never given back. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/file_pages.h"

#define PAGES 64

/* Rss in kB of the mapping that starts at addr, from /proc/self/smaps; -1 if absent. */
static long mapping_rss_kb(const void *addr)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[4096];
    int in = 0;
    long kb = -1;

    assert_non_null(f);
    while (fgets(line, sizeof(line), f)) {
        unsigned long long start, end;
        long v;
        if (sscanf(line, "%llx-%llx ", &start, &end) == 2 && strchr(line, ':') != line + 2)
            in = (uintptr_t)start == (uintptr_t)addr;
        else if (in && sscanf(line, "Rss: %ld kB", &v) == 1)
            kb = v;
    }
    fclose(f);
    return kb;
}

/* A temporary file of PAGES pages, page i filled with byte i. */
static int make_file(size_t page)
{
    char path[] = "/tmp/tg-test-file-pages-XXXXXX";
    int fd = mkstemp(path);
    unsigned char *buf = malloc(page);

    assert_true(fd >= 0);
    assert_non_null(buf);
    unlink(path);
    for (int i = 0; i < PAGES; i++) {
        memset(buf, i, page);
        assert_int_equal(write(fd, buf, page), (ssize_t)page);
    }
    free(buf);
    /* Written back: a library's pages are clean in the page cache, and a
     * dirty one counts as Private_Dirty in a private mapping. */
    assert_int_equal(fsync(fd), 0);
    return fd;
}

static void test_clean_pages_released_and_read_back(void **state)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    int fd = make_file(page);
    volatile unsigned char *m = mmap(NULL, PAGES * page, PROT_READ, MAP_PRIVATE, fd, 0);
    unsigned sum = 0;

    (void)state;
    assert_true(m != MAP_FAILED);
    for (int i = 0; i < PAGES; i++)
        sum += m[(size_t)i * page];
    assert_int_equal(sum, PAGES * (PAGES - 1) / 2);
    assert_int_equal(mapping_rss_kb((const void *)m), (long)(PAGES * page / 1024));

    assert_true(tg_file_pages_release() >= PAGES * page);
    assert_int_equal(mapping_rss_kb((const void *)m), 0);
    for (int i = 0; i < PAGES; i++)
        assert_int_equal(m[(size_t)i * page + page / 2], i);   /* back from the page cache, unchanged */
    munmap((void *)m, PAGES * page);
    close(fd);
}

/* Relocated read-only data looks like this: a private file page written,
 * then made read-only. Releasing it would bring back the file's bytes. */
static void test_modified_private_page_kept(void **state)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    int fd = make_file(page);
    unsigned char *m = mmap(NULL, PAGES * page, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    unsigned char *heap = malloc(page);

    (void)state;
    assert_true(m != MAP_FAILED);
    assert_non_null(heap);
    memset(heap, 0x5a, page);
    for (int i = 0; i < PAGES; i++)
        m[(size_t)i * page] = (unsigned char)(0xa0 + (i & 0x1f));
    m[3 * page + 7] = 0xee;
    assert_int_equal(mprotect(m, PAGES * page, PROT_READ), 0);

    tg_file_pages_release();
    assert_int_equal(m[3 * page + 7], 0xee);
    assert_int_equal(m[5 * page], 0xa5);
    for (size_t i = 0; i < page; i++)
        assert_int_equal(heap[i], 0x5a);
    free(heap);
    munmap(m, PAGES * page);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clean_pages_released_and_read_back),
        cmocka_unit_test(test_modified_private_page_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
