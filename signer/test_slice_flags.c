/* test_slice_flags.c - tenantgate-signer's flags for Liqo's provider
 * switches (--default-resource-slice-class-enabled, --default-node-resources,
 * --enable-storage, --real-storage-class-name, --ingress-classes,
 * --load-balancer-classes), and the consumer's --key-type: parsed once at
 * start, a bad value refused there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <getopt.h>
#include <cmocka.h>

#include "kube/json.h"
#include "signer/config.h"

static int parse(const char *a, const char *b, tg_signer *s)
{
    char *argv[] = {"tenantgate-signer", (char *)a, (char *)b, NULL};
    tg_signer_flags f;
    memset(s, 0, sizeof(*s));
    memset(&f, 0, sizeof(f));
    optind = 0;     /* glibc: a full re-initialisation of getopt */
    return tg_signer_flags_parse(b ? 3 : a ? 2 : 1, argv, s, &f);
}

static void clear(tg_signer *s)
{
    json_object_put(s->slice_provider.defaults);
    json_object_put(s->slice_offer.ingress_classes);
    json_object_put(s->slice_offer.load_balancer_classes);
    json_object_put(s->node_labels);
}

static void test_flags(void **state)
{
    static const struct {
        const char *a, *b;
        int status;                  /* -1: go on; 2: refused at start */
        int class_off, storage;
        const char *defaults, *ingress, *lb, *real;
    } rows[] = {
        {NULL, NULL, -1, 0, 0, NULL, NULL, NULL, NULL},
        {"--default-resource-slice-class-enabled=false", NULL, -1, 1, 0, NULL, NULL, NULL, NULL},
        {"--default-resource-slice-class-enabled", NULL, -1, 0, 0, NULL, NULL, NULL, NULL},
        {"--default-resource-slice-class-enabled=true", NULL, -1, 0, 0, NULL, NULL, NULL, NULL},
        {"--default-resource-slice-class-enabled=no", NULL, 2, 0, 0, NULL, NULL, NULL, NULL},
        {"--default-node-resources", "cpu=4,memory=8Gi,pods=110,ephemeral-storage=20Gi", -1, 0, 0,
         "{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\",\"ephemeral-storage\":\"20Gi\"}", NULL, NULL, NULL},
        {"--default-node-resources=cpu=2", NULL, -1, 0, 0, "{\"cpu\":\"2\"}", NULL, NULL, NULL},
        {"--default-node-resources", "cpu=four", 2, 0, 0, NULL, NULL, NULL, NULL},
        {"--default-node-resources", "cpu", 2, 0, 0, NULL, NULL, NULL, NULL},
        {"--enable-storage", NULL, -1, 0, 1, NULL, NULL, NULL, NULL},
        {"--enable-storage=false", NULL, -1, 0, 0, NULL, NULL, NULL, NULL},
        {"--enable-storage=yes", NULL, 2, 0, 0, NULL, NULL, NULL, NULL},
        {"--real-storage-class-name", "fast", -1, 0, 0, NULL, NULL, NULL, "fast"},
        {"--ingress-classes", "nginx;default,traefik", -1, 0, 0, NULL,
         "[{\"ingressClassName\":\"nginx\",\"default\":true},{\"ingressClassName\":\"traefik\"}]", NULL, NULL},
        {"--load-balancer-classes", "metallb;default", -1, 0, 0, NULL, NULL,
         "[{\"loadBalancerClassName\":\"metallb\",\"default\":true}]", NULL},
        {"--ingress-classes", ";default", 2, 0, 0, NULL, NULL, NULL, NULL},
        {"--load-balancer-classes", "a;b", 2, 0, 0, NULL, NULL, NULL, NULL},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        tg_signer s;
        int status = parse(rows[i].a, rows[i].b, &s);
        const char *want[] = {rows[i].defaults, rows[i].ingress, rows[i].lb};
        json_object *got[] = {s.slice_provider.defaults, s.slice_offer.ingress_classes,
                              s.slice_offer.load_balancer_classes};

        if (status != rows[i].status)
            fail_msg("%s %s: exit %d, expected %d", rows[i].a, rows[i].b ? rows[i].b : "", status, rows[i].status);
        if (status == -1) {
            assert_int_equal(s.slice_provider.default_class_disabled, rows[i].class_off);
            assert_int_equal(s.slice_offer.enable_storage, rows[i].storage);
            for (size_t k = 0; k < 3; k++) {
                if (!want[k])
                    assert_null(got[k]);
                else
                    assert_string_equal(json_object_to_json_string_ext(got[k], JSON_C_TO_STRING_PLAIN |
                                        JSON_C_TO_STRING_NOSLASHESCAPE), want[k]);
            }
            if (rows[i].real)
                assert_string_equal(s.slice_offer.real_storage_class, rows[i].real);
        }
        clear(&s);
    }
}

/* --key-type: the spelling of every command line; default Ed25519 (Liqo's). */
static void test_key_type_flag(void **state)
{
    static const struct {
        const char *a, *b;
        int status;
        tg_key_type type;
    } rows[] = {
        {NULL, NULL, -1, TG_KEY_ED25519},
        {"--key-type", "ed25519", -1, TG_KEY_ED25519},
        {"--key-type", "rsa2048", -1, TG_KEY_RSA2048},
        {"--key-type=ecdsa-p256", NULL, -1, TG_KEY_ECDSA_P256},
        {"--key-type", "rsa", 2, 0},
        {"--key-type", "ecdsa", 2, 0},
        {"--key-type", "", 2, 0},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        tg_signer s;
        int status = parse(rows[i].a, rows[i].b, &s);

        if (status != rows[i].status)
            fail_msg("%s %s: exit %d, expected %d", rows[i].a, rows[i].b ? rows[i].b : "", status, rows[i].status);
        if (status == -1)
            assert_int_equal(s.key_type, rows[i].type);
        clear(&s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flags),
        cmocka_unit_test(test_key_type_flag),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
