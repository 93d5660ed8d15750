/* test_whoami.c - the SelfSubjectReview answer: the user name taken whole, or
 * refused with a reason (missing, not a string, empty, NUL inside, too long). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kube/json.h"
#include "kube/whoami.h"

static void test_from_review(void **state)
{
    static const struct {
        const char *desc;
        const char *doc;
        const char *user;        /* NULL: refused */
        const char *in_why;
    } cases[] = {
        {"service account",
         "{\"kind\":\"SelfSubjectReview\",\"status\":{\"userInfo\":{\"username\":"
         "\"system:serviceaccount:liqo:tenantgate-signer\",\"groups\":[\"system:serviceaccounts\"]}}}",
         "system:serviceaccount:liqo:tenantgate-signer", NULL},
        {"certificate user", "{\"status\":{\"userInfo\":{\"username\":\"kubernetes-admin\"}}}", "kubernetes-admin",
         NULL},
        {"no status", "{\"kind\":\"SelfSubjectReview\"}", NULL, "no status.userInfo.username"},
        {"no userInfo", "{\"status\":{}}", NULL, "no status.userInfo.username"},
        {"anonymous: no username", "{\"status\":{\"userInfo\":{\"groups\":[\"system:unauthenticated\"]}}}", NULL,
         "no status.userInfo.username"},
        {"not a string", "{\"status\":{\"userInfo\":{\"username\":42}}}", NULL, "no status.userInfo.username"},
        {"null", "{\"status\":{\"userInfo\":{\"username\":null}}}", NULL, "no status.userInfo.username"},
        {"empty", "{\"status\":{\"userInfo\":{\"username\":\"\"}}}", NULL, "found 0 bytes"},
        {"NUL inside", "{\"status\":{\"userInfo\":{\"username\":\"sys\\u0000tem\"}}}", NULL, "found 7 bytes"},
        {"userInfo an array", "{\"status\":{\"userInfo\":[]}}", NULL, "no status.userInfo.username"},
    };
    char user[TG_WHOAMI_MAX + 1], why[256];
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_object *doc = tg_json_parse(cases[i].doc, strlen(cases[i].doc), why, sizeof(why));
        int r;

        assert_non_null(doc);
        why[0] = '\0';
        r = tg_whoami_from_review(doc, user, why, sizeof(why));
        if (cases[i].user) {
            if (r != 0 || strcmp(user, cases[i].user) != 0)
                fail_msg("%s: got %d \"%s\" (%s)", cases[i].desc, r, user, why);
        } else {
            if (r != -1 || user[0] != '\0' || !strstr(why, cases[i].in_why))
                fail_msg("%s: got %d \"%s\", why \"%s\", wanted \"%s\"", cases[i].desc, r, user, why,
                         cases[i].in_why);
        }
        json_object_put(doc);
    }
}

/* A name of exactly the limit is taken; one byte more is refused, not cut
 * (a cut name could be someone else's). */
static void test_length_limit(void **state)
{
    char user[TG_WHOAMI_MAX + 1], why[256];
    char *name = malloc(TG_WHOAMI_MAX + 2);
    json_object *doc, *st, *ui;
    int n;

    (void)state;
    for (n = TG_WHOAMI_MAX; n <= TG_WHOAMI_MAX + 1; n++) {
        memset(name, 'u', (size_t)n);
        name[n] = '\0';
        doc = json_object_new_object();
        st = json_object_new_object();
        ui = json_object_new_object();
        json_object_object_add(ui, "username", json_object_new_string(name));
        json_object_object_add(st, "userInfo", ui);
        json_object_object_add(doc, "status", st);
        if (n == TG_WHOAMI_MAX) {
            assert_int_equal(tg_whoami_from_review(doc, user, why, sizeof(why)), 0);
            assert_int_equal(strlen(user), TG_WHOAMI_MAX);
        } else {
            assert_int_equal(tg_whoami_from_review(doc, user, why, sizeof(why)), -1);
            assert_non_null(strstr(why, "found 513 bytes"));
            assert_string_equal(user, "");
        }
        json_object_put(doc);
    }
    free(name);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_from_review),
        cmocka_unit_test(test_length_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
