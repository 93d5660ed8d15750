/* config.h - tenantgate-signer's flags (usage in config.c) and the
 * configuration they load into tg_signer before the loop runs. */
#ifndef TG_SIGNER_CONFIG_H
#define TG_SIGNER_CONFIG_H

#include <stdio.h>

#include "signer/signer.h"

/* Each Tenant takes a few dozen API round trips done one after another by a
 * worker, so onboarding speed scales with the workers (bench/onboard: 2 workers
 * onboarded 1,000 Tenants in 138 s, 8 in 68 s on the same 2-core machine). */
#define TG_SIGNER_DEFAULT_WORKERS 8
#define TG_SIGNER_MAX_WORKERS 32

/* What the flags name besides tg_signer's own fields. */
typedef struct tg_signer_flags {
    const char *kubeconfig, *context;
    const char *ca_file;                 /* --ca-file: authParams.ca */
    const char *own_ca_cert, *own_ca_key; /* --ca-cert, --ca-key: own-signer mode */
    const char *api_server;
    const char *lease_name, *lease_ns;
    long max_cert_lifetime_s;
    char metrics_host[256];
    int metrics_port;                    /* -1: off */
    long workers;
    int leader_elect;
    char slice_policy_ns[64];            /* s->slice_policy_ns points here when given */
} tg_signer_flags;

/* Parse argv into s and f. Returns -1 to go on, else the exit status (0
 * after --help, 2 on a bad flag, with the usage on stderr). */
int tg_signer_flags_parse(int argc, char **argv, tg_signer *s, tg_signer_flags *f);

/* Load what the flags name: the kubeconfig, the own-signer CA, authParams'
 * apiServer and CA. 0, or -1 after logging why. */
int tg_signer_config_load(tg_signer *s, const tg_signer_flags *f);

#endif
