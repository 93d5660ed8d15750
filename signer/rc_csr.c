/* rc_csr.c - the CSRs the Tenant and ResourceSlice controllers make: their
 * decision, request hash, creation, and the newest of several
 * (reconcile_common.h). */
#include "signer/reconcile_common.h"

#include <stdio.h>
#include <string.h>

#include "kube/json.h"
#include "kube/tenant_json.h"
#include "signer/approve_decide.h"

/* The Approved/Denied condition already there: 1 approved, -1 denied, 0 none. */
int rc_csr_decided(json_object *csr)
{
    json_object *c = tg_json_path(csr, "status", "conditions", NULL);
    size_t i;

    for (i = 0; c && json_object_is_type(c, json_type_array) && i < json_object_array_length(c); i++) {
        const char *t = tg_json_string(json_object_array_get_idx(c, i), "type");
        if (t && strcmp(t, "Approved") == 0)
            return 1;
        if (t && (strcmp(t, "Denied") == 0 || strcmp(t, "Failed") == 0))
            return -1;
    }
    return 0;
}

void rc_request_hash(const char *csr_b64, char out[TG_REQUEST_HASH_LEN + 1])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0, i;

    out[0] = '\0';
    if (!csr_b64 || EVP_Digest(csr_b64, strlen(csr_b64), md, &n, EVP_sha256(), NULL) != 1)
        return;
    for (i = 0; i < TG_REQUEST_HASH_LEN / 2 && i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
}

long rc_create_csr(tg_signer *s, tg_api *api, const char *request_b64, const char *cid, const char *hash,
                   json_object *labels, json_object *annotations, char *created, size_t created_len, char *err,
                   size_t err_len)
{
    json_object *resp = NULL;
    json_object *csr = json_object_new_object(), *meta = json_object_new_object();
    json_object *spec = json_object_new_object(), *usages = json_object_new_array();
    char created_ms[32];
    struct timespec now;
    long r;

    if (!labels)
        labels = json_object_new_object();
    clock_gettime(CLOCK_REALTIME, &now);
    snprintf(created_ms, sizeof(created_ms), "%lld", (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000);
    json_object_object_add(csr, "apiVersion", rc_jstr("certificates.k8s.io/v1"));
    json_object_object_add(csr, "kind", rc_jstr("CertificateSigningRequest"));
    json_object_object_add(meta, "generateName", rc_jstr("liqo-identity-"));
    json_object_object_add(labels, TG_LABEL_TENANT_CSR, rc_jstr("true"));
    json_object_object_add(labels, TG_LABEL_REMOTE_CLUSTER_ID, rc_jstr(cid));
    if (hash && *hash)
        json_object_object_add(labels, TG_LABEL_CSR_REQUEST, rc_jstr(hash));
    json_object_object_add(labels, TG_LABEL_CSR_CREATED_MS, json_object_new_string(created_ms));
    json_object_object_add(meta, "labels", labels);
    if (annotations)
        json_object_object_add(meta, "annotations", annotations);
    json_object_object_add(csr, "metadata", meta);
    /* the object's spec.csr is already base64 of the PEM: the same bytes the webhook admitted */
    json_object_object_add(spec, "request", rc_jstr(request_b64));
    json_object_object_add(spec, "signerName", rc_jstr(s->signer_name));
    json_object_array_add(usages, rc_jstr("digital signature"));
    json_object_array_add(usages, rc_jstr("key encipherment"));
    json_object_array_add(usages, rc_jstr("client auth"));
    json_object_object_add(spec, "usages", usages);
    if (s->csr_expiration_s > 0)
        json_object_object_add(spec, "expirationSeconds", json_object_new_int64(s->csr_expiration_s));
    json_object_object_add(csr, "spec", spec);
    /* the answer is kept for the approver's read of it (api.h) */
    r = tg_api_write(api, s->settled, "POST", CSR_API, TG_KUBE_CT_JSON, csr, CSR_STASH_MS, &resp, err, err_len);
    if (created && created_len) {
        const char *n = tg_json_path_string(resp, "metadata", "name", NULL);
        snprintf(created, created_len, "%s", r == 201 && n ? n : "");
    }
    json_object_put(resp);
    json_object_put(csr);
    return r;
}

int rc_csr_pick_newer(rc_csr_pick *p, const char *name, const char *ts, long long ms, int issued, int denied)
{
    int cmp = p->found ? strcmp(ts, p->ts) : 1;

    if (cmp == 0)
        cmp = ms > p->ms ? 1 : ms < p->ms ? -1 : 0;
    if (cmp < 0 || (cmp == 0 && strcmp(name, p->name) < 0))
        return 0;
    strcpy(p->ts, ts);
    strcpy(p->name, name);
    p->ms = ms;
    p->issued = issued;
    p->denied = denied;
    p->found = 1;
    return 1;
}
