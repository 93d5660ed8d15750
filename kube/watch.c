/* watch.c - newline-delimited watch events, fed in arbitrary pieces. */
#include "kube/watch.h"
#include "kube/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TG_WATCH_KEEP_BUFFER (64u << 10)

static const char *const type_names[] = {
    [TG_WATCH_ADDED] = "ADDED",
    [TG_WATCH_MODIFIED] = "MODIFIED",
    [TG_WATCH_DELETED] = "DELETED",
    [TG_WATCH_BOOKMARK] = "BOOKMARK",
    [TG_WATCH_ERROR] = "ERROR",
};

const char *tg_watch_type_name(tg_watch_type t)
{
    if ((unsigned)t < sizeof(type_names) / sizeof(type_names[0]))
        return type_names[t];
    return "?";
}

static int type_from_name(const char *s, tg_watch_type *out)
{
    for (size_t i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++) {
        if (strcmp(s, type_names[i]) == 0) {
            *out = (tg_watch_type)i;
            return 0;
        }
    }
    return -1;
}

void tg_watch_parser_init(tg_watch_parser *p, size_t max_line, tg_watch_event_cb on_event, void *data)
{
    memset(p, 0, sizeof(*p));
    p->max_line = max_line ? max_line : TG_WATCH_DEFAULT_MAX_LINE;
    p->on_event = on_event;
    p->data = data;
}

void tg_watch_parser_reset(tg_watch_parser *p)
{
    p->len = 0;
    p->err[0] = '\0';
}

void tg_watch_parser_free(tg_watch_parser *p)
{
    free(p->line);
    p->line = NULL;
    p->len = p->cap = 0;
}

int tg_watch_status_code(json_object *status)
{
    json_object *code;
    if (status == NULL || !json_object_object_get_ex(status, "code", &code) ||
        !json_object_is_type(code, json_type_int))
        return 0;
    int64_t v = json_object_get_int64(code);
    return v > 0 && v < 1000 ? (int)v : 0;
}

static int blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            return 0;
    return 1;
}

/* One complete line (without its '\n') -> one event. */
static int dispatch_line(tg_watch_parser *p, const char *s, size_t n)
{
    if (blank(s, n))
        return 0;   /* keep-alive newlines are harmless */

    char jerr[96];
    json_object *root = tg_json_parse(s, n, jerr, sizeof(jerr));
    if (root == NULL) {
        snprintf(p->err, sizeof(p->err), "watch event is not JSON: %s", jerr);
        return -1;
    }
    int rc = -1;
    tg_watch_event ev;
    const char *type = tg_json_string(root, "type");
    json_object *obj;
    if (type == NULL) {
        snprintf(p->err, sizeof(p->err), "watch event has no string \"type\"");
    } else if (type_from_name(type, &ev.type) != 0) {
        snprintf(p->err, sizeof(p->err), "watch event has unknown type \"%.40s\"", type);
    } else if (!json_object_object_get_ex(root, "object", &obj) ||
               !json_object_is_type(obj, json_type_object)) {
        snprintf(p->err, sizeof(p->err), "%s watch event has no \"object\"", type_names[ev.type]);
    } else {
        ev.object = obj;
        rc = p->on_event(&ev, p->data);
    }
    json_object_put(root);
    return rc;
}

static int append(tg_watch_parser *p, const char *s, size_t n)
{
    if (n > p->max_line - p->len) {
        snprintf(p->err, sizeof(p->err), "watch event longer than %zu bytes", p->max_line);
        return -1;
    }
    if (p->len + n > p->cap) {
        size_t cap = p->cap ? p->cap : (p->max_line < 4096 ? p->max_line : 4096);
        while (cap < p->len + n)
            cap = cap > p->max_line / 2 ? p->max_line : cap * 2;
        char *line = realloc(p->line, cap);
        if (line == NULL) {
            snprintf(p->err, sizeof(p->err), "out of memory buffering a watch event");
            return -1;
        }
        p->line = line;
        p->cap = cap;
    }
    memcpy(p->line + p->len, s, n);
    p->len += n;
    return 0;
}

int tg_watch_parser_feed(tg_watch_parser *p, const char *bytes, size_t n)
{
    while (n > 0) {
        const char *nl = memchr(bytes, '\n', n);
        if (nl == NULL)
            return append(p, bytes, n);

        size_t part = (size_t)(nl - bytes);
        int rc;
        if (p->len == 0) {
            /* The common case: a whole event inside this read, no copy. */
            if (part > p->max_line) {
                snprintf(p->err, sizeof(p->err), "watch event longer than %zu bytes", p->max_line);
                return -1;
            }
            rc = dispatch_line(p, bytes, part);
        } else {
            if (append(p, bytes, part) != 0)
                return -1;
            rc = dispatch_line(p, p->line, p->len);
            p->len = 0;
            if (p->cap > TG_WATCH_KEEP_BUFFER) {
                /* One big object must not pin megabytes for the watch's lifetime. */
                free(p->line);
                p->line = NULL;
                p->cap = 0;
            }
        }
        if (rc != 0)
            return rc;
        bytes = nl + 1;
        n -= part + 1;
    }
    return 0;
}

int tg_watch_parser_finish(tg_watch_parser *p)
{
    /* A last event without its newline still counts; a truncated one does not. */
    if (p->len == 0)
        return 0;
    int rc = dispatch_line(p, p->line, p->len);
    p->len = 0;
    if (rc == -1) {
        char why[sizeof(p->err)];
        memcpy(why, p->err, sizeof(why));
        snprintf(p->err, sizeof(p->err), "watch stream ended inside an event: %.120s", why);
    }
    return rc;
}
