/* reconcile.c - the workers' entry point: a queue key ("tenant/NS/NAME",
 * "approve//NAME", ...) to the controller whose descriptor owns its prefix
 * (controller.h). */
#include "signer/controller.h"

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
    const tg_controller_desc *d;

    if (split_key(key, kind, ns, name) != 0 || !(d = tg_controller_by_kind(kind)))
        return TG_RECONCILE_OK;
    return d->reconcile(s, api, kind, ns, name);
}
