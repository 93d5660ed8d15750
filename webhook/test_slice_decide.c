/* test_slice_decide.c - the ResourceSlice decision over a table of fake
 * clusters (lookup.h is our own interface: a fake cluster is a plain table).
 * Each case is an AdmissionReview built here with a real key and CSR, tweaked
 * for the reason it must get. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <openssl/evp.h>

#include "kube/base64.h"
#include "kube/json.h"
#include "pki/csr.h"
#include "pki/keys.h"
#include "pki/slice.h"
#include "webhook/slice_decide.h"

#define CONSUMER "wispy-firefly"
#define NS "liqo-tenant-" CONSUMER
#define SLICE "mypool"
#define SELF "cool-firefly"                  /* this (the provider's) cluster id */
#define SLICE_USER SLICE "-c34af51dd912"    /* the slice's own certificate user */

/* ---- the fake cluster ---- */

typedef struct fake_tenant {
    const char *ns, *cluster_id;
    int drained, no_handshake, no_key;
} fake_tenant;

typedef struct fake_cluster {
    int unsynced;
    const char *tenant_ns_label;     /* of namespace NS; NULL = "true" */
    const char *owner_label;         /* of namespace NS; NULL = CONSUMER */
    fake_tenant tenants[2];
    const char *local_slices[2];
    const char *cluster_ids[2];      /* of Tenants elsewhere */
    const char *claim_path;          /* SLICE_USER's NameClaim: its path, NULL = none */
    const char *claim_holder;
    const char *policy;              /* the entry tenant.<policy_of> of the slice policy; NULL: none */
    const char *policy_of;           /* NULL: CONSUMER */
    int policy_oom;                  /* the entry cannot be copied */
} fake_cluster;

static char *tenant_key_pem;         /* the consumer's key, as its Tenant carries it */

static int fake_synced(const tg_lookup *lk)
{
    return !((const fake_cluster *)lk->data)->unsynced;
}

static int fake_namespace_label(const tg_lookup *lk, const char *ns, const char *key,
                                char value[TG_LABEL_VALUE_MAX], int *ns_exists)
{
    const fake_cluster *c = lk->data;
    const char *v;

    *ns_exists = strcmp(ns, NS) == 0;
    if (!*ns_exists)
        return TG_LOOKUP_NOT_FOUND;
    v = strcmp(key, TG_LABEL_TENANT_NAMESPACE) == 0 ? (c->tenant_ns_label ? c->tenant_ns_label : "true")
                                                    : (c->owner_label ? c->owner_label : CONSUMER);
    snprintf(value, TG_LABEL_VALUE_MAX, "%s", v);
    return TG_LOOKUP_FOUND;
}

static int fake_tenant_for_cluster(const tg_lookup *lk, const char *ns, const char *cluster_id,
                                   tg_lookup_tenant *out)
{
    const fake_cluster *c = lk->data;

    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < 2 && c->tenants[i].ns; i++) {
        const fake_tenant *t = &c->tenants[i];
        if (strcmp(t->ns, ns) != 0 || strcmp(t->cluster_id, cluster_id) != 0)
            continue;
        out->drained = t->drained;
        out->no_handshake = t->no_handshake;
        if (!t->no_key) {
            out->public_key_len = strlen(tenant_key_pem);
            out->public_key = (unsigned char *)strdup(tenant_key_pem);
        }
        return TG_LOOKUP_FOUND;
    }
    return TG_LOOKUP_NOT_FOUND;
}

static int fake_local_slice_name_exists(const tg_lookup *lk, const char *name)
{
    const fake_cluster *c = lk->data;
    for (size_t i = 0; i < 2 && c->local_slices[i]; i++)
        if (strcmp(c->local_slices[i], name) == 0)
            return 1;
    return 0;
}

static int fake_tenant_cluster_id_exists(const tg_lookup *lk, const char *cluster_id)
{
    const fake_cluster *c = lk->data;
    for (size_t i = 0; i < 2 && c->cluster_ids[i]; i++)
        if (strcmp(c->cluster_ids[i], cluster_id) == 0)
            return 1;
    return 0;
}

static int fake_name_claim(const tg_lookup *lk, const char *name, char path[16], char holder[TG_LOOKUP_WHERE_MAX])
{
    const fake_cluster *c = lk->data;

    if (!c->claim_path || strcmp(name, SLICE_USER) != 0)
        return TG_LOOKUP_NOT_FOUND;
    snprintf(path, 16, "%s", c->claim_path);
    snprintf(holder, TG_LOOKUP_WHERE_MAX, "%s", c->claim_holder);
    return TG_LOOKUP_FOUND;
}

static int fake_slice_tenant_policy(const tg_lookup *lk, const char *cluster_id, char **entry)
{
    const fake_cluster *c = lk->data;

    *entry = NULL;
    if (c->policy_oom)
        return TG_LOOKUP_ERROR;
    if (!c->policy || strcmp(cluster_id, c->policy_of ? c->policy_of : CONSUMER) != 0)
        return TG_LOOKUP_NOT_FOUND;
    *entry = strdup(c->policy);
    return TG_LOOKUP_FOUND;
}

static const tg_lookup_ops fake_ops = {
    .name_claim = fake_name_claim,
    .synced = fake_synced,
    .namespace_label = fake_namespace_label,
    .tenant_for_cluster = fake_tenant_for_cluster,
    .local_slice_name_exists = fake_local_slice_name_exists,
    .tenant_cluster_id_exists = fake_tenant_cluster_id_exists,
    .slice_tenant_policy = fake_slice_tenant_policy,
};

/* ---- reviews ---- */

static EVP_PKEY *consumer_key, *other_key;

static char *b64(const char *text)
{
    return tg_base64_encode((const unsigned char *)text, strlen(text), NULL);
}

/* The replicated copy as Liqo's replicator writes it into the provider. */
static json_object *replicated_slice(EVP_PKEY *key, const char *cn_name, const char *o_consumer)
{
    char *csr = tg_slice_csr_build(key, cn_name, o_consumer, NULL), *csr64 = b64(csr), text[8192];
    json_object *obj;

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"authentication.liqo.io/v1beta1\",\"kind\":\"ResourceSlice\","
             "\"metadata\":{\"name\":\"" SLICE "\",\"namespace\":\"" NS "\",\"labels\":{"
             "\"liqo.io/replication\":\"false\",\"liqo.io/replicated\":\"true\","
             "\"liqo.io/originID\":\"" CONSUMER "\",\"liqo.io/remote-cluster-id\":\"" CONSUMER "\","
             "\"liqo.io/remoteID\":\"cool-firefly\"}},"
             "\"spec\":{\"class\":\"default\",\"consumerClusterID\":\"" CONSUMER "\","
             "\"providerClusterID\":\"cool-firefly\",\"csr\":\"%s\"}}",
             csr64);
    obj = tg_json_parse(text, strlen(text), NULL, 0);
    assert_non_null(obj);
    free(csr64);
    free(csr);
    return obj;
}

/* What this cluster's own local slice looks like in a consumer's tenant
 * namespace (a two-way peering: this cluster consumes from CONSUMER too).
 * how: 1 consumer named in spec.consumerClusterID, 2 in label
 * liqo.io/originID only, 3 a replicated copy (as the consumer's replicator
 * would write it) labelled liqo.io/replication=true too, 4 another consumer. */
static json_object *claim_slice(int how)
{
    char text[1024];

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"authentication.liqo.io/v1beta1\",\"kind\":\"ResourceSlice\","
             "\"metadata\":{\"name\":\"" SLICE "\",\"namespace\":\"" NS "\",\"labels\":{"
             "\"liqo.io/replication\":\"true\",\"liqo.io/remoteID\":\"" CONSUMER "\"%s%s%s}},"
             "\"spec\":{\"class\":\"default\",\"providerClusterID\":\"" CONSUMER "\"%s%s%s}}",
             how == 2 || how == 3 ? ",\"liqo.io/originID\":\"" SELF "\"" : "",
             how == 3 ? ",\"liqo.io/replicated\":\"true\"" : "",
             how != 2 ? ",\"liqo.io/remote-cluster-id\":\"" CONSUMER "\"" : "",
             how == 1 || how == 3 ? ",\"consumerClusterID\":\"" SELF "\"" : "",
             how == 4 ? ",\"consumerClusterID\":\"other-cluster\"" : "", "");
    return tg_json_parse(text, strlen(text), NULL, 0);
}

/* A local slice as liqoctl / kubectl tenantgate create it on the consumer. */
static json_object *local_slice(void)
{
    static const char text[] =
        "{\"apiVersion\":\"authentication.liqo.io/v1beta1\",\"kind\":\"ResourceSlice\","
        "\"metadata\":{\"name\":\"" SLICE "\",\"namespace\":\"liqo-tenant-cool-firefly\",\"labels\":{"
        "\"liqo.io/replication\":\"true\",\"liqo.io/remoteID\":\"cool-firefly\","
        "\"liqo.io/remote-cluster-id\":\"cool-firefly\"}},\"spec\":{\"class\":\"default\"}}";
    return tg_json_parse(text, sizeof(text) - 1, NULL, 0);
}

static json_object *review(const char *op, json_object *obj, json_object *old, const char *group, const char *user)
{
    json_object *root = json_object_new_object(), *req = json_object_new_object();
    json_object *res = json_object_new_object(), *ui = json_object_new_object(), *groups = json_object_new_array();

    json_object_object_add(root, "apiVersion", json_object_new_string("admission.k8s.io/v1"));
    json_object_object_add(root, "kind", json_object_new_string("AdmissionReview"));
    json_object_object_add(req, "uid", json_object_new_string("u1"));
    json_object_object_add(res, "group", json_object_new_string("authentication.liqo.io"));
    json_object_object_add(res, "version", json_object_new_string("v1beta1"));
    json_object_object_add(res, "resource", json_object_new_string("resourceslices"));
    json_object_object_add(req, "resource", res);
    json_object_object_add(req, "operation", json_object_new_string(op));
    json_object_object_add(req, "name", json_object_new_string(SLICE));
    json_object_object_add(req, "namespace", json_object_new_string(
        tg_json_path_string(obj, "metadata", "namespace", NULL)));
    json_object_array_add(groups, json_object_new_string("system:authenticated"));
    if (group)
        json_object_array_add(groups, json_object_new_string(group));
    json_object_object_add(ui, "groups", groups);
    if (user)
        json_object_object_add(ui, "username", json_object_new_string(user));
    json_object_object_add(req, "userInfo", ui);
    json_object_object_add(req, "object", obj);
    if (old)
        json_object_object_add(req, "oldObject", old);
    json_object_object_add(root, "request", req);
    return root;
}

/* ---- tweaks ---- */

static void set_path(json_object *obj, const char *a, const char *b, const char *key, const char *value)
{
    json_object *m = b ? tg_json_path(obj, a, b, NULL) : tg_json_path(obj, a, NULL);
    if (!m) {
        json_object *parent = tg_json_path(obj, a, NULL);
        m = json_object_new_object();
        json_object_object_add(parent, b, m);
    }
    if (value)
        json_object_object_add(m, key, json_object_new_string(value));
    else
        json_object_object_del(m, key);
}

typedef struct slice_case {
    const char *desc;
    fake_cluster cluster;
    const char *op;                      /* NULL = CREATE */
    int local;                           /* a local slice instead of a replicated copy */
    int other_key, other_cn;             /* CSR under another key / for another slice name */
    const char *label, *label_value;     /* metadata.labels tweak */
    const char *spec_field, *spec_value; /* spec tweak (NULL value: delete) */
    int delete_spec_field;
    const char *group;                   /* requester's extra group (UPDATE) */
    const char *annotation, *old_annotation;   /* liqo.io/cordon now / before (UPDATE) */
    int deleting;                        /* UPDATE of an object being deleted */
    const char *cpu;                     /* spec.resources.cpu, a string */
    int cpu_int, cpu_is_int;             /* spec.resources.cpu, an integer */
    const char *old_label, *old_label_value;   /* metadata.labels tweak of oldObject (UPDATE) */
    const char *user;                    /* requester's user name */
    int first_copy;                      /* no consumerClusterID nor csr (1: absent, 2: "") */
    int old_filled;                      /* UPDATE of a first copy whose stored object was filled */
    int claim;                           /* claim_slice(claim) instead (two-way peering) */
    int old_claims;                      /* UPDATE: the stored object claimed this cluster already */
    int self_unknown;                    /* the webhook knows no cluster id */
    int class_off;                       /* --default-resource-slice-class-enabled=false */
    const char *old_class;               /* spec.class of oldObject (UPDATE) */
    const char *old_cpu;                 /* spec.resources.cpu of oldObject (UPDATE) */
    const char *reason;
    int code;
    const char *found;
} slice_case;

#define OK_CLUSTER {.tenants = {{.ns = NS, .cluster_id = CONSUMER}}}
#define POLICY_CLUSTER(entry) {.tenants = {{.ns = NS, .cluster_id = CONSUMER}}, .policy = (entry)}
#define DEFAULT_CPU2 "{\"classes\":[\"default\"],\"maxPerSlice\":{\"cpu\":\"2\"}}"

static const slice_case cases[] = {
    {"replicated, good", OK_CLUSTER, .reason = "Accepted"},
    {"replicated, update, good", OK_CLUSTER, .op = "UPDATE", .reason = "Accepted"},
    {"no-handshake Tenant: any key", {.tenants = {{.ns = NS, .cluster_id = CONSUMER, .no_handshake = 1}}}, .other_key = 1,
     .reason = "Accepted"},
    {"no consumerClusterID", OK_CLUSTER, .spec_field = "consumerClusterID", .delete_spec_field = 1,
     .reason = "MalformedResourceSlice", .code = 400, .found = "spec.consumerClusterID"},
    {"no csr", OK_CLUSTER, .spec_field = "csr", .delete_spec_field = 1, .reason = "MalformedResourceSlice",
     .code = 400, .found = "spec.csr"},
    {"csr not base64", OK_CLUSTER, .spec_field = "csr", .spec_value = "!!!!", .reason = "MalformedResourceSlice",
     .code = 400, .found = "base64"},
    {"bad consumer id", OK_CLUSTER, .spec_field = "consumerClusterID", .spec_value = "Wispy_Firefly",
     .reason = "InvalidClusterID", .code = 400, .found = "Wispy_Firefly"},
    {"originID of another", OK_CLUSTER, .label = "liqo.io/originID", .label_value = "other",
     .reason = "LabelMismatch", .code = 400, .found = "liqo.io/originID"},
    {"no originID", OK_CLUSTER, .label = "liqo.io/originID", .reason = "LabelMismatch", .code = 400,
     .found = "no such label"},
    {"remote-cluster-id of another", OK_CLUSTER, .label = "liqo.io/remote-cluster-id", .label_value = "other",
     .reason = "LabelMismatch", .code = 400, .found = "\"other\""},
    {"not a tenant namespace", {.tenant_ns_label = "false", .tenants = {{.ns = NS, .cluster_id = CONSUMER}}},
     .reason = "WrongNamespace", .code = 400, .found = "\"false\""},
    {"namespace of another consumer", {.owner_label = "other", .tenants = {{.ns = NS, .cluster_id = CONSUMER}}},
     .reason = "LabelMismatch", .code = 403, .found = "\"other\""},
    {"no Tenant", {.tenants = {{.ns = NS, .cluster_id = "other"}}}, .reason = "SliceTenantNotFound", .code = 400,
     .found = "Tenant of " CONSUMER},
    {"Tenant Drained", {.tenants = {{.ns = NS, .cluster_id = CONSUMER, .drained = 1}}}, .reason = "SliceTenantDrained", .code = 403,
     .found = "Drained"},
    {"Tenant without key", {.tenants = {{.ns = NS, .cluster_id = CONSUMER, .no_key = 1}}}, .reason = "CSRPublicKeyMismatch",
     .code = 400, .found = "without spec.publicKey"},
    {"CSR under another key", OK_CLUSTER, .other_key = 1, .reason = "CSRPublicKeyMismatch", .code = 400,
     .found = "Tenant of " CONSUMER},
    {"CSR for another slice", OK_CLUSTER, .other_cn = 1, .reason = "CSRSubjectMismatch", .code = 400,
     .found = "CN=other-c34af51dd912"},
    {"the Tenant's CSR reused", OK_CLUSTER, .spec_field = "csr", .spec_value = "TENANT_CSR",
     .reason = "CSRSubjectMismatch", .code = 400, .found = "found CN=" CONSUMER},
    /* one owner per name (issue 44): the slice's user claimed by another path or holder */
    {"slice user claimed by tenantgate-auth's token path", {.tenants = {{.ns = NS, .cluster_id = CONSUMER}},
     .claim_path = "token", .claim_holder = SLICE_USER}, .reason = "NameOwned", .code = 403,
     .found = "found NameClaim of path token holder " SLICE_USER},
    {"slice user claimed by another slice", {.tenants = {{.ns = NS, .cluster_id = CONSUMER}}, .claim_path = "slice",
     .claim_holder = "other/" SLICE}, .op = "UPDATE", .reason = "NameOwned", .code = 403,
     .found = "holder other/" SLICE},
    {"slice user claimed by this slice (the approver's claim)", {.tenants = {{.ns = NS, .cluster_id = CONSUMER}},
     .claim_path = "slice", .claim_holder = CONSUMER "/" SLICE}, .op = "UPDATE", .reason = "Accepted"},
    {"unsynced", {.unsynced = 1}, .reason = "CacheNotSynced", .code = 500},
    {"update while deleting", {.tenants = {{.ns = NS, .cluster_id = "other"}}}, .op = "UPDATE", .deleting = 1, .reason = "Accepted"},
    /* Liqo parity */
    {"local, unique", {.local_slices = {"other"}}, .local = 1, .reason = "Accepted"},
    {"local, name taken", {.local_slices = {SLICE}}, .local = 1, .reason = "Duplicate", .code = 403,
     .found = "a resourceslice with the same name already exists in the cluster"},
    {"local, update of itself", {.local_slices = {SLICE}}, .local = 1, .op = "UPDATE", .reason = "Accepted"},
    {"liqo.io changes remote-cluster-id", OK_CLUSTER, .op = "UPDATE", .group = "liqo.io",
     .label = "liqo.io/remote-cluster-id", .label_value = "x", .reason = "ForbiddenChange", .code = 403,
     .found = "can't change the remoteClusterID label"},
    {"liqo.io deletes remote-cluster-id", OK_CLUSTER, .op = "UPDATE", .group = "liqo.io",
     .label = "liqo.io/remote-cluster-id", .reason = "ForbiddenChange", .code = 403,
     .found = "can't delete the remoteClusterID label"},
    {"liqo.io adds cordon", OK_CLUSTER, .op = "UPDATE", .group = "liqo.io", .annotation = "true",
     .reason = "ForbiddenChange", .code = 403, .found = "can't add the liqo.io/cordon annotation"},
    {"liqo.io removes cordon", OK_CLUSTER, .op = "UPDATE", .group = "liqo.io", .old_annotation = "true",
     .reason = "ForbiddenChange", .code = 403, .found = "can't delete the liqo.io/cordon annotation"},
    {"liqo.io keeps cordon", OK_CLUSTER, .op = "UPDATE", .group = "liqo.io", .annotation = "true",
     .old_annotation = "true", .reason = "Accepted"},
    {"admin adds cordon", OK_CLUSTER, .op = "UPDATE", .group = "system:masters", .annotation = "true",
     .reason = "Accepted"},
    /* Issue 36, finding 2: quantities are positive, replicated or local */
    {"cpu 4", OK_CLUSTER, .cpu = "4", .reason = "Accepted"},
    {"cpu +4", OK_CLUSTER, .cpu = "+4", .reason = "Accepted"},
    {"cpu 1e-3", OK_CLUSTER, .cpu = "1e-3", .reason = "Accepted"},
    {"cpu 500m, local", {0}, .local = 1, .cpu = "500m", .reason = "Accepted"},
    {"cpu integer 4", OK_CLUSTER, .cpu_is_int = 1, .cpu_int = 4, .reason = "Accepted"},
    {"cpu -8", OK_CLUSTER, .cpu = "-8", .reason = "MalformedResourceSlice", .code = 400,
     .found = "spec.resources.cpu: expected a positive quantity from 1n to below 1e27 (such as 4, 500m or 8Gi), "
              "found a negative quantity \"-8\""},
    {"cpu -8 on update", OK_CLUSTER, .op = "UPDATE", .cpu = "-8", .reason = "MalformedResourceSlice", .code = 400,
     .found = "found a negative quantity"},
    {"cpu -8, local", {0}, .local = 1, .cpu = "-8", .reason = "MalformedResourceSlice", .code = 400,
     .found = "found a negative quantity"},
    {"cpu -1m", OK_CLUSTER, .cpu = "-1m", .reason = "MalformedResourceSlice", .code = 400, .found = "negative"},
    {"cpu 0", OK_CLUSTER, .cpu = "0", .reason = "MalformedResourceSlice", .code = 400, .found = "found zero \"0\""},
    {"cpu -0", OK_CLUSTER, .cpu = "-0", .reason = "MalformedResourceSlice", .code = 400, .found = "found zero"},
    {"cpu integer -1", OK_CLUSTER, .cpu_is_int = 1, .cpu_int = -1, .reason = "MalformedResourceSlice", .code = 400,
     .found = "negative quantity \"-1\""},
    {"cpu integer 0", OK_CLUSTER, .cpu_is_int = 1, .reason = "MalformedResourceSlice", .code = 400,
     .found = "found zero"},
    {"cpu 1e999", OK_CLUSTER, .cpu = "1e999", .reason = "MalformedResourceSlice", .code = 400,
     .found = "out of range"},
    {"cpu 1e9999", OK_CLUSTER, .cpu = "1e9999", .reason = "MalformedResourceSlice", .code = 400,
     .found = "found no quantity"},
    /* Issue 36, finding 3: group liqo.io keeps whose slice it is */
    {"liqo.io deletes replicated", OK_CLUSTER, .op = "UPDATE", .group = "liqo.io", .label = "liqo.io/replicated",
     .reason = "ForbiddenChange", .code = 403, .found = "can't delete the liqo.io/replicated label"},
    {"liqo.io deletes originID", OK_CLUSTER, .op = "UPDATE", .group = "liqo.io", .label = "liqo.io/originID",
     .reason = "ForbiddenChange", .code = 403, .found = "can't delete the liqo.io/originID label"},
    {"liqo.io changes remoteID", OK_CLUSTER, .op = "UPDATE", .group = "liqo.io", .label = "liqo.io/remoteID",
     .label_value = "x", .reason = "ForbiddenChange", .code = 403, .found = "can't change the liqo.io/remoteID label"},
    {"liqo.io sets replication", OK_CLUSTER, .op = "UPDATE", .group = "liqo.io", .label = "liqo.io/replication",
     .label_value = "true", .reason = "ForbiddenChange", .code = 403,
     .found = "can't change the liqo.io/replication label: expected \"false\", found \"true\""},
    {"liqo.io adds replicated to a local slice", OK_CLUSTER, .op = "UPDATE", .group = "liqo.io",
     .old_label = "liqo.io/replicated", .reason = "ForbiddenChange", .code = 403,
     .found = "can't add the liqo.io/replicated label"},
    {"liqo.io creates an unreplicated slice", OK_CLUSTER, .group = "liqo.io", .label = "liqo.io/replicated",
     .reason = "LabelMismatch", .code = 400, .found = "expected label liqo.io/replicated=true, found no such label"},
    {"liqo.io creates a local slice", {0}, .local = 1, .group = "liqo.io", .reason = "LabelMismatch", .code = 400,
     .found = "replicated copy"},
    {"liqo.io replicated=false", OK_CLUSTER, .group = "liqo.io", .label = "liqo.io/replicated", .label_value = "false",
     .reason = "LabelMismatch", .code = 400, .found = "found \"false\""},
    {"liqo.io replicated, good", OK_CLUSTER, .group = "liqo.io", .reason = "Accepted"},
    {"liqo.io update keeping labels", OK_CLUSTER, .op = "UPDATE", .group = "liqo.io", .reason = "Accepted"},
    {"admin removes replicated", OK_CLUSTER, .op = "UPDATE", .group = "system:masters", .label = "liqo.io/replicated",
     .reason = "Accepted"},
    /* Issue 36, finding 7: the slice's user is no consumer's cluster id */
    {"user is a Tenant's cluster id", {.tenants = {{.ns = NS, .cluster_id = CONSUMER}}, .cluster_ids = {SLICE "-c34af51dd912"}},
     .reason = "Duplicate", .code = 403,
     .found = "expected the slice's user " SLICE "-c34af51dd912 (<metadata.name>-<sha256(spec.consumerClusterID)[:12]>) "
              "to be no consumer's cluster id, found a Tenant of cluster " SLICE "-c34af51dd912"},
    {"user is a Tenant's cluster id, update", {.tenants = {{.ns = NS, .cluster_id = CONSUMER}},
     .cluster_ids = {SLICE "-c34af51dd912"}}, .op = "UPDATE", .reason = "Duplicate", .code = 403},
    {"another cluster id", {.tenants = {{.ns = NS, .cluster_id = CONSUMER}}, .cluster_ids = {SLICE "-c34af51dd913"}},
     .reason = "Accepted"},
    /* Issue 38, break 3: Liqo's crd-replicator's first copy, before the consumer filled the spec */
    {"first copy from its consumer", OK_CLUSTER, .group = "liqo.io", .user = CONSUMER, .first_copy = 1,
     .reason = "Accepted"},
    {"first copy, empty strings", OK_CLUSTER, .group = "liqo.io", .user = CONSUMER, .first_copy = 2,
     .reason = "Accepted"},
    {"first copy updated by its consumer", OK_CLUSTER, .op = "UPDATE", .group = "liqo.io", .user = CONSUMER,
     .first_copy = 1, .reason = "Accepted"},
    {"first copy, fields taken back", OK_CLUSTER, .op = "UPDATE", .group = "liqo.io", .user = CONSUMER,
     .first_copy = 1, .old_filled = 1, .reason = "MalformedResourceSlice", .code = 400,
     .found = "expected spec.consumerClusterID (filled"},
    {"first copy from an admin", OK_CLUSTER, .group = "system:masters", .user = "admin", .first_copy = 1,
     .reason = "MalformedResourceSlice", .code = 400,
     .found = "only a consumer's control plane user, group liqo.io, may write a copy before they are filled), "
              "found neither, written by user \"admin\""},
    {"first copy, no user name", OK_CLUSTER, .group = "liqo.io", .first_copy = 1,
     .reason = "MalformedResourceSlice", .code = 400, .found = "written by user \"\""},
    {"first copy, user not a cluster id", OK_CLUSTER, .group = "liqo.io", .user = "system:serviceaccount:x:y",
     .first_copy = 1, .reason = "MalformedResourceSlice", .code = 400, .found = "system:serviceaccount:x:y"},
    {"first copy from another consumer", OK_CLUSTER, .group = "liqo.io", .user = "other", .first_copy = 1,
     .reason = "LabelMismatch", .code = 400,
     .found = "expected label liqo.io/originID=other (the requesting user), found \"" CONSUMER "\""},
    {"first copy, labels of another consumer", OK_CLUSTER, .group = "liqo.io", .user = "other", .first_copy = 1,
     .label = "liqo.io/originID", .label_value = "other", .reason = "LabelMismatch", .code = 400,
     .found = "liqo.io/remote-cluster-id=other"},
    {"first copy in another's namespace", {.owner_label = "other", .tenants = {{.ns = NS, .cluster_id = CONSUMER}}},
     .group = "liqo.io", .user = CONSUMER, .first_copy = 1, .reason = "LabelMismatch", .code = 403,
     .found = "\"other\""},
    {"first copy, no Tenant", {.tenants = {{.ns = NS, .cluster_id = "other"}}}, .group = "liqo.io", .user = CONSUMER,
     .first_copy = 1, .reason = "SliceTenantNotFound", .code = 400},
    {"first copy, Tenant Drained", {.tenants = {{.ns = NS, .cluster_id = CONSUMER, .drained = 1}}},
     .group = "liqo.io", .user = CONSUMER, .first_copy = 1, .reason = "SliceTenantDrained", .code = 403},
    {"first copy, cpu -8", OK_CLUSTER, .group = "liqo.io", .user = CONSUMER, .first_copy = 1, .cpu = "-8",
     .reason = "MalformedResourceSlice", .code = 400, .found = "negative"},
    {"first copy, user is a Tenant's cluster id",
     {.tenants = {{.ns = NS, .cluster_id = CONSUMER}}, .cluster_ids = {SLICE "-c34af51dd912"}}, .group = "liqo.io",
     .user = CONSUMER, .first_copy = 1, .reason = "Duplicate", .code = 403},
    {"consumer id only, no csr", OK_CLUSTER, .group = "liqo.io", .user = CONSUMER, .spec_field = "csr",
     .delete_spec_field = 1, .reason = "MalformedResourceSlice", .code = 400, .found = "spec.csr"},
    /* Issue 36, gap 2: two-way peering, a slice that names this cluster as its consumer is its own
     * local slice; a consumer's identities cannot make one */
    {"claim by the slice's user", OK_CLUSTER, .claim = 1, .group = CONSUMER, .user = SLICE_USER,
     .reason = "SliceClaimsLocalCluster", .code = 403,
     .found = "SliceClaimsLocalCluster: a slice labelled liqo.io/replication=true whose consumer "
              "(spec.consumerClusterID or label liqo.io/originID) is this cluster, " SELF ", is this cluster's own "
              "local slice: expected a trusted local-slice writer (--local-slice-writers), found user \"" SLICE_USER "\""},
    {"claim by the originID label", OK_CLUSTER, .claim = 2, .user = "someone", .reason = "SliceClaimsLocalCluster",
     .code = 403, .found = "found user \"someone\""},
    {"claim by the consumer's control plane", OK_CLUSTER, .claim = 3, .group = "liqo.io", .user = CONSUMER,
     .reason = "SliceClaimsLocalCluster", .code = 403, .found = "found user \"" CONSUMER "\""},
    {"claim by nobody named", OK_CLUSTER, .claim = 1, .reason = "SliceClaimsLocalCluster", .code = 403,
     .found = "found user \"\""},
    {"claim by a user named like a trusted group", OK_CLUSTER, .claim = 1, .user = "system:masters",
     .reason = "SliceClaimsLocalCluster", .code = 403},
    {"claim by an admin", OK_CLUSTER, .claim = 1, .group = "system:masters", .user = "admin", .reason = "Accepted"},
    {"claim by Liqo's service account", OK_CLUSTER, .claim = 1, .group = "system:serviceaccounts:liqo",
     .user = "system:serviceaccount:liqo:liqo-controller-manager", .reason = "Accepted"},
    {"claim by a writer named in the list", OK_CLUSTER, .claim = 1, .user = "provider-admin", .reason = "Accepted"},
    {"update keeping the claim", OK_CLUSTER, .claim = 1, .op = "UPDATE", .old_claims = 1, .group = CONSUMER,
     .user = SLICE_USER, .reason = "Accepted"},
    {"update making the claim", OK_CLUSTER, .claim = 1, .op = "UPDATE", .group = CONSUMER, .user = SLICE_USER,
     .reason = "SliceClaimsLocalCluster", .code = 403},
    {"claim outside a tenant namespace", {.tenant_ns_label = "false"}, .claim = 1, .user = SLICE_USER,
     .reason = "Accepted"},
    {"replication=true for another consumer", OK_CLUSTER, .claim = 4, .user = SLICE_USER, .reason = "Accepted"},
    /* hostile spellings: not this cluster for the signer either (exact comparisons), so no claim */
    {"consumer id in other case", OK_CLUSTER, .claim = 1, .spec_field = "consumerClusterID",
     .spec_value = "Cool-Firefly", .user = SLICE_USER, .reason = "Accepted"},
    {"consumer id with a space", OK_CLUSTER, .claim = 1, .spec_field = "consumerClusterID",
     .spec_value = SELF " ", .user = SLICE_USER, .reason = "Accepted"},
    {"replication True", OK_CLUSTER, .claim = 1, .label = "liqo.io/replication", .label_value = "True",
     .user = SLICE_USER, .reason = "Accepted"},
    {"claim with a long user name", OK_CLUSTER, .claim = 1,
     .user = "u123456789u123456789u123456789u123456789u123456789u123456789u123456789u123456789u123456789",
     .reason = "SliceClaimsLocalCluster", .code = 403,
     .found = "found user \"u123456789u123456789u123456789u123456789u123456789u123456789u12\""},
    /* without a cluster id: every replication=true slice of a tenant namespace may be its own */
    {"no cluster id, another consumer", OK_CLUSTER, .self_unknown = 1, .claim = 4, .user = SLICE_USER,
     .reason = "SliceClaimsLocalCluster", .code = 403,
     .found = "this cluster's id is unknown (--cluster-id), so a slice labelled liqo.io/replication=true in "
              "tenant namespace " NS " may be its own local slice: expected a trusted local-slice writer"},
    {"no cluster id, an admin", OK_CLUSTER, .self_unknown = 1, .claim = 4, .group = "system:masters",
     .reason = "Accepted"},
    {"no cluster id, a replicated copy", OK_CLUSTER, .self_unknown = 1, .group = "liqo.io", .user = CONSUMER,
     .reason = "Accepted"},
    /* --default-resource-slice-class-enabled=false (Liqo's DefaultResourceSliceClassDisabled) */
    {"class off, class default", OK_CLUSTER, .class_off = 1, .spec_field = "class", .spec_value = "default",
     .reason = "DefaultResourceSliceClassDisabled", .code = 403,
     .found = "spec.class: expected a class the provider offers, found \"default\""},
    {"class off, no class", OK_CLUSTER, .class_off = 1, .spec_field = "class", .delete_spec_field = 1, .reason = "DefaultResourceSliceClassDisabled", .code = 403,
     .found = "found none (the default class)"},
    {"class off, class empty", OK_CLUSTER, .class_off = 1, .spec_field = "class", .spec_value = "",
     .reason = "DefaultResourceSliceClassDisabled", .code = 403},
    {"class off, first copy", OK_CLUSTER, .class_off = 1, .first_copy = 1, .group = "liqo.io", .user = CONSUMER,
     .reason = "DefaultResourceSliceClassDisabled", .code = 403},
    {"class off, another class", OK_CLUSTER, .class_off = 1, .spec_field = "class", .spec_value = "gpu",
     .reason = "Accepted"},
    {"class on, class default", OK_CLUSTER, .spec_field = "class", .spec_value = "default", .reason = "Accepted"},
    {"class off, update staying default", OK_CLUSTER, .class_off = 1, .op = "UPDATE", .old_class = "default",
     .spec_field = "class", .spec_value = "default", .reason = "Accepted"},
    {"class off, update into default", OK_CLUSTER, .class_off = 1, .op = "UPDATE", .old_class = "gpu",
     .spec_field = "class", .spec_value = "default", .reason = "DefaultResourceSliceClassDisabled", .code = 403},
    {"class off, a local slice", OK_CLUSTER, .class_off = 1, .local = 1, .reason = "Accepted"},
    /* the consumer's own slice policy (data.tenant.<id>, pki/slice_tenant_policy.h) */
    {"policy: within", POLICY_CLUSTER(DEFAULT_CPU2), .cpu = "2", .reason = "Accepted"},
    {"policy: class not allowed", POLICY_CLUSTER(DEFAULT_CPU2), .spec_field = "class", .spec_value = "gpu",
     .cpu = "1", .reason = "ClassNotAllowed", .code = 403,
     .found = "consumer " CONSUMER " (data.tenant." CONSUMER " of the slice policy ConfigMap): spec.class: "
              "expected a class this consumer may use [\"default\"], found \"gpu\""},
    {"policy: over per slice", POLICY_CLUSTER(DEFAULT_CPU2), .cpu = "4", .reason = "TenantPolicyExceeded",
     .code = 403, .found = "cpu: 4 asked, at most 2 per slice for this consumer (2 over)"},
    {"policy: first copy's class", POLICY_CLUSTER(DEFAULT_CPU2), .first_copy = 1, .group = "liqo.io",
     .user = CONSUMER, .spec_field = "class", .spec_value = "gpu", .reason = "ClassNotAllowed", .code = 403},
    {"policy: another consumer's", {.tenants = {{.ns = NS, .cluster_id = CONSUMER}}, .policy = DEFAULT_CPU2,
     .policy_of = "other"}, .cpu = "4", .spec_field = "class", .spec_value = "gpu", .reason = "Accepted"},
    {"policy: broken entry", POLICY_CLUSTER("{\"maxPerslice\":{}}"), .reason = "TenantPolicyInvalid", .code = 403,
     .found = "found member \"maxPerslice\""},
    {"policy: unreadable entry", {.tenants = {{.ns = NS, .cluster_id = CONSUMER}}, .policy_oom = 1},
     .reason = "TenantPolicyInvalid", .code = 403, .found = "out of memory"},
    {"policy: update keeps an old grant", POLICY_CLUSTER(DEFAULT_CPU2), .op = "UPDATE", .old_cpu = "4",
     .cpu = "4", .reason = "Accepted"},
    {"policy: update asks more", POLICY_CLUSTER(DEFAULT_CPU2), .op = "UPDATE", .old_cpu = "2", .cpu = "3",
     .reason = "TenantPolicyExceeded", .code = 403, .found = "cpu: 3 asked"},
    {"policy: update into a class", POLICY_CLUSTER(DEFAULT_CPU2), .op = "UPDATE", .old_class = "default",
     .spec_field = "class", .spec_value = "gpu", .reason = "ClassNotAllowed", .code = 403},
};

static void unfill(json_object *obj, int how)
{
    json_object *spec = tg_json_path(obj, "spec", NULL);
    if (how == 2) {
        json_object_object_add(spec, "consumerClusterID", json_object_new_string(""));
        json_object_object_add(spec, "csr", json_object_new_string(""));
        return;
    }
    json_object_object_del(spec, "consumerClusterID");
    json_object_object_del(spec, "csr");
}

static json_object *build_object(const slice_case *c)
{
    json_object *obj;

    if (c->local) {
        obj = local_slice();
        goto tweaks;
    }
    if (c->claim) {
        obj = claim_slice(c->claim);
        assert_non_null(obj);
        if (c->label)
            set_path(obj, "metadata", "labels", c->label, c->label_value);
        if (c->spec_field && c->spec_value)
            set_path(obj, "spec", NULL, c->spec_field, c->spec_value);
        goto tweaks;
    }
    obj = replicated_slice(c->other_key ? other_key : consumer_key, c->other_cn ? "other" : SLICE, CONSUMER);
    if (c->label)
        set_path(obj, "metadata", "labels", c->label, c->label_value);
    if (c->spec_field && c->delete_spec_field)
        json_object_object_del(tg_json_path(obj, "spec", NULL), c->spec_field);
    if (c->first_copy)
        unfill(obj, c->first_copy);
    if (c->spec_field && c->spec_value && strcmp(c->spec_value, "TENANT_CSR") == 0) {
        char *pem = tg_csr_build(consumer_key, CONSUMER, NULL), *enc = b64(pem);
        set_path(obj, "spec", NULL, "csr", enc);
        free(enc);
        free(pem);
    } else if (c->spec_field && c->spec_value) {
        set_path(obj, "spec", NULL, c->spec_field, c->spec_value);
    }
tweaks:
    if (c->annotation)
        set_path(obj, "metadata", "annotations", "liqo.io/cordon", c->annotation);
    if (c->deleting)
        set_path(obj, "metadata", NULL, "deletionTimestamp", "2026-01-01T00:00:00Z");
    if (c->cpu || c->cpu_is_int) {
        json_object *res = json_object_new_object();
        json_object_object_add(res, "cpu", c->cpu ? json_object_new_string(c->cpu) : json_object_new_int(c->cpu_int));
        json_object_object_add(tg_json_path(obj, "spec", NULL), "resources", res);
    }
    return obj;
}

static tg_local_writers writers;     /* parsed in setup */
static const tg_slice_opts opts = {.cluster_id = SELF, .local_writers = &writers};
static const tg_slice_opts no_self = {.local_writers = &writers};
static const tg_slice_opts class_off = {.cluster_id = SELF, .local_writers = &writers, .default_class_disabled = 1};

static void run_case(const slice_case *c)
{
    tg_lookup lk = {.ops = &fake_ops, .data = (void *)&c->cluster};
    json_object *obj = build_object(c), *old = NULL, *root;
    const char *op = c->op ? c->op : "CREATE";
    tg_review_request req;
    tg_decision d;
    char err[256], *text;

    if (strcmp(op, "UPDATE") == 0) {
        old = c->local ? local_slice() : replicated_slice(consumer_key, SLICE, CONSUMER);
        if (c->claim) {
            json_object_put(old);
            old = claim_slice(c->claim);
            if (!c->old_claims)
                set_path(old, "metadata", "labels", "liqo.io/replication", "false");
        }
        if (c->old_annotation)
            set_path(old, "metadata", "annotations", "liqo.io/cordon", c->old_annotation);
        if (c->old_label)
            set_path(old, "metadata", "labels", c->old_label, c->old_label_value);
        if (c->first_copy && !c->old_filled)
            unfill(old, c->first_copy);
        if (c->old_class)
            set_path(old, "spec", NULL, "class", c->old_class);
        if (c->old_cpu)
            set_path(old, "spec", "resources", "cpu", c->old_cpu);
    }
    root = review(op, obj, old, c->group, c->user);
    text = strdup(json_object_to_json_string(root));
    json_object_put(root);
    assert_int_equal(tg_review_parse(text, strlen(text), &req, err, sizeof(err)), 0);
    tg_decide_validate_slice(&req, &lk, c->self_unknown ? &no_self : c->class_off ? &class_off : &opts, &d);
    print_message("%-36s -> %s %s\n", c->desc, d.reason, d.response.allowed ? "" : d.response.message);
    assert_string_equal(d.reason, c->reason);
    assert_true(d.intercepted);
    if (strcmp(c->reason, "Accepted") == 0) {
        assert_true(d.response.allowed);
    } else {
        assert_false(d.response.allowed);
        assert_int_equal(d.response.code, c->code);
        /* only "retry later" answers tell the API server when to retry */
        assert_int_equal(d.response.retry_after_s, c->code >= 500 ? TG_RETRY_AFTER_SECONDS : 0);
        assert_int_equal(strncmp(d.response.message, c->reason, strlen(c->reason)), 0);
        if (c->found)
            assert_non_null(strstr(d.response.message, c->found));
    }
    tg_decision_clear(&d);
    tg_review_request_clear(&req);
    free(text);
}

static void test_cases(void **state)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        run_case(&cases[i]);
}

/* DELETE, /status and other resources are not ours. */
static void test_not_intercepted(void **state)
{
    static const char *const bodies[] = {
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\","
        "\"resource\":{\"group\":\"authentication.liqo.io\",\"resource\":\"resourceslices\"},"
        "\"operation\":\"DELETE\"}}",
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\","
        "\"resource\":{\"group\":\"authentication.liqo.io\",\"resource\":\"resourceslices\"},"
        "\"subResource\":\"status\",\"operation\":\"UPDATE\",\"object\":{}}}",
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\","
        "\"resource\":{\"group\":\"authentication.liqo.io\",\"resource\":\"tenants\"},"
        "\"operation\":\"CREATE\",\"object\":{}}}",
    };
    fake_cluster c = {.unsynced = 1};
    tg_lookup lk = {.ops = &fake_ops, .data = &c};

    for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
        tg_review_request req;
        tg_decision d;
        char err[128];
        assert_int_equal(tg_review_parse(bodies[i], strlen(bodies[i]), &req, err, sizeof(err)), 0);
        tg_decide_validate_slice(&req, &lk, &opts, &d);
        assert_true(d.response.allowed);
        assert_false(d.intercepted);
        tg_decision_clear(&d);
        tg_review_request_clear(&req);
    }
}

static int setup(void **state)
{
    char err[128];

    if (tg_local_writers_parse("group:system:masters,group:system:serviceaccounts:liqo,provider-admin", &writers, err,
                               sizeof(err)) != 0)
        return -1;
    consumer_key = tg_key_generate(TG_KEY_ED25519);
    other_key = tg_key_generate(TG_KEY_ED25519);
    tenant_key_pem = tg_key_public_pem(consumer_key, NULL);
    return consumer_key && other_key && tenant_key_pem ? 0 : -1;
}

static int teardown(void **state)
{
    EVP_PKEY_free(consumer_key);
    EVP_PKEY_free(other_key);
    OPENSSL_free(tenant_key_pem);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_not_intercepted),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
