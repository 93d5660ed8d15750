/* tenant_csrs.c - the CSRs of a Tenant as the CSR informer shows them
 * (tenant_csrs.h): only ours, only of this peering, the newest first. */
#include "signer/tenant_csrs.h"

#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "kube/tenant_json.h"
#include "signer/approve_decide.h"
#include "signer/reconcile_common.h"

typedef struct csr_look {
    const char *self_user; /* only CSRs made by it count (tg_csr_made_by) */
    const char *ns;        /* the Tenant's namespace label to match */
    const char *hash;      /* the current request's hash, or NULL */
    const char *tenant_uid;   /* the Tenant's metadata.uid, or NULL */
    time_t tenant_created;    /* its creationTimestamp, 0 if unknown */
    rc_csr_pick any;          /* the newest of (ns, cid): the settled fingerprint */
    rc_csr_pick cur;          /* the newest made from the current request */
    int cur_denied;        /* how many of those are denied */
    char *certificate;     /* cur's status.certificate as cached (csr_cert.h), malloc'd, or NULL */
    int oom;
} csr_look;

/* A CSR counts for the Tenant only if made for this peering: labelled with
 * its uid, or (made before that label) created since the Tenant was. A Tenant
 * deleted and made again (a re-peering, the same key and so the same request)
 * thus never takes the old peering's CSR and certificate. */
static int of_this_peering(json_object *c, const csr_look *l, const char *ts, long long ms)
{
    const char *uid = tg_json_path_string(c, "metadata", "labels", TG_LABEL_CSR_TENANT_UID, NULL);

    if (uid)
        return l->tenant_uid && strcmp(uid, l->tenant_uid) == 0;
    if (!l->tenant_created)
        return 1;
    if (ms > 0)
        return ms >= (long long)l->tenant_created * 1000;
    return rc_parse_rfc3339(ts) >= l->tenant_created;
}

static void on_csr_visit(json_object *c, void *data)
{
    csr_look *l = data;
    const char *tns = tg_json_path_string(c, "metadata", "labels", TG_LABEL_TENANT_NS, NULL);
    const char *hash = tg_json_path_string(c, "metadata", "labels", TG_LABEL_CSR_REQUEST, NULL);
    const char *ts = tg_json_path_string(c, "metadata", "creationTimestamp", NULL);
    const char *name = tg_json_path_string(c, "metadata", "name", NULL);
    const char *crt = tg_json_path_string(c, "status", "certificate", NULL);
    const char *ms_text = tg_json_path_string(c, "metadata", "labels", TG_LABEL_CSR_CREATED_MS, NULL);
    long long ms = ms_text ? strtoll(ms_text, NULL, 10) : 0;
    int issued = crt && *crt, denied;

    if (!tns || strcmp(tns, l->ns) != 0 || !ts || !name || strlen(ts) >= sizeof(l->any.ts) ||
        strlen(name) >= sizeof(l->any.name) || !tg_csr_made_by(c, l->self_user) || !of_this_peering(c, l, ts, ms))
        return;
    denied = rc_csr_decided(c) < 0;   /* the CSR cache keeps the conditions */
    rc_csr_pick_newer(&l->any, name, ts, ms, issued, denied);
    if (!l->hash || !hash || strcmp(hash, l->hash) != 0)
        return;
    l->cur_denied += denied;
    if (!rc_csr_pick_newer(&l->cur, name, ts, ms, issued, denied))
        return;
    free(l->certificate);
    l->certificate = NULL;
    if (issued && !(l->certificate = strdup(crt)))
        l->oom = 1;
}

int tg_tenant_csrs(tg_signer *s, const char *ns, const char *cid, const char *hash, const char *tenant_uid,
                   time_t tenant_created, tg_tenant_csr_view *v)
{
    csr_look l = {.self_user = s->self_user, .ns = ns, .hash = hash, .tenant_uid = tenant_uid,
                  .tenant_created = tenant_created};

    memset(v, 0, sizeof(*v));
    strcpy(v->fp, "-");
    if (!s->csr_cache || !tg_cache_synced(s->csr_cache))
        return 0;
    tg_cache_get_by_index(s->csr_cache, cid, on_csr_visit, &l);
    if (l.oom) {
        free(l.certificate);
        return -1;
    }
    if (l.any.found) {
        snprintf(v->fp, sizeof(v->fp), "%s:%d:%d", l.any.name, l.any.issued, l.any.denied);
        strcpy(v->newest, l.any.name);
    }
    v->state = !l.cur.found ? TG_CSR_NONE : l.cur.denied ? TG_CSR_DENIED : l.cur.issued ? TG_CSR_ISSUED : TG_CSR_PENDING;
    v->certificate = l.certificate;
    if (l.cur.found)
        strcpy(v->cur_name, l.cur.name);
    v->denied = l.cur_denied;
    v->created = l.cur.found ? rc_parse_rfc3339(l.cur.ts) : 0;
    return 0;
}
