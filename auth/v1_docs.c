/* v1_docs.c - see v1_docs.h. */
#include "v1_docs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/btoken_record.h"
#include "auth/issue_docs.h"
#include "kube/base64.h"
#include "kube/json.h"

json_object *tg_auth_v1_namespace_doc(const char *cluster_id, const char *token_id)
{
    json_object *ns = tg_auth_namespace_doc(cluster_id), *labels = NULL, *m = NULL;

    if (json_object_object_get_ex(ns, "metadata", &m) && json_object_object_get_ex(m, "labels", &labels))
        json_object_object_add(labels, TG_AUTH_BTOKEN_ID_LABEL, json_object_new_string(token_id));
    return ns;
}

json_object *tg_auth_v1_record_nonce_doc(const char *recorded, const char *cluster_id, const char *resource_version)
{
    json_object *d = json_object_new_object(), *m = json_object_new_object(), *a = json_object_new_object();
    size_t len = strlen(recorded) + strlen(cluster_id) + 2;
    char *list = malloc(len);

    if (!list) {
        json_object_put(d);
        json_object_put(m);
        json_object_put(a);
        return NULL;
    }
    snprintf(list, len, "%s%s%s", recorded, *recorded ? "," : "", cluster_id);
    json_object_object_add(a, TG_AUTH_BTOKEN_NONCE_IDS, json_object_new_string(list));
    free(list);
    json_object_object_add(m, "resourceVersion", json_object_new_string(resource_version));
    json_object_object_add(m, "annotations", a);
    json_object_object_add(d, "metadata", m);
    return d;
}

json_object *tg_auth_v1_consume_doc(const char *uid, const char *resource_version)
{
    json_object *d = json_object_new_object(), *p = json_object_new_object();

    json_object_object_add(d, "apiVersion", json_object_new_string("v1"));
    json_object_object_add(d, "kind", json_object_new_string("DeleteOptions"));
    json_object_object_add(p, "uid", json_object_new_string(uid));
    json_object_object_add(p, "resourceVersion", json_object_new_string(resource_version));
    json_object_object_add(d, "preconditions", p);
    return d;
}

int tg_auth_v1_nonce_of(json_object *secret, char *out, size_t len)
{
    const char *b64 = tg_json_path_string(secret, "data", "nonce", NULL);
    size_t n = 0;
    unsigned char *raw = b64 && *b64 ? tg_base64_decode(b64, strlen(b64), &n, NULL, 0) : NULL;
    int rc = -1;

    if (raw && n > 0 && n < len && !memchr(raw, '\0', n)) {
        memcpy(out, raw, n);
        out[n] = '\0';
        rc = 0;
    }
    free(raw);
    return rc;
}

int tg_auth_v1_tenant_signed(json_object *tenant)
{
    const char *crt = tg_json_path_string(tenant, "status", "authParams", "signedCRT", NULL);
    const char *tns = tg_json_path_string(tenant, "status", "tenantNamespace", NULL);

    return crt && *crt && tns && *tns;
}

static char *render(json_object *o, size_t *len)
{
    const char *s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, len);
    char *copy = s ? strdup(s) : NULL;

    json_object_put(o);
    return copy;
}

char *tg_auth_v1_answer_nonce(const char *provider_id, const char *nonce, size_t *len)
{
    json_object *o = json_object_new_object();

    json_object_object_add(o, "clusterID", json_object_new_string(provider_id));
    json_object_object_add(o, "nonce", json_object_new_string(nonce));
    return render(o, len);
}

char *tg_auth_v1_answer_tenant(const char *provider_id, json_object *tenant, const char *api_server_url,
                               const char *ca_pem, size_t ca_len, size_t *len)
{
    json_object *o = json_object_new_object();
    char *ca = tg_base64_encode((const unsigned char *)(ca_pem ? ca_pem : ""), ca_pem ? ca_len : 0, NULL);

    if (!ca) {
        json_object_put(o);
        return NULL;
    }
    json_object_object_add(o, "clusterID", json_object_new_string(provider_id));
    json_object_object_add(o, "tenant", json_object_get(tenant));
    json_object_object_add(o, "apiServerUrl", json_object_new_string(api_server_url ? api_server_url : ""));
    json_object_object_add(o, "apiServerCA", json_object_new_string(ca));
    free(ca);
    return render(o, len);
}

void tg_auth_v1_status_message(const char *body, size_t body_len, char *out, size_t len)
{
    json_object *doc = body && body_len ? tg_json_parse(body, body_len, NULL, 0) : NULL;
    const char *m = doc ? tg_json_string(doc, "message") : NULL;

    snprintf(out, len, "%s", m ? m : "");
    for (char *p = out; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = ' ';
    json_object_put(doc);
}
