/* slice_settled.c - settled records of the provider's ResourceSlice
 * controller (slice_settled.h): the echo of its own status write, read from
 * the informers' caches, is skipped without a GET. */
#include "signer/slice_settled.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "signer/approve_decide.h"
#include "signer/reconcile_common.h"

typedef struct csr_look {
    const char *ref;        /* "<ns>/<name>", the CSRs' TG_ANNOTATION_CSR_SLICE */
    const char *self_user;
    rc_csr_pick newest;
} csr_look;

/* The newest CSR made for the slice, whatever its request: any CSR of the
 * slice issued, denied or made changes the text. */
static void on_csr(json_object *o, void *data)
{
    csr_look *l = data;
    const char *a = tg_json_path_string(o, "metadata", "annotations", TG_ANNOTATION_CSR_SLICE, NULL);
    const char *ts = tg_json_path_string(o, "metadata", "creationTimestamp", NULL);
    const char *nm = tg_json_path_string(o, "metadata", "name", NULL);
    const char *crt = tg_json_path_string(o, "status", "certificate", NULL);
    const char *ms_text = tg_json_path_string(o, "metadata", "labels", TG_LABEL_CSR_CREATED_MS, NULL);

    if (!a || strcmp(a, l->ref) != 0 || !ts || !nm || strlen(ts) >= sizeof(l->newest.ts) ||
        strlen(nm) >= sizeof(l->newest.name) || !tg_csr_made_by(o, l->self_user))
        return;
    rc_csr_pick_newer(&l->newest, nm, ts, ms_text ? strtoll(ms_text, NULL, 10) : 0, crt && *crt,
                      rc_csr_decided(o) < 0);
}

int rs_settled_deps(tg_signer *s, const char *ns, const char *name, const char *consumer, const char *made,
                    char *deps, size_t len)
{
    char trv[RC_RV_LEN], ref[600];
    const char *t;
    csr_look l = {.ref = ref, .self_user = s->self_user};
    int n;

    if (!consumer || !s->tenant_cache || !tg_cache_synced(s->tenant_cache) || !s->csr_cache ||
        !tg_cache_synced(s->csr_cache))
        return -1;
    t = rc_cached_rv(s->tenant_cache, ns, consumer, trv);
    snprintf(ref, sizeof(ref), "%s/%s", ns, name);
    if (!made)   /* the consumer's CSRs are walked only when the text names the newest */
        tg_cache_get_by_index_holding(s->csr_cache, consumer, ref, on_csr, &l);   /* the slice's own */
    if (made)
        n = snprintf(deps, len, "t=%s;c=%s:0:0", t ? t : "-", made);
    else if (l.newest.found)
        n = snprintf(deps, len, "t=%s;c=%s:%d:%d", t ? t : "-", l.newest.name, l.newest.issued,
                     l.newest.denied);
    else
        n = snprintf(deps, len, "t=%s;c=-", t ? t : "-");
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* The queue key: a wake-up from another informer (a Tenant, a CSR) forgets
 * it (events.c), whatever the dependency text says. */
static void settled_key(char *key, size_t len, const char *ns, const char *name)
{
    snprintf(key, len, "remoteslice/%s/%s", ns, name);
}

long rs_settled_left(tg_signer *s, const char *ns, const char *name, const char *consumer, char *deps, size_t len)
{
    char rv[RC_RV_LEN], key[600];

    if (!s->settled || rs_settled_deps(s, ns, name, consumer, NULL, deps, len) != 0) {
        deps[0] = '\0';
        return 0;
    }
    if (!rc_cached_rv(s->slice_cache, ns, name, rv))
        return 0;
    settled_key(key, sizeof(key), ns, name);
    return tg_api_settled(s->settled, key, rv, deps);
}

void rs_settle(tg_signer *s, const char *ns, const char *name, const char *rv, const char *deps_a,
               const char *deps_b, long delay_ms)
{
    char key[600];

    if (!deps_a)
        return;
    settled_key(key, sizeof(key), ns, name);
    tg_api_settle(s->settled, key, rv, deps_a, deps_b, delay_ms);
}
