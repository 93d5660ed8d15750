/* test_util.h - helpers shared by the webhook's unit tests (test code only). */
#ifndef TG_WEBHOOK_TEST_UTIL_H
#define TG_WEBHOOK_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>

/* Whole file under $TG_SOURCE_DIR/webhook/testdata (or $TG_VECTORS_DIR when
 * vectors is set); malloc'd and NUL-terminated, NULL when unreadable. */
static inline char *test_read_file(const char *name, int vectors, size_t *len)
{
    const char *dir = getenv(vectors ? "TG_VECTORS_DIR" : "TG_SOURCE_DIR");
    char path[1024];
    FILE *f;
    char *buf;
    long n;

    if (len)
        *len = 0;
    if (!dir)
        return NULL;
    snprintf(path, sizeof(path), "%s%s/%s", dir, vectors ? "" : "/webhook/testdata", name);
    if (!(f = fopen(path, "rb")))
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        if (len)
            *len = (size_t)n;
    }
    return buf;
}

#endif
