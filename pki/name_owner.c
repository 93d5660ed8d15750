/* name_owner.c - see name_owner.h. */
#include "name_owner.h"

#include "cert_group.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>

#define TENANT_NS_PREFIX "liqo-tenant-"
#define TENANT_BINDING_PREFIX "liqo-binding-"
#define CLUSTERWIDE_BINDING_PREFIX "liqo-binding-liqo-virtual-kubelet-remote-clusterwide-"
/* What Liqo's NamespaceMap controller puts on the RoleBinding it makes in
 * every namespace it offloads for a consumer (Liqo v1.0 to v1.2,
 * offloading/namespacemap-controller/enforcement.go). */
#define OFFLOAD_CLUSTERROLE "liqo-virtual-kubelet-remote"
#define LABEL_MANAGED_BY "app.kubernetes.io/managed-by"
#define LABEL_REMOTE_CLUSTER_ID "liqo.io/remote-cluster-id"
#define SLICE_USER_HASH 12

static const char *const paths[TG_NAME_PATH_COUNT] = {
    [TG_NAME_PATH_TENANT] = "tenant",
    [TG_NAME_PATH_SLICE] = "slice",
    [TG_NAME_PATH_TOKEN] = "token",
};

const char *tg_name_path_string(tg_name_path p)
{
    return (unsigned)p < TG_NAME_PATH_COUNT ? paths[p] : NULL;
}

tg_name_path tg_name_path_parse(const char *s)
{
    for (int p = 0; s && p < TG_NAME_PATH_COUNT; p++)
        if (strcmp(s, paths[p]) == 0)
            return (tg_name_path)p;
    return TG_NAME_PATH_COUNT;
}

int tg_name_reserved(const char *name, const char *provider_id, char *why, size_t why_len)
{
    const char *msg = NULL;

    if (!name || !name[0])
        msg = "expected a name, found an empty one";
    else if (strncasecmp(name, "system:", 7) == 0)
        msg = "expected a name outside the reserved prefix system: (Kubernetes' own users and groups)";
    else if (strncmp(name, TG_NAME_LIQO_PEER_USER_PREFIX, strlen(TG_NAME_LIQO_PEER_USER_PREFIX)) == 0)
        msg = "expected a name outside the prefix " TG_NAME_LIQO_PEER_USER_PREFIX
              " (the users of liqoctl generate peering-user)";
    else if (tg_cert_group_is_form(name))
        msg = "expected a name outside the prefix " TG_CERT_GROUP_PREFIX
              " (the per-certificate groups, which only their own certificate carries)";
    else if (provider_id && strcmp(name, provider_id) == 0)
        msg = "expected another cluster's id, found this cluster's own";
    if (msg)
        snprintf(why, why_len, "%s", msg);
    return msg != NULL;
}

void tg_name_claim_object(const char *name, char out[TG_NAME_CLAIM_OBJECT_MAX])
{
    unsigned char md[32];
    unsigned int n = 0;

    EVP_Digest(name, strlen(name), md, &n, EVP_sha256(), NULL);
    out[0] = 'n';
    out[1] = '-';
    for (unsigned i = 0; i < 32; i++)
        snprintf(out + 2 + 2 * i, 3, "%02x", md[i]);
}

static const char *str_at(json_object *o, const char *k1, const char *k2)
{
    json_object *v = NULL;

    if (!o || !json_object_object_get_ex(o, k1, &v))
        return NULL;
    if (k2 && !json_object_object_get_ex(v, k2, &v))
        return NULL;
    return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static json_object *subjects_of(json_object *b)
{
    json_object *s = NULL;

    if (!b || !json_object_object_get_ex(b, "subjects", &s) || !json_object_is_type(s, json_type_array))
        return NULL;
    return s;
}

/* A User or Group subject (apiGroup rbac or unset) called name. */
static int subject_is(json_object *sub, const char *kind, const char *name)
{
    const char *k = str_at(sub, "kind", NULL), *n = str_at(sub, "name", NULL);

    return k && n && strcmp(n, name) == 0 && (kind ? strcmp(k, kind) == 0
                                                   : (strcmp(k, "User") == 0 || strcmp(k, "Group") == 0));
}

int tg_binding_names(json_object *b, const char *name)
{
    json_object *s = subjects_of(b);

    for (size_t i = 0; s && i < json_object_array_length(s); i++)
        if (subject_is(json_object_array_get_idx(s, i), NULL, name))
            return 1;
    return 0;
}

/* Exactly one subject, kind/name, and a ClusterRole: the shape of every
 * binding tenantgate (and Liqo's provider) makes for one identity. */
static int single_subject(json_object *b, const char *kind, const char *name)
{
    json_object *s = subjects_of(b);
    const char *ref = str_at(b, "roleRef", "kind");

    return s && json_object_array_length(s) == 1 && subject_is(json_object_array_get_idx(s, 0), kind, name) &&
           ref && strcmp(ref, "ClusterRole") == 0;
}

/* 1 when b's label key has the value want. */
static int label_is(json_object *b, const char *key, const char *want)
{
    json_object *meta = NULL, *labels = NULL;
    const char *v;

    if (!json_object_object_get_ex(b, "metadata", &meta) || !json_object_object_get_ex(meta, "labels", &labels))
        return 0;
    v = str_at(labels, key, NULL);
    return v && strcmp(v, want) == 0;
}

/* Liqo's offload RoleBinding for consumer name, exactly as Liqo makes it:
 * named after the consumer's tenant namespace (liqo-tenant-<name>), labelled
 * managed-by liqo and remote-cluster-id <name>, the one subject Group <name>,
 * the ClusterRole liqo-virtual-kubelet-remote; in the namespace Liqo created
 * for the offload, which is never a tenant namespace.
 *
 * Whoever may write RoleBindings in a namespace can copy that shape there, so
 * the shape proves nothing about who made it. It need not: a binding only
 * ever blocks issuance (NameBound), so counting one as Liqo's only lets
 * <name> still be issued to whoever owns it by the Tenant flow (its NameClaim,
 * its tenant namespace); it never makes a name issuable to anyone else. What
 * the issued certificate then also gets is what the binding's maker granted
 * in a namespace where it may grant it anyway (RBAC's escalation check holds
 * for the ClusterRole), and only Liqo's offload rights: another ClusterRole,
 * another subject or a second one, or a tenant namespace (whose Secrets are
 * a consumer's keys) stays foreign. */
static int liqo_offload_binding(json_object *b, const char *ns, const char *bname, const char *name)
{
    size_t plen = strlen(TENANT_NS_PREFIX);
    const char *role = str_at(b, "roleRef", "name");

    return strncmp(ns, TENANT_NS_PREFIX, plen) != 0 && strncmp(bname, TENANT_NS_PREFIX, plen) == 0 &&
           strcmp(bname + plen, name) == 0 && single_subject(b, "Group", name) && role &&
           strcmp(role, OFFLOAD_CLUSTERROLE) == 0 && label_is(b, LABEL_MANAGED_BY, "liqo") &&
           label_is(b, LABEL_REMOTE_CLUSTER_ID, name);
}

static tg_binding_owner rolebinding_owner(json_object *b, const char *ns, const char *bname, const char *name)
{
    size_t plen = strlen(TENANT_NS_PREFIX);

    if (liqo_offload_binding(b, ns, bname, name))
        return TG_BINDING_TENANT;
    if (strncmp(ns, TENANT_NS_PREFIX, plen) != 0 || strcmp(ns + plen, name) != 0 || !single_subject(b, "User", name))
        return TG_BINDING_FOREIGN;
    if (strcmp(bname, TG_NAME_AUTH_ROLEBINDING) == 0)
        return TG_BINDING_TOKEN;
    if (strncmp(bname, TENANT_BINDING_PREFIX, strlen(TENANT_BINDING_PREFIX)) == 0 ||
        (strncmp(bname, TENANT_NS_PREFIX, plen) == 0 && strcmp(bname + plen, name) == 0))
        return TG_BINDING_TENANT;
    return TG_BINDING_FOREIGN;
}

tg_binding_owner tg_binding_owner_of(json_object *b, const char *name)
{
    const char *ns = str_at(b, "metadata", "namespace"), *bname = str_at(b, "metadata", "name");
    size_t plen = strlen(CLUSTERWIDE_BINDING_PREFIX);

    if (!name || !tg_binding_names(b, name))
        return TG_BINDING_NONE;
    if (!bname)
        return TG_BINDING_FOREIGN;
    if (ns)
        return rolebinding_owner(b, ns, bname, name);
    if (strncmp(bname, CLUSTERWIDE_BINDING_PREFIX, plen) == 0 && strcmp(bname + plen, name) == 0 &&
        single_subject(b, "Group", name))
        return TG_BINDING_TENANT;
    return TG_BINDING_FOREIGN;
}

int tg_name_slice_user_split(const char *user, char *out, size_t out_len)
{
    size_t n = user ? strlen(user) : 0, base;

    if (n < 2 + SLICE_USER_HASH || user[n - SLICE_USER_HASH - 1] != '-')
        return -1;
    for (size_t i = n - SLICE_USER_HASH; i < n; i++)
        if (!((user[i] >= '0' && user[i] <= '9') || (user[i] >= 'a' && user[i] <= 'f')))
            return -1;
    base = n - SLICE_USER_HASH - 1;
    if (base >= out_len)
        return -1;
    memcpy(out, user, base);
    out[base] = '\0';
    return 0;
}

json_object *tg_name_claim_doc(const char *name, tg_name_path path, const char *holder, const char *ns,
                               const char *ns_uid)
{
    json_object *d = json_object_new_object(), *meta = json_object_new_object(), *spec = json_object_new_object();
    char obj[TG_NAME_CLAIM_OBJECT_MAX];

    tg_name_claim_object(name, obj);
    json_object_object_add(d, "apiVersion", json_object_new_string(TG_NAME_CLAIM_API_VERSION));
    json_object_object_add(d, "kind", json_object_new_string("NameClaim"));
    json_object_object_add(meta, "name", json_object_new_string(obj));
    if (ns && ns_uid) {
        json_object *refs = json_object_new_array(), *ref = json_object_new_object();
        json_object_object_add(ref, "apiVersion", json_object_new_string("v1"));
        json_object_object_add(ref, "kind", json_object_new_string("Namespace"));
        json_object_object_add(ref, "name", json_object_new_string(ns));
        json_object_object_add(ref, "uid", json_object_new_string(ns_uid));
        json_object_array_add(refs, ref);
        json_object_object_add(meta, "ownerReferences", refs);
    }
    json_object_object_add(d, "metadata", meta);
    json_object_object_add(spec, "name", json_object_new_string(name));
    json_object_object_add(spec, "path", json_object_new_string(tg_name_path_string(path)));
    json_object_object_add(spec, "holder", json_object_new_string(holder));
    json_object_object_add(d, "spec", spec);
    return d;
}

int tg_name_claim_is(json_object *claim, const char *name, tg_name_path path, const char *holder, char *owner,
                     size_t owner_len)
{
    const char *n = str_at(claim, "spec", "name"), *p = str_at(claim, "spec", "path");
    const char *h = str_at(claim, "spec", "holder");

    if (!n || !p || !h) {
        snprintf(owner, owner_len, "unreadable");
        return 0;
    }
    snprintf(owner, owner_len, "%.16s %.200s", p, h);
    return strcmp(n, name) == 0 && tg_name_path_parse(p) == path && strcmp(h, holder) == 0;
}
