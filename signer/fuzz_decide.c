/* fuzz_decide.c - libFuzzer: the signer's pure decisions on objects that
 * others write. Tenants and their CSRs come from whoever may create them in a
 * tenant namespace, ResourceSlices from consumers; the provider's signer reads
 * them back from the API server and decides.
 *
 * Input: one JSON object {"csr", "tenant", "slice", "nonce", "policy",
 * "others", "remote"}, any member missing or of any type; "remote" stands
 * for the copy a provider hands back to the consumer's replicator. Checked on
 * every input: a
 * decision returns what it records, names a reason, and its message is one
 * NUL-terminated line; an approval has the approving reason; every quantity
 * that parses is written back to a text that parses to the same amount; a
 * grant holds only quantities (integers, or texts that parse); a copy's
 * labels always say replicated and where from, and never who owns it; a
 * finalizer added is there, one removed is not. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "signer/approve_decide.h"
#include "signer/replica_plan.h"
#include "signer/slice_resources.h"

static const tg_approve_policy policies[] = {
    {.signer_name = TG_SIGNER_NAME_KUBE, .allow_no_handshake = 0},
    {.signer_name = TG_SIGNER_NAME_OWN, .allow_no_handshake = 1},
};

static void check_decision(int rc, const tg_approve_decision *d, const char *approving)
{
    if (rc != d->approve || (d->approve != 0 && d->approve != 1))
        abort();
    if (memchr(d->reason, '\0', sizeof(d->reason)) == NULL || d->reason[0] == '\0' ||
        memchr(d->message, '\0', sizeof(d->message)) == NULL || strchr(d->message, '\n') != NULL)
        abort();
    if (d->approve && strcmp(d->reason, approving) != 0)
        abort();
}

static json_object *member(json_object *doc, const char *key)
{
    json_object *v = tg_json_path(doc, key, NULL);
    return v && json_object_is_type(v, json_type_object) ? v : NULL;
}

static void decide_csrs(json_object *doc)
{
    json_object *csr = member(doc, "csr"), *tenant = member(doc, "tenant"), *slice = member(doc, "slice");
    const char *nonce = tg_json_string(doc, "nonce");
    tg_approve_decision d;

    for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++) {
        if (csr) {
            memset(&d, 'x', sizeof(d));
            check_decision(tg_approve_decide(csr, tenant, nonce, &policies[i], &d), &d, TG_APPROVE_REASON);
            memset(&d, 'x', sizeof(d));
            check_decision(tg_approve_decide_slice(csr, slice, tenant, &policies[i], &d), &d,
                           TG_APPROVE_REASON_SLICE);
            (void)tg_csr_made_by(csr, "system:serviceaccount:liqo:tenantgate-signer");
        }
        if (slice) {
            memset(&d, 'x', sizeof(d));
            check_decision(tg_slice_auth_decide(slice, tenant, &policies[i], &d), &d, TG_APPROVE_REASON_SLICE);
        }
    }
}

/* Every quantity that parses is written back exactly. */
static void check_quantities(json_object *obj)
{
    char text[64];
    __int128 milli, again;

    if (obj == NULL || !json_object_is_type(obj, json_type_object))
        return;
    json_object_object_foreach(obj, key, val) {
        (void)key;
        if (!json_object_is_type(val, json_type_string) || tg_quantity_milli(json_object_get_string(val), &milli) != 0)
            continue;
        tg_quantity_text(milli, text, sizeof(text));
        if (tg_quantity_milli(text, &again) != 0 || again != milli)
            abort();
    }
}

static void decide_resources(json_object *doc)
{
    json_object *request = tg_json_path(doc, "slice", "spec", "resources", NULL);
    json_object *others = tg_json_path(doc, "others", NULL), *granted = NULL, *sum;
    char why[256];
    __int128 milli;

    check_quantities(request);
    check_quantities(others);
    memset(why, 'x', sizeof(why));
    if (tg_slice_resources_decide(NULL, request, tg_json_path(doc, "policy", NULL), others, &granted, why, sizeof(why)) == 0) {
        if (granted == NULL)
            abort();
        json_object_object_foreach(granted, key, val) {
            (void)key;
            /* int-or-string, as the CRD has it */
            if (!json_object_is_type(val, json_type_int) && (!json_object_is_type(val, json_type_string) ||
                                                             tg_quantity_milli(json_object_get_string(val), &milli) != 0))
                abort();
            /* nothing granted is zero or negative (issue 36 #2) */
            if (tg_quantity_milli(json_object_get_string(val), &milli) == 0 && milli <= 0)
                abort();
        }
        json_object_put(granted);
    } else if (memchr(why, '\0', sizeof(why)) == NULL) {
        abort();
    }
    if (request && json_object_is_type(request, json_type_object) && (sum = json_object_new_object()) != NULL) {
        (void)tg_slice_resources_add(sum, request);
        (void)tg_slice_resources_add(sum, request);
        /* a sum never goes below 0, whatever was added */
        json_object_object_foreach(sum, skey, sval) {
            (void)skey;
            if (tg_quantity_milli(json_object_get_string(sval), &milli) == 0 && milli < 0)
                abort();
        }
        json_object_put(sum);
    }
}

/* The replicator's reading of an object and of its remote copy. */
static void replicate(json_object *doc)
{
    json_object *local = member(doc, "slice"), *remote = member(doc, "remote"), *labels, *wrap, *meta;

    labels = tg_repl_remote_labels(tg_json_path(remote, "metadata", "labels", NULL), "cl01");
    if (labels != NULL) {
        const char *replicated = tg_json_string(labels, TG_LABEL_REPLICATED);
        const char *origin = tg_json_string(labels, TG_LABEL_ORIGIN_ID);
        if (!replicated || strcmp(replicated, "true") != 0 || !origin || strcmp(origin, "cl01") != 0 ||
            tg_json_path(labels, TG_LABEL_OWNERSHIP, NULL) != NULL)
            abort();
        json_object_put(labels);
    }
    (void)tg_repl_is_local(remote, "p1");
    (void)tg_repl_is_our_copy(remote, "cl01", "p1");
    (void)tg_repl_differ(tg_json_path(local, "spec", NULL), tg_json_path(remote, "spec", NULL));
    (void)tg_repl_differ(tg_json_path(local, "status", NULL), tg_json_path(remote, "status", NULL));
    for (size_t i = 0; i < TG_REPL_KINDS; i++)
        (void)tg_repl_ready(&tg_repl_kinds[i], remote);
    for (int add = 0; add < 2; add++) {
        wrap = json_object_new_object();
        meta = json_object_new_object();
        json_object_object_add(meta, "finalizers", tg_repl_finalizers_with(remote, TG_REPL_FINALIZER, add));
        json_object_object_add(wrap, "metadata", meta);
        if (tg_repl_has_finalizer(wrap, TG_REPL_FINALIZER) != add)
            abort();
        json_object_put(wrap);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_object *doc = tg_json_parse((const char *)data, size, NULL, 0);

    if (doc == NULL)
        return 0;
    if (json_object_is_type(doc, json_type_object)) {
        decide_csrs(doc);
        decide_resources(doc);
        replicate(doc);
    }
    json_object_put(doc);
    return 0;
}
