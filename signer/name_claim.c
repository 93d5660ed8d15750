/* name_claim.c - see name_claim.h. */
#include "signer/name_claim.h"

#include <stdio.h>
#include <string.h>

#include "kube/json.h"

static void deny(tg_approve_decision *d, const char *reason, const char *message)
{
    d->approve = 0;
    snprintf(d->reason, sizeof(d->reason), "%s", reason);
    snprintf(d->message, sizeof(d->message), "%s", message);
}

/* claim is name's, read back: deny d unless it is (path, holder)'s. */
static void compare(json_object *claim, const char *name, tg_name_path path, const char *holder,
                    tg_approve_decision *d)
{
    char owner[240], msg[sizeof(d->message)];

    if (tg_name_claim_is(claim, name, path, holder, owner, sizeof(owner)))
        return;
    snprintf(msg, sizeof(msg), "expected %.100s to be unclaimed or claimed by path %s holder %.80s, found NameClaim "
             "of path and holder %.90s", name, tg_name_path_string(path), holder, owner);
    deny(d, tg_reason_name(TG_NAME_OWNED), msg);
}

static void claim_path(const char *name, char *path, size_t len)
{
    char obj[TG_NAME_CLAIM_OBJECT_MAX];

    tg_name_claim_object(name, obj);
    snprintf(path, len, TG_NAME_CLAIMS_PATH "/%s", obj);
}

long tg_name_claim_read(tg_api *api, const char *name, json_object **claim, char *err, size_t err_len)
{
    char p[160];

    *claim = NULL;
    claim_path(name, p, sizeof(p));
    return tg_api_get(api, p, claim, err, err_len);
}

void tg_name_claim_judge(json_object *claim, const char *name, tg_name_path path, const char *holder,
                         tg_approve_decision *d)
{
    if (claim)
        compare(claim, name, path, holder, d);
}


/* The uid of Namespace ns into uid (64 bytes). 0, or -1 with err. */
static int namespace_uid(tg_api *api, const char *ns, char *uid, char *err, size_t err_len)
{
    char p[160];
    json_object *o = NULL;
    const char *u;
    int rc = -1;

    snprintf(p, sizeof(p), "/api/v1/namespaces/%s", ns);
    if (tg_api_get(api, p, &o, err, err_len) == 200 && (u = tg_json_path_string(o, "metadata", "uid", NULL)) &&
        strlen(u) < 64) {
        strcpy(uid, u);
        rc = 0;
    } else if (!err[0]) {
        snprintf(err, err_len, "the NameClaim's owner, Namespace %s, cannot be read", ns);
    }
    json_object_put(o);
    return rc;
}

int tg_name_claim_for(tg_api *api, const char *name, tg_name_path path, const char *holder, const char *ns,
                      const char *ns_uid, const char *provider_id, tg_approve_decision *d, char *err, size_t err_len)
{
    char why[300], uid[64], p[160];
    json_object *doc;
    long r;

    if (tg_name_reserved(name, provider_id, why, sizeof(why))) {
        deny(d, tg_reason_name(TG_NAME_RESERVED), why);
        return 0;
    }
    err[0] = '\0';
    if (ns_uid && *ns_uid && strlen(ns_uid) < sizeof(uid))
        strcpy(uid, ns_uid);
    else if (namespace_uid(api, ns, uid, err, err_len) != 0)
        return -1;
    doc = tg_name_claim_doc(name, path, holder, ns, uid);
    r = tg_api_call(api, "POST", TG_NAME_CLAIMS_PATH, TG_KUBE_CT_JSON, doc, NULL, err, err_len);
    json_object_put(doc);
    if (r == 201)
        return 0;
    if (r != 409) {
        if (r > 0)
            snprintf(err, err_len, "create the NameClaim of %.100s: HTTP %ld (is the CRD nameclaims.tenantgate.io "
                     "installed?)", name, r);
        return -1;
    }
    claim_path(name, p, sizeof(p));
    if (tg_api_get(api, p, &doc, err, err_len) != 200)
        return -1;
    compare(doc, name, path, holder, d);
    json_object_put(doc);
    return 0;
}
