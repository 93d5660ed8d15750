/* test_live_gate.c - the live-read gate as a table of event sequences: which
 * review starts a read, which waits for which read, when the next read of a
 * namespace may start, and when the gate refuses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webhook/live_gate.h"

#define INTERVAL 250
#define MAX_STEPS 16
#define MAX_WAITERS 64

typedef enum { END, JOIN, FINISH, DUE, DRAIN } op;

typedef struct step {
    op op;
    const char *ns;       /* JOIN, FINISH; DUE: the namespace expected due, or NULL */
    int waiter;           /* JOIN: which waiter (index into the test's array) */
    uint64_t now;
    int admit;            /* JOIN: the expected tg_live_admit */
    const char *answered; /* FINISH, DRAIN: the waiters handed back, "0,2" ("" none) */
    uint64_t wait;        /* DUE: the expected *wait_ms */
} step;

typedef struct gate_case {
    const char *what;
    step steps[MAX_STEPS];
} gate_case;

#define NONE UINT64_MAX
#define J(ns_, w_, now_, admit_) {.op = JOIN, .ns = (ns_), .waiter = (w_), .now = (now_), .admit = (admit_)}
#define F(ns_, now_, ans_) {.op = FINISH, .ns = (ns_), .now = (now_), .answered = (ans_)}
#define D(ns_, now_, wait_) {.op = DUE, .ns = (ns_), .now = (now_), .wait = (wait_)}
#define DR(now_, ans_) {.op = DRAIN, .now = (now_), .answered = (ans_)}

static const gate_case cases[] = {
    {"one review: a read at once, answered by it, then nothing is due",
     {J("ns-a", 0, 1000, TG_LIVE_READ_NOW),
      D(NULL, 1000, NONE),
      F("ns-a", 1010, "0"),
      D(NULL, 1010, NONE)}},
    {"reviews that arrive during a read wait for the next one, not that one",
     {J("ns-a", 0, 1000, TG_LIVE_READ_NOW),
      J("ns-a", 1, 1005, TG_LIVE_QUEUED),
      J("ns-a", 2, 1006, TG_LIVE_QUEUED),
      F("ns-a", 1020, "0"),
      D(NULL, 1020, 230),
      D("ns-a", 1250, 0),
      D(NULL, 1250, NONE),
      F("ns-a", 1260, "1,2")}},
    {"a read slower than the interval: the next one is due as soon as it ends",
     {J("ns-a", 0, 1000, TG_LIVE_READ_NOW),
      J("ns-a", 1, 1100, TG_LIVE_QUEUED),
      F("ns-a", 1400, "0"),
      D("ns-a", 1400, 0),
      F("ns-a", 1410, "1")}},
    {"one read per interval: a review right after a read waits for the interval",
     {J("ns-a", 0, 1000, TG_LIVE_READ_NOW),
      F("ns-a", 1010, "0"),
      J("ns-a", 1, 1020, TG_LIVE_QUEUED),
      D(NULL, 1100, 150),
      D("ns-a", 1250, 0),
      F("ns-a", 1260, "1")}},
    {"after the interval a namespace is read at once again",
     {J("ns-a", 0, 1000, TG_LIVE_READ_NOW),
      F("ns-a", 1010, "0"),
      J("ns-a", 1, 1250, TG_LIVE_READ_NOW),
      F("ns-a", 1260, "1")}},
    {"namespaces do not wait for each other",
     {J("ns-a", 0, 1000, TG_LIVE_READ_NOW),
      J("ns-b", 1, 1001, TG_LIVE_READ_NOW),
      F("ns-b", 1002, "1"),
      F("ns-a", 1003, "0")}},
    {"the earliest of two scheduled reads sets the wait",
     {J("ns-a", 0, 1000, TG_LIVE_READ_NOW),
      J("ns-b", 1, 1100, TG_LIVE_READ_NOW),
      J("ns-b", 2, 1101, TG_LIVE_QUEUED),
      J("ns-a", 3, 1102, TG_LIVE_QUEUED),
      F("ns-b", 1110, "1"),
      F("ns-a", 1120, "0"),
      D(NULL, 1120, 130),
      D("ns-a", 1250, 0),
      D(NULL, 1250, 100),
      D("ns-b", 1350, 0)}},
    {"finishing a namespace with no read out hands back nothing",
     {F("ns-a", 1000, ""),
      J("ns-a", 0, 1000, TG_LIVE_READ_NOW),
      F("ns-b", 1001, ""),
      F("ns-a", 1002, "0"),
      F("ns-a", 1003, "")}},
    {"a name too long to hold is refused",
     {J("n123456789012345678901234567890123456789012345678901234567890123", 0, 1000, TG_LIVE_BUSY)}},
    {"drain hands back what is in flight and what is queued",
     {J("ns-a", 0, 1000, TG_LIVE_READ_NOW),
      J("ns-a", 1, 1001, TG_LIVE_QUEUED),
      J("ns-b", 2, 1002, TG_LIVE_READ_NOW),
      DR(1003, "0,1,2"),
      F("ns-a", 1004, ""),
      D(NULL, 2000, NONE),
      J("ns-a", 3, 1005, TG_LIVE_READ_NOW)}},
};

/* "i,j,k" of the waiters in list order. */
static void ids_of(const tg_live_waiter *list, const tg_live_waiter *base, char *out, size_t len)
{
    size_t used = 0;

    out[0] = '\0';
    for (const tg_live_waiter *w = list; w; w = w->next)
        used += (size_t)snprintf(out + used, len - used, "%s%d", used ? "," : "", (int)(w - base));
}

/* DRAIN's order is not promised: compare the sets. */
static void sort_ids(char *s)
{
    int ids[MAX_WAITERS], n = 0;
    size_t used = 0;
    char buf[256];

    for (char *p = strtok(s, ","); p && n < MAX_WAITERS; p = strtok(NULL, ","))
        ids[n++] = atoi(p);
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && ids[j - 1] > ids[j]; j--) {
            int t = ids[j];
            ids[j] = ids[j - 1];
            ids[j - 1] = t;
        }
    buf[0] = '\0';
    for (int i = 0; i < n; i++)
        used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%d", i ? "," : "", ids[i]);
    strcpy(s, buf);
}

static void run_case(const gate_case *c)
{
    tg_live_gate g;
    tg_live_waiter waiters[MAX_WAITERS];
    char got[256];

    tg_live_gate_init(&g, INTERVAL);
    for (int i = 0; i < MAX_STEPS && c->steps[i].op != END; i++) {
        const step *s = &c->steps[i];
        uint64_t wait = 12345;
        const char *ns;

        switch (s->op) {
        case JOIN:
            if ((int)tg_live_gate_join(&g, s->ns, &waiters[s->waiter], s->now) != s->admit)
                fail_msg("%s: step %d: join of %s gave another answer than %d", c->what, i, s->ns, s->admit);
            break;
        case FINISH:
            ids_of(tg_live_gate_finish(&g, s->ns, s->now), waiters, got, sizeof(got));
            if (strcmp(got, s->answered) != 0)
                fail_msg("%s: step %d: finish of %s answered \"%s\", want \"%s\"", c->what, i, s->ns, got,
                         s->answered);
            break;
        case DUE:
            ns = tg_live_gate_due(&g, s->now, &wait);
            if ((ns == NULL) != (s->ns == NULL) || (ns && strcmp(ns, s->ns) != 0) || wait != s->wait)
                fail_msg("%s: step %d: due gave %s, wait %llu; want %s, wait %llu", c->what, i, ns ? ns : "none",
                         (unsigned long long)wait, s->ns ? s->ns : "none", (unsigned long long)s->wait);
            break;
        case DRAIN:
            ids_of(tg_live_gate_drain(&g), waiters, got, sizeof(got));
            sort_ids(got);
            if (strcmp(got, s->answered) != 0)
                fail_msg("%s: step %d: drain gave \"%s\", want \"%s\"", c->what, i, got, s->answered);
            break;
        case END:
            break;
        }
    }
}

static void test_gate_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        run_case(&cases[i]);
}

/* Slots bound the namespaces held at once: one more is refused until a slot
 * frees, and a resting slot frees when its interval is over. */
static void test_slots_bound_namespaces(void **state)
{
    tg_live_gate g;
    tg_live_waiter w[TG_LIVE_GATE_SLOTS + 2];
    char ns[32];
    uint64_t wait;

    (void)state;
    tg_live_gate_init(&g, INTERVAL);
    for (int i = 0; i < TG_LIVE_GATE_SLOTS; i++) {
        snprintf(ns, sizeof(ns), "ns-%d", i);
        assert_int_equal(tg_live_gate_join(&g, ns, &w[i], 1000), TG_LIVE_READ_NOW);
    }
    assert_int_equal(tg_live_gate_join(&g, "ns-extra", &w[TG_LIVE_GATE_SLOTS], 1001), TG_LIVE_BUSY);
    /* a namespace already held still takes waiters */
    assert_int_equal(tg_live_gate_join(&g, "ns-3", &w[TG_LIVE_GATE_SLOTS], 1001), TG_LIVE_QUEUED);
    /* ns-0's read ends, but its slot rests for the interval */
    assert_ptr_equal(tg_live_gate_finish(&g, "ns-0", 1002), &w[0]);
    assert_int_equal(tg_live_gate_join(&g, "ns-extra", &w[TG_LIVE_GATE_SLOTS + 1], 1100), TG_LIVE_BUSY);
    assert_int_equal(tg_live_gate_join(&g, "ns-extra", &w[TG_LIVE_GATE_SLOTS + 1], 1250), TG_LIVE_READ_NOW);
    assert_null(tg_live_gate_due(&g, 1250, &wait));
    assert_int_equal(wait, NONE);
}

/* A flood of waiters on one namespace: one read at a time, each waiter
 * answered exactly once, in the order it came. */
static void test_flood_on_one_namespace(void **state)
{
    tg_live_gate g;
    tg_live_waiter w[MAX_WAITERS];
    int answered[MAX_WAITERS] = {0}, reads = 1, next = 0;
    uint64_t now = 1000, wait;

    (void)state;
    tg_live_gate_init(&g, INTERVAL);
    assert_int_equal(tg_live_gate_join(&g, "ns-a", &w[0], now), TG_LIVE_READ_NOW);
    for (int i = 1; i < MAX_WAITERS; i++)
        assert_int_equal(tg_live_gate_join(&g, "ns-a", &w[i], now + (uint64_t)i), TG_LIVE_QUEUED);
    for (;;) {
        tg_live_waiter *done = tg_live_gate_finish(&g, "ns-a", now + 100);

        for (; done; done = done->next) {
            int id = (int)(done - w);
            assert_int_equal(id, next);
            answered[id]++;
            next++;
        }
        if (next == MAX_WAITERS)
            break;
        now += INTERVAL;
        assert_string_equal(tg_live_gate_due(&g, now, &wait), "ns-a");
        reads++;
    }
    assert_int_equal(reads, 2);
    for (int i = 0; i < MAX_WAITERS; i++)
        assert_int_equal(answered[i], 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gate_table),
        cmocka_unit_test(test_slots_bound_namespaces),
        cmocka_unit_test(test_flood_on_one_namespace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
