/* routes.c - see routes.h. */
#include "routes.h"

#include <string.h>
#include <strings.h>

#include "webhook/admission.h"
#include "webhook/conns.h"
#include "webhook/h1_framing.h"
#include "webhook/handler_api.h"
#include "webhook/reply.h"

typedef struct route {
    h2o_handler_t super;
    tg_server *server;
    const tg_admission_route *admit;   /* NULL for the catch-all */
} route;

/* Each admission path and what it reviews. */
static const tg_admission_route admission_routes[] = {
    {"/validate/tenants", TG_ADMIT_VALIDATE_TENANT},
    {"/mutate/tenants", TG_ADMIT_MUTATE_TENANT},
    {"/validate/resourceslices", TG_ADMIT_VALIDATE_SLICE},
};

static int iov_is(h2o_iovec_t v, const char *s)
{
    size_t n = strlen(s);
    return v.len == n && memcmp(v.base, s, n) == 0;
}

/* "application/json", any case, optionally followed by parameters. */
static int is_json_content_type(h2o_req_t *req)
{
    static const char want[] = "application/json";
    ssize_t i = h2o_find_header(&req->headers, H2O_TOKEN_CONTENT_TYPE, -1);
    h2o_iovec_t v;

    if (i < 0)
        return 0;
    v = req->headers.entries[i].value;
    if (v.len < sizeof(want) - 1 || strncasecmp(v.base, want, sizeof(want) - 1) != 0)
        return 0;
    return v.len == sizeof(want) - 1 || v.base[sizeof(want) - 1] == ';' || v.base[sizeof(want) - 1] == ' ';
}

/* HTTP/1.x with a body: is its length ambiguous (h1_framing.h)? h2o has
 * dropped Content-Length and Transfer-Encoding from req->headers, but the raw
 * head is still at the start of the connection's input buffer, right before
 * the body (h2o consumes a request only after answering it). */
static int h1_framing_verdict(h2o_req_t *req)
{
    h2o_socket_t *sock;
    const char *start;

    if (req->version >= 0x200 || req->entity.base == NULL)
        return TG_H1_FRAMING_OK;
    sock = req->conn->callbacks->get_socket(req->conn);
    if (!sock || !sock->input)
        return TG_H1_FRAMING_OK;
    start = sock->input->bytes;
    if (req->entity.base < start || req->entity.base > start + sock->input->size)
        return TG_H1_FRAMING_OK;
    return tg_h1_framing_check(start, (size_t)(req->entity.base - start));
}

static int on_route(h2o_handler_t *self, h2o_req_t *req)
{
    const route *r = (const route *)self;
    tg_server *s = r->server;
    worker *w = tg_worker_of(req);
    uint64_t started = tg_now_us();
    const char *path;
    int framing;

    tg_conns_request_seen(req);
    if ((framing = h1_framing_verdict(req)) != TG_H1_FRAMING_OK) {
        /* 400, and the connection closes: what follows the body is not
         * trusted to be the next request. */
        tg_count_request(s, "other", "rejected", tg_reason_name(TG_AMBIGUOUS_LENGTH), 0);
        req->http1_is_persistent = 0;
        tg_send_text(req, 400, "Bad Request", "text/plain; charset=utf-8", tg_h1_framing_message(framing),
                  strlen(tg_h1_framing_message(framing)));
        return 0;
    }
    /* h2o matched a prefix ("/validate/tenants/x" too) or the catch-all */
    if (r->admit && iov_is(req->path_normalized, r->admit->path)) {
        path = r->admit->path;
    } else {
        /* "other": arbitrary paths must not become metric label values */
        tg_count_request(s, "other", "rejected", tg_reason_name(TG_NOT_FOUND), 0);
        tg_send_text(req, 404, "Not Found", "text/plain; charset=utf-8", H2O_STRLIT("not found\n"));
        return 0;
    }
    if (!iov_is(req->method, "POST")) {
        tg_count_request(s, path, "rejected", tg_reason_name(TG_METHOD_NOT_ALLOWED), 0);
        h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_ALLOW, NULL, H2O_STRLIT("POST"));
        tg_send_text(req, 405, "Method Not Allowed", "text/plain; charset=utf-8", H2O_STRLIT("use POST\n"));
        return 0;
    }
    if (!is_json_content_type(req)) {
        tg_count_request(s, path, "rejected", tg_reason_name(TG_UNSUPPORTED_MEDIA_TYPE), 0);
        tg_send_text(req, 415, "Unsupported Media Type", "text/plain; charset=utf-8",
                  H2O_STRLIT("expected Content-Type: application/json\n"));
        return 0;
    }
    /* h2o answers 413 itself above max_request_entity_size; this catches a
     * body that got through some other way. */
    if (req->entity.len > TG_WEBHOOK_MAX_BODY) {
        tg_count_request(s, path, "rejected", tg_reason_name(TG_PAYLOAD_TOO_LARGE), 0);
        tg_send_text(req, 413, "Request Entity Too Large", "text/plain; charset=utf-8",
                  H2O_STRLIT("body over 3 MiB\n"));
        return 0;
    }
    return tg_admission_handle(s, w, req, r->admit, started);
}

/* prefix: what h2o matches ("/validate/tenants/x" too: on_route wants the
 * exact path); admit NULL: the catch-all. */
static void add_route(h2o_hostconf_t *host, const char *prefix, const tg_admission_route *admit, tg_server *s)
{
    h2o_pathconf_t *pc = h2o_config_register_path(host, prefix, 0);
    route *r = (route *)h2o_create_handler(pc, sizeof(*r));

    r->super.on_req = on_route;
    r->server = s;
    r->admit = admit;
}

void tg_routes_register(h2o_hostconf_t *host, tg_server *s)
{
    for (size_t i = 0; i < sizeof(admission_routes) / sizeof(admission_routes[0]); i++)
        add_route(host, admission_routes[i].path, &admission_routes[i], s);
    add_route(host, "/", NULL, s);
}
