/* kubectx.c - one cluster as the online commands see it: the kubeconfig,
 * loaded the way kubectl loads it (kube/kubeconfig.h), and an API client on a
 * private libuv loop driven synchronously, one request at a time. */
#include "online.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kube/json.h"

int cli_cluster_open(cli_cluster *c, const char *cmd, const char *scope, const char *kubeconfig,
                     const char *context)
{
    char err[512];

    memset(c, 0, sizeof(*c));
    c->scope = scope;
    c->cmd = cmd;
    /* A server closing a TLS connection mid-write must not kill us (client.h). */
    signal(SIGPIPE, SIG_IGN);
    if (tg_kube_config_load(&c->cfg, kubeconfig, context, err, sizeof(err)) != 0) {
        tg_kube_config_free(&c->cfg);
        if (scope != NULL)
            return cli_error(cmd, "(%s) cannot load the kubeconfig: %s", scope, err);
        return cli_error(cmd, "cannot load the kubeconfig: %s", err);
    }
    c->cfg_ready = 1;
    if (uv_loop_init(&c->loop) != 0) {
        cli_cluster_close(c);
        return cli_error(cmd, "cannot start an event loop");
    }
    c->loop_ready = 1;
    c->client = tg_kube_client_new(&c->loop, &c->cfg, err, sizeof(err));
    if (c->client == NULL) {
        cli_cluster_close(c);
        return cli_error(cmd, "%s%s%scannot set up the API client: %s", scope ? "(" : "",
                         scope ? scope : "", scope ? ") " : "", err);
    }
    return 0;
}

void cli_cluster_close(cli_cluster *c)
{
    if (c->client != NULL) {
        tg_kube_client_free(c->client);
        c->client = NULL;
    }
    if (c->loop_ready) {
        /* Let libuv close the client's handles, then the loop itself. */
        while (uv_run(&c->loop, UV_RUN_DEFAULT) != 0)
            ;
        uv_loop_close(&c->loop);
        c->loop_ready = 0;
    }
    if (c->cfg_ready) {
        tg_kube_config_free(&c->cfg);
        c->cfg_ready = 0;
    }
}

/* What is left of the command's --timeout (CLI_NO_DEADLINE: none). */
static long remaining_ms(const cli_cluster *c)
{
    return c->deadline_ms == 0 ? CLI_NO_DEADLINE : c->deadline_ms - cli_now_ms();
}

/* Say why nothing seems to happen: the API server asked to wait. */
static void on_retry_wait(const cli_cluster *c, long status, const char *resp, long sleep_ms)
{
    char note[400];

    cli_call_retry_note(note, sizeof(note), status, resp, sleep_ms);
    fprintf(stderr, "%s %s: %s%s%s%s\n", TG_CLI_NAME, c->cmd ? c->cmd : "", c->scope ? "(" : "",
            c->scope ? c->scope : "", c->scope ? ") " : "", note);
}

long cli_cluster_call(cli_cluster *c, const char *method, const char *path, json_object *body,
                      tg_kube_content_type ct, json_object **out, char **raw,
                      char *transport_err, size_t err_len)
{
    tg_kube_request_opts opts = {
        .method = method,
        .path = path,
        .content_type = ct,
    };
    const char *text = NULL;
    char *resp = NULL;
    size_t resp_len = 0;
    long status, slept_ms = 0;

    if (out)
        *out = NULL;
    if (raw)
        *raw = NULL;
    transport_err[0] = '\0';
    if (body != NULL) {
        text = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN |
                                                        JSON_C_TO_STRING_NOSLASHESCAPE);
        if (text == NULL) {
            snprintf(transport_err, err_len, "out of memory");
            return -1;
        }
        opts.body = text;
        opts.body_len = strlen(text);
    }
    /* An answer that asks to come back (cli_api_retry_after_ms) is retried
     * a few times, as client-go does, before it is reported; never past the
     * command's --timeout (callplan.c). */
    c->out_of_time = 0;
    for (int attempt = 0;; attempt++) {
        long sleep_ms, started_ms = cli_now_ms();

        opts.timeout_ms = cli_call_timeout_ms(remaining_ms(c));
        status = tg_kube_request_sync(c->client, &opts, &resp, &resp_len, transport_err, err_len);
        if (status < 0) {
            /* Cut short by --timeout, not by the client's own bound: the
             * command timed out (cli_flow_api_fail says so). */
            c->out_of_time = opts.timeout_ms < CLI_CALL_TIMEOUT_MS &&
                             cli_now_ms() - started_ms >= opts.timeout_ms;
            free(resp);
            return -1;
        }
        sleep_ms = cli_call_retry_sleep_ms(cli_api_retry_after_ms(status, resp), attempt, slept_ms,
                                           remaining_ms(c));
        if (sleep_ms < 0)
            break;
        on_retry_wait(c, status, resp, sleep_ms);
        free(resp);
        resp = NULL;
        uv_sleep((unsigned)sleep_ms);
        slept_ms += sleep_ms;
    }
    if (out != NULL && resp != NULL && resp_len > 0)
        *out = tg_json_parse(resp, resp_len, NULL, 0);
    if (raw != NULL)
        *raw = resp;
    else
        free(resp);
    return status;
}
