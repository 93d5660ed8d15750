/* cmd_check.c - `check`: the webhook's decision on a Tenant file, offline
 * (PROTOCOL.md 5: steps 1, 3, 4 and 6-10 with a given nonce; placement and the
 * nonce lookup need a cluster). Exit 0 accepted, 1 rejected with exactly one
 * line "REASON: message" on stderr, 2 usage or I/O error. What of step 2 can
 * be seen in the file (the cluster label, the name) is a warning. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>

#include "cli.h"
#include "kube/tenant_json.h"
#include "kube/yaml.h"
#include "pki/nonce.h"
#include "pki/tenant.h"
#include "pki/verdict.h"

static const char usage[] =
    "Usage: " TG_CLI_NAME " check -f FILE (--nonce NONCE | --nonce-file FILE)\n"
    "           [--allow-no-handshake]\n"
    "\n"
    "Check a Tenant (YAML or JSON) as the admission webhook would, with the\n"
    "nonce the provider issued. Exit 0 when accepted, 1 when rejected (the\n"
    "reason on stderr as \"REASON: message\"), 2 on usage or I/O errors.\n"
    "\n"
    "Options:\n"
    "  -f, --filename FILE   the Tenant ('-' = standard input), at most 1 MiB\n"
    "  --nonce NONCE         the nonce text, 88 characters\n"
    "  --nonce-file FILE     read the nonce from FILE ('-' = standard input)\n"
    "  --allow-no-handshake  accept authzPolicy TolerateNoHandshake (the operator's\n"
    "                        explicit switch; off by default)\n"
    "  -h, --help            show this help\n";

static int reject(const tg_verdict *v)
{
    fprintf(stderr, "%s: %s\n", tg_reason_name(v->reason), v->message);
    return TG_EXIT_REJECTED;
}

/* Names come from the file: print them without terminal control characters. */
static void print_safe(FILE *out, const char *s)
{
    for (; *s; s++)
        fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, out);
}

/* "Warning: FIELD is "VALUE" (or missing), expected spec.clusterID; ..." when
 * value is not the cluster id. */
static void warn_unlike_cluster_id(const tg_tenant *t, const char *field, const char *value, const char *reason)
{
    if (value != NULL && strcmp(value, t->cluster_id) == 0)
        return;
    fprintf(stderr, "Warning: %s is ", field);
    if (value == NULL) {
        fputs("missing", stderr);
    } else {
        fputc('"', stderr);
        print_safe(stderr, value);
        fputc('"', stderr);
    }
    fprintf(stderr, ", expected spec.clusterID; the webhook will refuse it (%s)\n", reason);
}

static void print_warnings(const tg_tenant *t)
{
    /* Placement (step 2) needs the cluster, but these parts of it can be seen
     * here: the label and the name (Liqo names a Tenant after its consumer). */
    warn_unlike_cluster_id(t, "metadata.labels[" TG_LABEL_REMOTE_CLUSTER_ID "]", t->label_cluster_id,
                           "LabelMismatch");
    warn_unlike_cluster_id(t, "metadata.name", t->name, "NameMismatch");
}

/* Decode and decide. Returns the exit code. */
static int check_document(const char *text, size_t len, const char *nonce,
                          const tg_check_opts *opts)
{
    char err[256];
    json_object *doc = tg_doc_parse(text, len, err, sizeof(err));
    tg_tenant t;
    tg_verdict v;
    int rc;

    tg_verdict_init(&v);
    if (doc == NULL) {
        tg_verdict_deny(&v, TG_MALFORMED_TENANT, "cannot parse the document: %s", err);
        return reject(&v);
    }
    rc = tg_tenant_from_json(doc, &t, &v);
    json_object_put(doc);
    if (rc != 0)
        return reject(&v);
    rc = tg_tenant_check(&t, nonce, TG_NONCE_TEXT_LEN, opts, &v);
    if (rc != 0) {
        tg_tenant_clear(&t);
        return reject(&v);
    }
    print_warnings(&t);
    fputs("accepted: tenant ", stdout);
    print_safe(stdout, t.name != NULL ? t.name : "(unnamed)");
    printf(" (cluster %s)\n", t.cluster_id);      /* valid: step 3 passed */
    tg_tenant_clear(&t);
    if (fflush(stdout) != 0)
        return cli_error("check", "cannot write to standard output");
    return TG_EXIT_OK;
}

int cmd_check(int argc, char **argv)
{
    const char *file = NULL, *nonce_text = NULL, *nonce_file = NULL;
    tg_check_opts opts = { 0 };
    const cli_option options[] = {
        { "filename", required_argument, 'f', &file, NULL },
        { "nonce", required_argument, 'n', &nonce_text, NULL },
        { "nonce-file", required_argument, 'N', &nonce_file, NULL },
        { "allow-no-handshake", no_argument, 'A', NULL, &opts.allow_no_handshake },
        { NULL, 0, 0, NULL, NULL },
    };
    char nonce[TG_NONCE_TEXT_LEN + 1];
    char err[512];
    char *text;
    size_t len;
    int rc = cli_parse_options("check", usage, "f:", options, argc, argv);

    if (rc != 0)
        return rc == CLI_HELP_SHOWN ? TG_EXIT_OK : rc;
    if (file == NULL)
        return cli_usage_error("check", usage, "-f FILE is required");
    if (nonce_file != NULL && strcmp(file, "-") == 0 && strcmp(nonce_file, "-") == 0)
        return cli_usage_error("check", usage, "the Tenant and the nonce cannot both come from "
                                               "standard input");
    rc = cli_nonce_arg("check", usage, nonce_text, nonce_file, nonce);
    if (rc != 0)
        return rc;
    text = cli_read_file(file, TG_CLI_MAX_INPUT, &len, err, sizeof(err));
    if (text == NULL) {
        OPENSSL_cleanse(nonce, sizeof(nonce));
        return cli_error("check", "%s", err);
    }
    rc = check_document(text, len, nonce, &opts);
    OPENSSL_cleanse(nonce, sizeof(nonce));
    free(text);
    return rc;
}
