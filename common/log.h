/* log.h - structured logs: one JSON object per line on stderr (or any fd).
 *
 * Each line is built in a local buffer and written with a single write(2), so
 * lines from several threads never interleave. Values are escaped for JSON;
 * invalid UTF-8 becomes U+FFFD. Callers must not pass secrets (nonces, keys,
 * tokens, signatures, CSRs): the logger cannot tell them apart from names. */
#ifndef TG_COMMON_LOG_H
#define TG_COMMON_LOG_H

#include <stddef.h>
#include <stdint.h>

typedef enum tg_log_level {
    TG_LOG_DEBUG = 0,
    TG_LOG_INFO,
    TG_LOG_WARN,
    TG_LOG_ERROR,
} tg_log_level;

typedef enum tg_log_field_type {
    TG_LOG_FIELD_STR = 0,   /* NULL is written as JSON null */
    TG_LOG_FIELD_INT,
    TG_LOG_FIELD_BOOL,
} tg_log_field_type;

typedef struct tg_log_field {
    const char *key;
    tg_log_field_type type;
    const char *s;
    int64_t i;
} tg_log_field;

#define TG_LOG_STR(k, v) ((tg_log_field){.key = (k), .type = TG_LOG_FIELD_STR, .s = (v)})
#define TG_LOG_INT(k, v) ((tg_log_field){.key = (k), .type = TG_LOG_FIELD_INT, .i = (int64_t)(v)})
#define TG_LOG_BOOL(k, v) ((tg_log_field){.key = (k), .type = TG_LOG_FIELD_BOOL, .i = !!(v)})

/* Longest line written; longer values are cut (at a UTF-8 boundary) and the
 * line gets "truncated":true. */
#define TG_LOG_LINE_MAX 8192

/* Process-wide settings; call before starting threads. */
void tg_log_set_level(tg_log_level min_level);

/* --log-level's value: set the level by name. 0, or -1 (unchanged) for an
 * unknown name. */
int tg_log_set_level_named(const char *name);
void tg_log_set_fd(int fd);
/* "debug" | "info" | "warn" | "error" -> level; -1 when unknown. */
int tg_log_level_parse(const char *name, tg_log_level *out);
int tg_log_enabled(tg_log_level level);

/* Format one line (with the trailing newline) into buf, which must hold
 * TG_LOG_LINE_MAX bytes. ts_ms is milliseconds since the epoch. Returns the
 * length. Pure: exposed for tests and for callers that batch. */
size_t tg_log_format(char *buf, int64_t ts_ms, tg_log_level level, const char *msg,
                     const tg_log_field *fields, size_t nfields);

/* Batching, per thread, for event loops that log a line per request: after
 * tg_log_batch_begin() the calling thread's lines collect in a buffer that
 * is written when it would pass PIPE_BUF (so each write(2) still holds whole
 * lines only and stays atomic on a pipe), by tg_log_flush(), and at once for
 * an error line. The loop must call tg_log_flush() before it blocks (a
 * uv_prepare_t), so a line waits at most for the rest of one loop turn.
 * tg_log_batch_end() flushes and returns the thread to one write per line.
 *
 * A flushed batch is written by a writer thread, not by the flushing one, so
 * an event loop never waits on a slow log pipe or disk; the queue is bounded
 * (256 KB: the flushing thread waits when it is full). An error line, and
 * tg_log_batch_end(), return only once everything queued is written.
 * tg_log_sync() waits for that from any thread. */
void tg_log_batch_begin(void);
void tg_log_flush(void);
void tg_log_batch_end(void);
void tg_log_sync(void);

/* Write one line if level is enabled. */
void tg_log_fields(tg_log_level level, const char *msg, const tg_log_field *fields, size_t nfields);

/* tg_log(TG_LOG_INFO, "listening", TG_LOG_STR("addr", a), TG_LOG_INT("port", p)); */
#define tg_log(level, msg, ...)                                                         \
    tg_log_fields((level), (msg), (const tg_log_field[]){__VA_ARGS__},                  \
                  sizeof((const tg_log_field[]){__VA_ARGS__}) / sizeof(tg_log_field))
#define tg_log_msg(level, msg) tg_log_fields((level), (msg), NULL, 0)

#endif
