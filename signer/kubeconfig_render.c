/* kubeconfig_render.c - see kubeconfig_render.h. Built as a json-c tree and
 * emitted with tg_yaml_emit, so quoting is the YAML library's business. */
#include "signer/kubeconfig_render.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "kube/base64.h"
#include "kube/yaml.h"

static json_object *named(const char *name, const char *what, json_object *body)
{
    json_object *o = json_object_new_object();

    json_object_object_add(o, "name", json_object_new_string(name));
    json_object_object_add(o, what, body);
    return o;
}

static int add_b64(json_object *o, const char *key, const void *data, size_t len)
{
    char *b = tg_base64_encode(data, len, NULL);

    if (!b)
        return -1;
    json_object_object_add(o, key, json_object_new_string(b));
    free(b);
    return 0;
}

char *tg_kubeconfig_render(const tg_kubeconfig_in *in, size_t *len, char *err, size_t err_len)
{
    json_object *doc, *cluster, *user, *ctx, *arr;
    char *out = NULL;

    if (!in->provider_id || !*in->provider_id || !in->server || !*in->server || !in->cert || !in->cert_len ||
        !in->key_pem || !in->key_len || !in->user || !*in->user) {
        snprintf(err, err_len, "expected provider id, apiServer, signedCRT, private key and user, found %s missing",
                 !in->provider_id || !*in->provider_id ? "provider id"
                 : !in->server || !*in->server        ? "apiServer"
                 : !in->cert || !in->cert_len         ? "signedCRT"
                 : !in->key_pem || !in->key_len       ? "private key"
                                                      : "user");
        return NULL;
    }
    doc = json_object_new_object();
    json_object_object_add(doc, "apiVersion", json_object_new_string("v1"));
    json_object_object_add(doc, "kind", json_object_new_string("Config"));

    cluster = json_object_new_object();
    json_object_object_add(cluster, "server", json_object_new_string(in->server));
    if (in->ca && in->ca_len && add_b64(cluster, "certificate-authority-data", in->ca, in->ca_len) != 0)
        goto oom;
    if (in->proxy_url && *in->proxy_url)
        json_object_object_add(cluster, "proxy-url", json_object_new_string(in->proxy_url));
    arr = json_object_new_array();
    json_object_array_add(arr, named(in->provider_id, "cluster", cluster));
    json_object_object_add(doc, "clusters", arr);

    user = json_object_new_object();
    if (add_b64(user, "client-certificate-data", in->cert, in->cert_len) != 0 ||
        add_b64(user, "client-key-data", in->key_pem, in->key_len) != 0)
        goto oom;
    arr = json_object_new_array();
    json_object_array_add(arr, named(in->user, "user", user));
    json_object_object_add(doc, "users", arr);

    ctx = json_object_new_object();
    json_object_object_add(ctx, "cluster", json_object_new_string(in->provider_id));
    json_object_object_add(ctx, "user", json_object_new_string(in->user));
    if (in->namespace_ && *in->namespace_)
        json_object_object_add(ctx, "namespace", json_object_new_string(in->namespace_));
    arr = json_object_new_array();
    json_object_array_add(arr, named(in->provider_id, "context", ctx));
    json_object_object_add(doc, "contexts", arr);
    json_object_object_add(doc, "current-context", json_object_new_string(in->provider_id));
    out = tg_yaml_emit(doc, len);
    if (!out)
        snprintf(err, err_len, "cannot emit YAML");
    json_object_put(doc);
    return out;
oom:
    snprintf(err, err_len, "out of memory");
    json_object_put(doc);
    return NULL;
}
