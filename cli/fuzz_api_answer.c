/* fuzz_api_answer.c - libFuzzer: what the CLI reads from an API server it
 * talks to (the provider's, for a consumer: not necessarily friendly), through
 * the pure readers of apierr.c, callplan.c, objects.c and slice.c.
 *
 * Input: two bytes of HTTP status, then the answer's body. Checked on every
 * input: the retry delay is "final" or 1 ms..CLI_RETRY_AFTER_MAX_S, and only
 * for 429 and 5xx; only a 404 can mean a missing type; every message written
 * is NUL-terminated inside its buffer, and the line printed while waiting to
 * retry is one line without control characters; an Identity built from a Tenant is a
 * controlplane-<id> object; a decoded Secret value is as long as it says. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/online.h"
#include "cli/slice.h"
#include "kube/json.h"

#define MSG_MAX 512

static void check_text(const char *buf, size_t size)
{
    if (memchr(buf, '\0', size) == NULL)
        abort();
}

static void read_status(long status, const char *body)
{
    static const cli_api_call call = {.scope = "remote", .server = "https://127.0.0.1:6443", .verb = "create",
                                      .resource = "tenants", .group = "authentication.liqo.io",
                                      .namespace_ = "liqo-tenant-c1", .name = "c1"};
    char msg[MSG_MAX];
    long delay = cli_api_retry_after_ms(status, body);
    int rc;

    if (delay != -1 && (delay < 1 || delay > CLI_RETRY_AFTER_MAX_S * 1000L || (status != 429 && status < 500)))
        abort();
    if (cli_api_type_missing(status, body) && status != 404)
        abort();
    memset(msg, 'x', sizeof(msg));
    rc = cli_api_error(msg, sizeof(msg), &call, status, body, NULL);
    check_text(msg, sizeof(msg));
    if (rc != TG_EXIT_REJECTED && rc != TG_EXIT_UNREACHABLE)
        abort();
    if (delay > 0) {
        /* The line printed while waiting: one line, whatever the server said. */
        memset(msg, 'x', sizeof(msg));
        cli_call_retry_note(msg, sizeof(msg), status, body, delay);
        check_text(msg, sizeof(msg));
        for (const char *c = msg; *c != '\0'; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7f)
                abort();
    }
}

static void read_objects(json_object *doc)
{
    char why[MSG_MAX], err[MSG_MAX];
    json_object *identity;
    unsigned char *value;
    size_t len = 0;

    (void)cli_tenant_status(doc);
    memset(why, 'x', sizeof(why));
    if (cli_tenant_refusal(doc, doc, why, sizeof(why)))
        check_text(why, sizeof(why));
    memset(err, 'x', sizeof(err));
    identity = cli_identity_from_tenant(doc, "p1", "liqo-tenant-p1", err, sizeof(err));
    if (identity != NULL) {
        const char *name = tg_json_path_string(identity, "metadata", "name", NULL);
        if (name == NULL || strcmp(name, "controlplane-p1") != 0)
            abort();
        json_object_put(identity);
    } else {
        check_text(err, sizeof(err));
    }
    if ((value = cli_secret_data(doc, "nonce", &len)) != NULL) {
        if (len == 0 || value[len] != '\0')
            abort();
        free(value);
    }
    for (int i = 0; i < 2; i++) {
        memset(why, 'x', sizeof(why));
        if (cli_slice_condition(doc, i ? "Resources" : "Authentication", why, sizeof(why)) == CLI_SLICE_DENIED)
            check_text(why, sizeof(why));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    long status;
    char *body;
    json_object *doc;

    if (size < 2)
        return 0;
    status = 100 + ((long)data[0] << 8 | data[1]) % 500;
    /* the client hands bodies on NUL-terminated (client.h) */
    if ((body = malloc(size - 1)) == NULL)
        return 0;
    memcpy(body, data + 2, size - 2);
    body[size - 2] = '\0';
    read_status(status, body);
    if ((doc = tg_json_parse(body, size - 2, NULL, 0)) != NULL) {
        read_objects(doc);
        json_object_put(doc);
    }
    free(body);
    return 0;
}
