/* watch.h - the Kubernetes watch stream as events.
 *
 * A watch response is a chunked stream of JSON objects, one per line:
 *   {"type":"ADDED","object":{...}}\n
 * The network hands it over in arbitrary pieces: an event split across
 * reads, several events in one read. The parser buffers one line at a time
 * (bounded: a line longer than max_line is an error, not an allocation) and
 * calls back once per complete event. Pure: no I/O, no clock. */
#ifndef TG_KUBE_WATCH_H
#define TG_KUBE_WATCH_H

#include <stddef.h>
#include <json-c/json.h>

#define TG_WATCH_DEFAULT_MAX_LINE (16u << 20)   /* one object; etcd's limit is 1.5 MiB */

typedef enum tg_watch_type {
    TG_WATCH_ADDED,
    TG_WATCH_MODIFIED,
    TG_WATCH_DELETED,
    TG_WATCH_BOOKMARK,     /* object carries only metadata.resourceVersion */
    TG_WATCH_ERROR         /* object is a metav1.Status; code 410 means "relist" */
} tg_watch_type;

typedef struct tg_watch_event {
    tg_watch_type type;
    json_object *object;   /* borrowed for the callback; json_object_get() to keep it */
} tg_watch_event;

/* Return 0 to go on, non-zero to stop: feed() then returns that value
 * without looking at the rest of the input. */
typedef int (*tg_watch_event_cb)(const tg_watch_event *ev, void *data);

typedef struct tg_watch_parser {
    tg_watch_event_cb on_event;
    void *data;
    size_t max_line;
    char *line;            /* the incomplete line so far */
    size_t len, cap;
    char err[160];         /* why feed() returned -1 */
} tg_watch_parser;

/* max_line 0 means TG_WATCH_DEFAULT_MAX_LINE. */
void tg_watch_parser_init(tg_watch_parser *p, size_t max_line, tg_watch_event_cb on_event, void *data);

/* Feed the next bytes of the stream. Returns 0, the callback's non-zero
 * value, or -1 with p->err set (an over-long line, a line that is not a
 * watch event). After a non-zero return the stream is unusable: reset it
 * (the caller restarts the watch). */
int tg_watch_parser_feed(tg_watch_parser *p, const char *bytes, size_t n);

/* The stream ended: a pending last line without '\n' is dispatched if it
 * is a complete event. Returns 0, the callback's value, or -1 when a
 * truncated event was left over (p->err says so). */
int tg_watch_parser_finish(tg_watch_parser *p);

/* Drop any buffered partial line (the memory is kept for reuse). */
void tg_watch_parser_reset(tg_watch_parser *p);

void tg_watch_parser_free(tg_watch_parser *p);

const char *tg_watch_type_name(tg_watch_type t);

/* The HTTP-ish code of an ERROR event's Status object (410 for "too old
 * resource version"), 0 when absent. */
int tg_watch_status_code(json_object *status);

#endif
