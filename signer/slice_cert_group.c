/* slice_cert_group.c - see slice_cert_group.h. */
#include "signer/slice_cert_group.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "kube/base64.h"
#include "pki/cert_group.h"
#include "signer/signer.h"
#include "signer/tenant_rbac.h"

int rs_bind_cert_group(slice_ctx *c, const char *cert_b64)
{
    char cn[256], group[TG_CERT_GROUP_MAX], name[320], err[64];
    unsigned char *pem;
    size_t len = 0;
    int64_t not_after = 0;
    int has;
    long r;

    if (!cert_b64 || !(pem = tg_base64_decode(cert_b64, strlen(cert_b64), &len, err, sizeof(err))))
        return 0;   /* not ours to judge here: the certificate was checked when cached */
    has = tg_cert_group_of_certificate((const char *)pem, len, cn, sizeof(cn), group, sizeof(group), &not_after);
    free(pem);
    if (has != 1 || strcmp(cn, c->user) != 0)
        return 0;   /* Liqo's form: its rights are Group <consumer>'s */
    if ((size_t)snprintf(name, sizeof(name), TG_CLUSTERWIDE_BINDING_PREFIX "%s", c->user) > 253) {
        /* no binding can be named for it: the certificate stays without rights */
        tg_log(TG_LOG_WARN, "resourceslice certificate group not bound: binding name too long",
               TG_LOG_STR("namespace", c->ns), TG_LOG_STR("resourceslice", c->name));
        return 0;
    }
    r = tg_cert_group_bind(c->s, c->api, name, c->consumer, c->user, TG_CLUSTERWIDE_CLUSTERROLE, group, not_after,
                           c->err, sizeof(c->err));
    return r == 200 ? 0 : -1;
}
