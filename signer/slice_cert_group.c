/* slice_cert_group.c - see slice_cert_group.h. */
#include "signer/slice_cert_group.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "signer/cert_facts.h"
#include "signer/signer.h"
#include "signer/tenant_rbac.h"

int rs_bind_cert_group(slice_ctx *c, const char *cert_b64)
{
    char name[320];
    tg_cert_facts f;
    long r;

    if (!cert_b64)
        return 0;   /* not ours to judge here: the certificate was checked when cached */
    tg_cert_facts_get(c->s->cert_memo, cert_b64, c->csr_b64, &f);
    if (f.group_rc != 1 || strcmp(f.cn, c->user) != 0)
        return 0;   /* Liqo's form: its rights are Group <consumer>'s */
    if ((size_t)snprintf(name, sizeof(name), TG_CLUSTERWIDE_BINDING_PREFIX "%s", c->user) > 253) {
        /* no binding can be named for it: the certificate stays without rights */
        tg_log(TG_LOG_WARN, "resourceslice certificate group not bound: binding name too long",
               TG_LOG_STR("namespace", c->ns), TG_LOG_STR("resourceslice", c->name));
        return 0;
    }
    r = tg_cert_group_bind(c->s, c->api, name, c->consumer, c->user, TG_CLUSTERWIDE_CLUSTERROLE, f.group, f.group_not_after,
                           c->err, sizeof(c->err));
    return r == 200 ? 0 : -1;
}
