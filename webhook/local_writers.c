/* local_writers.c - see local_writers.h. */
#include "webhook/local_writers.h"

#include <stdio.h>
#include <string.h>

/* One entry [s, s+len) into e; -1 with err when it is not a name. */
static int parse_entry(const char *s, size_t len, tg_local_writer *e, char *err, size_t err_len)
{
    static const size_t plen = sizeof(TG_LOCAL_WRITERS_GROUP_PREFIX) - 1;

    e->group = len >= plen && strncmp(s, TG_LOCAL_WRITERS_GROUP_PREFIX, plen) == 0;
    if (e->group) {
        s += plen;
        len -= plen;
    }
    if (len == 0) {
        snprintf(err, err_len, "expected a user name or group:<name>, found an empty entry");
        return -1;
    }
    if (len >= sizeof(e->name)) {
        snprintf(err, err_len, "expected names of at most %zu characters, found one of %zu",
                 sizeof(e->name) - 1, len);
        return -1;
    }
    memcpy(e->name, s, len);
    e->name[len] = '\0';
    return 0;
}

int tg_local_writers_parse(const char *list, tg_local_writers *w, char *err, size_t err_len)
{
    const char *p = list;

    memset(w, 0, sizeof(*w));
    if (!list || !*list)
        return 0;
    for (;;) {
        size_t len = strcspn(p, ",");
        if (w->n == TG_LOCAL_WRITERS_MAX) {
            snprintf(err, err_len, "expected at most %d entries, found more", TG_LOCAL_WRITERS_MAX);
            return -1;
        }
        if (parse_entry(p, len, &w->entries[w->n], err, err_len) != 0)
            return -1;
        w->n++;
        if (p[len] == '\0')
            return 0;
        p += len + 1;
    }
}

int tg_local_writers_match(const tg_local_writers *w, const tg_review_request *req)
{
    if (!w)
        return 0;
    for (size_t i = 0; i < w->n; i++) {
        const tg_local_writer *e = &w->entries[i];
        if (e->group ? tg_review_user_in_group(req, e->name)
                     : (req->user_name && strcmp(req->user_name, e->name) == 0))
            return 1;
    }
    return 0;
}
