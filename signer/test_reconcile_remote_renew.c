/* test_reconcile_remote_renew.c - the provider's Renew answer
 * (tg_reconcile_remote_renew) and its watch on late renewals (issue 48 #3):
 * the Tenant's certificate is copied into the Renew's status, and the
 * reconcile asks to look again when that certificate would become overdue;
 * once it is overdue (logged) it asks for nothing more. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/json.h"
#include "pki/keys.h"
#include "signer/reconcile_common.h"
#include "signer/renewal.h"
#include "signer/test_reconcile_fixture.h"

#define CONSUMER "consumer-1"
#define NS "liqo-tenant-" CONSUMER
#define NAME "controlplane-provider-cluster"
#define GROUP "/apis/authentication.liqo.io/v1beta1/namespaces/" NS
#define RENEW GROUP "/renews/" NAME
#define TENANT GROUP "/tenants/" CONSUMER

/* The reconcile's answer for a Tenant certificate valid valid_s seconds
 * (from 5 minutes ago); *answered: the Renew's status carries it. */
static long run(long valid_s, int *answered)
{
    tg_api *api = fake_api_new();
    EVP_PKEY *key = tg_key_generate(TG_KEY_ED25519);
    char *crt = rt_cert_b64(key, valid_s), text[8192];
    const char *got;
    tg_signer s;
    long ret;

    rt_signer_init(&s);
    s.renewal_grace_pct = TG_RENEWAL_GRACE_PCT_DEFAULT;
    fake_api_put(api, RENEW,
                 "{\"metadata\":{\"name\":\"" NAME "\",\"namespace\":\"" NS "\",\"labels\":{\"liqo.io/replicated\":"
                 "\"true\",\"liqo.io/originID\":\"" CONSUMER "\"}},\"spec\":{\"consumerClusterID\":\"" CONSUMER
                 "\",\"identityType\":\"ControlPlane\"}}");
    snprintf(text, sizeof(text),
             "{\"metadata\":{\"name\":\"" CONSUMER "\",\"namespace\":\"" NS "\"},\"spec\":{\"clusterID\":\"" CONSUMER
             "\"},\"status\":{\"authParams\":{\"signedCRT\":\"%s\"}}}", crt);
    fake_api_put(api, TENANT, text);
    ret = tg_reconcile_remote_renew(&s, api, NS, NAME);
    got = tg_json_path_string(fake_api_object(api, RENEW), "status", "authParams", "signedCRT", NULL);
    *answered = got && strcmp(got, crt) == 0;
    free(crt);
    EVP_PKEY_free(key);
    rt_signer_clear(&s);
    fake_api_free(api);
    return ret;
}

static void test_fresh_certificate_is_looked_at_when_it_would_be_overdue(void **state)
{
    int answered;
    long ret = run(3600, &answered);     /* lifetime 3300 s: renew-at +2200 s, overdue +2530 s */

    (void)state;
    assert_true(answered);
    assert_true(ret > 2500 * 1000L && ret <= 2532 * 1000L);
}

static void test_overdue_certificate_asks_for_nothing_more(void **state)
{
    int answered;

    (void)state;
    assert_int_equal(run(320, &answered), TG_RECONCILE_OK);   /* overdue 17 s ago */
    assert_true(answered);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fresh_certificate_is_looked_at_when_it_would_be_overdue),
        cmocka_unit_test(test_overdue_certificate_asks_for_nothing_more),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
