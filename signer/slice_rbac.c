/* slice_rbac.c - the slice user's rights: none of its own, as under Liqo's
 * provider (slice_rbac.h). Removes the RoleBinding tenantgate-rslice-<name>
 * that tenantgate made before it followed Liqo. */
#include "signer/slice_rbac.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "signer/slice_certificate.h"

static void binding_name(const slice_ctx *c, char *out, size_t len)
{
    char h[TG_REQUEST_HASH_LEN + 1];

    if (strlen(BINDING_PREFIX) + strlen(c->name) <= 253) {
        snprintf(out, len, BINDING_PREFIX "%s", c->name);
        return;
    }
    rc_request_hash(c->name, h);   /* a long name: its hash kept the name valid */
    snprintf(out, len, BINDING_PREFIX "%s", h);
}

/* Liqo binds nothing to a slice's user: it acts through Group <consumer>
 * (the cluster-wide binding) and the offloading module's namespace bindings.
 * A binding under tenantgate's per-slice name (an older signer's) is
 * deleted: the name is tenantgate's, and what it granted is no longer due. */
/* Once found absent (or deleted) for a slice, the binding is not looked for
 * again this long: the signer never makes one, only an older signer did. */
#define NO_BINDING_MS (3600 * 1000)

static void gone_key(const slice_ctx *c, char *key, size_t len)
{
    snprintf(key, len, "slice-rb-gone/%s", c->uid ? c->uid : "");
}

static void note_gone(slice_ctx *c)
{
    char key[300];
    uint64_t now = tg_wq_now_ms();

    gone_key(c, key, sizeof(key));
    if (c->s->settled && c->uid)
        tg_settled_mark(c->s->settled, key, "1", now, now + NO_BINDING_MS);
}

/* The old bindings of a namespace, listed once for its slices (a settled
 * mark of "\n<name>\n..." for NS_LIST_MS): a slice whose binding is not
 * in it needs no GET. */
#define NS_LIST_MS (600 * 1000)
#define NS_LIST_MAX 8192

/* 1 when the live list of the namespace shows no binding `name`. */
static int list_absent(slice_ctx *c, const char *name)
{
    char key[300], path[1024], *names = malloc(NS_LIST_MAX), want[320];
    json_object *list = NULL, *items;
    uint64_t now = tg_wq_now_ms();
    size_t len = 1;
    int absent = 0;

    snprintf(key, sizeof(key), "slice-rb-names/%s", c->ns);
    snprintf(want, sizeof(want), "\n%s\n", name);
    if (!names || !c->s->settled)
        goto out;
    if (tg_settled_marked(c->s->settled, key, names, NS_LIST_MAX, now)) {
        absent = strlen(names) < NS_LIST_MAX - 1 && !strstr(names, want);
        goto out;
    }
    snprintf(path, sizeof(path), "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/rolebindings", c->ns);
    if (tg_api_get(c->api, path, &list, c->err, sizeof(c->err)) != 200)
        goto out;   /* the GET of the one binding decides */
    strcpy(names, "\n");
    items = tg_json_path(list, "items", NULL);
    for (size_t i = 0; items && json_object_is_type(items, json_type_array) && i < json_object_array_length(items);
         i++) {
        const char *n = tg_json_path_string(json_object_array_get_idx(items, i), "metadata", "name", NULL);
        if (!n || strncmp(n, BINDING_PREFIX, strlen(BINDING_PREFIX)) != 0)
            continue;
        if (len + strlen(n) + 2 >= NS_LIST_MAX)
            goto out;   /* too many to remember: each slice looks for its own */
        len += (size_t)sprintf(names + len, "%s\n", n);
    }
    tg_settled_mark(c->s->settled, key, names, now, now + NS_LIST_MS);
    absent = !strstr(names, want);
out:
    json_object_put(list);
    free(names);
    return absent;
}

static void on_binding(json_object *o, void *data)
{
    (void)o;
    *(int *)data = 1;
}

/* 1 when the namespace's list shows no binding `name`, 0 when it may: the
 * RoleBinding informer's cache when synced (it holds every binding), else
 * a live list. */
static int listed_absent(slice_ctx *c, const char *name)
{
    int found = 0;

    if (c->s->rb_cache && tg_cache_synced(c->s->rb_cache)) {
        tg_cache_get(c->s->rb_cache, c->ns, name, on_binding, &found);
        return !found;
    }
    return list_absent(c, name);
}

int rs_drop_old_binding(slice_ctx *c)
{
    char name[300], path[1024], key[300], v[4];
    json_object *rb = NULL;
    long r;

    gone_key(c, key, sizeof(key));
    if (c->s->settled && c->uid && tg_settled_marked(c->s->settled, key, v, sizeof(v), tg_wq_now_ms()))
        return 0;
    binding_name(c, name, sizeof(name));
    if (listed_absent(c, name)) {
        note_gone(c);
        return 0;
    }
    snprintf(path, sizeof(path), "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/rolebindings/%s", c->ns, name);
    if ((r = tg_api_get(c->api, path, &rb, c->err, sizeof(c->err))) != 200 && r != 404)
        return -1;
    json_object_put(rb);
    if (r == 200)
        r = tg_api_call(c->api, "DELETE", path, TG_KUBE_CT_JSON, NULL, NULL, c->err, sizeof(c->err));
    if (r != 200 && r != 404)
        return -1;
    note_gone(c);
    return 0;
}
