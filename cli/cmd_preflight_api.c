/* cmd_preflight_api.c - what preflight asks each API server through the
 * kubeconfig's own identity: the versions of authentication.liqo.io it
 * serves, Liqo's version where it runs, and whether that identity may do
 * what `authenticate` does there (SelfSubjectAccessReview: the API
 * server's own answer for this user, not a guess from RBAC objects). */
#include "preflight_run.h"

#include <stdlib.h>
#include <string.h>

#include "kube/json.h"

#define SSAR_API "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
#define LIQO_DEPLOYMENT "liqo-controller-manager"

static json_object *ssar_body(const pf_right *r, const char *ns)
{
    json_object *o = json_object_new_object(), *spec = json_object_new_object(),
                *ra = json_object_new_object();

    json_object_object_add(o, "apiVersion", json_object_new_string("authorization.k8s.io/v1"));
    json_object_object_add(o, "kind", json_object_new_string("SelfSubjectAccessReview"));
    json_object_object_add(ra, "verb", json_object_new_string(r->verb));
    json_object_object_add(ra, "group", json_object_new_string(r->group));
    json_object_object_add(ra, "resource", json_object_new_string(r->resource));
    if (r->subresource)
        json_object_object_add(ra, "subresource", json_object_new_string(r->subresource));
    if (r->name)
        json_object_object_add(ra, "name", json_object_new_string(r->name));
    if (ns)
        json_object_object_add(ra, "namespace", json_object_new_string(ns));
    json_object_object_add(spec, "resourceAttributes", ra);
    json_object_object_add(o, "spec", spec);
    return o;
}

/* 1 allowed, 0 not, -1 not answered (why in err). */
static int ask(cli_cluster *cl, const pf_right *r, const char *ns, char *err, size_t err_len)
{
    json_object *body = ssar_body(r, ns), *ans = NULL, *allowed;
    char terr[256];
    long st = cli_cluster_call(cl, "POST", SSAR_API, body, TG_KUBE_CT_JSON, &ans, NULL, terr, sizeof(terr));
    int rc = -1;

    if (st == 201 && ans != NULL && json_object_object_get_ex(json_object_object_get(ans, "status"),
                                                              "allowed", &allowed))
        rc = json_object_get_boolean(allowed) ? 1 : 0;
    else
        snprintf(err, err_len, "no SelfSubjectAccessReview answer (%ld%s%s)", st, st < 0 ? ": " : "",
                 st < 0 ? terr : "");
    json_object_put(body);
    json_object_put(ans);
    return rc;
}

int pf_allowed(pf_ctx *c, cli_cluster *cl, const pf_right *rights, const char *tenant_ns, char *missing,
               size_t missing_len)
{
    size_t used = 0;

    missing[0] = '\0';
    for (const pf_right *r = rights; r->verb != NULL; r++) {
        const char *ns = r->ns == PF_NS_TENANT ? tenant_ns : r->ns == PF_NS_INSTALL ? c->install_ns : NULL;
        char text[160];
        int a = ask(cl, r, ns, missing, missing_len);

        if (a < 0)
            return -1;
        if (a == 1 || used + 2 >= missing_len)
            continue;
        pf_right_text(r, text, sizeof(text));
        used += (size_t)snprintf(missing + used, missing_len - used, "%s%s%s%s", used ? ", " : "", text,
                                 ns ? " in " : "", ns ? ns : "");
        if (used >= missing_len)
            used = missing_len - 1;
    }
    return missing[0] == '\0' ? 1 : 0;
}

/* --- versions -------------------------------------------------------- */

/* 1 when the version's resource list names every resource of PF_AUTH_RESOURCES. */
static int complete(cli_cluster *cl, const char *version)
{
    char path[128], terr[256], want[] = PF_AUTH_RESOURCES, *save = NULL;
    json_object *doc = NULL, *res;
    int ok;

    snprintf(path, sizeof(path), "/apis/" CLI_AUTH_GROUP "/%s", version);
    ok = cli_cluster_call(cl, "GET", path, NULL, TG_KUBE_CT_JSON, &doc, NULL, terr, sizeof(terr)) == 200;
    res = doc ? tg_json_path(doc, "resources", NULL) : NULL;
    for (char *w = strtok_r(want, ",", &save); ok && w != NULL; w = strtok_r(NULL, ",", &save)) {
        int found = 0;

        for (size_t i = 0; res != NULL && i < json_object_array_length(res) && !found; i++)
            found = strcmp(tg_json_string(json_object_array_get_idx(res, i), "name") ?: "", w) == 0;
        ok = found;
    }
    json_object_put(doc);
    return ok;
}

/* What one side serves; the HTTP status of the group's discovery. */
static long read_served(cli_cluster *cl, pf_served *s, char *terr, size_t terr_len)
{
    json_object *doc = NULL, *vs;
    long st = cli_cluster_call(cl, "GET", "/apis/" CLI_AUTH_GROUP, NULL, TG_KUBE_CT_JSON, &doc, NULL, terr,
                               terr_len);

    memset(s, 0, sizeof(*s));
    vs = st == 200 && doc ? tg_json_path(doc, "versions", NULL) : NULL;
    for (size_t i = 0; vs != NULL && i < json_object_array_length(vs) && s->n < PF_MAX_VERSIONS; i++) {
        const char *v = tg_json_string(json_object_array_get_idx(vs, i), "version");

        if (v == NULL || strlen(v) >= sizeof(s->version[0]))
            continue;
        strcpy(s->version[s->n], v);
        s->complete[s->n] = complete(cl, v);
        s->n++;
    }
    json_object_put(doc);
    return st;
}

static void served_text(const pf_served *s, char *buf, size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (int i = 0; i < s->n && used + 1 < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s%s", i ? ", " : "", s->version[i],
                                 s->complete[i] ? "" : " (incomplete)");
    if (s->n == 0)
        snprintf(buf, len, "none");
}

/* crds-SIDE; 1 when it serves some version completely. */
static int side_crds(pf_ctx *c, cli_cluster *cl, const char *check, pf_served *s)
{
    char terr[256], text[256];
    long st = read_served(cl, s, terr, sizeof(terr));
    int any = 0;

    for (int i = 0; i < s->n; i++)
        any |= s->complete[i];
    served_text(s, text, sizeof(text));
    if (st == 404 || (st == 200 && !any))
        pf_line(c, PF_FAIL, check, "serves no version of " CLI_AUTH_GROUP " with all of " PF_AUTH_RESOURCES
                " (found: %s): install the CRDs (manifests/crds)", text);
    else if (st != 200)
        pf_line(c, PF_FAIL, check, "GET /apis/" CLI_AUTH_GROUP ": %ld%s%s", st, st < 0 ? " " : "",
                st < 0 ? terr : "");
    else
        pf_line(c, PF_PASS, check, CLI_AUTH_GROUP " %s", text);
    return st == 200 && any;
}

/* Liqo's version on one side: its controller-manager's image tag into tag,
 * or why there is none (absent, unreadable). 1 found, 0 absent, -1 unknown. */
static int liqo_version(pf_ctx *c, cli_cluster *cl, char *tag, size_t len)
{
    char path[256], terr[256];
    json_object *doc = NULL, *ctrs;
    const char *image = NULL;
    long st;

    snprintf(path, sizeof(path), "/apis/apps/v1/namespaces/%s/deployments/" LIQO_DEPLOYMENT, c->install_ns);
    st = cli_cluster_call(cl, "GET", path, NULL, TG_KUBE_CT_JSON, &doc, NULL, terr, sizeof(terr));
    ctrs = st == 200 ? tg_json_path(doc, "spec", "template", "spec", "containers", NULL) : NULL;
    if (ctrs != NULL && json_object_array_length(ctrs) > 0)
        image = tg_json_string(json_object_array_get_idx(ctrs, 0), "image");
    if (image != NULL)
        snprintf(tag, len, "%s", pf_image_tag(image));
    else if (st == 404)
        snprintf(tag, len, "no Liqo");
    else
        snprintf(tag, len, "unreadable (%ld)", st);
    json_object_put(doc);
    return image != NULL ? 1 : st == 404 ? 0 : -1;
}

static void check_liqo(pf_ctx *c)
{
    char ct[128], pt[128] = "unknown with a token line";
    int cf = liqo_version(c, &c->consumer, ct, sizeof(ct));
    int pfound = c->have_provider ? liqo_version(c, &c->provider, pt, sizeof(pt)) : -1;

    /* only two versions found are something to compare */
    if (cf == 1 && pfound == 1 && strcmp(ct, pt) != 0)
        pf_line(c, PF_WARN, "liqo-version", "consumer %s, provider %s: the tested pairs are in docs/LIQO.md",
                ct, pt);
    else if (cf == 1 && pfound == 1)
        pf_line(c, PF_PASS, "liqo-version", "Liqo %s on both sides", ct);
    else
        pf_line(c, PF_SKIP, "liqo-version", "nothing to compare (deployment %s/" LIQO_DEPLOYMENT
                ": consumer %s, provider %s)", c->install_ns, ct, pt);
}

void pf_check_versions(pf_ctx *c)
{
    pf_served cs, ps;
    char common[32], ctext[256], ptext[256];
    int cok = side_crds(c, &c->consumer, "crds-consumer", &cs), pok = 0;

    if (c->have_provider)
        pok = side_crds(c, &c->provider, "crds-provider", &ps);
    else
        pf_line(c, PF_SKIP, "crds-provider", "needs --provider-kubeconfig (tenantgate-auth does not say)");
    if (!c->have_provider || !cok || !pok)
        pf_line(c, PF_SKIP, "crd-versions", "needs what both sides serve");
    else if (pf_common_version(&cs, &ps, common, sizeof(common)) == 0)
        pf_line(c, PF_PASS, "crd-versions", "both serve " CLI_AUTH_GROUP "/%s", common);
    else {
        served_text(&cs, ctext, sizeof(ctext));
        served_text(&ps, ptext, sizeof(ptext));
        pf_line(c, PF_FAIL, "crd-versions", "no version of " CLI_AUTH_GROUP " that both serve completely "
                "(consumer: %s; provider: %s)", ctext, ptext);
    }
    check_liqo(c);
}

/* --- rights ---------------------------------------------------------- */

static void side_rights(pf_ctx *c, cli_cluster *cl, const char *check, const pf_right *rights,
                        const char *other_id, const char *other_flag)
{
    char ns[128], missing[1024];
    int a;

    if (other_id[0] == '\0') {
        pf_line(c, PF_SKIP, check, "the other cluster's id is unknown (give %s)", other_flag);
        return;
    }
    cli_tenant_namespace_name(ns, sizeof(ns), other_id);
    a = pf_allowed(c, cl, rights, ns, missing, sizeof(missing));
    if (a == 1)
        pf_line(c, PF_PASS, check, "may do what authenticate does (tenant namespace %s)", ns);
    else if (a == 0)
        pf_line(c, PF_FAIL, check, "authenticate needs: %s", missing);
    else
        pf_line(c, PF_FAIL, check, "%s", missing);
}

void pf_check_rights(pf_ctx *c)
{
    side_rights(c, &c->consumer, "rights-consumer", pf_consumer_rights, c->provider_id, "--remote-cluster-id");
    if (c->have_provider)
        side_rights(c, &c->provider, "rights-provider", pf_provider_rights, c->consumer_id, "--cluster-id");
    else
        pf_line(c, PF_SKIP, "rights-provider", "a token line's rights are tenantgate-auth's; the token is not "
                "spent to try them");
}
