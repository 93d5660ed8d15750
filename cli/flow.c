/* flow.c - a command's run (cli_flow): its deadline, its progress lines, how
 * it stops with a message, the wait between two polls, and the document it
 * prints at the end. The steps themselves are flow_namespace.c,
 * flow_secrets.c and flow_objects.c.
 *
 * Waits poll: the CLI runs for seconds, and a GET every 250 ms is simpler and
 * as prompt as a watch for that. Every wait names what it waits for and who
 * should do it, so a timeout tells the user which service is missing. */
#include "online.h"

#include <stdarg.h>
#include <stdlib.h>

#include "kube/yaml.h"

#define POLL_MS 250

long cli_now_ms(void)
{
    return (long)(uv_hrtime() / 1000000u);
}

void cli_flow_init(cli_flow *f, const char *cmd, FILE *progress, long timeout_ms)
{
    f->cmd = cmd;
    f->progress = progress;
    f->timeout_ms = timeout_ms;
    f->key_type = -1;
    f->deadline_ms = cli_now_ms() + timeout_ms;
}

void cli_flow_bind(const cli_flow *f, cli_cluster *c)
{
    c->deadline_ms = f->deadline_ms;
}

void cli_flow_step(cli_flow *f, const char *scope, const char *msg)
{
    char line[512];

    cli_progress_format(line, sizeof(line), scope, msg);
    fputs(line, f->progress);
    fflush(f->progress);
}

static int vfail(cli_flow *f, const cli_cluster *c, int rc, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));

static int vfail(cli_flow *f, const cli_cluster *c, int rc, const char *fmt, va_list ap)
{
    fprintf(stderr, "%s %s: ", TG_CLI_NAME, f->cmd);
    if (c != NULL && c->scope != NULL)
        fprintf(stderr, "(%s) ", c->scope);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    return rc;
}

int cli_flow_fail(cli_flow *f, const cli_cluster *c, int rc, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vfail(f, c, rc, fmt, ap);
    va_end(ap);
    return rc;
}

int cli_flow_api_fail(cli_flow *f, const cli_cluster *c, const cli_api_call *call, long status,
                      const char *raw, const char *transport_err)
{
    char msg[2048];
    cli_api_call full = *call;
    int rc;

    full.scope = c->scope;
    full.server = c->cfg.server;
    rc = cli_api_error(msg, sizeof(msg), &full, status, raw, transport_err);
    /* No answer in what was left of --timeout is the command's timeout, not
     * a dead server. */
    if (status < 0 && c->out_of_time) {
        char d[32];

        cli_format_duration(d, sizeof(d), f->timeout_ms);
        return cli_flow_fail(f, c, TG_EXIT_TIMEOUT, "timed out after %s waiting for an answer: %s",
                             d, msg);
    }
    return cli_flow_fail(f, c, rc, "%s", msg);
}

int cli_flow_poll_again(cli_flow *f, const cli_cluster *c, const char *fmt, ...)
{
    char what[512], d[32];
    va_list ap;

    if (cli_now_ms() < f->deadline_ms) {
        uv_sleep(POLL_MS);
        return 0;
    }
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    cli_format_duration(d, sizeof(d), f->timeout_ms);
    return cli_flow_fail(f, c, TG_EXIT_TIMEOUT, "timed out after %s waiting for %s", d, what);
}

int cli_print_object(const char *cmd, json_object *obj, int as_json)
{
    size_t len = 0;
    char *yaml = NULL;
    const char *text;
    int bad;

    if (as_json) {
        text = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                       JSON_C_TO_STRING_NOSLASHESCAPE);
        bad = text == NULL || printf("%s\n", text) < 0;
    } else {
        yaml = tg_yaml_emit(obj, &len);
        bad = yaml == NULL || fwrite(yaml, 1, len, stdout) != len;
        free(yaml);
    }
    if (bad || fflush(stdout) != 0)
        return cli_error(cmd, "cannot write the document to standard output");
    return TG_EXIT_OK;
}

int cli_print_result(const char *cmd, int rc, json_object *obj, int as_json)
{
    if (rc == 0)
        rc = cli_print_object(cmd, obj, as_json);
    json_object_put(obj);
    return rc;
}
