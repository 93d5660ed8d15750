/* scope_rule.c - the one judge of an object against a controller's scope (scope_rule.h). */
#include "signer/scope_rule.h"

#include <string.h>

#include "kube/json.h"
#include "kube/tenant_json.h"
#include "signer/signer.h"
#include "signer/tenant_scope.h"

static int is_true(const char *v)
{
    return v && strcmp(v, "true") == 0;
}

/* ns is liqo-tenant-<cid>. */
static int named_for(const char *ns, const char *cid)
{
    static const size_t plen = sizeof(TG_TENANT_NAMESPACE_PREFIX) - 1;

    return ns && cid && strncmp(ns, TG_TENANT_NAMESPACE_PREFIX, plen) == 0 && strcmp(ns + plen, cid) == 0;
}

tg_ns_facts tg_ns_facts_of(json_object *ns)
{
    tg_ns_facts f = {.known = ns != NULL};
    const char *cid;

    if (!ns)
        return f;
    f.labelled = is_true(tg_json_path_string(ns, "metadata", "labels", TG_LABEL_LIQO_TENANT_NS, NULL)) ||
                 is_true(tg_json_path_string(ns, "metadata", "labels", TG_LABEL_TENANT_NS, NULL));
    cid = tg_json_path_string(ns, "metadata", "labels", TG_LABEL_REMOTE_CLUSTER_ID, NULL);
    f.cluster_id = cid && *cid ? cid : NULL;
    /* A Role that covers namespaces may label its own Namespace, so the
     * labels need the name: only a cluster-wide principal makes
     * liqo-tenant-<id> (docs/signer.md "Security"). */
    f.tenant = f.labelled && named_for(tg_json_path_string(ns, "metadata", "name", NULL), f.cluster_id);
    return f;
}

int tg_scope_where_tenant(tg_scope_where w)
{
    return w == TG_WHERE_TENANT_NS;
}

static tg_scope_verdict judge_where(const tg_scope_rule *r, const char *install_ns, const char *ns,
                                    const tg_ns_facts *nsf)
{
    int namespaced = ns && *ns;

    switch (r->where) {
    case TG_WHERE_CLUSTER:
        return namespaced ? TG_OUT_NAMESPACE : TG_IN_SCOPE;
    case TG_WHERE_INSTALL_NS:
        return namespaced && install_ns && strcmp(ns, install_ns) == 0 ? TG_IN_SCOPE : TG_OUT_NAMESPACE;
    case TG_WHERE_TENANT_NS:
        /* labels and name (tg_ns_facts_of), and the facts must be ns's own */
        return namespaced && nsf && nsf->known && nsf->tenant && named_for(ns, nsf->cluster_id) ? TG_IN_SCOPE
                                                                                                  : TG_OUT_NAMESPACE;
    }
    return TG_OUT_NAMESPACE;
}

tg_scope_verdict tg_scope_judge_key(const tg_scope_rule *r, const char *install_ns, const char *ns,
                                    const char *name, const tg_ns_facts *nsf)
{
    tg_scope_verdict v = judge_where(r, install_ns, ns, nsf);

    if (v != TG_IN_SCOPE)
        return v;
    if (r->name && (!name || strcmp(name, r->name) != 0))
        return TG_OUT_NAME;
    return TG_IN_SCOPE;
}

/* 1 when value is unset (and may be) or names the namespace's peer. */
static int same_peer(const char *value, int required, const char *ns_cid)
{
    if (!value || !*value)
        return !required;
    return strcmp(value, ns_cid) == 0;
}

int tg_slice_is_own_local(json_object *slice, const char *self_id)
{
    const char *consumer = tg_json_path_string(slice, "spec", "consumerClusterID", NULL);

    return is_true(tg_json_path_string(slice, "metadata", "labels", "liqo.io/replication", NULL)) && consumer &&
           self_id && strcmp(consumer, self_id) == 0;
}

static tg_scope_verdict judge_peer(const tg_scope_rule *r, const char *self_id, json_object *obj,
                                   const char *ns_cid)
{
    const char *label = tg_json_path_string(obj, "metadata", "labels", TG_LABEL_REMOTE_CLUSTER_ID, NULL);

    switch (r->peer) {
    case TG_PEER_ANY:
        return TG_IN_SCOPE;
    case TG_PEER_LABEL:
        return same_peer(label, 1, ns_cid) ? TG_IN_SCOPE : TG_OUT_PEER;
    case TG_PEER_SPEC_CLUSTER_ID:
        return same_peer(tg_json_path_string(obj, "spec", "clusterID", NULL), 1, ns_cid) ? TG_IN_SCOPE
                                                                                          : TG_OUT_PEER;
    case TG_PEER_SLICE_PROVIDER:
        return same_peer(tg_json_path_string(obj, "spec", "providerClusterID", NULL), 0, ns_cid) &&
                       same_peer(label, 0, ns_cid)
                   ? TG_IN_SCOPE
                   : TG_OUT_PEER;
    case TG_PEER_NOT_LOCAL_SLICE:
        return tg_slice_is_own_local(obj, self_id) ? TG_OUT_LOCAL : TG_IN_SCOPE;
    case TG_PEER_REPLICATED: {
        const char *remote_id = tg_json_path_string(obj, "metadata", "labels", "liqo.io/remoteID", NULL);
        int some = (label && *label) || (remote_id && *remote_id);
        return some && same_peer(label, 0, ns_cid) && same_peer(remote_id, 0, ns_cid) ? TG_IN_SCOPE : TG_OUT_PEER;
    }
    }
    return TG_OUT_PEER;
}

tg_scope_verdict tg_scope_judge(const tg_scope_rule *r, const char *install_ns, const char *self_id,
                                json_object *obj, const tg_ns_facts *nsf)
{
    const char *ns = tg_json_path_string(obj, "metadata", "namespace", NULL);
    const char *name = tg_json_path_string(obj, "metadata", "name", NULL);
    tg_scope_verdict v = tg_scope_judge_key(r, install_ns, ns, name, nsf);

    if (v != TG_IN_SCOPE || !tg_scope_where_tenant(r->where))
        return v;
    return judge_peer(r, self_id, obj, nsf->cluster_id);
}

const char *tg_scope_verdict_name(tg_scope_verdict v)
{
    switch (v) {
    case TG_IN_SCOPE:
        return "ok";
    case TG_OUT_NAMESPACE:
        return "namespace";
    case TG_OUT_NAME:
        return "name";
    case TG_OUT_PEER:
        return "peer";
    case TG_OUT_LOCAL:
        return "local";
    }
    return "unknown";
}

const char *tg_scope_where_name(tg_scope_where w)
{
    switch (w) {
    case TG_WHERE_TENANT_NS:
        return "tenant namespace liqo-tenant-<id>";
    case TG_WHERE_INSTALL_NS:
        return "install namespace";
    case TG_WHERE_CLUSTER:
        return "cluster";
    }
    return "unknown";
}
