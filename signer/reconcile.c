/* reconcile.c - the workers' entry point: a queue key ("tenant/NS/NAME",
 * "csr//NAME", ...) to the controller that owns it (reconcile_common.h). */
#include "signer/reconcile_common.h"

#include <string.h>

static int split_key(const char *key, char *kind, char *ns, char *name)
{
    const char *a = strchr(key, '/'), *b = a ? strchr(a + 1, '/') : NULL;

    if (!a || !b || (size_t)(a - key) >= 32 || (size_t)(b - a - 1) >= 256 || strlen(b + 1) >= 256 || !b[1])
        return -1;
    memcpy(kind, key, (size_t)(a - key));
    kind[a - key] = '\0';
    memcpy(ns, a + 1, (size_t)(b - a - 1));
    ns[b - a - 1] = '\0';
    strcpy(name, b + 1);
    return 0;
}

long tg_signer_reconcile(tg_signer *s, tg_api *api, const char *key)
{
    char kind[32], ns[256], name[256];

    if (split_key(key, kind, ns, name) != 0)
        return TG_RECONCILE_OK;
    if (strcmp(kind, "nonce") == 0)
        return tg_reconcile_nonce(s, api, ns, name);
    if (strcmp(kind, "tenant") == 0)
        return tg_reconcile_tenant(s, api, ns, name);
    if (strcmp(kind, "csr") == 0)
        return tg_reconcile_csr(s, api, name);
    if (strcmp(kind, "keys") == 0)
        return tg_reconcile_keys(s, api);
    if (strcmp(kind, "signednonce") == 0)
        return tg_reconcile_signed_nonce(s, api, ns, name);
    if (strcmp(kind, "identity") == 0)
        return tg_reconcile_identity(s, api, ns, name);
    if (strcmp(kind, "rslice") == 0)
        return tg_reconcile_resourceslice(s, api, ns, name);
    if (strcmp(kind, "renew") == 0)
        return tg_reconcile_renew(s, api, ns, name);
    if (strcmp(kind, "remoteslice") == 0)
        return tg_reconcile_remote_slice(s, api, ns, name);
    if (strcmp(kind, "remoterenew") == 0)
        return tg_reconcile_remote_renew(s, api, ns, name);
    if (strncmp(kind, "repl", 4) == 0)
        return tg_reconcile_replica(s, api, kind, ns, name);
    return TG_RECONCILE_OK;
}
