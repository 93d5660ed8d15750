/* file_pages.c - see file_pages.h. */
#define _GNU_SOURCE
#include "file_pages.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* The webhook maps about 250 regions; past this, the rest is left alone. */
#define MAX_REGIONS 2048

typedef struct region {
    uintptr_t start, end;
    size_t rss_kb;
    int eligible;
} region;

/* "start-end perms offset dev inode path": a file's clean, read-only mapping? */
static int parse_header(const char *line, region *r)
{
    char perms[8] = "";
    unsigned long long start, end, inode;
    int path_at = 0;

    if (sscanf(line, "%llx-%llx %7s %*s %*s %llu %n", &start, &end, perms, &inode, &path_at) < 4)
        return 0;
    r->start = (uintptr_t)start;
    r->end = (uintptr_t)end;
    r->rss_kb = 0;
    /* A file (an inode and an absolute path), never written through this mapping. */
    r->eligible = inode != 0 && path_at > 0 && line[path_at] == '/' && perms[0] == 'r' && perms[1] != 'w';
    return 1;
}

/* Field lines of the current region: any private modification or anonymous
 * (copied-on-write) page makes the whole mapping ineligible. */
static void parse_field(const char *line, region *r)
{
    unsigned long kb;

    if (sscanf(line, "Rss: %lu kB", &kb) == 1)
        r->rss_kb = kb;
    else if ((sscanf(line, "Private_Dirty: %lu kB", &kb) == 1 || sscanf(line, "Anonymous: %lu kB", &kb) == 1 ||
              sscanf(line, "Locked: %lu kB", &kb) == 1) && kb > 0)
        r->eligible = 0;
}

size_t tg_file_pages_release(void)
{
    FILE *f = fopen("/proc/self/smaps", "re");
    region *regions;
    size_t n = 0, released = 0;
    char line[4096];

    if (f == NULL)
        return 0;
    regions = calloc(MAX_REGIONS, sizeof(*regions));
    if (regions == NULL) {
        fclose(f);
        return 0;
    }
    /* Read everything first: the madvise calls below must not change the
     * file under the reader. */
    while (fgets(line, sizeof(line), f)) {
        region r;
        if (line[0] >= 'A' && line[0] <= 'Z') {
            if (n > 0)
                parse_field(line, &regions[n - 1]);
        } else if (parse_header(line, &r)) {
            if (n == MAX_REGIONS)
                break;
            regions[n++] = r;
        }
    }
    fclose(f);
    for (size_t i = 0; i < n; i++) {
        if (!regions[i].eligible || regions[i].rss_kb == 0)
            continue;
        if (madvise((void *)regions[i].start, regions[i].end - regions[i].start, MADV_DONTNEED) == 0)
            released += regions[i].rss_kb * 1024;
    }
    free(regions);
    return released;
}
