/* json.c - strict JSON parsing with json-c, and small lookup helpers. */
#include "json.h"
#include "errbuf.h"

#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* RFC 8259 section 6, checked by hand because json-c in strict mode still
 * takes "1.", "00", "-01" and Infinity, and single-quoted keys; the
 * strictness pass below refuses them by checking every bare token. */
static size_t skip_digits(const char *s, size_t i, size_t len)
{
    while (i < len && s[i] >= '0' && s[i] <= '9')
        i++;
    return i;
}

static int number_valid(const char *s, size_t len)
{
    size_t i = 0, j;

    if (i < len && s[i] == '-')
        i++;
    if (i < len && s[i] == '0')
        i++;
    else if (i < len && s[i] >= '1' && s[i] <= '9')
        i = skip_digits(s, i + 1, len);
    else
        return 0;
    if (i < len && s[i] == '.') {
        j = skip_digits(s, i + 1, len);
        if (j == i + 1)
            return 0;          /* "1." */
        i = j;
    }
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < len && (s[i] == '+' || s[i] == '-'))
            i++;
        j = skip_digits(s, i, len);
        if (j == i)
            return 0;          /* "1e" */
        i = j;
    }
    return i == len;
}

static int is_bare_char(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           c == '-' || c == '+' || c == '.';
}

/* A bare token (number, true, false, null) of at most 63 characters. */
static int bare_token_valid(const char *tok, size_t len)
{
    if (len >= 64)
        return 0;
    if ((len == 4 && (memcmp(tok, "true", 4) == 0 || memcmp(tok, "null", 4) == 0)) ||
        (len == 5 && memcmp(tok, "false", 5) == 0))
        return 1;
    return number_valid(tok, len);
}

static int is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Length of the well-formed UTF-8 sequence at s (RFC 3629, table 3-7 of
 * Unicode), or 0. json-c's own check lets overlong forms ("\xc0\xaf" for
 * '/') and UTF-16 surrogates through, which other decoders read differently. */
static size_t utf8_sequence(const unsigned char *s, size_t avail)
{
    unsigned char c = s[0];
    size_t n;
    unsigned char lo = 0x80, hi = 0xbf;

    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4;
    else
        return 0;
    if (avail < n)
        return 0;
    if (c == 0xe0)
        lo = 0xa0;
    else if (c == 0xed)
        hi = 0x9f;
    else if (c == 0xf0)
        lo = 0x90;
    else if (c == 0xf4)
        hi = 0x8f;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return n;
}

/* ---- the keys seen so far, for duplicate detection ----
 *
 * One open-addressing hash set for the whole document, keyed by (object
 * number, key bytes): every object gets a number when it opens, so keys of
 * different objects never collide and nothing is removed when one closes.
 * Linear in the number of keys even for a hostile object with 100k of them.
 * Keys point into the text; the rare key with an escape is decoded by json-c
 * (so "\u0061" equals "a") into a string object kept until the pass ends. */
typedef struct key_entry {
    const char *p;                 /* NULL: free slot */
    size_t len;
    uint32_t object;
    uint32_t hash;
} key_entry;

typedef struct key_set {
    key_entry *slots;
    size_t cap;                    /* power of two */
    size_t used;
    key_entry small[128];          /* no allocation for ordinary documents */
    json_object **decoded;         /* decoded escaped keys, freed at the end */
    size_t ndecoded, decoded_cap;
    json_tokener *tok;             /* created on the first escaped key */
} key_set;

static uint32_t key_hash(uint32_t object, const char *p, size_t len)
{
    uint32_t h = 2166136261u ^ object;   /* FNV-1a */

    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)p[i]) * 16777619u;
    return h;
}

static void key_set_init(key_set *ks)
{
    memset(ks->small, 0, sizeof(ks->small));
    ks->slots = ks->small;
    ks->cap = sizeof(ks->small) / sizeof(ks->small[0]);
    ks->used = 0;
    ks->decoded = NULL;
    ks->ndecoded = ks->decoded_cap = 0;
    ks->tok = NULL;
}

static void key_set_dispose(key_set *ks)
{
    if (ks->slots != ks->small)
        free(ks->slots);
    for (size_t i = 0; i < ks->ndecoded; i++)
        json_object_put(ks->decoded[i]);
    free(ks->decoded);
    if (ks->tok)
        json_tokener_free(ks->tok);
}

static int key_set_grow(key_set *ks)
{
    size_t cap = ks->cap * 2;
    key_entry *slots = calloc(cap, sizeof(*slots));

    if (!slots)
        return -1;
    for (size_t i = 0; i < ks->cap; i++) {
        key_entry *e = &ks->slots[i];
        size_t j;

        if (!e->p)
            continue;
        for (j = e->hash & (cap - 1); slots[j].p; j = (j + 1) & (cap - 1))
            ;
        slots[j] = *e;
    }
    if (ks->slots != ks->small)
        free(ks->slots);
    ks->slots = slots;
    ks->cap = cap;
    return 0;
}

/* 1 added, 0 already there, -1 out of memory. */
static int key_set_add(key_set *ks, uint32_t object, const char *p, size_t len)
{
    uint32_t h = key_hash(object, p, len);
    size_t j;

    if ((ks->used + 1) * 2 > ks->cap && key_set_grow(ks) != 0)
        return -1;
    for (j = h & (ks->cap - 1); ks->slots[j].p; j = (j + 1) & (ks->cap - 1)) {
        const key_entry *e = &ks->slots[j];
        if (e->hash == h && e->object == object && e->len == len && memcmp(e->p, p, len) == 0)
            return 0;
    }
    ks->slots[j] = (key_entry){.p = p, .len = len, .object = object, .hash = h};
    ks->used++;
    return 1;
}

/* The key text[start..end] (quotes included) with its escapes decoded, as
 * json-c will store it: a C string, cut at a "\u0000". */
static const char *decode_key(key_set *ks, const char *text, size_t start, size_t end, size_t *len)
{
    json_object *key;
    const char *k;

    if (!ks->tok && !(ks->tok = json_tokener_new_ex(2)))
        return NULL;
    if (ks->ndecoded == ks->decoded_cap) {
        size_t cap = ks->decoded_cap ? ks->decoded_cap * 2 : 8;
        json_object **d = realloc(ks->decoded, cap * sizeof(*d));
        if (!d)
            return NULL;
        ks->decoded = d;
        ks->decoded_cap = cap;
    }
    json_tokener_reset(ks->tok);
    key = json_tokener_parse_ex(ks->tok, text + start, (int)(end - start + 1));
    k = key ? json_object_get_string(key) : NULL;
    if (!k) {
        json_object_put(key);
        return NULL;
    }
    ks->decoded[ks->ndecoded++] = key;
    *len = strlen(k);
    return k;
}

/* What a byte inside a string needs: most need nothing, and the pass below
 * skips runs of those with one table lookup each. */
enum { STR_PLAIN = 0, STR_END, STR_ESCAPE, STR_CONTROL, STR_UTF8 };

static const unsigned char string_class[256] = {
    [0x00 ... 0x1f] = STR_CONTROL,
    ['"'] = STR_END,
    ['\\'] = STR_ESCAPE,
    [0x80 ... 0xff] = STR_UTF8,
};

/* json-c, even in strict mode, accepts what a strict reader must not:
 * duplicate keys (the last one silently wins, while Go's decoder and others
 * may pick another), raw control characters inside strings, ill-formed UTF-8
 * (see above), and the bare tokens and quotes noted at number_valid().
 * It has no flag for these, so this second pass walks the text json-c has
 * already accepted - hence known to be well-formed - tracking the keys of
 * each open object. */
static int check_strictness(const char *text, size_t len, char *err, size_t err_len)
{
    /* per open container: its object number, or UINT32_MAX for an array */
    uint32_t open[TG_DOC_MAX_DEPTH + 2];
    uint32_t objects = 0;
    int depth = 0;
    int rc = -1;
    key_set ks;

    key_set_init(&ks);
    for (size_t i = 0; i < len; i++) {
        char c = text[i];

        if (c == '{' || c == '[') {
            if (depth >= TG_DOC_MAX_DEPTH + 1) {   /* json-c enforced it already */
                tg_errf(err, err_len, "nesting deeper than %d at byte offset %zu",
                        TG_DOC_MAX_DEPTH, i);
                goto out;
            }
            open[depth++] = c == '{' ? objects++ : UINT32_MAX;
        } else if (c == '}' || c == ']') {
            if (depth > 0)
                depth--;
        } else if (is_bare_char(c)) {
            size_t start = i;

            while (i + 1 < len && is_bare_char(text[i + 1]))
                i++;
            if (!bare_token_valid(text + start, i - start + 1)) {
                tg_errf(err, err_len, "invalid number or literal at byte offset %zu", start);
                goto out;
            }
        } else if (c == '\'') {
            tg_errf(err, err_len, "single-quoted string at byte offset %zu", i);
            goto out;
        } else if (c == '"') {
            size_t start = i, end;
            size_t next;
            int escaped = 0;

            for (end = i + 1; end < len; end++) {
                const unsigned char *u8 = (const unsigned char *)text;
                unsigned char u, cls;
                size_t n;

                while (end < len && string_class[u8[end]] == STR_PLAIN)
                    end++;
                if (end == len)
                    break;
                u = u8[end];
                cls = string_class[u];
                if (cls == STR_END)
                    break;
                if (cls == STR_ESCAPE) {
                    escaped = 1;
                    end++;
                } else if (cls == STR_CONTROL) {
                    tg_errf(err, err_len,
                            "raw control character 0x%02x in a string at byte offset %zu "
                            "(must be escaped)", u, end);
                    goto out;
                } else {
                    n = utf8_sequence((const unsigned char *)text + end, len - end);
                    if (n == 0) {
                        tg_errf(err, err_len, "invalid utf-8 at byte offset %zu", end);
                        goto out;
                    }
                    end += n - 1;
                }
            }
            i = end;
            for (next = end + 1; next < len && is_ws(text[next]); next++)
                ;
            if (depth > 0 && open[depth - 1] != UINT32_MAX && next < len && text[next] == ':') {
                const char *k = text + start + 1;
                size_t klen = end - start - 1;
                int added;

                if (escaped && !(k = decode_key(&ks, text, start, end, &klen))) {
                    tg_errf(err, err_len, "cannot decode key at byte offset %zu", start);
                    goto out;
                }
                added = key_set_add(&ks, open[depth - 1], k, klen);
                if (added < 0) {
                    tg_errf(err, err_len, "out of memory");
                    goto out;
                }
                if (added == 0) {
                    tg_errf(err, err_len, "duplicate key \"%.*s\" at byte offset %zu",
                            (int)(klen < 64 ? klen : 64), k, start);
                    goto out;
                }
            }
        }
    }
    rc = 0;
out:
    key_set_dispose(&ks);
    return rc;
}

/* A tokener per thread, reused: json_tokener_new_ex() allocates its parse
 * stack (TG_DOC_MAX_DEPTH frames) and string buffer each time, which cost
 * as much as the strictness pass. Its string buffer keeps the size of the
 * longest string it parsed, so after a large document it is freed instead. */
#define TOKENER_KEEP_MAX_DOC (64u << 10)

static pthread_key_t tokener_key;
static pthread_once_t tokener_once = PTHREAD_ONCE_INIT;
static int tokener_key_ok;
static __thread json_tokener *tokener_cached;

static void on_thread_exit(void *tok)
{
    json_tokener_free(tok);
    tokener_cached = NULL;
}

static void tokener_key_create(void)
{
    tokener_key_ok = pthread_key_create(&tokener_key, on_thread_exit) == 0;
}

static json_tokener *tokener_take(void)
{
    json_tokener *tok = tokener_cached;

    if (tok) {
        tokener_cached = NULL;
        if (tokener_key_ok)
            pthread_setspecific(tokener_key, NULL);
        json_tokener_reset(tok);
        return tok;
    }
    tok = json_tokener_new_ex(TG_DOC_MAX_DEPTH);
    if (tok)
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    return tok;
}

static void tokener_give(json_tokener *tok, size_t doc_len)
{
    pthread_once(&tokener_once, tokener_key_create);
    if (tokener_cached || doc_len > TOKENER_KEEP_MAX_DOC || !tokener_key_ok ||
        pthread_setspecific(tokener_key, tok) != 0) {
        json_tokener_free(tok);
        return;
    }
    tokener_cached = tok;
}

json_object *tg_json_parse(const char *text, size_t len, char *err, size_t err_len)
{
    json_tokener *tok;
    json_object *obj;
    enum json_tokener_error jerr;
    size_t end;

    tg_errf(err, err_len, "no error");
    if (text == NULL) {
        tg_errf(err, err_len, "no input");
        return NULL;
    }
    if (len > TG_DOC_MAX_BYTES || len > INT_MAX) {
        tg_errf(err, err_len, "document of %zu bytes exceeds the %u byte limit", len,
                TG_DOC_MAX_BYTES);
        return NULL;
    }
    for (end = 0; end < len && is_ws(text[end]); end++)
        ;
    if (end == len) {
        tg_errf(err, err_len, "empty document");
        return NULL;
    }
    tok = tokener_take();
    if (tok == NULL) {
        tg_errf(err, err_len, "out of memory");
        return NULL;
    }
    obj = json_tokener_parse_ex(tok, text, (int)len);
    jerr = json_tokener_get_error(tok);
    end = json_tokener_get_parse_end(tok);
    if (obj == NULL && jerr == json_tokener_continue) {
        /* A top-level number only ends at a delimiter: feed the terminating
         * NUL the way json_tokener_parse() does, to say "end of input". */
        obj = json_tokener_parse_ex(tok, "", 1);
        jerr = json_tokener_get_error(tok);
        if (jerr == json_tokener_continue) {
            tg_errf(err, err_len, "unexpected end of input at byte offset %zu", len);
            goto fail;
        }
    } else if (jerr == json_tokener_success && end != len) {
        tg_errf(err, err_len, "unexpected data after the document at byte offset %zu", end);
        goto fail;
    }
    if (jerr != json_tokener_success) {
        tg_errf(err, err_len, "%s at byte offset %zu", json_tokener_error_desc(jerr),
                end < len ? end : len);
        goto fail;
    }
    if (obj == NULL) {
        tg_errf(err, err_len, "document is null");
        goto fail;
    }
    tokener_give(tok, len);
    if (check_strictness(text, len, err, err_len) != 0) {
        json_object_put(obj);
        return NULL;
    }
    return obj;

fail:
    json_object_put(obj);
    tokener_give(tok, len);
    return NULL;
}

json_object *tg_json_parse_own(const char *text, size_t len)
{
    json_tokener *tok;
    json_object *obj;

    if (len > TG_DOC_MAX_BYTES || len > INT_MAX || (tok = tokener_take()) == NULL)
        return NULL;
    obj = json_tokener_parse_ex(tok, text, (int)len);
    if (obj != NULL && (json_tokener_get_error(tok) != json_tokener_success ||
                        json_tokener_get_parse_end(tok) != len)) {
        json_object_put(obj);
        obj = NULL;
    }
    tokener_give(tok, len);
    return obj;
}

const char *tg_json_string(json_object *obj, const char *key)
{
    json_object *val;
    const char *s;

    if (obj == NULL || !json_object_is_type(obj, json_type_object) ||
        !json_object_object_get_ex(obj, key, &val) || !json_object_is_type(val, json_type_string))
        return NULL;
    s = json_object_get_string(val);
    /* "a\u0000b" would read as "a" through a C string: not a usable string. */
    if (strlen(s) != (size_t)json_object_get_string_len(val))
        return NULL;
    return s;
}

static json_object *path_walk(json_object *obj, va_list ap, const char **last)
{
    const char *key = va_arg(ap, const char *);

    *last = NULL;
    while (key != NULL) {
        const char *next = va_arg(ap, const char *);

        if (obj == NULL || !json_object_is_type(obj, json_type_object))
            return NULL;
        if (next == NULL && last != NULL) {
            *last = key;          /* caller wants the parent and the final key */
            return obj;
        }
        if (!json_object_object_get_ex(obj, key, &obj))
            return NULL;
        key = next;
    }
    return obj;
}

json_object *tg_json_path(json_object *obj, ...)
{
    va_list ap;
    const char *last;
    json_object *parent, *val = NULL;

    va_start(ap, obj);
    parent = path_walk(obj, ap, &last);
    va_end(ap);
    if (last == NULL)
        return parent;             /* empty path: obj itself */
    if (!json_object_object_get_ex(parent, last, &val))
        return NULL;
    return val;
}

const char *tg_json_path_string(json_object *obj, ...)
{
    va_list ap;
    const char *last;
    json_object *parent;

    va_start(ap, obj);
    parent = path_walk(obj, ap, &last);
    va_end(ap);
    if (last == NULL)
        return NULL;
    return tg_json_string(parent, last);
}
