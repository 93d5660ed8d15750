/* log.c - JSON-lines logger: one line, one write(2); batched lines through a writer thread. */
#include "log.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static tg_log_level min_level = TG_LOG_INFO;
static int log_fd = 2;

static const char *const level_names[] = {"debug", "info", "warn", "error"};

void tg_log_set_level(tg_log_level level) { min_level = level; }

int tg_log_set_level_named(const char *name)
{
    tg_log_level l;

    if (tg_log_level_parse(name, &l) != 0)
        return -1;
    tg_log_set_level(l);
    return 0;
}
void tg_log_set_fd(int fd) { log_fd = fd; }
int tg_log_enabled(tg_log_level level) { return level >= min_level; }

int tg_log_level_parse(const char *name, tg_log_level *out)
{
    for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++)
        if (strcmp(name, level_names[i]) == 0) {
            *out = (tg_log_level)i;
            return 0;
        }
    return -1;
}

/* A bounded writer. Space for the closing "}\n" plus the truncation marker is
 * reserved up front so a cut line is still valid JSON. */
#define LINE_RESERVE sizeof(",\"truncated\":true}\n")

typedef struct line {
    char *buf;
    size_t len;
    size_t cap;          /* usable bytes, reserve excluded */
    int truncated;
} line;

static void put_raw(line *l, const char *s, size_t n)
{
    if (l->len + n > l->cap) {
        l->truncated = 1;
        return;
    }
    memcpy(l->buf + l->len, s, n);
    l->len += n;
}

/* Length of the valid UTF-8 sequence at s (1-4), or 0 when invalid. */
static size_t utf8_seq_len(const unsigned char *s, size_t avail)
{
    unsigned char c = s[0];
    size_t n;
    uint32_t cp;

    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) { n = 2; cp = c & 0x1f; }
    else if (c >= 0xe0 && c <= 0xef) { n = 3; cp = c & 0x0f; }
    else if (c >= 0xf0 && c <= 0xf4) { n = 4; cp = c & 0x07; }
    else return 0;
    if (avail < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    /* overlong forms, surrogates, beyond U+10FFFF */
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

/* A JSON string literal. Never cuts inside an escape or a UTF-8 sequence, and
 * always closes the quote: one byte is held back for it. */
static void put_string(line *l, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;
    size_t avail = strlen(s);

    if (l->truncated || l->len + 2 > l->cap) {
        l->truncated = 1;
        return;
    }
    l->buf[l->len++] = '"';
    l->cap -= 1;
    while (avail > 0 && !l->truncated) {
        char esc[8];
        size_t n, run;

        /* Printable ASCII needs no escape: copy a run of it at once. */
        for (run = 0; run < avail && p[run] >= 0x20 && p[run] < 0x7f && p[run] != '"' &&
                      p[run] != '\\';
             run++)
            ;
        if (run > 0) {
            if (l->len + run > l->cap) {
                /* cut at the limit, as byte-by-byte copying would */
                size_t room = l->cap - l->len;
                memcpy(l->buf + l->len, p, room);
                l->len += room;
                l->truncated = 1;
                break;
            }
            memcpy(l->buf + l->len, p, run);
            l->len += run;
            p += run, avail -= run;
            continue;
        }
        n = utf8_seq_len(p, avail);

        if (n == 0) {
            put_raw(l, "\\ufffd", 6);           /* invalid byte */
            p++, avail--;
            continue;
        }
        if (n > 1) {
            put_raw(l, (const char *)p, n);
        } else if (*p == '"' || *p == '\\') {
            esc[0] = '\\', esc[1] = (char)*p;
            put_raw(l, esc, 2);
        } else if (*p == '\n') {
            put_raw(l, "\\n", 2);
        } else if (*p == '\r') {
            put_raw(l, "\\r", 2);
        } else if (*p == '\t') {
            put_raw(l, "\\t", 2);
        } else if (*p < 0x20 || *p == 0x7f) {
            memcpy(esc, "\\u00", 4);
            esc[4] = hex[*p >> 4], esc[5] = hex[*p & 0xf];
            put_raw(l, esc, 6);
        } else {
            put_raw(l, (const char *)p, 1);
        }
        p += n, avail -= n;
    }
    l->cap += 1;
    l->buf[l->len++] = '"';
}

/* Decimal, by hand: this runs for every admission line and snprintf's
 * format interpretation cost more than the rest of the field. */
static void put_fmt_int(line *l, int64_t v)
{
    char tmp[24];
    char *p = tmp + sizeof(tmp);
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--p = '-';
    put_raw(l, p, (size_t)(tmp + sizeof(tmp) - p));
}

/* "YYYY-MM-DDTHH:MM:SS" of a second, remembered per thread: gmtime_r and
 * the formatting run once a second instead of once a line. */
static size_t format_second(char *out, size_t out_len, time_t secs)
{
    static __thread time_t cached_secs = (time_t)-1;
    static __thread char cached[32];
    static __thread size_t cached_len;

    if (secs != cached_secs) {
        struct tm tm;
        int n;

        gmtime_r(&secs, &tm);
        n = snprintf(cached, sizeof(cached), "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900,
                     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
        if (n < 0 || (size_t)n >= sizeof(cached))
            n = 0;
        cached_len = (size_t)n;
        cached_secs = secs;
    }
    if (cached_len >= out_len)
        return 0;
    memcpy(out, cached, cached_len);
    return cached_len;
}

size_t tg_log_format(char *buf, int64_t ts_ms, tg_log_level level, const char *msg,
                     const tg_log_field *fields, size_t nfields)
{
    line l = {.buf = buf, .len = 0, .cap = TG_LOG_LINE_MAX - LINE_RESERVE - 1};
    char ts[64];
    /* floor division: a time before 1970 still gets milliseconds 0..999 */
    int64_t ms = (ts_ms % 1000 + 1000) % 1000;
    time_t secs = (time_t)((ts_ms - ms) / 1000);
    size_t n = format_second(ts, sizeof(ts) - 5, secs);

    ts[n++] = '.';
    ts[n++] = (char)('0' + ms / 100);
    ts[n++] = (char)('0' + ms / 10 % 10);
    ts[n++] = (char)('0' + ms % 10);
    ts[n++] = 'Z';
    put_raw(&l, "{\"ts\":\"", 7);
    put_raw(&l, ts, n);
    put_raw(&l, "\",\"level\":\"", 11);
    if ((unsigned)level > TG_LOG_ERROR)
        level = TG_LOG_ERROR;
    put_raw(&l, level_names[level], strlen(level_names[level]));
    put_raw(&l, "\",\"msg\":", 8);
    put_string(&l, msg ? msg : "");

    for (size_t i = 0; i < nfields && !l.truncated; i++) {
        const tg_log_field *f = &fields[i];
        size_t mark = l.len;

        put_raw(&l, ",", 1);
        put_string(&l, f->key ? f->key : "");
        put_raw(&l, ":", 1);
        if (l.truncated) {
            l.len = mark;             /* no room for the key: drop the field */
            break;
        }
        switch (f->type) {
        case TG_LOG_FIELD_STR:
            if (f->s)
                put_string(&l, f->s); /* cut but closed when too long */
            else
                put_raw(&l, "null", 4);
            break;
        case TG_LOG_FIELD_INT:
            put_fmt_int(&l, f->i);
            break;
        case TG_LOG_FIELD_BOOL:
            if (f->i)
                put_raw(&l, "true", 4);
            else
                put_raw(&l, "false", 5);
            break;
        }
        if (l.truncated && f->type != TG_LOG_FIELD_STR)
            l.len = mark;
        else if (l.truncated && !f->s)
            l.len = mark;
    }
    /* The reserve always has room for the tail. */
    if (l.truncated) {
        static const char tail[] = ",\"truncated\":true}\n";
        memcpy(l.buf + l.len, tail, sizeof(tail) - 1);
        l.len += sizeof(tail) - 1;
    } else {
        memcpy(l.buf + l.len, "}\n", 2);
        l.len += 2;
    }
    l.buf[l.len] = '\0';
    return l.len;
}

static void write_all(const char *buf, size_t len)
{
    size_t off = 0;

    /* A short write is finished rather than lost. */
    while (off < len) {
        ssize_t n = write(log_fd, buf + off, len - off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        off += (size_t)n;
    }
}

/* Batched lines are written by one writer thread (see log.h): a write(2)
 * that blocks - a pipe to a slow container runtime, a disk in writeback -
 * then stalls that thread instead of the event loop that serves requests (a
 * one-thread webhook otherwise holds every request behind it). The queue is
 * a bounded ring: when it is full the flushing thread waits, as a blocking
 * write would have made it. Without the thread (it could not start), the
 * flushing thread writes itself. */
#define QUEUE_BYTES (256 * 1024)

static struct {
    pthread_once_t once;
    pthread_mutex_t mu;
    pthread_cond_t more;           /* queued bytes for the writer */
    pthread_cond_t room;           /* bytes written: room for producers, progress for tg_log_sync */
    int running;
    size_t head, len;              /* next byte to write; bytes queued (incl. the write in flight) */
    char ring[QUEUE_BYTES];
} queue = {.once = PTHREAD_ONCE_INIT, .mu = PTHREAD_MUTEX_INITIALIZER, .more = PTHREAD_COND_INITIALIZER,
           .room = PTHREAD_COND_INITIALIZER};

/* Copy n queued bytes from offset at into out (the ring wraps). */
static void ring_copy_out(size_t at, char *out, size_t n)
{
    size_t first = QUEUE_BYTES - at < n ? QUEUE_BYTES - at : n;

    memcpy(out, queue.ring + at, first);
    memcpy(out + first, queue.ring, n - first);
}

/* How much of buf[0..n) to write at once: whole lines, at most PIPE_BUF
 * bytes so a pipe keeps them atomic; a single longer line goes whole. */
static size_t whole_lines(const char *buf, size_t n)
{
    size_t cut = 0;

    for (size_t i = 0; i < n; i++) {
        if (buf[i] != '\n')
            continue;
        if (i + 1 > PIPE_BUF && cut > 0)
            break;
        cut = i + 1;
        if (cut >= PIPE_BUF)
            break;
    }
    return cut > 0 ? cut : n;
}

/* After waking on an empty queue the writer waits this long for more lines
 * before it writes: under load, lines come a few per loop turn, and each
 * wake-up (a futex call for the producer, a context switch) and each
 * write(2) cost several microseconds, as much as 4% of an admission's CPU
 * when every turn's line went on its own. A line then reaches the fd at
 * most this much later; tg_log_sync still waits for it. */
#define GATHER_NS (2 * 1000 * 1000)

static void *writer_main(void *arg)
{
    static char out[TG_LOG_LINE_MAX];
    const struct timespec gather = {0, GATHER_NS};

    (void)arg;
    pthread_mutex_lock(&queue.mu);
    for (;;) {
        size_t n;

        if (queue.len == 0) {
            while (queue.len == 0)
                pthread_cond_wait(&queue.more, &queue.mu);
            pthread_mutex_unlock(&queue.mu);
            nanosleep(&gather, NULL);
            pthread_mutex_lock(&queue.mu);
        }
        n = queue.len < sizeof(out) ? queue.len : sizeof(out);
        ring_copy_out(queue.head, out, n);
        n = whole_lines(out, n);
        pthread_mutex_unlock(&queue.mu);
        write_all(out, n);
        pthread_mutex_lock(&queue.mu);
        queue.len -= n;
        /* Empty: start again at the ring's first byte. Lines then reuse the
         * same few pages, as many as the longest backlog took, instead of
         * walking the whole ring and keeping all of its 256 KiB resident
         * after the first busy minute. */
        queue.head = queue.len == 0 ? 0 : (queue.head + n) % QUEUE_BYTES;
        pthread_cond_broadcast(&queue.room);
    }
    return NULL;
}

static void start_writer(void)
{
    pthread_t t;
    pthread_attr_t attr;

    if (pthread_attr_init(&attr) != 0)
        return;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    queue.running = pthread_create(&t, &attr, writer_main, NULL) == 0;
    pthread_attr_destroy(&attr);
}

/* Queue whole lines for the writer thread (or write them, without one). */
static void enqueue(const char *buf, size_t len)
{
    pthread_once(&queue.once, start_writer);
    if (!queue.running || len > QUEUE_BYTES) {
        write_all(buf, len);
        return;
    }
    pthread_mutex_lock(&queue.mu);
    while (QUEUE_BYTES - queue.len < len)
        pthread_cond_wait(&queue.room, &queue.mu);
    for (size_t off = 0; off < len;) {
        size_t at = (queue.head + queue.len) % QUEUE_BYTES;
        size_t n = QUEUE_BYTES - at < len - off ? QUEUE_BYTES - at : len - off;
        memcpy(queue.ring + at, buf + off, n);
        queue.len += n;
        off += n;
    }
    pthread_cond_signal(&queue.more);
    pthread_mutex_unlock(&queue.mu);
}

void tg_log_sync(void)
{
    if (!queue.running)
        return;
    pthread_mutex_lock(&queue.mu);
    while (queue.len > 0)
        pthread_cond_wait(&queue.room, &queue.mu);
    pthread_mutex_unlock(&queue.mu);
}

/* The calling thread's batch (see log.h). PIPE_BUF: one write(2) of it
 * stays atomic on a pipe. */
static __thread struct {
    int on;
    size_t len;
    char buf[PIPE_BUF];
} batch;

void tg_log_batch_begin(void)
{
    batch.on = 1;
}

void tg_log_flush(void)
{
    if (batch.len > 0) {
        enqueue(batch.buf, batch.len);
        batch.len = 0;
    }
}

void tg_log_batch_end(void)
{
    tg_log_flush();
    tg_log_sync();
    batch.on = 0;
}

void tg_log_fields(tg_log_level level, const char *msg, const tg_log_field *fields, size_t nfields)
{
    char buf[TG_LOG_LINE_MAX];
    struct timespec now;
    size_t len;

    if (!tg_log_enabled(level))
        return;
    clock_gettime(CLOCK_REALTIME, &now);
    len = tg_log_format(buf, (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000, level, msg,
                        fields, nfields);
    if (!batch.on) {
        /* One write(2) per line: pipes and ttys keep lines whole up to
         * PIPE_BUF. */
        write_all(buf, len);
        return;
    }
    if (batch.len + len > sizeof(batch.buf))
        tg_log_flush();
    if (len > sizeof(batch.buf)) {
        enqueue(buf, len);          /* after the batch, in order */
    } else {
        memcpy(batch.buf + batch.len, buf, len);
        batch.len += len;
    }
    if (level >= TG_LOG_ERROR) {
        tg_log_flush();             /* the process may be about to go: */
        tg_log_sync();              /* written before the call returns */
    }
}
