/* rc_object.c - JSON objects the controllers build (strings, owners,
 * authentication.liqo.io objects, authParams), RoleBindings, the Namespace
 * read, and the settled-skip counter (reconcile_common.h). */
#include "signer/reconcile_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/base64.h"
#include "kube/json.h"
#include "kube/tenant_json.h"

typedef struct rv_copy {
    char *rv;
    int found;
} rv_copy;

static void on_rv_copy(json_object *o, void *data)
{
    rv_copy *l = data;
    const char *rv = tg_json_path_string(o, "metadata", "resourceVersion", NULL);

    if (rv && *rv && strlen(rv) < RC_RV_LEN) {
        strcpy(l->rv, rv);
        l->found = 1;
    }
}

const char *rc_cached_rv(tg_cache *c, const char *ns, const char *name, char *rv)
{
    rv_copy l = {.rv = rv};

    if (!c || !tg_cache_synced(c) || !tg_cache_get(c, ns, name, on_rv_copy, &l) || !l.found)
        return NULL;
    return rv;
}

json_object *rc_jstr(const char *s)
{
    return json_object_new_string(s ? s : "");
}

json_object *rc_controller_owner(const char *kind, const char *name, const char *uid)
{
    json_object *owner = json_object_new_object(), *owners = json_object_new_array();

    json_object_object_add(owner, "apiVersion", rc_jstr("authentication.liqo.io/v1beta1"));
    json_object_object_add(owner, "kind", rc_jstr(kind));
    json_object_object_add(owner, "name", rc_jstr(name));
    json_object_object_add(owner, "uid", rc_jstr(uid));
    json_object_object_add(owner, "controller", json_object_new_boolean(1));
    json_object_object_add(owner, "blockOwnerDeletion", json_object_new_boolean(1));
    json_object_array_add(owners, owner);
    return owners;
}

json_object *rc_auth_object(const char *kind, const char *ns, const char *name, json_object *labels,
                            json_object *owners)
{
    json_object *obj = json_object_new_object(), *meta = json_object_new_object();

    json_object_object_add(obj, "apiVersion", rc_jstr("authentication.liqo.io/v1beta1"));
    json_object_object_add(obj, "kind", rc_jstr(kind));
    json_object_object_add(meta, "name", rc_jstr(name));
    json_object_object_add(meta, "namespace", rc_jstr(ns));
    json_object_object_add(meta, "labels", labels);
    if (owners)
        json_object_object_add(meta, "ownerReferences", owners);
    json_object_object_add(obj, "metadata", meta);
    return obj;
}

json_object *rc_auth_params(tg_signer *s, const char *signed_b64, const char *proxy_url)
{
    json_object *ap = json_object_new_object();

    json_object_object_add(ap, "signedCRT", rc_jstr(signed_b64));
    if (s->ca_pem) {
        char *ca = tg_base64_encode((unsigned char *)s->ca_pem, s->ca_len, NULL);
        json_object_object_add(ap, "ca", rc_jstr(ca));
        free(ca);
    }
    json_object_object_add(ap, "apiServer", rc_jstr(s->api_server));
    if (proxy_url)
        json_object_object_add(ap, "proxyURL", rc_jstr(proxy_url));
    return ap;
}

json_object *rc_binding_doc(const char *ns, const char *name, const char *cid, const char *role,
                           json_object *owners, json_object *subjects)
{
    json_object *rb = json_object_new_object(), *meta = json_object_new_object(), *labels = json_object_new_object();
    json_object *ref = json_object_new_object();

    json_object_object_add(rb, "apiVersion", rc_jstr("rbac.authorization.k8s.io/v1"));
    json_object_object_add(rb, "kind", rc_jstr(ns ? "RoleBinding" : "ClusterRoleBinding"));
    json_object_object_add(meta, "name", rc_jstr(name));
    if (ns)
        json_object_object_add(meta, "namespace", rc_jstr(ns));
    json_object_object_add(labels, TG_LABEL_REMOTE_CLUSTER_ID, rc_jstr(cid));
    json_object_object_add(meta, "labels", labels);
    if (owners)
        json_object_object_add(meta, "ownerReferences", json_object_get(owners));
    json_object_object_add(rb, "metadata", meta);
    json_object_object_add(rb, "subjects", json_object_get(subjects));
    json_object_object_add(ref, "apiGroup", rc_jstr("rbac.authorization.k8s.io"));
    json_object_object_add(ref, "kind", rc_jstr("ClusterRole"));
    json_object_object_add(ref, "name", rc_jstr(role));
    json_object_object_add(rb, "roleRef", ref);
    return rb;
}

long rc_post_binding(tg_api *api, const char *ns, const char *name, const char *cid, const char *subject_kind,
                     const char *subject, const char *role, json_object *owners, char *err, size_t err_len)
{
    json_object *subj = json_object_new_object(), *subjs = json_object_new_array(), *rb;
    char path[1024];
    long r;

    json_object_object_add(subj, "kind", rc_jstr(subject_kind));
    json_object_object_add(subj, "apiGroup", rc_jstr("rbac.authorization.k8s.io"));
    json_object_object_add(subj, "name", rc_jstr(subject));
    json_object_array_add(subjs, subj);
    rb = rc_binding_doc(ns, name, cid, role, owners, subjs);
    json_object_put(subjs);
    json_object_put(owners);
    if (ns)
        snprintf(path, sizeof(path), "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/rolebindings", ns);
    else
        snprintf(path, sizeof(path), "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings");
    r = tg_api_call(api, "POST", path, TG_KUBE_CT_JSON, rb, NULL, err, err_len);
    json_object_put(rb);
    return r;
}

long rc_get_namespace(tg_api *api, const char *ns, json_object **out, char *err, size_t err_len)
{
    char path[320];
    long st;

    *out = NULL;
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s", ns);
    if ((st = tg_api_get(api, path, out, err, err_len)) != 200 && *out != NULL) {
        json_object_put(*out);
        *out = NULL;
    }
    return st;
}

void rc_count_skip(tg_signer *s, const char *controller)
{
    if (s->m_settled_skips)
        tg_counter_add(tg_metric_series_get(s->m_settled_skips, (const char *[]){controller}), 1);
}
