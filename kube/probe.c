/* probe.c - tg-kube-probe: drives the kube client against a real API server
 * for the e2e tests (not installed).
 *
 *   tg-kube-probe [-k KUBECONFIG] [-c CONTEXT] get PATH [-m MAX_BODY]
 *       one GET; prints "STATUS <code>" then the body; exit 0 on 2xx, 1 otherwise
 *       (transport errors on stderr), 2 on a configuration error.
 *   tg-kube-probe [-k ...] informer PATH [-l SELECTOR] [-i INDEX_LABEL]
 *                 [-t WATCH_TIMEOUT_S] [-r RESUME_RV] [-p PAGE_SIZE] [-d SECONDS]
 *       runs an informer; prints one line per change, flushed:
 *         SYNCED <count>            after the first list
 *         ADD|UPDATE <ns/name> <rv> / DELETE <ns/name>
 *         STATS lists=N pages=N gone=N watches=N failures=N events=N error=<last error>
 *       (STATS whenever a counter moves), until SECONDS pass or stdin closes.
 * Never prints object data: secrets stay secret. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/client.h"
#include "kube/informer.h"
#include "kube/json.h"

static void usage(void)
{
    fprintf(stderr, "usage: tg-kube-probe [-k KUBECONFIG] [-c CONTEXT] get PATH [-m MAX_BODY]\n"
                    "       tg-kube-probe [-k KUBECONFIG] [-c CONTEXT] informer PATH [-l SELECTOR] [-i LABEL]\n"
                    "                     [-t WATCH_TIMEOUT_S] [-r RESUME_RV] [-p PAGE_SIZE] [-d SECONDS]\n");
    exit(2);
}

static void print_key(const char *what, json_object *o, int with_rv)
{
    const char *ns = tg_json_path_string(o, "metadata", "namespace", NULL);
    const char *name = tg_json_path_string(o, "metadata", "name", NULL);
    const char *rv = tg_json_path_string(o, "metadata", "resourceVersion", NULL);
    printf("%s %s%s%s", what, ns ? ns : "", ns ? "/" : "", name ? name : "?");
    if (with_rv)
        printf(" %s", rv ? rv : "?");
    printf("\n");
    fflush(stdout);
}

static void on_add(json_object *o, void *data) { print_key("ADD", o, 1); }
static void on_update(json_object *old_obj, json_object *o, void *data) { print_key("UPDATE", o, 1); }
static void on_delete(json_object *o, void *data) { print_key("DELETE", o, 0); }

typedef struct probe {
    tg_informer *inf;
    tg_kube_client *client;
    uv_timer_t tick, deadline;
    uv_poll_t in;
    int synced_printed, stopping, have_stdin;
    tg_informer_stats last;
} probe;

static void on_tick(uv_timer_t *t);

static void stop(probe *p)
{
    if (p->stopping)
        return;
    on_tick(&p->tick);   /* the last STATS, while the informer still exists */
    p->stopping = 1;
    tg_informer_free(p->inf);
    tg_kube_client_free(p->client);
    uv_close((uv_handle_t *)&p->tick, NULL);
    uv_close((uv_handle_t *)&p->deadline, NULL);
    if (p->have_stdin)
        uv_close((uv_handle_t *)&p->in, NULL);
}

static void on_tick(uv_timer_t *t)
{
    probe *p = t->data;
    if (!p->synced_printed && tg_informer_synced(p->inf)) {
        p->synced_printed = 1;
        printf("SYNCED %zu\n", tg_informer_count(p->inf));
    }
    const tg_informer_stats *s = tg_informer_stats_get(p->inf);
    if (s->lists != p->last.lists || s->pages != p->last.pages || s->gone != p->last.gone ||
        s->watches != p->last.watches || s->failures != p->last.failures) {
        printf("STATS lists=%u pages=%u gone=%u watches=%u failures=%u events=%lu error=%s\n", s->lists,
               s->pages, s->gone, s->watches, s->failures, s->events, s->last_error);
        p->last = *s;
    }
    fflush(stdout);
}

static void on_deadline(uv_timer_t *t)
{
    stop(t->data);
}

static void on_stdin(uv_poll_t *h, int status, int events)
{
    char buf[256];
    ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
    if (n <= 0)
        stop(h->data);
}

int main(int argc, char **argv)
{
    const char *kubeconfig = NULL, *context = NULL, *selector = NULL, *index = NULL, *resume = NULL;
    long watch_timeout = 0, duration = 0, max_body = 0, page_size = 0;
    int opt;
    while ((opt = getopt(argc, argv, "+k:c:")) != -1) {
        if (opt == 'k')
            kubeconfig = optarg;
        else if (opt == 'c')
            context = optarg;
        else
            usage();
    }
    if (argc - optind < 2)
        usage();
    const char *cmd = argv[optind], *path = argv[optind + 1];
    optind += 2;
    while ((opt = getopt(argc, argv, "l:i:t:r:d:m:p:")) != -1) {
        switch (opt) {
        case 'l': selector = optarg; break;
        case 'i': index = optarg; break;
        case 't': watch_timeout = atol(optarg); break;
        case 'r': resume = optarg; break;
        case 'd': duration = atol(optarg); break;
        case 'm': max_body = atol(optarg); break;
        case 'p': page_size = atol(optarg); break;
        default: usage();
        }
    }

    signal(SIGPIPE, SIG_IGN);   /* see client.h */
    char err[512];
    tg_kube_config cfg;
    if (tg_kube_config_load(&cfg, kubeconfig, context, err, sizeof(err)) != 0) {
        fprintf(stderr, "tg-kube-probe: %s\n", err);
        return 2;
    }
    uv_loop_t loop;
    uv_loop_init(&loop);
    tg_kube_client *client = tg_kube_client_new(&loop, &cfg, err, sizeof(err));
    tg_kube_config_free(&cfg);
    if (client == NULL) {
        fprintf(stderr, "tg-kube-probe: %s\n", err);
        return 2;
    }

    int rc = 0;
    if (strcmp(cmd, "get") == 0) {
        tg_kube_request_opts o = {.method = "GET", .path = path, .max_body = max_body > 0 ? (size_t)max_body : 0};
        char *body;
        size_t len;
        long status = tg_kube_request_sync(client, &o, &body, &len, err, sizeof(err));
        if (status < 0) {
            fprintf(stderr, "tg-kube-probe: %s\n", err);
            rc = 1;
        } else {
            printf("STATUS %ld\n%s\n", status, body);
            rc = status >= 200 && status < 300 ? 0 : 1;
            free(body);
        }
        tg_kube_client_free(client);
    } else if (strcmp(cmd, "informer") == 0) {
        probe p = {.client = client};
        tg_informer_opts o = {.path = path, .label_selector = selector, .index_label = index,
                              .watch_timeout_s = watch_timeout, .resume_rv = resume, .page_size = page_size,
                              .backoff_base_ms = 200, .backoff_cap_ms = 5000,
                              .handlers = {on_add, on_update, on_delete, NULL}};
        p.inf = tg_informer_new(client, &o, err, sizeof(err));
        if (p.inf == NULL || tg_informer_start(p.inf, err, sizeof(err)) != 0) {
            fprintf(stderr, "tg-kube-probe: %s\n", err);
            return 2;
        }
        uv_timer_init(&loop, &p.tick);
        uv_timer_init(&loop, &p.deadline);
        p.tick.data = p.deadline.data = p.in.data = &p;
        uv_timer_start(&p.tick, on_tick, 50, 50);
        if (duration > 0)
            uv_timer_start(&p.deadline, on_deadline, (uint64_t)duration * 1000, 0);
        /* stdin closing stops the probe; /dev/null cannot be polled: then only -d does. */
        if (uv_poll_init(&loop, &p.in, STDIN_FILENO) == 0) {
            p.have_stdin = 1;
            uv_poll_start(&p.in, UV_READABLE | UV_DISCONNECT, on_stdin);
        }
        uv_run(&loop, UV_RUN_DEFAULT);
    } else {
        usage();
    }
    uv_run(&loop, UV_RUN_DEFAULT);   /* let the closes finish */
    if (uv_loop_close(&loop) != 0) {
        fprintf(stderr, "tg-kube-probe: handles left open at exit\n");
        rc = 3;
    }
    return rc;
}
