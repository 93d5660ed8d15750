/* json.c - strict JSON parsing with json-c, and small lookup helpers. */
#include "json.h"
#include "errbuf.h"

#include <limits.h>
#include <pthread.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Decode one JSON string token text[start..end] (quotes included) with json-c,
 * so escapes like "\u0061" compare equal to "a". */
static json_object *decode_string_token(json_tokener *tok, const char *text, size_t start,
                                        size_t end)
{
    json_tokener_reset(tok);
    return json_tokener_parse_ex(tok, text + start, (int)(end - start + 1));
}

/* RFC 8259 section 6. json-c in strict mode still takes "1.", "00", "-01"
 * and Infinity, and single-quoted keys; the strictness pass below refuses
 * them by checking every bare token against this grammar. */
#define JSON_NUMBER_PATTERN "^-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][-+]?[0-9]+)?$"

static regex_t number_regex;
static pthread_once_t number_once = PTHREAD_ONCE_INIT;
static int number_ready;

static void compile_number_regex(void)
{
    number_ready = regcomp(&number_regex, JSON_NUMBER_PATTERN, REG_EXTENDED | REG_NOSUB) == 0;
}

static int is_bare_char(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           c == '-' || c == '+' || c == '.';
}

/* A bare token (number, true, false, null) of at most 63 characters. */
static int bare_token_valid(const char *tok, size_t len)
{
    char buf[64];

    if (len >= sizeof(buf))
        return 0;
    memcpy(buf, tok, len);
    buf[len] = '\0';
    if (strcmp(buf, "true") == 0 || strcmp(buf, "false") == 0 || strcmp(buf, "null") == 0)
        return 1;
    return number_ready && regexec(&number_regex, buf, 0, NULL, 0) == 0;
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

/* json-c, even in strict mode, accepts what a strict reader must not:
 * duplicate keys (the last one silently wins, while Go's decoder and others
 * may pick another), raw control characters inside strings, ill-formed UTF-8
 * (see above), and the bare tokens and quotes noted at JSON_NUMBER_PATTERN.
 * It has no flag for these, so this second pass walks the text json-c has
 * already accepted - hence known to be well-formed - tracking the keys of
 * each open object. */
static int check_strictness(const char *text, size_t len, char *err, size_t err_len)
{
    json_object *keys[TG_DOC_MAX_DEPTH + 2];   /* per open container; NULL for arrays */
    int depth = 0;
    int rc = -1;
    json_tokener *tok = json_tokener_new_ex(2);

    if (tok == NULL) {
        tg_errf(err, err_len, "out of memory");
        return -1;
    }
    pthread_once(&number_once, compile_number_regex);
    for (size_t i = 0; i < len; i++) {
        char c = text[i];

        if (c == '{' || c == '[') {
            if (depth >= TG_DOC_MAX_DEPTH + 1) {   /* json-c enforced it already */
                tg_errf(err, err_len, "nesting deeper than %d at byte offset %zu",
                        TG_DOC_MAX_DEPTH, i);
                goto out;
            }
            keys[depth] = c == '{' ? json_object_new_object() : NULL;
            if (c == '{' && keys[depth] == NULL) {
                tg_errf(err, err_len, "out of memory");
                goto out;
            }
            depth++;
        } else if (c == '}' || c == ']') {
            if (depth > 0)
                json_object_put(keys[--depth]);
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

            for (end = i + 1; end < len && text[end] != '"'; end++) {
                size_t n;

                if (text[end] == '\\') {
                    end++;
                } else if ((unsigned char)text[end] < 0x20) {
                    tg_errf(err, err_len,
                            "raw control character 0x%02x in a string at byte offset %zu "
                            "(must be escaped)", (unsigned char)text[end], end);
                    goto out;
                } else if ((n = utf8_sequence((const unsigned char *)text + end,
                                              len - end)) != 1) {
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
            if (depth > 0 && keys[depth - 1] != NULL && next < len && text[next] == ':') {
                json_object *key = decode_string_token(tok, text, start, end);
                const char *k = key ? json_object_get_string(key) : NULL;

                if (k == NULL) {
                    json_object_put(key);
                    tg_errf(err, err_len, "cannot decode key at byte offset %zu", start);
                    goto out;
                }
                if (json_object_object_get_ex(keys[depth - 1], k, NULL)) {
                    tg_errf(err, err_len, "duplicate key \"%.64s\" at byte offset %zu", k,
                            start);
                    json_object_put(key);
                    goto out;
                }
                json_object_object_add(keys[depth - 1], k, NULL);
                json_object_put(key);
            }
        }
    }
    rc = 0;
out:
    while (depth > 0)
        json_object_put(keys[--depth]);
    json_tokener_free(tok);
    return rc;
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
    tok = json_tokener_new_ex(TG_DOC_MAX_DEPTH);
    if (tok == NULL) {
        tg_errf(err, err_len, "out of memory");
        return NULL;
    }
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
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
    json_tokener_free(tok);
    if (check_strictness(text, len, err, err_len) != 0) {
        json_object_put(obj);
        return NULL;
    }
    return obj;

fail:
    json_object_put(obj);
    json_tokener_free(tok);
    return NULL;
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
