/* bootstrap_ns.c - see bootstrap_ns.h. */
#include "bootstrap_ns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "kube/secret_data.h"
#include "kube/tenant_json.h"
#include "pki/bootstrap_token.h"
#include "signer/rfc3339.h"
#include "signer/signer.h"
#include "signer/tenant_scope.h"

int tg_bootstrap_ns_of(json_object *ns, const char **cluster_id, const char **token_id)
{
    const char *name = tg_json_path_string(ns, "metadata", "name", NULL);
    const char *tenant = tg_json_path_string(ns, "metadata", "labels", TG_LABEL_LIQO_TENANT_NS, NULL);
    const char *cid = tg_json_path_string(ns, "metadata", "labels", TG_LABEL_REMOTE_CLUSTER_ID, NULL);
    const char *tid = tg_json_path_string(ns, "metadata", "labels", TG_BTOKEN_NS_LABEL, NULL);
    size_t plen = strlen(TG_TENANT_NAMESPACE_PREFIX);

    if (!name || !tenant || strcmp(tenant, "true") != 0 || !cid || !*cid || !tid ||
        !tg_btoken_id_valid(tid, strlen(tid)) || tg_json_path(ns, "metadata", "deletionTimestamp", NULL))
        return 0;
    /* the name is the anchor: only liqo-tenant-<the id it is labelled for> */
    if (strncmp(name, TG_TENANT_NAMESPACE_PREFIX, plen) != 0 || strcmp(name + plen, cid) != 0)
        return 0;
    *cluster_id = cid;
    *token_id = tid;
    return 1;
}

long long tg_bootstrap_token_expiration(json_object *secret, const char *token_id)
{
    const char *type = secret ? tg_json_string(secret, "type") : NULL;
    char id[16], exp[32];
    time_t t;

    if (!type || strcmp(type, "tenantgate.io/bootstrap-token") != 0 ||
        tg_secret_data_text(secret, "token-id", id, sizeof(id)) != 0 || strcmp(id, token_id) != 0 ||
        tg_secret_data_text(secret, "expiration", exp, sizeof(exp)) != 0 || (t = rc_parse_rfc3339(exp)) <= 0)
        return -1;
    return (long long)t;
}

tg_bgc_action tg_bgc_decide(const tg_bgc_facts *f, long long *recheck_ms)
{
    long long left;

    *recheck_ms = 0;
    if (f->tenant)
        return TG_BGC_KEEP;        /* the peering was made: the namespace is the Tenant's now */
    if (f->token_expires_s >= 0 && f->token_expires_s * 1000 > f->now_ms) {
        left = f->token_expires_s * 1000 - f->now_ms;
        *recheck_ms = left < f->grace_ms ? left : f->grace_ms;
        if (*recheck_ms < 1000)
            *recheck_ms = 1000;
        return TG_BGC_KEEP;
    }
    /* unkept: for a whole grace period, so that a /v1/tenant which spent the
     * token a moment ago has made its Tenant by then */
    if (!f->unkept_since_ms || (left = f->unkept_since_ms + f->grace_ms - f->now_ms) > 0) {
        *recheck_ms = f->unkept_since_ms ? left : f->grace_ms;
        if (*recheck_ms < 1)
            *recheck_ms = 1;
        return TG_BGC_WAIT;
    }
    return TG_BGC_DELETE;
}
