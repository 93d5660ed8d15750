/* cli.h - kubectl-tenantgate: the command table and what commands share.
 *
 * Each subcommand lives in its own cmd_*.c file and is one entry of the table
 * in main.c. A command gets argv with its own name in argv[0] and returns the
 * process exit code. */
#ifndef TG_CLI_H
#define TG_CLI_H

#include <getopt.h>       /* required_argument, no_argument for cli_option */
#include <stddef.h>
#include <stdio.h>
#include <openssl/evp.h>

#include "pki/keys.h"

#define TG_CLI_NAME "kubectl-tenantgate"
#ifndef TG_VERSION
#define TG_VERSION "0.1.0"
#endif

/* Exit codes, as PROTOCOL.md 8 fixes them for `check` and all commands follow. */
enum {
    TG_EXIT_OK = 0,
    TG_EXIT_REJECTED = 1,   /* the Tenant was checked and refused */
    TG_EXIT_USAGE = 2,      /* bad arguments, unreadable input, I/O failure */
};

typedef struct tg_command {
    const char *name;
    const char *summary;                 /* one line for the top-level help */
    int (*run)(int argc, char **argv);
} tg_command;

int cmd_keygen(int argc, char **argv);
int cmd_nonce(int argc, char **argv);
int cmd_sign_nonce(int argc, char **argv);
int cmd_generate(int argc, char **argv);
int cmd_check(int argc, char **argv);
/* Online commands (cmd_create.c, cmd_get.c, ...); exit codes 3 and 4 are in online.h. */
int cmd_create(int argc, char **argv);
int cmd_get(int argc, char **argv);
int cmd_delete(int argc, char **argv);
int cmd_authenticate(int argc, char **argv);
int cmd_unauthenticate(int argc, char **argv);
int cmd_install(int argc, char **argv);     /* cmd_install.c: the cluster id ConfigMap */
int cmd_preflight(int argc, char **argv);   /* cmd_preflight.c: checks before peering */
int cmd_revoke(int argc, char **argv);      /* cmd_revoke.c: one certificate's rights, at once */

/* --- usage.c ---------------------------------------------------------- */

/* Print "kubectl-tenantgate CMD: <message>" and the usage text on stderr;
 * returns TG_EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *usage, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Print "kubectl-tenantgate CMD: <message>" on stderr; returns TG_EXIT_USAGE. */
int cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* What to say when getopt_long returned '?' or ':' for argv. */
int cli_bad_option(const char *cmd, const char *usage, int ch, char **argv);

/* Reset getopt for a (sub)command's own argv. */
void cli_getopt_reset(void);

/* --- args.c ----------------------------------------------------------- */

/* One long option of a command, for cli_parse_options. getopt_long answers
 * with ch: the option's short letter where it has one (and it is then in the
 * command's short options too), else any other unique code. */
typedef struct cli_option {
    const char *name;           /* long name, without the "--" */
    int has_arg;                /* required_argument or no_argument */
    int ch;
    const char **value;         /* required_argument: optarg goes here */
    int *set;                   /* no_argument: set to 1 */
} cli_option;
/* An entry with neither value nor set is an option the command knows (a
 * table shared by several commands) but does not take: it is refused with
 * "option ... does not apply here". */

/* What cli_parse_options returns after printing the usage text for -h. */
#define CLI_HELP_SHOWN (-100)

/* The option loop of a command: reset getopt, store each option of opts
 * (ended by a NULL name; -h/--help is added last), print usage on stdout for
 * -h (CLI_HELP_SHOWN), refuse unknown options, missing values and operands.
 * shortopts: the command's own short options besides h ("f:", "o:" or "").
 * 0 when everything was taken, else the exit code after the message. */
int cli_parse_options(const char *cmd, const char *usage, const char *shortopts,
                      const cli_option *opts, int argc, char **argv);

/* -o/--output: "yaml" or "json" into *as_json; else the exit code. */
int cli_output_arg(const char *cmd, const char *usage, const char *output, int *as_json);

/* --public-key-format: "raw" or "pem" into *out (NULL text: the default, raw);
 * else the exit code after the message. */
int cli_pubkey_format_arg(const char *cmd, const char *usage, const char *text, tg_pubkey_format *out);

/* --key-type: ed25519, rsa2048 or ecdsa-p256 into *out as a tg_key_type (NULL
 * text: -1, not given); else the exit code after the message. */
int cli_key_type_arg(const char *cmd, const char *usage, const char *text, int *out);

/* The usage error for a --key-type value that is none of the three. */
int cli_key_type_error(const char *cmd, const char *usage, const char *text);

/* A cluster id given as flag (e.g. "--cluster-id") is a valid one (PROTOCOL.md
 * 3); 0, or the exit code after the message. */
int cli_cluster_id_arg(const char *cmd, const char *usage, const char *flag, const char *id);

/* --- io.c ------------------------------------------------------------- */

#define TG_CLI_MAX_INPUT (1u << 20)      /* Tenant documents, keys */
#define TG_CLI_MAX_NONCE_FILE 4096u

/* Read all of path ("-" = stdin) into a malloc'd NUL-terminated buffer; at
 * most max bytes. NULL with a message in err on failure or when larger. */
char *cli_read_file(const char *path, size_t max, size_t *len, char *err, size_t err_len);

/* Free a buffer that held secret material, wiping it first. */
void cli_free_secret(void *buf, size_t len);

/* Write data to path with the given mode: refuses an existing file unless
 * overwrite; the mode is applied even to an overwritten file. 0 or -1 with err. */
int cli_write_file(const char *path, const void *data, size_t len, unsigned mode, int overwrite,
                   char *err, size_t err_len);

/* A nonce from --nonce TEXT or --nonce-file FILE (exactly one), trailing
 * whitespace removed, checked to be 88 characters of padded base64. Fills
 * out; returns 0 or an exit code after printing the problem. */
int cli_nonce_arg(const char *cmd, const char *usage, const char *text, const char *file,
                  char out[89]);

/* Print text and a newline on standard output and flush it: TG_EXIT_OK, or
 * TG_EXIT_USAGE after "cannot write to standard output". */
int cli_print_line(const char *cmd, const char *text);

/* The nonce alone on stdout, for a script to take (cli_print_line); wiped
 * afterwards. nonce holds TG_NONCE_TEXT_LEN (88) characters and the NUL. */
int cli_print_nonce(const char *cmd, char nonce[89]);

/* Load a private key PEM file; NULL after printing the problem. */
EVP_PKEY *cli_load_private_key(const char *cmd, const char *path);

#endif
