/* name_check.c - see name_check.h. One struct per chain; each API answer
 * moves it on. */
#include "name_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/issue_docs.h"
#include "kube/json.h"
#include "pki/slice.h"

#define RBAC_API "/apis/rbac.authorization.k8s.io/v1"
#define LIQO_API "/apis/authentication.liqo.io/v1beta1"

/* A read the API server answers 429 (a watch cache still initializing, a
 * new CRD's; priority and fairness) is sent again this often, this many
 * times, before the chain fails closed. */
#define RETRY_MS 250
#define RETRIES 40

typedef struct nchain {
    tg_kube_client *c;
    uv_timer_t retry;
    char get_path[300];            /* the last GET, sent again on 429 */
    tg_kube_response_cb get_cb;
    int retries;
    char name[64];                 /* a cluster id: at most 63 */
    char ns[96];
    tg_name_path path;
    int reserved;                  /* answered at the first API answer: done is never synchronous */
    tg_auth_name_result res;
    tg_auth_name_done done;
    void *data;
} nchain;

static void on_closed(uv_handle_t *h)
{
    free(h->data);
}

static void finish(nchain *nc)
{
    nc->done(&nc->res, nc->data);
    uv_close((uv_handle_t *)&nc->retry, on_closed);
}

static void refuse(nchain *nc, tg_auth_reason r)
{
    nc->res.ok = 0;
    nc->res.reason = r;
    finish(nc);
}

static void api_failed(nchain *nc, const char *step, const tg_kube_response *resp)
{
    snprintf(nc->res.why, sizeof(nc->res.why), "%s: HTTP %ld%s%s", step, resp->status, resp->error ? ": " : "",
             resp->error ? resp->error : "");
    refuse(nc, TG_AUTH_ISSUANCE_FAILED);
}

static int api_send(nchain *nc, const char *method, const char *path, json_object *body, tg_kube_response_cb cb)
{
    tg_kube_request_opts o = {.method = method, .path = path, .content_type = TG_KUBE_CT_JSON};
    char err[200];
    size_t len = 0;

    o.body = body ? json_object_to_json_string_length(body, JSON_C_TO_STRING_PLAIN, &len) : NULL;
    o.body_len = len;
    if (tg_kube_request_start(nc->c, &o, cb, nc, err, sizeof(err)))
        return 0;
    snprintf(nc->res.why, sizeof(nc->res.why), "cannot reach the API server: %s", err);
    return -1;
}

/* In a callback: send, or answer IssuanceFailed. */
static void next(nchain *nc, const char *method, const char *path, json_object *body, tg_kube_response_cb cb)
{
    if (strcmp(method, "GET") == 0 && path != nc->get_path) {   /* on_retry sends get_path itself */
        snprintf(nc->get_path, sizeof(nc->get_path), "%s", path);
        nc->get_cb = cb;
    }
    if (api_send(nc, method, path, body, cb) != 0)
        refuse(nc, TG_AUTH_ISSUANCE_FAILED);
}

static void on_retry(uv_timer_t *t)
{
    nchain *nc = t->data;

    next(nc, "GET", nc->get_path, NULL, nc->get_cb);
}

/* 1 when resp is a 429 to the last GET and it will be sent again. */
static int retried(nchain *nc, const tg_kube_response *resp)
{
    if (resp->status != 429 || !nc->get_cb || nc->retries >= RETRIES)
        return 0;
    nc->retries++;
    uv_timer_start(&nc->retry, on_retry, RETRY_MS, 0);
    return 1;
}

static nchain *nchain_new(tg_kube_client *c, const char *name, tg_name_path path, tg_auth_name_done done, void *data)
{
    nchain *nc = strlen(name) < sizeof(((nchain *)0)->name) ? calloc(1, sizeof(*nc)) : NULL;

    if (!nc)
        return NULL;
    nc->c = c;
    uv_timer_init(tg_kube_client_loop(c), &nc->retry);
    nc->retry.data = nc;
    strcpy(nc->name, name);
    tg_auth_tenant_namespace(name, nc->ns, sizeof(nc->ns));
    nc->path = path;
    nc->done = done;
    nc->data = data;
    return nc;
}

static json_object *items_of(const tg_kube_response *resp, json_object **doc)
{
    json_object *items;

    *doc = tg_json_parse(resp->body, resp->body_len, NULL, 0);
    items = *doc ? tg_json_path(*doc, "items", NULL) : NULL;
    return items && json_object_is_type(items, json_type_array) ? items : NULL;
}

/* --- 5: the claim there, read ---------------------------------------------- */

/* 1 when claim is another path's or holder's (res set to NameOwned). */
static int claim_owned(nchain *nc, json_object *claim)
{
    char owner[240];

    if (tg_name_claim_is(claim, nc->name, nc->path, nc->name, owner, sizeof(owner)))
        return 0;
    snprintf(nc->res.why, sizeof(nc->res.why),
             "expected %s to be unclaimed or claimed by path %s holder %s, found NameClaim of path and holder %s",
             nc->name, tg_name_path_string(nc->path), nc->name, owner);
    nc->res.reason = TG_AUTH_NAME_OWNED;
    return 1;
}

static void on_claim_read(tg_kube_request *r, const tg_kube_response *resp, void *data)
{
    nchain *nc = data;
    json_object *doc;

    if (retried(nc, resp))
        return;

    if (resp->status == 404) {     /* unclaimed (or no CRD: the claim itself then fails closed) */
        nc->res.ok = 1;
        finish(nc);
        return;
    }
    if (resp->status != 200) {
        api_failed(nc, "read the NameClaim", resp);
        return;
    }
    doc = tg_json_parse(resp->body, resp->body_len, NULL, 0);
    nc->res.ok = !claim_owned(nc, doc);
    json_object_put(doc);
    finish(nc);
}

static void step_claim_read(nchain *nc)
{
    char obj[TG_NAME_CLAIM_OBJECT_MAX], path[160];

    tg_name_claim_object(nc->name, obj);
    snprintf(path, sizeof(path), TG_NAME_CLAIMS_PATH "/%s", obj);
    next(nc, "GET", path, NULL, on_claim_read);
}

/* --- 4: a ResourceSlice's user --------------------------------------------- */

static int slice_owns(nchain *nc, json_object *items)
{
    for (size_t i = 0; i < json_object_array_length(items); i++) {
        json_object *s = json_object_array_get_idx(items, i);
        const char *name = tg_json_path_string(s, "metadata", "name", NULL);
        const char *ns = tg_json_path_string(s, "metadata", "namespace", NULL);
        const char *consumer = tg_json_path_string(s, "spec", "consumerClusterID", NULL);
        char user[TG_SLICE_USER_MAX];

        if (!name || !consumer || tg_slice_user_name(name, consumer, user, sizeof(user)) != 0 ||
            strcmp(user, nc->name) != 0)
            continue;
        snprintf(nc->res.why, sizeof(nc->res.why),
                 "expected %s to be no ResourceSlice's user, found the user of ResourceSlice %.63s/%.200s "
                 "(path slice)", nc->name, ns ? ns : "", name);
        return 1;
    }
    return 0;
}

static void on_slices(tg_kube_request *r, const tg_kube_response *resp, void *data)
{
    nchain *nc = data;
    json_object *doc = NULL, *items;

    if (retried(nc, resp))
        return;

    if (resp->status == 404) {     /* no ResourceSlice CRD: no slice user */
        step_claim_read(nc);
        return;
    }
    if (resp->status != 200 || !(items = items_of(resp, &doc))) {
        json_object_put(doc);
        api_failed(nc, "list ResourceSlices", resp);
        return;
    }
    if (slice_owns(nc, items)) {
        json_object_put(doc);
        refuse(nc, TG_AUTH_NAME_OWNED);
        return;
    }
    json_object_put(doc);
    step_claim_read(nc);
}

static void step_slices(nchain *nc)
{
    char slice[64], path[256];

    if (tg_name_slice_user_split(nc->name, slice, sizeof(slice)) != 0) {
        step_claim_read(nc);
        return;
    }
    /* a slice name is a DNS subdomain: nothing to escape */
    snprintf(path, sizeof(path), LIQO_API "/resourceslices?fieldSelector=metadata.name%%3D%s", slice);
    next(nc, "GET", path, NULL, on_slices);
}

/* --- 3: a Tenant (the token path only) ------------------------------------- */

static void on_tenants(tg_kube_request *r, const tg_kube_response *resp, void *data)
{
    nchain *nc = data;
    json_object *doc = NULL, *items;

    if (retried(nc, resp))
        return;

    if (resp->status == 404) {     /* no Tenant CRD: no Tenant */
        step_slices(nc);
        return;
    }
    if (resp->status != 200 || !(items = items_of(resp, &doc))) {
        json_object_put(doc);
        api_failed(nc, "list Tenants", resp);
        return;
    }
    for (size_t i = 0; i < json_object_array_length(items); i++) {
        json_object *t = json_object_array_get_idx(items, i);
        const char *id = tg_json_path_string(t, "spec", "clusterID", NULL);
        const char *ns = tg_json_path_string(t, "metadata", "namespace", NULL);
        const char *name = tg_json_path_string(t, "metadata", "name", NULL);

        if (!id || strcmp(id, nc->name) != 0)
            continue;
        snprintf(nc->res.why, sizeof(nc->res.why),
                 "expected no Tenant for %s (it authenticates through the Tenant flow, path tenant), found "
                 "Tenant %.63s/%.63s", nc->name, ns ? ns : "", name ? name : "");
        json_object_put(doc);
        refuse(nc, TG_AUTH_NAME_OWNED);
        return;
    }
    json_object_put(doc);
    step_slices(nc);
}

/* --- 2: the bindings ------------------------------------------------------- */

/* 1 when a binding refuses the name (res set). */
static int binding_refuses(nchain *nc, json_object *items, const char *kind)
{
    for (size_t i = 0; i < json_object_array_length(items); i++) {
        json_object *b = json_object_array_get_idx(items, i);
        tg_binding_owner o = tg_binding_owner_of(b, nc->name);
        const char *ns = tg_json_path_string(b, "metadata", "namespace", NULL);
        const char *bname = tg_json_path_string(b, "metadata", "name", NULL);
        char where[330];

        if (o == TG_BINDING_NONE || (o == TG_BINDING_TOKEN && nc->path == TG_NAME_PATH_TOKEN) ||
            (o == TG_BINDING_TENANT && nc->path == TG_NAME_PATH_TENANT))
            continue;
        snprintf(where, sizeof(where), "%s %.63s%s%.253s", kind, ns ? ns : "", ns ? "/" : "", bname ? bname : "");
        if (o == TG_BINDING_FOREIGN) {
            nc->res.reason = TG_AUTH_NAME_BOUND;
            snprintf(nc->res.why, sizeof(nc->res.why),
                     "expected no RoleBinding or ClusterRoleBinding that tenantgate did not make for %s to name it "
                     "as User or Group, found %s", nc->name, where);
        } else {
            nc->res.reason = TG_AUTH_NAME_OWNED;
            snprintf(nc->res.why, sizeof(nc->res.why),
                     "expected %s to have no identity from another issuing path, found %s of path %s", nc->name,
                     where, o == TG_BINDING_TOKEN ? "token" : "tenant");
        }
        return 1;
    }
    return 0;
}

/* Both lists: 0 when the chain goes on. */
static int bindings_read(nchain *nc, const tg_kube_response *resp, const char *kind, const char *step)
{
    json_object *doc = NULL, *items;
    int refused;

    if (resp->status != 200 || !(items = items_of(resp, &doc))) {
        json_object_put(doc);
        api_failed(nc, step, resp);
        return -1;
    }
    refused = binding_refuses(nc, items, kind);
    json_object_put(doc);
    if (refused)
        refuse(nc, nc->res.reason);
    return refused ? -1 : 0;
}

static void on_clusterrolebindings(tg_kube_request *r, const tg_kube_response *resp, void *data)
{
    nchain *nc = data;

    if (retried(nc, resp))
        return;
    if (bindings_read(nc, resp, "ClusterRoleBinding", "list ClusterRoleBindings") != 0)
        return;
    if (nc->path == TG_NAME_PATH_TOKEN)
        next(nc, "GET", LIQO_API "/tenants", NULL, on_tenants);
    else
        step_slices(nc);
}

static void on_rolebindings(tg_kube_request *r, const tg_kube_response *resp, void *data)
{
    nchain *nc = data;

    if (retried(nc, resp))
        return;
    if (nc->reserved) {
        refuse(nc, TG_AUTH_NAME_RESERVED);
        return;
    }
    if (bindings_read(nc, resp, "RoleBinding", "list RoleBindings") != 0)
        return;
    next(nc, "GET", RBAC_API "/clusterrolebindings", NULL, on_clusterrolebindings);
}

int tg_auth_name_check_start(tg_kube_client *c, const char *name, tg_name_path path, const char *provider_id,
                             tg_auth_name_done done, void *data)
{
    nchain *nc = nchain_new(c, name, path, done, data);

    if (!nc)
        return -1;
    nc->reserved = tg_name_reserved(name, provider_id, nc->res.why, sizeof(nc->res.why));
    nc->get_cb = on_rolebindings;
    snprintf(nc->get_path, sizeof(nc->get_path), "%s", RBAC_API "/rolebindings");
    if (api_send(nc, "GET", nc->get_path, NULL, on_rolebindings) != 0) {
        uv_close((uv_handle_t *)&nc->retry, on_closed);
        return -1;
    }
    return 0;
}

/* --- the claim ------------------------------------------------------------- */

static void on_claim_conflict_read(tg_kube_request *r, const tg_kube_response *resp, void *data)
{
    nchain *nc = data;
    json_object *doc;

    if (retried(nc, resp))
        return;

    if (resp->status != 200) {
        api_failed(nc, "read the NameClaim", resp);
        return;
    }
    doc = tg_json_parse(resp->body, resp->body_len, NULL, 0);
    nc->res.ok = !claim_owned(nc, doc);
    json_object_put(doc);
    finish(nc);
}

static void on_claim_created(tg_kube_request *r, const tg_kube_response *resp, void *data)
{
    nchain *nc = data;
    char obj[TG_NAME_CLAIM_OBJECT_MAX], path[160];

    if (resp->status == 201) {
        nc->res.ok = 1;
        finish(nc);
    } else if (resp->status == 409) {  /* there already: whose? */
        tg_name_claim_object(nc->name, obj);
        snprintf(path, sizeof(path), TG_NAME_CLAIMS_PATH "/%s", obj);
        next(nc, "GET", path, NULL, on_claim_conflict_read);
    } else {
        api_failed(nc, "create the NameClaim (is the CRD nameclaims.tenantgate.io installed?)", resp);
    }
}

static void on_namespace_read(tg_kube_request *r, const tg_kube_response *resp, void *data)
{
    nchain *nc = data;
    json_object *ns = resp->status == 200 ? tg_json_parse(resp->body, resp->body_len, NULL, 0) : NULL;
    const char *uid = ns ? tg_json_path_string(ns, "metadata", "uid", NULL) : NULL;
    json_object *doc;

    if (retried(nc, resp))
        return;

    if (!uid) {
        json_object_put(ns);
        api_failed(nc, "read the tenant namespace (its NameClaim's owner)", resp);
        return;
    }
    doc = tg_name_claim_doc(nc->name, nc->path, nc->name, nc->ns, uid);
    json_object_put(ns);
    next(nc, "POST", TG_NAME_CLAIMS_PATH, doc, on_claim_created);
    json_object_put(doc);
}

int tg_auth_name_claim_start(tg_kube_client *c, const char *name, tg_name_path path, tg_auth_name_done done,
                             void *data)
{
    nchain *nc = nchain_new(c, name, path, done, data);
    char p[160];

    if (!nc)
        return -1;
    snprintf(p, sizeof(p), "/api/v1/namespaces/%s", nc->ns);
    nc->get_cb = on_namespace_read;
    snprintf(nc->get_path, sizeof(nc->get_path), "%s", p);
    if (api_send(nc, "GET", p, NULL, on_namespace_read) != 0) {
        uv_close((uv_handle_t *)&nc->retry, on_closed);
        return -1;
    }
    return 0;
}
