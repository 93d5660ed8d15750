/* slice_rbac.c - the per-slice RoleBinding tenantgate-rslice-<name> to
 * tenantgate-resourceslice-user, owned by the slice (slice_rbac.h). */
#include "signer/slice_rbac.h"

#include <stdio.h>
#include <string.h>

#include "signer/slice_certificate.h"

/* ---------- RBAC: the per-slice RoleBinding ---------- */

static void binding_name(const slice_ctx *c, char *out, size_t len)
{
    char h[TG_REQUEST_HASH_LEN + 1];

    if (strlen(BINDING_PREFIX) + strlen(c->name) <= 253) {
        snprintf(out, len, BINDING_PREFIX "%s", c->name);
        return;
    }
    rc_request_hash(c->name, h);   /* a long name: its hash keeps the name valid */
    snprintf(out, len, BINDING_PREFIX "%s", h);
}

/* present: the RoleBinding of User <name>-<h> to tenantgate-resourceslice-user,
 * owned by the slice; else none. */
int rs_ensure_binding(slice_ctx *c, int present)
{
    char name[300], path[1024];
    json_object *rb = NULL;
    long r;
    int own;

    binding_name(c, name, sizeof(name));
    snprintf(path, sizeof(path), "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/rolebindings/%s", c->ns, name);
    if ((r = tg_api_get(c->api, path, &rb, c->err, sizeof(c->err))) != 200 && r != 404)
        return -1;
    own = rb ? rs_owned_by_slice(rb, c->uid) : -1;
    json_object_put(rb);
    if (r == 200 && (!present || own != 1)) {
        r = tg_api_call(c->api, "DELETE", path, TG_KUBE_CT_JSON, NULL, NULL, c->err, sizeof(c->err));
        if (r != 200 && r != 404)
            return -1;
        r = 404;
    }
    if (!present || r == 200)
        return 0;
    r = rc_post_binding(c->api, c->ns, name, c->consumer, "User", c->user, TG_SLICE_USER_CLUSTERROLE, rs_slice_owner(c),
                        c->err, sizeof(c->err));
    return r == 201 || r == 409 ? 0 : -1;
}
