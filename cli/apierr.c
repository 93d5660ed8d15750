/* apierr.c - an API server's refusal, turned into one line a person can act
 * on: which cluster, which verb on which resource, and what to do next.
 * Pure: the answer's status and body in, text out. */
#include "online.h"

#include <string.h>

#include "kube/json.h"

/* "secrets", "tenants.authentication.liqo.io" */
static void resource_name(char *buf, size_t len, const cli_api_call *call)
{
    if (call->group != NULL && *call->group != '\0')
        snprintf(buf, len, "%s.%s", call->resource, call->group);
    else
        snprintf(buf, len, "%s", call->resource);
}

/* " in namespace X" or "" */
static void where(char *buf, size_t len, const cli_api_call *call)
{
    if (call->namespace_ != NULL)
        snprintf(buf, len, " in namespace %s", call->namespace_);
    else
        buf[0] = '\0';
}

int cli_api_type_missing(long status, const char *body)
{
    json_object *doc, *details;
    int missing = 1;

    if (status != 404)
        return 0;
    if (body == NULL)
        return 1;
    doc = tg_json_parse(body, strlen(body), NULL, 0);
    if (doc == NULL)
        return 1;   /* "404 page not found": no such API group/version */
    details = tg_json_path(doc, "details", NULL);
    if (details != NULL && tg_json_string(details, "name") != NULL)
        missing = 0;
    json_object_put(doc);
    return missing;
}

long cli_api_retry_after_ms(long status, const char *body)
{
    json_object *doc;
    int64_t seconds = 0;

    if (status != 429 && status < 500)
        return -1;
    doc = body ? tg_json_parse(body, strlen(body), NULL, 0) : NULL;
    if (doc != NULL) {
        json_object *v = tg_json_path(doc, "details", "retryAfterSeconds", NULL);
        if (v != NULL && json_object_is_type(v, json_type_int))
            seconds = json_object_get_int64(v);
        json_object_put(doc);
    }
    if (seconds > 0)
        return seconds > CLI_RETRY_AFTER_MAX_S ? CLI_RETRY_AFTER_MAX_S * 1000L : (long)seconds * 1000L;
    /* 429 and 503 ask to come back even without saying when (a CRD whose
     * storage is still initialising answers 429); another 5xx without a
     * hint is an answer, not a request to wait. */
    return status == 429 || status == 503 ? CLI_RETRY_DEFAULT_MS : -1;
}

/* The Status message of an answer (copied into buf), or "". */
static void status_message(char *buf, size_t len, const char *body)
{
    json_object *doc = body ? tg_json_parse(body, strlen(body), NULL, 0) : NULL;
    const char *m = doc ? tg_json_string(doc, "message") : NULL;

    if (m != NULL)
        snprintf(buf, len, "%s", m);
    else if (doc == NULL && body != NULL && *body != '\0' && strlen(body) < 200)
        snprintf(buf, len, "%.*s", (int)strcspn(body, "\r\n"), body);
    else
        buf[0] = '\0';
    json_object_put(doc);
}

int cli_api_error(char *msg, size_t len, const cli_api_call *call, long status, const char *body,
                  const char *transport_err)
{
    char res[160], in[160], text[1024];
    const char *server = call->server ? call->server : "(unknown server)";

    resource_name(res, sizeof(res), call);
    where(in, sizeof(in), call);
    if (status < 0) {
        snprintf(msg, len, "cannot reach the API server %s: %s (check the kubeconfig's server "
                 "address and that the cluster is running)", server,
                 transport_err && *transport_err ? transport_err : "no answer");
        return TG_EXIT_UNREACHABLE;
    }
    status_message(text, sizeof(text), body);
    switch (status) {
    case 401:
        snprintf(msg, len, "the API server %s refused the kubeconfig's credentials (401 "
                 "Unauthorized): renew the token or certificate", server);
        break;
    case 403:
        snprintf(msg, len, "forbidden: the kubeconfig's user may not %s %s%s (RBAC); grant that "
                 "verb on that resource. API server: %s", call->verb, res, in,
                 *text ? text : "Forbidden");
        break;
    case 404:
        if (cli_api_type_missing(status, body)) {
            if (call->group != NULL && *call->group != '\0')
                snprintf(msg, len, "the API server %s does not serve %s: the CustomResourceDefinition "
                         "%s is not installed (kubectl apply -k manifests/crds)", server, res, res);
            else
                snprintf(msg, len, "the API server %s does not serve %s", server, res);
        } else {
            snprintf(msg, len, "%s %s not found%s", res, call->name ? call->name : "", in);
        }
        break;
    default:
        if (strstr(text, "failed calling webhook") != NULL)
            snprintf(msg, len, "the API server could not call the tenantgate admission webhook "
                     "(is tenantgate-webhook running and reachable?): %s", text);
        else if (strstr(text, "denied the request") != NULL)
            snprintf(msg, len, "%s refused: %s", res, text);
        else
            snprintf(msg, len, "%s %s%s%s%s failed (HTTP %ld): %s", call->verb, res,
                     call->name ? " " : "", call->name ? call->name : "", in, status,
                     *text ? text : "no message");
        break;
    }
    return TG_EXIT_REJECTED;
}
