/* cmd_preflight_csr.c - does the provider's kubernetes.io/kube-apiserver-client
 * signer sign? (EKS's does not.) Only a real round trip tells: a CSR for a
 * throwaway name, approved by us, and a certificate in its status. It needs
 * a kubeconfig that may create, approve and delete CSRs; without one the
 * check is SKIP. The key is made here and never leaves this process, so the
 * certificate, valid 10 minutes, is of use to nobody; the CSR is deleted. */
#include "preflight_run.h"

#include <stdlib.h>
#include <string.h>
#include <openssl/rand.h>

#include "kube/base64.h"
#include "kube/json.h"
#include "pki/csr.h"

#define CSR_API "/apis/certificates.k8s.io/v1/certificatesigningrequests"
#define CSR_EXPIRATION_S 600          /* the least Kubernetes accepts */
#define SIGN_WAIT_MS 15000L           /* kube-controller-manager signs in well under a second */
#define POLL_MS 250

static json_object *csr_object(const char *name, const char *pem, size_t pem_len)
{
    json_object *o = json_object_new_object(), *meta = json_object_new_object(),
                *labels = json_object_new_object(), *spec = json_object_new_object(),
                *usages = json_object_new_array();
    char *b64 = tg_base64_encode((const unsigned char *)pem, pem_len, NULL);

    json_object_object_add(o, "apiVersion", json_object_new_string("certificates.k8s.io/v1"));
    json_object_object_add(o, "kind", json_object_new_string("CertificateSigningRequest"));
    json_object_object_add(meta, "name", json_object_new_string(name));
    json_object_object_add(labels, "tenantgate.io/preflight", json_object_new_string("true"));
    json_object_object_add(meta, "labels", labels);
    json_object_object_add(o, "metadata", meta);
    json_object_object_add(spec, "request", json_object_new_string(b64 ? b64 : ""));
    json_object_object_add(spec, "signerName", json_object_new_string(PF_CLIENT_SIGNER));
    json_object_object_add(spec, "expirationSeconds", json_object_new_int(CSR_EXPIRATION_S));
    json_object_array_add(usages, json_object_new_string("client auth"));
    json_object_object_add(spec, "usages", usages);
    json_object_object_add(o, "spec", spec);
    free(b64);
    return o;
}

/* Our approval, added to the CSR as the API server gave it back. */
static void add_approval(json_object *csr)
{
    json_object *status = json_object_new_object(), *conds = json_object_new_array(),
                *cond = json_object_new_object();

    json_object_object_add(cond, "type", json_object_new_string("Approved"));
    json_object_object_add(cond, "status", json_object_new_string("True"));
    json_object_object_add(cond, "reason", json_object_new_string("TenantgatePreflight"));
    json_object_object_add(cond, "message",
                           json_object_new_string("kubectl tenantgate preflight: a throwaway request"));
    json_object_array_add(conds, cond);
    json_object_object_add(status, "conditions", conds);
    json_object_object_add(csr, "status", status);
}

/* The condition type other than Approved that ends a CSR (Denied, Failed), or NULL. */
static const char *final_condition(json_object *csr, const char **msg)
{
    json_object *conds = tg_json_path(csr, "status", "conditions", NULL);

    for (size_t i = 0; conds != NULL && i < json_object_array_length(conds); i++) {
        json_object *it = json_object_array_get_idx(conds, i);
        const char *type = tg_json_string(it, "type");

        if (type != NULL && (strcmp(type, "Denied") == 0 || strcmp(type, "Failed") == 0)) {
            *msg = tg_json_string(it, "message");
            return type;
        }
    }
    return NULL;
}

/* Poll until signed, ended, or SIGN_WAIT_MS. */
static void await_signature(pf_ctx *c, const char *path, const char *cn, long started_ms)
{
    char terr[256];

    for (;;) {
        json_object *doc = NULL;
        const char *type, *msg = NULL;
        long st = cli_cluster_call(&c->provider, "GET", path, NULL, TG_KUBE_CT_JSON, &doc, NULL, terr,
                                   sizeof(terr));

        if (st == 200 && tg_json_path_string(doc, "status", "certificate", NULL) != NULL) {
            pf_line(c, PF_PASS, "csr-signer", "%s signed a throwaway CSR (CN=%s, %s key) in %ld ms",
                    PF_CLIENT_SIGNER, cn, tg_key_type_name(c->key_type), cli_now_ms() - started_ms);
        } else if (st == 200 && (type = final_condition(doc, &msg)) != NULL) {
            pf_line(c, PF_FAIL, "csr-signer", "the throwaway CSR for %s is %s: %s", PF_CLIENT_SIGNER, type,
                    msg ? msg : "(no message)");
        } else if (st != 200) {
            pf_line(c, PF_FAIL, "csr-signer", "cannot read back the throwaway CSR (%ld%s%s)", st,
                    st < 0 ? ": " : "", st < 0 ? terr : "");
        } else if (cli_now_ms() - started_ms > SIGN_WAIT_MS) {
            pf_line(c, PF_FAIL, "csr-signer", "%s did not sign an approved CSR within %ld s (EKS's does "
                    "not sign it at all)", PF_CLIENT_SIGNER, SIGN_WAIT_MS / 1000);
        } else {
            json_object_put(doc);
            uv_sleep(POLL_MS);
            continue;
        }
        json_object_put(doc);
        return;
    }
}

/* Create and approve; 0 when approved, else a FAIL line was printed. */
static int create_and_approve(pf_ctx *c, const char *name, const char *path, const char *pem, size_t pem_len)
{
    json_object *obj = csr_object(name, pem, pem_len), *made = NULL;
    char approval[512], terr[256];
    long st = cli_cluster_call(&c->provider, "POST", CSR_API, obj, TG_KUBE_CT_JSON, &made, NULL, terr,
                               sizeof(terr));
    int rc = -1;

    if (st != 201 || made == NULL) {
        pf_line(c, PF_FAIL, "csr-signer", "cannot create a CSR (%ld%s%s)", st, st < 0 ? ": " : "",
                st < 0 ? terr : "");
        goto out;
    }
    add_approval(made);
    snprintf(approval, sizeof(approval), "%s/approval", path);
    st = cli_cluster_call(&c->provider, "PUT", approval, made, TG_KUBE_CT_JSON, NULL, NULL, terr, sizeof(terr));
    if (st != 200)
        pf_line(c, PF_FAIL, "csr-signer", "cannot approve the throwaway CSR (%ld%s%s)", st,
                st < 0 ? ": " : "", st < 0 ? terr : "");
    else
        rc = 0;
out:
    json_object_put(obj);
    json_object_put(made);
    return rc;
}

static void round_trip(pf_ctx *c)
{
    unsigned char rnd[4];
    char name[64], path[256], terr[256];
    size_t pem_len = 0;
    char *pem = NULL;
    EVP_PKEY *key = tg_key_generate(c->key_type);
    long started_ms = cli_now_ms();

    if (key == NULL || RAND_bytes(rnd, sizeof(rnd)) != 1) {
        pf_line(c, PF_FAIL, "csr-signer", "cannot make a key here");
        goto out;
    }
    snprintf(name, sizeof(name), "tenantgate-preflight-%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2], rnd[3]);
    snprintf(path, sizeof(path), CSR_API "/%s", name);
    if ((pem = tg_csr_build_subject(key, name, "tenantgate-preflight", &pem_len)) == NULL) {
        pf_line(c, PF_FAIL, "csr-signer", "cannot build a CSR here");
        goto out;
    }
    if (create_and_approve(c, name, path, pem, pem_len) == 0)
        await_signature(c, path, name, started_ms);
    /* whatever happened after the create; a 404 is a CSR never made */
    cli_cluster_call(&c->provider, "DELETE", path, NULL, TG_KUBE_CT_JSON, NULL, NULL, terr, sizeof(terr));
out:
    free(pem);
    EVP_PKEY_free(key);
}

void pf_check_csr_signer(pf_ctx *c)
{
    char missing[256];
    int allowed;

    if (!c->have_provider) {
        pf_line(c, PF_SKIP, "csr-signer", "not checkable with a token line: only a CSR made and "
                "approved on the provider shows it, and tenantgate-auth has no read-only answer for it");
        return;
    }
    allowed = pf_allowed(c, &c->provider, pf_csr_rights, NULL, missing, sizeof(missing));
    if (allowed != 1) {
        pf_line(c, PF_SKIP, "csr-signer", "%s%s: only a CSR made and approved shows whether %s signs",
                allowed == 0 ? "the provider kubeconfig may not " : "", missing, PF_CLIENT_SIGNER);
        return;
    }
    round_trip(c);
}
