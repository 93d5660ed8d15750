/* controllers.c - the table of every controller (controller.h): --controllers
 * names, queue key prefixes and dispatch all come from these rows. */
#include "signer/controller.h"

#include <stdio.h>
#include <string.h>

const tg_controller_desc *const tg_controller_descriptors[] = {
    /* provider */
    &tg_ctl_nonce, &tg_ctl_tenant, &tg_ctl_approver, &tg_ctl_own_signer, &tg_ctl_remote_renew, &tg_ctl_remote_slice,
    &tg_ctl_bootstrapgc,
    /* consumer */
    &tg_ctl_keys, &tg_ctl_noncesigner, &tg_ctl_identity, &tg_ctl_resourceslice, &tg_ctl_renew, &tg_ctl_replicator,
    &tg_ctl_authtoken,
    NULL,
};

const tg_controller_desc *tg_controller_by_kind(const char *kind)
{
    for (const tg_controller_desc *const *d = tg_controller_descriptors; *d; d++) {
        size_t n = strlen((*d)->key_prefix);
        if ((*d)->prefix_family ? strncmp(kind, (*d)->key_prefix, n) == 0 : strcmp(kind, (*d)->key_prefix) == 0)
            return *d;
    }
    return NULL;
}

int tg_controllers_parse(const char *list, unsigned *bits)
{
    char buf[256], *tok, *save = NULL;

    if (strlen(list) >= sizeof(buf))
        return -1;
    strcpy(buf, list);
    *bits = 0;
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        const tg_controller_desc *const *d = tg_controller_descriptors;
        while (*d && strcmp(tok, (*d)->name) != 0)
            d++;
        if (!*d)
            return -1;
        *bits |= (*d)->bit;
    }
    return *bits ? 0 : -1;
}

int tg_key_format(char *key, const char *prefix, const char *ns, const char *name)
{
    int n = snprintf(key, TG_WQ_KEY_MAX, "%s/%s/%s", prefix, ns ? ns : "", name ? name : "");

    return n < 0 || n >= TG_WQ_KEY_MAX || !name || !*name ? -1 : 0;
}
