/* bootstrap_ns.h - the tenant namespaces tenantgate-auth's /v1/nonce makes
 * (docs/auth.md "Bounds and cleanup"), as the signer judges them. Pure: JSON
 * and numbers in, a verdict out.
 *
 * Such a namespace is liqo-tenant-<id>, labelled liqo.io/tenant-namespace=true,
 * liqo.io/remote-cluster-id=<id> and tenantgate.io/bootstrap-token-id=<token
 * id>. The nonce controller makes its liqo-nonce Secret (auth may create no
 * Secret there); the bootstrapgc controller deletes it once nothing keeps it:
 * no Tenant in it and its token gone (deleted, spent or expired), for a whole
 * grace period. */
#ifndef TG_SIGNER_BOOTSTRAP_NS_H
#define TG_SIGNER_BOOTSTRAP_NS_H

#include <json-c/json.h>

/* 1 when ns (a Namespace object) is one /v1/nonce made, as above, and not
 * being deleted; *cluster_id and *token_id then point into ns. */
int tg_bootstrap_ns_of(json_object *ns, const char **cluster_id, const char **token_id);

/* The expiration (seconds since the epoch) of a bootstrap token's Secret as
 * read (data base64, type tenantgate.io/bootstrap-token, data.token-id equal
 * to token_id), or -1 when it is not such a token: absent, of another type or
 * id, or with an expiration that does not parse. */
long long tg_bootstrap_token_expiration(json_object *secret, const char *token_id);

typedef enum tg_bgc_action {
    TG_BGC_KEEP = 0,        /* a Tenant, or a live token: nothing to do */
    TG_BGC_WAIT,            /* unkept, but not for a whole grace period yet */
    TG_BGC_DELETE,          /* unkept for the grace period: delete it */
} tg_bgc_action;

typedef struct tg_bgc_facts {
    long long now_ms;
    long long token_expires_s;   /* tg_bootstrap_token_expiration, -1: gone */
    int tenant;                  /* a Tenant is in the namespace */
    long long unkept_since_ms;   /* when a pass first found it unkept, 0: not before */
    long long grace_ms;
} tg_bgc_facts;

/* What to do; *recheck_ms: when to look again (KEEP with a token: at its
 * expiration, at most grace_ms away; WAIT: when the grace ends). */
tg_bgc_action tg_bgc_decide(const tg_bgc_facts *f, long long *recheck_ms);

#endif
