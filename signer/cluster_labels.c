/* cluster_labels.c - parse and check --cluster-labels (cluster_labels.h). */
#include "signer/cluster_labels.h"

#include <stdio.h>
#include <string.h>

static int is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* A label name or value part: 1-63 of [A-Za-z0-9._-], alphanumeric at both ends. */
static int name_valid(const char *s, size_t len)
{
    if (len == 0 || len > 63 || !is_alnum(s[0]) || !is_alnum(s[len - 1]))
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return 0;
    return 1;
}

/* A DNS-1123 subdomain: lower-case labels of [a-z0-9-], alphanumeric at
 * both ends, joined by dots, at most 253 characters. */
static int subdomain_valid(const char *s, size_t len)
{
    size_t start = 0;

    if (len == 0 || len > 253)
        return 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && s[i] != '.') {
            char c = s[i];
            if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
                return 0;
            continue;
        }
        if (i == start || s[start] == '-' || s[i - 1] == '-' || i - start > 63)
            return 0;
        start = i + 1;
    }
    return 1;
}

int tg_label_key_valid(const char *s, size_t len)
{
    const char *slash = memchr(s, '/', len);

    if (!slash)
        return name_valid(s, len);
    return subdomain_valid(s, (size_t)(slash - s)) && name_valid(slash + 1, len - (size_t)(slash - s) - 1);
}

int tg_label_value_valid(const char *s, size_t len)
{
    return len == 0 || name_valid(s, len);
}

json_object *tg_cluster_labels_parse(const char *text, char *err, size_t err_len)
{
    json_object *map = json_object_new_object();
    const char *p = text ? text : "";
    int n = 0;

    if (!map) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    while (*p) {
        size_t len = strcspn(p, ",");
        const char *eq = memchr(p, '=', len);
        size_t klen = eq ? (size_t)(eq - p) : len;
        char key[320], value[64];

        if (!eq) {
            snprintf(err, err_len, "\"%.*s\": expected key=value", (int)(len > 80 ? 80 : len), p);
            goto fail;
        }
        if (!tg_label_key_valid(p, klen) || klen >= sizeof(key)) {
            snprintf(err, err_len, "\"%.*s\": not a label key (an optional DNS subdomain and '/', then 1-63 "
                     "characters [A-Za-z0-9._-], alphanumeric at both ends)", (int)(klen > 80 ? 80 : klen), p);
            goto fail;
        }
        if (!tg_label_value_valid(eq + 1, len - klen - 1)) {
            snprintf(err, err_len, "\"%.*s\": not a label value (empty, or 1-63 characters [A-Za-z0-9._-], "
                     "alphanumeric at both ends)", (int)(len > 80 ? 80 : len), p);
            goto fail;
        }
        memcpy(key, p, klen);
        key[klen] = '\0';
        memcpy(value, eq + 1, len - klen - 1);
        value[len - klen - 1] = '\0';
        if (json_object_object_get_ex(map, key, NULL)) {
            snprintf(err, err_len, "\"%s\": given twice", key);
            goto fail;
        }
        if (++n > TG_CLUSTER_LABELS_MAX) {
            snprintf(err, err_len, "more than %d labels", TG_CLUSTER_LABELS_MAX);
            goto fail;
        }
        json_object_object_add(map, key, json_object_new_string(value));
        p += len;
        if (*p == ',' && !*++p) {
            snprintf(err, err_len, "a trailing ','");
            goto fail;
        }
    }
    return map;
fail:
    json_object_put(map);
    return NULL;
}
