/* fuzz_kubeconfig.c - kubeconfig documents (YAML or JSON) from arbitrary
 * bytes. Relative file names resolve inside an empty directory, so the
 * fuzzer cannot make the loader read real files by name. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/kubeconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tg_kube_config cfg;
    char err[512];
    /* A context override picked from the input's first byte exercises both paths. */
    const char *context = size > 0 && (data[0] & 1) ? "fuzz" : NULL;
    if (tg_kube_config_parse(&cfg, (const char *)data, size, "/nonexistent-tg-fuzz", context, err,
                             sizeof(err)) == 0) {
        if (cfg.server == NULL || strncmp(cfg.server, "http", 4) != 0)
            abort();   /* success means a usable server URL */
        if ((cfg.cert == NULL) != (cfg.key == NULL))
            abort();   /* never half a client identity */
        tg_kube_config_free(&cfg);
    } else if (err[0] == '\0') {
        abort();       /* every failure says why */
    }
    return 0;
}
