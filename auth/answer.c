/* answer.c - see answer.h. */
#include "answer.h"

#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "kube/base64.h"

/* Compact, fields in insertion order, "/" unescaped: the bytes Go's
 * encoding/json writes for the same struct (base64 and URLs hold "/"). */
static char *render(json_object *o, size_t *len)
{
    const char *s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, len);
    char *copy = s ? strdup(s) : NULL;

    json_object_put(o);
    return copy;
}

char *tg_auth_answer_ids(const char *cluster_id, const char *cluster_name, size_t *len)
{
    json_object *o = json_object_new_object();

    json_object_object_add(o, "clusterId", json_object_new_string(cluster_id));
    if (cluster_name && *cluster_name)     /* omitempty */
        json_object_object_add(o, "clusterName", json_object_new_string(cluster_name));
    return render(o, len);
}

/* Liqo v0.10.3's AWSIdentityInfo, zero: omitempty does not drop a struct, so
 * Liqo's server always sends it, and its consumer reads it (HasAWSValues). */
static json_object *aws_zero(void)
{
    static const char *const fields[] = {"accessKeyID", "secretAccessKey", "region", "eksClusterID", "iamUserArn"};
    json_object *o = json_object_new_object();

    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
        json_object_object_add(o, fields[i], json_object_new_string(""));
    return o;
}

char *tg_auth_answer_identity(const char *ns, const char *cert_pem, size_t cert_len, const char *api_server_url,
                              const char *ca_pem, size_t ca_len, size_t *len)
{
    json_object *o = json_object_new_object();
    char *cert = tg_base64_encode((const unsigned char *)cert_pem, cert_len, NULL);
    char *ca = tg_base64_encode((const unsigned char *)(ca_pem ? ca_pem : ""), ca_pem ? ca_len : 0, NULL);
    char *out = NULL;

    if (cert && ca) {
        json_object_object_add(o, "namespace", json_object_new_string(ns));
        json_object_object_add(o, "certificate", json_object_new_string(cert));
        json_object_object_add(o, "apiServerUrl", json_object_new_string(api_server_url));
        if (*ca)                           /* omitempty */
            json_object_object_add(o, "apiServerCA", json_object_new_string(ca));
        json_object_object_add(o, "aws", aws_zero());
        out = render(o, len);
    } else {
        json_object_put(o);
    }
    free(cert);
    free(ca);
    return out;
}

char *tg_auth_answer_error(tg_auth_reason r, const char *message, size_t *len)
{
    json_object *o = json_object_new_object();

    json_object_object_add(o, "reason", json_object_new_string(tg_auth_reason_name(r)));
    json_object_object_add(o, "message", json_object_new_string(message ? message : ""));
    return render(o, len);
}
