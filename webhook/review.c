/* review.c - AdmissionReview request parsing and response building. */
#include "review.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>

#include "common/strbuf.h"
#include "kube/json.h"

#define API_GROUP "admission.k8s.io/"

/* The API server's uids are UUIDs; anything longer is not one of its reviews
 * and is not echoed into our logs and answers. */
#define UID_MAX 128

static const char *str_or_empty(json_object *o, const char *key)
{
    const char *s = tg_json_string(o, key);
    return s ? s : "";
}

static tg_review_op op_parse(const char *s)
{
    static const struct {
        const char *name;
        tg_review_op op;
    } ops[] = {
        {"CREATE", TG_OP_CREATE},
        {"UPDATE", TG_OP_UPDATE},
        {"DELETE", TG_OP_DELETE},
        {"CONNECT", TG_OP_CONNECT},
    };
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
        if (strcmp(s, ops[i].name) == 0)
            return ops[i].op;
    return TG_OP_OTHER;
}

/* An optional member: absent and JSON null are the same; any other type than
 * an object is an error. */
static int optional_object(json_object *parent, const char *key, json_object **out)
{
    json_object *v = NULL;

    *out = NULL;
    if (!json_object_object_get_ex(parent, key, &v) || v == NULL)
        return 0;
    if (!json_object_is_type(v, json_type_object))
        return -1;
    *out = v;
    return 0;
}

static int fail(char *err, size_t err_len, const char *msg)
{
    snprintf(err, err_len, "%s", msg);
    return -1;
}

int tg_review_parse(const char *body, size_t len, tg_review_request *req, char *err, size_t err_len)
{
    char perr[160];
    const char *api_version, *kind, *uid;
    json_object *request, *resource, *kind_obj, *dry, *user_info;

    memset(req, 0, sizeof(*req));
    req->version = TG_REVIEW_V1;
    req->uid = req->resource_group = req->resource = req->sub_resource = "";
    req->kind = req->name = req->namespace_ = req->operation = req->user_name = "";

    req->root = tg_json_parse(body, len, perr, sizeof(perr));
    if (req->root == NULL) {
        snprintf(err, err_len, "expected an AdmissionReview in JSON, found invalid JSON: %s", perr);
        return -1;
    }
    if (!json_object_is_type(req->root, json_type_object))
        return fail(err, err_len, "expected an AdmissionReview object, found another JSON value");

    /* Read what an answer needs first, so even a broken review gets its uid
     * echoed in the version it spoke. */
    api_version = tg_json_string(req->root, "apiVersion");
    if (api_version && strcmp(api_version, API_GROUP "v1beta1") == 0)
        req->version = TG_REVIEW_V1BETA1;
    request = tg_json_path(req->root, "request", NULL);
    if (request && json_object_is_type(request, json_type_object)) {
        uid = tg_json_string(request, "uid");
        if (uid && strlen(uid) <= UID_MAX)
            req->uid = uid;
    }

    if (!api_version || (strcmp(api_version, API_GROUP "v1") != 0 &&
                         strcmp(api_version, API_GROUP "v1beta1") != 0))
        return fail(err, err_len, "apiVersion: expected admission.k8s.io/v1 or v1beta1");
    kind = tg_json_string(req->root, "kind");
    if (!kind || strcmp(kind, "AdmissionReview") != 0)
        return fail(err, err_len, "kind: expected AdmissionReview");
    if (!request || !json_object_is_type(request, json_type_object))
        return fail(err, err_len, "request: expected an object, found none");
    if (req->uid[0] == '\0')
        return fail(err, err_len, "request.uid: expected a string of 1 to 128 characters");

    if (optional_object(request, "resource", &resource) != 0 || !resource)
        return fail(err, err_len, "request.resource: expected an object");
    req->resource_group = str_or_empty(resource, "group");
    req->resource = str_or_empty(resource, "resource");
    req->sub_resource = str_or_empty(request, "subResource");
    if (optional_object(request, "kind", &kind_obj) != 0)
        return fail(err, err_len, "request.kind: expected an object");
    if (kind_obj)
        req->kind = str_or_empty(kind_obj, "kind");
    req->name = str_or_empty(request, "name");
    req->namespace_ = str_or_empty(request, "namespace");
    req->operation = str_or_empty(request, "operation");
    if (req->operation[0] == '\0')
        return fail(err, err_len, "request.operation: expected CREATE, UPDATE, DELETE or CONNECT");
    req->op = op_parse(req->operation);
    if (json_object_object_get_ex(request, "dryRun", &dry) && dry &&
        json_object_is_type(dry, json_type_boolean))
        req->dry_run = json_object_get_boolean(dry);
    if (optional_object(request, "object", &req->object) != 0)
        return fail(err, err_len, "request.object: expected an object");
    if (optional_object(request, "oldObject", &req->old_object) != 0)
        return fail(err, err_len, "request.oldObject: expected an object");
    req->user_groups = tg_json_path(request, "userInfo", "groups", NULL);
    if (req->user_groups && !json_object_is_type(req->user_groups, json_type_array))
        return fail(err, err_len, "request.userInfo.groups: expected an array");
    user_info = tg_json_path(request, "userInfo", NULL);
    if (user_info && json_object_is_type(user_info, json_type_object))
        req->user_name = str_or_empty(user_info, "username");
    return 0;
}

int tg_review_user_in_group(const tg_review_request *req, const char *group)
{
    size_t n = req->user_groups ? json_object_array_length(req->user_groups) : 0;

    for (size_t i = 0; i < n; i++) {
        json_object *g = json_object_array_get_idx(req->user_groups, i);
        if (g && json_object_is_type(g, json_type_string) && strcmp(json_object_get_string(g), group) == 0)
            return 1;
    }
    return 0;
}

void tg_review_request_clear(tg_review_request *req)
{
    if (req->root)
        json_object_put(req->root);
    memset(req, 0, sizeof(*req));
}

/* The answer is written straight into one buffer: a json-c tree for six
 * members cost a dozen allocations and a serialisation per admission. The
 * output is byte for byte what json-c writes for the same tree with
 * JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE (test_review.c
 * compares the two on hostile strings). */
typedef tg_strbuf outbuf;

static void out_put(outbuf *o, const char *s, size_t n)
{
    tg_strbuf_put(o, s, n);
}

static void out_lit(outbuf *o, const char *s)
{
    tg_strbuf_str(o, s);
}

/* A JSON string as json-c escapes it: the two-character escapes, \u00XX for
 * the other control characters, every other byte as it is ('/' too). */
static void out_string(outbuf *o, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    size_t run = 0;

    out_put(o, "\"", 1);
    for (;; s++) {
        unsigned char c = (unsigned char)*s;
        const char *esc = NULL;
        char u[7];

        if (c >= 0x20 && c != '"' && c != '\\') {
            run++;
            continue;
        }
        out_put(o, s - run, run);
        run = 0;
        if (c == '\0')
            break;
        switch (c) {
        case '\b': esc = "\\b"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        case '\f': esc = "\\f"; break;
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        default:
            memcpy(u, "\\u00", 4);
            u[4] = hex[c >> 4];
            u[5] = hex[c & 0xf];
            u[6] = '\0';
            esc = u;
        }
        out_lit(o, esc);
    }
    out_put(o, "\"", 1);
}

/* Standard base64 of the patch, as the API's []byte fields are encoded. */
static void out_base64(outbuf *o, const char *data, size_t len)
{
    size_t out_len = 4 * ((len + 2) / 3);
    unsigned char *b = malloc(out_len + 1);

    if (!b) {
        o->oom = 1;
        return;
    }
    EVP_EncodeBlock(b, (const unsigned char *)data, (int)len);
    out_put(o, "\"", 1);
    out_put(o, (const char *)b, out_len);
    out_put(o, "\"", 1);
    free(b);
}

char *tg_review_response_json(tg_review_version version, const char *uid,
                              const tg_review_response *resp, size_t *len)
{
    outbuf o = {0};
    char num[24];

    out_lit(&o, version == TG_REVIEW_V1BETA1
                    ? "{\"apiVersion\":\"" API_GROUP "v1beta1\",\"kind\":\"AdmissionReview\",\"response\":{\"uid\":"
                    : "{\"apiVersion\":\"" API_GROUP "v1\",\"kind\":\"AdmissionReview\",\"response\":{\"uid\":");
    out_string(&o, uid ? uid : "");
    out_lit(&o, resp->allowed ? ",\"allowed\":true" : ",\"allowed\":false");
    if (!resp->allowed) {
        snprintf(num, sizeof(num), "%d", resp->code);
        out_lit(&o, ",\"status\":{\"code\":");
        out_lit(&o, num);
        out_lit(&o, ",\"message\":");
        out_string(&o, resp->message ? resp->message : "");
        if (resp->reason) {
            out_lit(&o, ",\"reason\":");
            out_string(&o, resp->reason);
        }
        if (resp->retry_after_s > 0) {
            snprintf(num, sizeof(num), "%d", resp->retry_after_s);
            out_lit(&o, ",\"details\":{\"retryAfterSeconds\":");
            out_lit(&o, num);
            out_lit(&o, "}");
        }
        out_lit(&o, "}");
    }
    if (resp->nwarnings > 0) {
        out_lit(&o, ",\"warnings\":[");
        for (size_t i = 0; i < resp->nwarnings && i < TG_REVIEW_MAX_WARNINGS; i++) {
            if (i)
                out_lit(&o, ",");
            out_string(&o, resp->warnings[i] ? resp->warnings[i] : "");
        }
        out_lit(&o, "]");
    }
    if (resp->allowed && resp->patch) {
        out_lit(&o, ",\"patchType\":\"JSONPatch\",\"patch\":");
        out_base64(&o, resp->patch, resp->patch_len);
    }
    out_lit(&o, "}}");
    if (o.oom) {
        free(o.p);
        return NULL;
    }
    if (len)
        *len = o.len;
    return o.p;
}
