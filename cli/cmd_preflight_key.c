/* cmd_preflight_key.c - the checks made with a bare TLS request
 * (cmd_preflight_tls.c): the key type the provider's API server takes for
 * client certificates, each server's clock, and the token line's auth
 * server. */
#include "preflight_run.h"

#include <stdlib.h>
#include <string.h>
#include <openssl/objects.h>

#include "auth_client.h"
#include "kube/json.h"
#include "pki/tenant.h"

/* Asked of the API server with our throwaway certificate: any path works,
 * the authenticator answers before the router. */
#define PROBE_PATH "/api"

static void key_type_verdict(pf_ctx *c, const char *kt, const pf_probe *p)
{
    if (p->outcome == PF_PROBE_UNTRUSTED || p->outcome == PF_PROBE_UNREACHABLE) {
        pf_line(c, PF_FAIL, "key-type", "no TLS session with the provider's API server: %s", p->err);
        return;
    }
    if (p->outcome == PF_PROBE_TLS_REFUSED) {
        pf_line(c, PF_FAIL, "key-type", "the provider's API server ended the handshake when shown an %s "
                "client certificate: %s", kt, p->err);
        return;
    }
    if (p->sig_nid == NID_undef) {
        /* its CertificateRequest allowed no signature algorithm of this type */
        pf_line(c, PF_FAIL, "key-type", "the provider's API server asks for no signature algorithm an %s "
                "client certificate can use (answered %ld without one)", kt, p->status);
        return;
    }
    if (p->status == 401) {
        pf_line(c, PF_PASS, "key-type", "the provider's API server took an %s client certificate "
                "(%s CertificateVerify; unknown CA answered 401)", kt, OBJ_nid2sn(p->sig_nid));
        return;
    }
    pf_line(c, PF_WARN, "key-type", "the provider's API server took an %s client certificate but "
            "answered %ld, expected 401 for its unknown CA", kt, p->status);
}

void pf_check_key_type(pf_ctx *c, long timeout_ms)
{
    const tg_kube_config *cfg = &c->provider.cfg;
    const char *kt = tg_key_type_name(c->key_type);
    EVP_PKEY *key;
    X509 *cert = NULL;
    pf_probe p;

    if (!c->have_provider) {
        pf_line(c, PF_SKIP, "key-type", "needs --provider-kubeconfig: a token line names the auth "
                "server, not the provider's API server");
        return;
    }
    if (cfg->tls_server_name != NULL) {
        pf_line(c, PF_SKIP, "key-type", "the provider kubeconfig sets tls-server-name, which this "
                "check does not follow");
        return;
    }
    /* a key made here and dropped here: the certificate proves nothing to anyone */
    if ((key = tg_key_generate(c->key_type)) == NULL ||
        (cert = pf_self_signed(key, "tenantgate-preflight")) == NULL) {
        pf_line(c, PF_FAIL, "key-type", "cannot make an %s key and certificate here", kt);
        goto out;
    }
    pf_probe_run(cfg->server, PROBE_PATH, cfg->ca, cfg->ca_len, cfg->insecure_skip_tls_verify,
                 cfg->proxy_url, key, cert, timeout_ms, &p);
    key_type_verdict(c, kt, &p);
out:
    X509_free(cert);
    EVP_PKEY_free(key);
}

static void note_clock(const pf_probe *p, int *ok, long *skew_s)
{
    *ok = p->outcome == PF_PROBE_ANSWERED && p->date_s >= 0;
    if (*ok)
        *skew_s = pf_skew_seconds(p->date_s, p->sent_ms, p->received_ms);
}

int pf_read_clock(pf_ctx *c, const char *check, const tg_kube_config *cfg, int *ok, long *skew_s,
                  long timeout_ms)
{
    pf_probe p;

    /* no credentials: the Date of a 401 or 403 is as good as any */
    pf_probe_run(cfg->server, "/version", cfg->ca, cfg->ca_len, cfg->insecure_skip_tls_verify,
                 cfg->proxy_url, NULL, NULL, timeout_ms, &p);
    if (p.outcome != PF_PROBE_ANSWERED) {
        pf_line(c, PF_FAIL, check, "no answer from %s: %s", cfg->server, p.err);
        return TG_EXIT_UNREACHABLE;
    }
    note_clock(&p, ok, skew_s);
    return 0;
}

/* GET /ids of the auth server: its clock, and the provider's id. */
static int auth_ids(pf_ctx *c, long timeout_ms)
{
    cli_cluster a;
    json_object *doc = NULL;
    const char *id;
    char terr[256];
    long st;
    pf_probe p;
    int rc;

    pf_probe_run(c->line.auth_url, "/ids", c->auth_ca_pem, c->auth_ca_len, 0, NULL, NULL, NULL, timeout_ms, &p);
    note_clock(&p, &c->provider_clock_ok, &c->provider_skew_s);
    c->provider_clock_from = "auth server";
    if ((rc = cli_auth_open(&a, c->flow.cmd, c->line.auth_url, c->auth_ca_pem, c->auth_ca_len)) != 0)
        return rc;
    cli_flow_bind(&c->flow, &a);
    st = cli_cluster_call(&a, "GET", "/ids", NULL, TG_KUBE_CT_JSON, &doc, NULL, terr, sizeof(terr));
    id = doc ? tg_json_string(doc, "clusterId") : NULL;
    if (st == 200 && id != NULL && tg_cluster_id_valid(id) && c->provider_id[0] == '\0')
        snprintf(c->provider_id, sizeof(c->provider_id), "%s", id);
    if (st != 200)
        pf_line(c, PF_FAIL, "auth-server", "GET %s/ids: %s", c->line.auth_url,
                st < 0 ? terr : "not 200");
    else
        pf_line(c, PF_PASS, "auth-server", "%s presents the pinned CA and answers (provider %s)",
                c->line.auth_url, id ? id : "without an id");
    json_object_put(doc);
    cli_cluster_close(&a);
    return st < 0 ? TG_EXIT_UNREACHABLE : 0;
}

int pf_check_auth_server(pf_ctx *c, long timeout_ms)
{
    char err[512];
    int rc = cli_auth_trust(c->line.auth_url, NULL, c->line.pin, timeout_ms, &c->auth_ca_pem,
                            &c->auth_ca_len, err, sizeof(err));

    if (rc != 0) {
        pf_line(c, PF_FAIL, "auth-server", "%s", err);
        return rc == -2 ? TG_EXIT_UNREACHABLE : 0;
    }
    return auth_ids(c, timeout_ms);
}

void pf_check_skew(pf_ctx *c)
{
    long d;
    pf_result r;

    if (!c->consumer_clock_ok || !c->provider_clock_ok) {
        pf_line(c, PF_SKIP, "clock-skew", "no Date header from the %s",
                !c->consumer_clock_ok ? "consumer's API server" : c->provider_clock_from);
        return;
    }
    d = c->provider_skew_s - c->consumer_skew_s;
    r = pf_skew_result(d, c->warn_s, c->fail_s);
    pf_line(c, r, "clock-skew", "provider %+lds against the consumer (%s %+lds, consumer %+lds against "
            "this machine; warn above %lds, fail above %lds)", d, c->provider_clock_from,
            c->provider_skew_s, c->consumer_skew_s, c->warn_s, c->fail_s);
}
