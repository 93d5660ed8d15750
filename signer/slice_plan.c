/* slice_plan.c - see slice_plan.h. */
#include "signer/slice_plan.h"

#include <stdio.h>
#include <string.h>

tg_slice_csr_action tg_slice_csr_plan(const tg_slice_csr_view *v)
{
    /* The cache lags our own POST: a second CSR now would be a duplicate. */
    if (v->ours_unseen)
        return TG_SLICE_CSR_WAIT_CACHE;
    if (!v->found)
        return TG_SLICE_CSR_CREATE;
    if (v->issued)
        return v->usable ? TG_SLICE_CSR_USE : TG_SLICE_CSR_CREATE;   /* unusable: due, or not for the key */
    /* Approved and not issued yet is waited for like a pending one: the
     * signer writes the certificate after the approval (commit 5f78f10). */
    if (v->decided >= 0)
        return v->age_s < TG_SLICE_CSR_STALE_S ? TG_SLICE_CSR_WAIT : TG_SLICE_CSR_CREATE;
    return v->age_s < TG_SLICE_DENIED_RETRY_S ? TG_SLICE_CSR_DENIED : TG_SLICE_CSR_CREATE;
}

tg_slice_sibling_source tg_slice_sibling_source_of(int deleting, int default_class, tg_slice_grant_record rec)
{
    /* A slice being deleted or of another class is not in the default
     * class's sum, whatever was written to it (the live LIST did the same). */
    if (deleting || !default_class)
        return TG_SIBLING_SKIP;
    switch (rec) {
    case TG_GRANT_ACCEPTED:
        return TG_SIBLING_RECORD;
    case TG_GRANT_DENIED:
        return TG_SIBLING_SKIP;
    case TG_GRANT_UNKNOWN:
        return TG_SIBLING_LIVE;
    case TG_GRANT_NONE:
    default:
        return TG_SIBLING_CACHE;
    }
}

int tg_slice_grant_encode(char *buf, size_t len, const char *rv, tg_slice_grant_record rec, const char *granted_json)
{
    char kind = rec == TG_GRANT_ACCEPTED ? 'A' : rec == TG_GRANT_DENIED ? 'D' : '?';
    int n;

    if (kind != 'A' || !granted_json)
        granted_json = "";
    if (kind == '?')
        rv = "";
    n = snprintf(buf, len, "%s\t%c%s", rv ? rv : "", kind, granted_json);
    if (n >= 0 && (size_t)n < len)
        return 0;
    snprintf(buf, len, "\t?");
    return -1;
}

tg_slice_grant_record tg_slice_grant_decode(const char *value, size_t buf_len, const char *cached_rv,
                                            const char **granted_json, int *spent)
{
    const char *tab = strchr(value, '\t');

    *granted_json = NULL;
    *spent = 0;
    if (!tab || strlen(value) + 1 >= buf_len)
        return TG_GRANT_UNKNOWN;
    if (tab[1] == '?')
        return TG_GRANT_UNKNOWN;
    if (tab != value && cached_rv && strlen(cached_rv) == (size_t)(tab - value) &&
        strncmp(value, cached_rv, (size_t)(tab - value)) == 0) {
        *spent = 1;   /* the cache shows our write */
        return TG_GRANT_NONE;
    }
    if (tab[1] == 'D')
        return TG_GRANT_DENIED;
    if (tab[1] == 'A' && tab[2]) {
        *granted_json = tab + 2;
        return TG_GRANT_ACCEPTED;
    }
    return TG_GRANT_UNKNOWN;
}

const char *tg_slice_csr_action_name(tg_slice_csr_action a)
{
    switch (a) {
    case TG_SLICE_CSR_USE:
        return "use";
    case TG_SLICE_CSR_WAIT:
        return "wait";
    case TG_SLICE_CSR_DENIED:
        return "denied";
    case TG_SLICE_CSR_CREATE:
        return "create";
    case TG_SLICE_CSR_WAIT_CACHE:
        return "wait-cache";
    }
    return "?";
}
