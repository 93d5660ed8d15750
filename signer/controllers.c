/* controllers.c - the table of every controller (controller.h), expanded from
 * controllers.def: --controllers names, queue key prefixes and dispatch all
 * come from its rows. */
#include "signer/controller.h"

#include <stdio.h>
#include <string.h>

const tg_controller_desc *const tg_controller_descriptors[] = {
#define TG_CONTROLLER(descriptor, BIT, file) &tg_ctl_##descriptor,
#include "signer/controllers.def"
#undef TG_CONTROLLER
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
