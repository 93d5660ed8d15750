/* provider_signer.c - the own signer (--signer-ca): issues the certificate
 * of an approved CSR for TG_SIGNER_NAME_OWN with the configured CA. */
#include "signer/reconcile_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/pem.h>

#include "common/log.h"
#include "kube/base64.h"
#include "kube/json.h"
#include "signer/approve_decide.h"

long tg_sign_csr(tg_signer *s, tg_api *api, json_object *csr, const char *name)
{
    const char *b64 = tg_json_path_string(csr, "spec", "request", NULL);
    unsigned char *pem = NULL;
    size_t pem_len = 0, crt_len = 0;
    char err[512], path[512], *crt = NULL, *crt_b64 = NULL;
    json_object *st, *exp;
    X509_REQ *req = NULL;
    BIO *b;
    long r = TG_RECONCILE_RETRY;

    if (!b64 || !(pem = tg_base64_decode(b64, strlen(b64), &pem_len, err, sizeof(err))))
        return TG_RECONCILE_OK;   /* the approver denies those */
    if ((b = BIO_new_mem_buf(pem, (int)pem_len))) {
        req = PEM_read_bio_X509_REQ(b, NULL, NULL, NULL);
        BIO_free(b);
    }
    exp = tg_json_path(csr, "spec", "expirationSeconds", NULL);
    if (!req || !(crt = tg_issue_client_cert(&s->own_ca, req, exp ? (long)json_object_get_int64(exp) : 0, time(NULL),
                                              &crt_len, err, sizeof(err)))) {
        tg_log(TG_LOG_WARN, "cannot sign", TG_LOG_STR("csr", name), TG_LOG_STR("error", req ? err : "bad request"));
        goto out;
    }
    crt_b64 = tg_base64_encode((unsigned char *)crt, crt_len, NULL);
    if (!(st = tg_json_path(csr, "status", NULL))) {
        st = json_object_new_object();
        json_object_object_add(csr, "status", st);
    }
    json_object_object_add(st, "certificate", rc_jstr(crt_b64));
    snprintf(path, sizeof(path), CSR_API "/%s/status", name);
    if (tg_api_call(api, "PUT", path, TG_KUBE_CT_JSON, csr, NULL, err, sizeof(err)) != 200) {
        tg_log(TG_LOG_WARN, "cannot write the certificate", TG_LOG_STR("csr", name), TG_LOG_STR("error", err));
        goto out;
    }
    tg_log(TG_LOG_INFO, "csr signed", TG_LOG_STR("csr", name));
    r = TG_RECONCILE_OK;
out:
    free(crt_b64);
    free(crt);
    free(pem);
    X509_REQ_free(req);
    return r;
}
