/* fuzz_v1_request.c - libFuzzer: any bytes as the body of POST /v1/nonce
 * and of POST /v1/tenant (the first byte picks which). Nothing may crash or
 * leak; a parsed Tenant always lands in its own spec.clusterID's namespace,
 * and every refusal says what was expected. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "auth/issue_docs.h"
#include "auth/v1_request.h"
#include "kube/json.h"

static void check_tenant(const tg_auth_v1_request *r)
{
    char ns[96];
    const char *got = tg_json_path_string(r->tenant, "metadata", "namespace", NULL);
    const char *id = tg_json_path_string(r->tenant, "spec", "clusterID", NULL);

    tg_auth_tenant_namespace(r->cluster_id, ns, sizeof(ns));
    if (!got || strcmp(got, ns) != 0 || !id || strcmp(id, r->cluster_id) != 0)
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tg_auth_v1_request r;
    tg_auth_reason reason;
    char why[400];
    int rc, tenant;

    if (size == 0)
        return 0;
    tenant = data[0] & 1;
    rc = tenant ? tg_auth_v1_parse_tenant((const char *)data + 1, size - 1, &r, &reason, why, sizeof(why))
                : tg_auth_v1_parse_nonce((const char *)data + 1, size - 1, &r, &reason, why, sizeof(why));
    if (rc == 0) {
        if (strlen(r.cluster_id) == 0 || strlen(r.token.id) != TG_BTOKEN_ID_LEN)
            __builtin_trap();
        if (tenant)
            check_tenant(&r);
    } else if (strncmp(why, "expected", 8) != 0) {
        __builtin_trap();
    }
    tg_auth_v1_request_clear(&r);
    return 0;
}
