/* yaml.c - one YAML document <-> json-c tree, with libyaml. */
#include "yaml.h"
#include "errbuf.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <regex.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* ---- plain scalar typing: the YAML 1.2 core schema ---------------------- */

typedef enum scalar_kind {
    SCALAR_NULL,
    SCALAR_BOOL,
    SCALAR_INT,
    SCALAR_FLOAT,
    SCALAR_STRING,
} scalar_kind;

/* The core schema's resolution table (YAML 1.2.2, 10.3.2), first match wins. */
static const struct {
    scalar_kind kind;
    const char *pattern;
} core_schema[] = {
    { SCALAR_NULL, "^(null|Null|NULL|~)?$" },
    { SCALAR_BOOL, "^(true|True|TRUE|false|False|FALSE)$" },
    { SCALAR_INT, "^[-+]?[0-9]+$" },
    { SCALAR_INT, "^0o[0-7]+$" },
    { SCALAR_INT, "^0x[0-9a-fA-F]+$" },
    { SCALAR_FLOAT, "^[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?$" },
    { SCALAR_FLOAT, "^[-+]?\\.(inf|Inf|INF)$" },
    { SCALAR_FLOAT, "^\\.(nan|NaN|NAN)$" },
};

#define CORE_SCHEMA_COUNT (sizeof(core_schema) / sizeof(core_schema[0]))

static regex_t core_regex[CORE_SCHEMA_COUNT];
static pthread_once_t core_once = PTHREAD_ONCE_INIT;
static int core_ready;

static void compile_core_schema(void)
{
    for (size_t i = 0; i < CORE_SCHEMA_COUNT; i++)
        if (regcomp(&core_regex[i], core_schema[i].pattern, REG_EXTENDED | REG_NOSUB) != 0)
            return;                /* core_ready stays 0: every parse fails loudly */
    core_ready = 1;
}

static scalar_kind resolve_plain(const char *s)
{
    for (size_t i = 0; i < CORE_SCHEMA_COUNT; i++)
        if (regexec(&core_regex[i], s, 0, NULL, 0) == 0)
            return core_schema[i].kind;
    return SCALAR_STRING;
}

static json_object *float_value(const char *s)
{
    const char *p = s[0] == '+' || s[0] == '-' ? s + 1 : s;
    double sign = s[0] == '-' ? -1.0 : 1.0;

    if (p[0] == '.' && (p[1] == 'i' || p[1] == 'I'))
        return json_object_new_double_s(sign * INFINITY, s);
    if (p[0] == '.' && (p[1] == 'n' || p[1] == 'N'))
        return json_object_new_double_s(NAN, s);
    return json_object_new_double_s(strtod(s, NULL), s);
}

static json_object *int_value(const char *s, size_t len)
{
    int base = 10;
    const char *digits = s;
    char *end;
    long long v;

    if (s[0] == '0' && s[1] == 'o') {
        base = 8;
        digits = s + 2;
    } else if (s[0] == '0' && s[1] == 'x') {
        base = 16;
        digits = s + 2;
    }
    errno = 0;
    v = strtoll(digits, &end, base);
    if (errno == 0 && *end == '\0')
        return json_object_new_int64(v);
    if (base == 10 && s[0] != '-') {
        /* json-c, like JSON input, keeps up to UINT64_MAX as an integer. */
        unsigned long long u;

        errno = 0;
        u = strtoull(s[0] == '+' ? s + 1 : s, &end, 10);
        if (errno == 0 && *end == '\0')
            return json_object_new_uint64(u);
    }
    /* Too big for int64: a float, as Go's YAML decoder makes it; an octal or
     * hex literal that large has no sensible number, keep its text. */
    if (base == 10)
        return float_value(s);
    return json_object_new_string_len(s, (int)len);
}

/* A plain scalar's json-c value (NULL for null). */
static json_object *plain_scalar_value(const char *s, size_t len)
{
    switch (resolve_plain(s)) {
    case SCALAR_NULL:
        return NULL;
    case SCALAR_BOOL:
        return json_object_new_boolean(s[0] == 't' || s[0] == 'T');
    case SCALAR_INT:
        return int_value(s, len);
    case SCALAR_FLOAT:
        return float_value(s);
    case SCALAR_STRING:
        break;
    }
    return json_object_new_string_len(s, (int)len);
}

/* ---- parsing ------------------------------------------------------------ */

typedef struct frame {
    json_object *node;      /* borrowed: owned by its parent or by the root */
    int is_map;
    char *pending_key;      /* mapping whose key was read, value not yet */
} frame;

typedef struct builder {
    json_object *root;
    int have_root;
    frame stack[TG_DOC_MAX_DEPTH];
    int depth;
    unsigned nodes;
    char *err;
    size_t err_len;
} builder;

static int fail_at(builder *b, const yaml_mark_t *m, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail_at(builder *b, const yaml_mark_t *m, const char *fmt, ...)
{
    char msg[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    tg_errf(b->err, b->err_len, "line %zu:%zu: %s", m->line + 1, m->column + 1, msg);
    return -1;
}

/* Take node (a new reference, possibly NULL for YAML null) into the tree. */
static int attach(builder *b, json_object *node, const yaml_mark_t *m)
{
    frame *top;

    if (++b->nodes > TG_YAML_MAX_NODES) {
        json_object_put(node);
        return fail_at(b, m, "more than %u nodes", TG_YAML_MAX_NODES);
    }
    if (b->depth == 0) {
        b->root = node;
        b->have_root = 1;
        return 0;
    }
    top = &b->stack[b->depth - 1];
    if (!top->is_map) {
        if (json_object_array_add(top->node, node) != 0) {
            json_object_put(node);
            return fail_at(b, m, "out of memory");
        }
        return 0;
    }
    if (top->pending_key == NULL) {
        json_object_put(node);
        return fail_at(b, m, "only scalar mapping keys are supported");
    }
    if (json_object_object_add(top->node, top->pending_key, node) != 0) {
        json_object_put(node);
        return fail_at(b, m, "out of memory");
    }
    free(top->pending_key);
    top->pending_key = NULL;
    return 0;
}

static int open_container(builder *b, int is_map, const yaml_mark_t *m)
{
    json_object *node = is_map ? json_object_new_object() : json_object_new_array();

    if (node == NULL)
        return fail_at(b, m, "out of memory");
    if (b->depth >= TG_DOC_MAX_DEPTH) {
        json_object_put(node);
        return fail_at(b, m, "nesting deeper than %d", TG_DOC_MAX_DEPTH);
    }
    if (attach(b, node, m) != 0)
        return -1;
    b->stack[b->depth].node = node;
    b->stack[b->depth].is_map = is_map;
    b->stack[b->depth].pending_key = NULL;
    b->depth++;
    return 0;
}

static int on_scalar(builder *b, const yaml_event_t *ev)
{
    const char *s = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    const char *tag = (const char *)ev->data.scalar.tag;
    int plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    frame *top = b->depth > 0 ? &b->stack[b->depth - 1] : NULL;
    json_object *node;

    /* Only the string tag is understood; other tags would change meaning in
     * ways a reader of the file cannot see. */
    if (tag != NULL && strcmp(tag, YAML_STR_TAG) != 0)
        return fail_at(b, &ev->start_mark, "tag %.64s is not supported", tag);
    if (len > INT32_MAX)
        return fail_at(b, &ev->start_mark, "scalar too long");

    if (top != NULL && top->is_map && top->pending_key == NULL) {
        /* A mapping key: always read as its text ("1: x" has key "1"). */
        if (memchr(s, '\0', len) != NULL)
            return fail_at(b, &ev->start_mark, "mapping key contains a NUL character");
        if (plain && tag == NULL && strcmp(s, "<<") == 0)
            return fail_at(b, &ev->start_mark, "merge keys (<<) are not supported");
        if (json_object_object_get_ex(top->node, s, NULL))
            return fail_at(b, &ev->start_mark, "duplicate key \"%.64s\"", s);
        if (++b->nodes > TG_YAML_MAX_NODES)
            return fail_at(b, &ev->start_mark, "more than %u nodes", TG_YAML_MAX_NODES);
        top->pending_key = strdup(s);
        if (top->pending_key == NULL)
            return fail_at(b, &ev->start_mark, "out of memory");
        return 0;
    }
    if (plain && tag == NULL) {
        node = plain_scalar_value(s, len);
        if (node == NULL && resolve_plain(s) != SCALAR_NULL)
            return fail_at(b, &ev->start_mark, "out of memory");
    } else {
        node = json_object_new_string_len(s, (int)len);
        if (node == NULL)
            return fail_at(b, &ev->start_mark, "out of memory");
    }
    return attach(b, node, &ev->start_mark);
}

static int has_anchor(const yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_SCALAR_EVENT:
        return ev->data.scalar.anchor != NULL;
    case YAML_SEQUENCE_START_EVENT:
        return ev->data.sequence_start.anchor != NULL;
    case YAML_MAPPING_START_EVENT:
        return ev->data.mapping_start.anchor != NULL;
    default:
        return 0;
    }
}

static const char *container_tag(const yaml_event_t *ev)
{
    if (ev->type == YAML_SEQUENCE_START_EVENT)
        return (const char *)ev->data.sequence_start.tag;
    if (ev->type == YAML_MAPPING_START_EVENT)
        return (const char *)ev->data.mapping_start.tag;
    return NULL;
}

/* One event into the builder. Returns 1 at the end of the stream, 0 to go
 * on, -1 on error. */
static int on_event(builder *b, const yaml_event_t *ev, int *documents)
{
    const char *tag;

    if (ev->type == YAML_ALIAS_EVENT || has_anchor(ev))
        return fail_at(b, &ev->start_mark, "anchors and aliases are not supported");
    switch (ev->type) {
    case YAML_STREAM_START_EVENT:
    case YAML_DOCUMENT_END_EVENT:
        return 0;
    case YAML_STREAM_END_EVENT:
        return 1;
    case YAML_DOCUMENT_START_EVENT:
        if (++*documents > 1)
            return fail_at(b, &ev->start_mark, "expected one document, found more");
        return 0;
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT:
        tag = container_tag(ev);
        if (tag != NULL && strcmp(tag, ev->type == YAML_MAPPING_START_EVENT ? YAML_MAP_TAG
                                                                           : YAML_SEQ_TAG) != 0)
            return fail_at(b, &ev->start_mark, "tag %.64s is not supported", tag);
        return open_container(b, ev->type == YAML_MAPPING_START_EVENT, &ev->start_mark);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        b->depth--;                /* libyaml guarantees balanced events */
        return 0;
    case YAML_SCALAR_EVENT:
        return on_scalar(b, ev);
    default:
        return fail_at(b, &ev->start_mark, "unexpected YAML event");
    }
}

static void parser_error(const yaml_parser_t *p, char *err, size_t err_len)
{
    const char *problem = p->problem ? p->problem : "invalid YAML";

    if (p->error == YAML_MEMORY_ERROR) {
        tg_errf(err, err_len, "out of memory");
    } else if (p->context != NULL) {
        tg_errf(err, err_len, "line %zu:%zu: %s %s (line %zu:%zu)", p->problem_mark.line + 1,
                p->problem_mark.column + 1, problem, p->context, p->context_mark.line + 1,
                p->context_mark.column + 1);
    } else if (p->error == YAML_READER_ERROR) {
        /* The reader reports a byte offset, not a line. */
        tg_errf(err, err_len, "byte offset %zu: %s", p->problem_offset, problem);
    } else {
        tg_errf(err, err_len, "line %zu:%zu: %s", p->problem_mark.line + 1,
                p->problem_mark.column + 1, problem);
    }
}

json_object *tg_yaml_parse(const char *text, size_t len, char *err, size_t err_len)
{
    yaml_parser_t parser;
    yaml_event_t ev;
    builder b;
    int documents = 0;
    int rc = 0;

    tg_errf(err, err_len, "no error");
    if (text == NULL) {
        tg_errf(err, err_len, "no input");
        return NULL;
    }
    if (len > TG_DOC_MAX_BYTES) {
        tg_errf(err, err_len, "document of %zu bytes exceeds the %u byte limit", len,
                TG_DOC_MAX_BYTES);
        return NULL;
    }
    pthread_once(&core_once, compile_core_schema);
    if (!core_ready) {
        tg_errf(err, err_len, "cannot compile the YAML scalar patterns");
        return NULL;
    }
    memset(&b, 0, sizeof(b));
    b.err = err;
    b.err_len = err_len;
    if (!yaml_parser_initialize(&parser)) {
        tg_errf(err, err_len, "out of memory");
        return NULL;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    /* Kubernetes manifests are UTF-8; do not let a BOM switch to UTF-16. */
    yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);

    while (rc == 0) {
        if (!yaml_parser_parse(&parser, &ev)) {
            parser_error(&parser, err, err_len);
            rc = -1;
            break;
        }
        rc = on_event(&b, &ev, &documents);
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&parser);
    for (int i = 0; i < b.depth; i++)
        free(b.stack[i].pending_key);
    if (rc < 0) {
        json_object_put(b.root);
        return NULL;
    }
    if (b.root == NULL) {
        tg_errf(err, err_len, b.have_root ? "document is null" : "no YAML document");
        return NULL;
    }
    return b.root;
}

json_object *tg_doc_parse(const char *text, size_t len, char *err, size_t err_len)
{
    size_t i = 0;

    while (text != NULL && i < len &&
           (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n'))
        i++;
    if (text != NULL && i < len && (text[i] == '{' || text[i] == '['))
        return tg_json_parse(text, len, err, err_len);
    return tg_yaml_parse(text, len, err, err_len);
}

/* ---- emitting ----------------------------------------------------------- */

typedef struct out_buf {
    char *data;
    size_t len, cap;
    int failed;
} out_buf;

static int on_write(void *data, unsigned char *buffer, size_t size)
{
    out_buf *o = data;

    if (o->len + size + 1 > o->cap) {
        size_t cap = o->cap ? o->cap : 1024;
        char *p;

        while (cap < o->len + size + 1)
            cap *= 2;
        p = realloc(o->data, cap);
        if (p == NULL) {
            o->failed = 1;
            return 0;
        }
        o->data = p;
        o->cap = cap;
    }
    memcpy(o->data + o->len, buffer, size);
    o->len += size;
    o->data[o->len] = '\0';
    return 1;
}

static int emit(yaml_emitter_t *e, yaml_event_t *ev)
{
    return yaml_emitter_emit(e, ev) ? 0 : -1;
}

static int emit_scalar_style(yaml_emitter_t *e, const char *s, size_t len, int plain_ok,
                             yaml_scalar_style_t style)
{
    yaml_event_t ev;

    /* plain_implicit = 0 makes libyaml quote the scalar: used for strings
     * that would otherwise read back as null, a bool or a number. */
    if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)len, plain_ok, 1,
                                      style))
        return -1;
    return emit(e, &ev);
}

static int emit_scalar(yaml_emitter_t *e, const char *s, size_t len, int plain_ok)
{
    return emit_scalar_style(e, s, len, plain_ok, YAML_ANY_SCALAR_STYLE);
}

/* YAML 1.1 booleans: not special in the 1.2 core schema we read, but kubectl's
 * YAML 1.1 decoder would turn them into bools, so they are quoted on output. */
static int is_yaml11_bool(const char *s)
{
    static const char *const words[] = {
        "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO",
        "on", "On", "ON", "off", "Off", "OFF",
    };

    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (strcmp(s, words[i]) == 0)
            return 1;
    return 0;
}

static int emit_string(yaml_emitter_t *e, const char *s, size_t len)
{
    int has_nul = memchr(s, '\0', len) != NULL;
    /* "<<" is quoted too: as a plain mapping key it is YAML's merge key,
     * which on_scalar refuses (and other readers would merge). */
    int plain_ok = !has_nul && resolve_plain(s) == SCALAR_STRING && !is_yaml11_bool(s) && strcmp(s, "<<") != 0;

    /* Multi-line text (PEM blocks, scripts) reads best as a literal block, as
     * kubectl prints it; libyaml falls back to quoting where a block cannot
     * hold the text exactly. */
    if (!has_nul && memchr(s, '\n', len) != NULL)
        return emit_scalar_style(e, s, len, 0, YAML_LITERAL_SCALAR_STYLE);
    return emit_scalar(e, s, len, plain_ok);
}

static int emit_node(yaml_emitter_t *e, json_object *obj, int depth)
{
    yaml_event_t ev;
    char num[64];

    if (depth > TG_DOC_MAX_DEPTH)
        return -1;
    switch (json_object_get_type(obj)) {
    case json_type_null:
        return emit_scalar(e, "null", 4, 1);
    case json_type_boolean:
        return json_object_get_boolean(obj) ? emit_scalar(e, "true", 4, 1)
                                            : emit_scalar(e, "false", 5, 1);
    case json_type_int:
        /* json-c also holds uint64 values beyond INT64_MAX: print, not get_int64. */
        snprintf(num, sizeof(num), "%s", json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN));
        return emit_scalar(e, num, strlen(num), 1);
    case json_type_double: {
        double d = json_object_get_double(obj);

        if (isnan(d))
            return emit_scalar(e, ".nan", 4, 1);
        if (isinf(d))
            return emit_scalar(e, d < 0 ? "-.inf" : ".inf", d < 0 ? 5 : 4, 1);
        /* The number as written when it came from text (json-c keeps it),
         * if it reads back as a number; else the shortest exact form. */
        const char *text = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN);
        scalar_kind kind = text != NULL ? resolve_plain(text) : SCALAR_STRING;

        if (kind == SCALAR_FLOAT || kind == SCALAR_INT)
            return emit_scalar(e, text, strlen(text), 1);
        snprintf(num, sizeof(num), "%.17g", d);
        return emit_scalar(e, num, strlen(num), 1);
    }
    case json_type_string:
        return emit_string(e, json_object_get_string(obj), (size_t)json_object_get_string_len(obj));
    case json_type_array: {
        size_t n = json_object_array_length(obj);

        yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE);
        if (emit(e, &ev) != 0)
            return -1;
        for (size_t i = 0; i < n; i++)
            if (emit_node(e, json_object_array_get_idx(obj, i), depth + 1) != 0)
                return -1;
        yaml_sequence_end_event_initialize(&ev);
        return emit(e, &ev);
    }
    case json_type_object: {
        yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE);
        if (emit(e, &ev) != 0)
            return -1;
        json_object_object_foreach(obj, key, val) {
            if (emit_string(e, key, strlen(key)) != 0 || emit_node(e, val, depth + 1) != 0)
                return -1;
        }
        yaml_mapping_end_event_initialize(&ev);
        return emit(e, &ev);
    }
    }
    return -1;
}

char *tg_yaml_emit(json_object *obj, size_t *len)
{
    yaml_emitter_t e;
    yaml_event_t ev;
    out_buf out = { 0 };
    int rc = -1;

    pthread_once(&core_once, compile_core_schema);
    if (!core_ready || !yaml_emitter_initialize(&e))
        return NULL;
    yaml_emitter_set_output(&e, on_write, &out);
    yaml_emitter_set_unicode(&e, 1);
    yaml_emitter_set_width(&e, -1);    /* kubectl does not fold long base64 lines */
    yaml_emitter_set_indent(&e, 2);

    yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
    if (emit(&e, &ev) != 0)
        goto out;
    yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
    if (emit(&e, &ev) != 0 || emit_node(&e, obj, 0) != 0)
        goto out;
    yaml_document_end_event_initialize(&ev, 1);
    if (emit(&e, &ev) != 0)
        goto out;
    yaml_stream_end_event_initialize(&ev);
    if (emit(&e, &ev) != 0 || !yaml_emitter_flush(&e) || out.failed)
        goto out;
    rc = 0;
out:
    yaml_emitter_delete(&e);
    if (rc != 0 || out.data == NULL) {
        free(out.data);
        return NULL;
    }
    if (len != NULL)
        *len = out.len;
    return out.data;
}
