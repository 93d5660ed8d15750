/* slice.c - see slice.h. */
#include "slice.h"

#include <stdio.h>
#include <string.h>

#include "kube/json.h"

static int lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

int cli_slice_name_valid(const char *name)
{
    size_t n = name ? strlen(name) : 0;

    if (n == 0 || n > 253 || !lower_alnum(name[0]) || !lower_alnum(name[n - 1]))
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (lower_alnum(name[i]) || name[i] == '-')
            continue;
        /* a dot separates labels: each starts and ends alphanumeric */
        if (name[i] != '.' || !lower_alnum(name[i - 1]) || !lower_alnum(name[i + 1]))
            return 0;
    }
    return 1;
}

/* digits with an optional fraction, or a fraction alone: "12", "1.5", "1.", ".5" */
static const char *number(const char *p)
{
    const char *start = p;
    int digits = 0;

    while (*p >= '0' && *p <= '9')
        p++, digits++;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9')
            p++, digits++;
    }
    return digits ? p : start;
}

int cli_quantity_valid(const char *q)
{
    const char *p, *end;

    if (q == NULL || *q == '\0' || strlen(q) > 64)
        return 0;
    p = q + (*q == '+' || *q == '-');
    if ((end = number(p)) == p)
        return 0;
    p = end;
    if (*p == '\0')
        return 1;
    if (p[1] == 'i' && p[2] == '\0' && strchr("KMGTPE", p[0]))
        return 1;
    if (p[1] == '\0' && strchr("numkMGTPE", p[0]))
        return 1;
    if (*p == 'e' || *p == 'E') {
        p++;
        p += *p == '+' || *p == '-';
        end = number(p);
        return end != p && *end == '\0';
    }
    return 0;
}

static int add_quantity(json_object *res, const char *name, const char *q, char *err, size_t err_len)
{
    if (json_object_object_get_ex(res, name, NULL)) {
        snprintf(err, err_len, "resource %.64s asked for twice", name);
        return -1;
    }
    if (!cli_quantity_valid(q)) {
        snprintf(err, err_len, "%.64s: expected a quantity such as 4, 500m or 8Gi, found \"%.64s\"", name, q);
        return -1;
    }
    json_object_object_add(res, name, json_object_new_string(q));
    return 0;
}

/* spec.resources from the flags; -1 with err. */
static int fill_resources(json_object *res, const cli_slice_request *r, char *err, size_t err_len)
{
    const struct {
        const char *name, *value;
    } fixed[] = {{"cpu", r->cpu}, {"memory", r->memory}, {"pods", r->pods}};

    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        if (fixed[i].value && fixed[i].value[0] && add_quantity(res, fixed[i].name, fixed[i].value, err, err_len))
            return -1;
    for (size_t i = 0; i < r->nresources; i++) {
        const char *eq = strchr(r->resources[i], '=');
        char name[254];

        if (eq == NULL || eq == r->resources[i] || (size_t)(eq - r->resources[i]) >= sizeof(name)) {
            snprintf(err, err_len, "--resource: expected NAME=QUANTITY, found \"%.64s\"", r->resources[i]);
            return -1;
        }
        snprintf(name, sizeof(name), "%.*s", (int)(eq - r->resources[i]), r->resources[i]);
        if (add_quantity(res, name, eq + 1, err, err_len))
            return -1;
    }
    return 0;
}

json_object *cli_slice_object(const cli_slice_request *r, char *err, size_t err_len)
{
    json_object *obj = json_object_new_object(), *meta = json_object_new_object();
    json_object *labels = json_object_new_object(), *spec = json_object_new_object();
    json_object *res = json_object_new_object();

    json_object_object_add(obj, "apiVersion", json_object_new_string("authentication.liqo.io/v1beta1"));
    json_object_object_add(obj, "kind", json_object_new_string("ResourceSlice"));
    json_object_object_add(meta, "name", json_object_new_string(r->name));
    json_object_object_add(meta, "namespace", json_object_new_string(r->namespace_));
    json_object_object_add(labels, "liqo.io/remote-cluster-id", json_object_new_string(r->provider_id));
    json_object_object_add(labels, "liqo.io/remoteID", json_object_new_string(r->provider_id));
    json_object_object_add(labels, "liqo.io/replication", json_object_new_string("true"));
    json_object_object_add(meta, "labels", labels);
    if (!r->no_virtual_node || r->revocable) {
        json_object *ann = json_object_new_object();
        if (!r->no_virtual_node)
            json_object_object_add(ann, "liqo.io/create-virtual-node", json_object_new_string("true"));
        if (r->revocable)
            json_object_object_add(ann, CLI_SLICE_REVOCABLE_ANNOTATION, json_object_new_string("true"));
        json_object_object_add(meta, "annotations", ann);
    }
    json_object_object_add(obj, "metadata", meta);
    json_object_object_add(spec, "class", json_object_new_string(r->class_ ? r->class_ : "default"));
    json_object_object_add(spec, "providerClusterID", json_object_new_string(r->provider_id));
    json_object_object_add(spec, "resources", res);
    json_object_object_add(obj, "spec", spec);
    if (fill_resources(res, r, err, err_len) != 0) {
        json_object_put(obj);
        return NULL;
    }
    if (json_object_object_length(res) == 0)
        json_object_object_del(spec, "resources");
    return obj;
}

cli_slice_state cli_slice_condition(json_object *slice, const char *type, char *why, size_t why_len)
{
    json_object *conds = tg_json_path(slice, "status", "conditions", NULL);
    size_t n = conds && json_object_is_type(conds, json_type_array) ? json_object_array_length(conds) : 0;

    for (size_t i = 0; i < n; i++) {
        json_object *c = json_object_array_get_idx(conds, i);
        const char *t = tg_json_string(c, "type"), *status = tg_json_string(c, "status");
        const char *reason = tg_json_string(c, "reason"), *message = tg_json_string(c, "message");

        if (!t || strcmp(t, type) != 0 || !status)
            continue;
        if (strcmp(status, "Accepted") == 0)
            return CLI_SLICE_ACCEPTED;
        if (strcmp(status, "Denied") == 0) {
            snprintf(why, why_len, "%s: %s", reason && *reason ? reason : "Denied",
                     message && *message ? message : "no message");
            return CLI_SLICE_DENIED;
        }
    }
    return CLI_SLICE_PENDING;
}
