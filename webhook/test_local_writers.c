/* test_local_writers.c - --local-slice-writers: the list as parsed, hostile
 * lists refused, and a requester matched by user name or group only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "webhook/local_writers.h"

static void test_parse(void **state)
{
    static const struct {
        const char *list;
        int ok;
        size_t n;
        const char *err;
    } cases[] = {
        {"", 1, 0, NULL},
        {"admin", 1, 1, NULL},
        {"group:system:masters,admin,group:system:serviceaccounts:liqo", 1, 3, NULL},
        {"group:group:x", 1, 1, NULL},                    /* a group named "group:x" */
        {",", 0, 0, "empty entry"},
        {"admin,", 0, 0, "empty entry"},
        {"a,,b", 0, 0, "empty entry"},
        {"group:", 0, 0, "empty entry"},
        {"a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p", 1, 16, NULL},
        {"a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q", 0, 0, "at most 16 entries"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tg_local_writers w;
        char err[256] = "";
        int rc = tg_local_writers_parse(cases[i].list, &w, err, sizeof(err));
        print_message("\"%s\" -> %s %s\n", cases[i].list, rc == 0 ? "ok" : "refused", err);
        assert_int_equal(rc == 0, cases[i].ok);
        if (cases[i].ok)
            assert_int_equal(w.n, cases[i].n);
        else
            assert_non_null(strstr(err, cases[i].err));
    }
}

static void test_parse_long_name(void **state)
{
    char list[600], err[256];
    tg_local_writers w;

    (void)state;
    memset(list, 'a', sizeof(list) - 1);
    list[sizeof(list) - 1] = '\0';
    assert_int_equal(tg_local_writers_parse(list, &w, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "at most 253 characters"));
    list[253] = '\0';
    assert_int_equal(tg_local_writers_parse(list, &w, err, sizeof(err)), 0);
}

static int matches(const tg_local_writers *w, const char *review)
{
    tg_review_request req;
    char err[256];
    int m;

    assert_int_equal(tg_review_parse(review, strlen(review), &req, err, sizeof(err)), 0);
    m = tg_local_writers_match(w, &req);
    tg_review_request_clear(&req);
    return m;
}

#define REVIEW(user_info)                                                                                      \
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\","        \
    "\"resource\":{\"group\":\"authentication.liqo.io\",\"resource\":\"resourceslices\"},"                      \
    "\"operation\":\"CREATE\",\"object\":{}" user_info "}}"

static void test_match(void **state)
{
    tg_local_writers w;
    char err[128];

    (void)state;
    assert_int_equal(tg_local_writers_parse("admin,group:system:masters", &w, err, sizeof(err)), 0);
    assert_true(matches(&w, REVIEW(",\"userInfo\":{\"username\":\"admin\"}")));
    assert_true(matches(&w, REVIEW(",\"userInfo\":{\"username\":\"x\",\"groups\":[\"a\",\"system:masters\"]}")));
    /* a user named like the group, a group named like the user: neither */
    assert_false(matches(&w, REVIEW(",\"userInfo\":{\"username\":\"system:masters\"}")));
    assert_false(matches(&w, REVIEW(",\"userInfo\":{\"username\":\"x\",\"groups\":[\"admin\"]}")));
    assert_false(matches(&w, REVIEW(",\"userInfo\":{\"username\":\"group:system:masters\"}")));
    assert_false(matches(&w, REVIEW(",\"userInfo\":{\"username\":\"Admin\"}")));
    assert_false(matches(&w, REVIEW(",\"userInfo\":{\"username\":\"admin \"}")));
    assert_false(matches(&w, REVIEW(",\"userInfo\":{\"groups\":[\"system:masters \",7,null]}")));
    assert_false(matches(&w, REVIEW("")));                             /* no userInfo at all */
    assert_false(matches(NULL, REVIEW(",\"userInfo\":{\"username\":\"admin\"}")));
    assert_int_equal(tg_local_writers_parse("", &w, err, sizeof(err)), 0);
    assert_false(matches(&w, REVIEW(",\"userInfo\":{\"username\":\"\"}")));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_parse_long_name),
        cmocka_unit_test(test_match),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
