/* issue_docs.c - see issue_docs.h. */
#include "issue_docs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "kube/base64.h"
#include "kube/json.h"

void tg_auth_tenant_namespace(const char *cluster_id, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s", TG_AUTH_TENANT_NS_PREFIX, cluster_id);
}

static json_object *meta(const char *name, const char *ns)
{
    json_object *m = json_object_new_object();

    if (name)
        json_object_object_add(m, "name", json_object_new_string(name));
    if (ns)
        json_object_object_add(m, "namespace", json_object_new_string(ns));
    return m;
}

static json_object *doc(const char *api_version, const char *kind, json_object *metadata)
{
    json_object *d = json_object_new_object();

    json_object_object_add(d, "apiVersion", json_object_new_string(api_version));
    json_object_object_add(d, "kind", json_object_new_string(kind));
    json_object_object_add(d, "metadata", metadata);
    return d;
}

json_object *tg_auth_namespace_doc(const char *cluster_id)
{
    char ns[96];
    json_object *m, *labels = json_object_new_object();

    tg_auth_tenant_namespace(cluster_id, ns, sizeof(ns));
    m = meta(ns, NULL);
    json_object_object_add(labels, "liqo.io/tenant-namespace", json_object_new_string("true"));
    json_object_object_add(labels, "liqo.io/remote-cluster-id", json_object_new_string(cluster_id));
    json_object_object_add(m, "labels", labels);
    return doc("v1", "Namespace", m);
}

json_object *tg_auth_rolebinding_doc(const char *cluster_id, const char *cluster_role, const char *group)
{
    char ns[96];
    json_object *d, *ref = json_object_new_object(), *subj = json_object_new_object(),
                    *subjects = json_object_new_array();

    tg_auth_tenant_namespace(cluster_id, ns, sizeof(ns));
    d = doc("rbac.authorization.k8s.io/v1", "RoleBinding", meta(TG_AUTH_ROLEBINDING, ns));
    json_object_object_add(ref, "apiGroup", json_object_new_string("rbac.authorization.k8s.io"));
    json_object_object_add(ref, "kind", json_object_new_string("ClusterRole"));
    json_object_object_add(ref, "name", json_object_new_string(cluster_role));
    json_object_object_add(subj, "apiGroup", json_object_new_string("rbac.authorization.k8s.io"));
    json_object_object_add(subj, "kind", json_object_new_string(group ? "Group" : "User"));
    json_object_object_add(subj, "name", json_object_new_string(group ? group : cluster_id));
    json_object_array_add(subjects, subj);
    json_object_object_add(d, "roleRef", ref);
    json_object_object_add(d, "subjects", subjects);
    return d;
}

json_object *tg_auth_csr_doc(const char *cluster_id, const unsigned char *pem, size_t len, long expiration_s)
{
    char prefix[96];
    json_object *m = json_object_new_object(), *labels = json_object_new_object(), *spec = json_object_new_object(),
                *usages = json_object_new_array();
    char *b64 = tg_base64_encode(pem, len, NULL);

    if (!b64) {
        json_object_put(m);
        json_object_put(labels);
        json_object_put(spec);
        json_object_put(usages);
        return NULL;
    }
    snprintf(prefix, sizeof(prefix), "tenantgate-auth-%s-", cluster_id);
    json_object_object_add(m, "generateName", json_object_new_string(prefix));
    json_object_object_add(labels, TG_AUTH_LABEL_CSR, json_object_new_string("true"));
    json_object_object_add(labels, "liqo.io/remote-cluster-id", json_object_new_string(cluster_id));
    json_object_object_add(m, "labels", labels);
    json_object_object_add(spec, "request", json_object_new_string(b64));
    json_object_object_add(spec, "signerName", json_object_new_string(TG_AUTH_CSR_SIGNER));
    json_object_array_add(usages, json_object_new_string("client auth"));
    json_object_object_add(spec, "usages", usages);
    if (expiration_s > 0)
        json_object_object_add(spec, "expirationSeconds", json_object_new_int64(expiration_s));
    free(b64);
    {
        json_object *d = doc("certificates.k8s.io/v1", "CertificateSigningRequest", m);
        json_object_object_add(d, "spec", spec);
        return d;
    }
}

int tg_auth_csr_approve(json_object *csr)
{
    json_object *status, *conds, *c;

    if (!json_object_is_type(csr, json_type_object) || !tg_json_path(csr, "spec", NULL))
        return -1;
    if (!json_object_object_get_ex(csr, "status", &status) || !json_object_is_type(status, json_type_object)) {
        status = json_object_new_object();
        json_object_object_add(csr, "status", status);
    }
    if (!json_object_object_get_ex(status, "conditions", &conds) || !json_object_is_type(conds, json_type_array)) {
        conds = json_object_new_array();
        json_object_object_add(status, "conditions", conds);
    }
    c = json_object_new_object();
    json_object_object_add(c, "type", json_object_new_string("Approved"));
    json_object_object_add(c, "status", json_object_new_string("True"));
    json_object_object_add(c, "reason", json_object_new_string(TG_AUTH_APPROVAL_REASON));
    json_object_object_add(c, "message",
                           json_object_new_string("tenantgate-auth: the peering token matched; subject checked"));
    return json_object_array_add(conds, c);
}

tg_auth_csr_state tg_auth_csr_read(json_object *csr, const char **cert_b64)
{
    json_object *conds = tg_json_path(csr, "status", "conditions", NULL);
    const char *crt = tg_json_path_string(csr, "status", "certificate", NULL);

    if (conds && json_object_is_type(conds, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(conds); i++) {
            const char *t = tg_json_string(json_object_array_get_idx(conds, i), "type");
            if (t && (strcmp(t, "Denied") == 0 || strcmp(t, "Failed") == 0))
                return TG_AUTH_CSR_REFUSED;
        }
    }
    if (crt && *crt) {
        *cert_b64 = crt;
        return TG_AUTH_CSR_ISSUED;
    }
    return TG_AUTH_CSR_WAITING;
}

json_object *tg_auth_origin_token_doc(const char *ns, const char *cluster_id, const char *token, size_t len)
{
    char name[128], *b64 = tg_base64_encode((const unsigned char *)token, len, NULL);
    json_object *d, *labels, *data;

    if (!b64)
        return NULL;
    snprintf(name, sizeof(name), TG_AUTH_ORIGIN_TOKEN_PREFIX "%s", cluster_id);
    d = doc("v1", "Secret", meta(name, ns));
    labels = json_object_new_object();
    json_object_object_add(labels, "discovery.liqo.io/cluster-id", json_object_new_string(cluster_id));
    json_object_object_add(labels, "discovery.liqo.io/auth-token", json_object_new_string(""));
    json_object_object_add(json_object_object_get(d, "metadata"), "labels", labels);
    json_object_object_add(d, "type", json_object_new_string("Opaque"));
    data = json_object_new_object();
    json_object_object_add(data, "token", json_object_new_string(b64));
    json_object_object_add(d, "data", data);
    sodium_memzero(b64, strlen(b64));
    free(b64);
    return d;
}
