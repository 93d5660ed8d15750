/* io.c - files in and out for the commands (pki/ and kube/ stay I/O-free). */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/crypto.h>

#include "pki/keys.h"
#include "pki/nonce.h"

char *cli_read_file(const char *path, size_t max, size_t *len, char *err, size_t err_len)
{
    int is_stdin = strcmp(path, "-") == 0;
    const char *what = is_stdin ? "standard input" : path;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    size_t cap = 0, n = 0;
    char *buf = NULL;

    if (f == NULL) {
        snprintf(err, err_len, "cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    for (;;) {
        size_t got;

        if (n == cap) {
            /* Room for one byte past the limit, so "too big" is detectable. */
            size_t ncap = cap ? cap * 2 : 4096;
            char *p;

            if (ncap > max + 1)
                ncap = max + 1;
            p = ncap > cap ? realloc(buf, ncap + 1) : NULL;
            if (p == NULL) {
                snprintf(err, err_len, "out of memory reading %s", what);
                goto fail;
            }
            buf = p;
            cap = ncap;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n > max) {
            snprintf(err, err_len, "%s is larger than the %zu byte limit", what, max);
            goto fail;
        }
        if (got == 0) {
            if (ferror(f)) {
                snprintf(err, err_len, "cannot read %s: %s", what, strerror(errno));
                goto fail;
            }
            break;
        }
    }
    buf[n] = '\0';
    *len = n;
    if (!is_stdin)
        fclose(f);
    return buf;
fail:
    free(buf);
    if (!is_stdin)
        fclose(f);
    return NULL;
}

void cli_free_secret(void *buf, size_t len)
{
    if (buf != NULL)
        OPENSSL_cleanse(buf, len);
    free(buf);
}

int cli_write_file(const char *path, const void *data, size_t len, unsigned mode, int overwrite,
                   char *err, size_t err_len)
{
    int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (overwrite ? O_TRUNC : O_EXCL);
    int fd = open(path, flags, (mode_t)mode);
    FILE *f;

    if (fd < 0) {
        if (errno == EEXIST)
            snprintf(err, err_len, "%s already exists (use --force to overwrite)", path);
        else
            snprintf(err, err_len, "cannot create %s: %s", path, strerror(errno));
        return -1;
    }
    /* An overwritten file keeps its old mode and open() honours the umask:
     * set the mode we mean (0600 for a private key) explicitly. */
    if (fchmod(fd, (mode_t)mode) != 0) {
        snprintf(err, err_len, "cannot set the mode of %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    f = fdopen(fd, "wb");
    if (f == NULL) {
        snprintf(err, err_len, "cannot write %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    if (fwrite(data, 1, len, f) != len || fflush(f) != 0 || fsync(fileno(f)) != 0) {
        snprintf(err, err_len, "cannot write %s: %s", path, strerror(errno));
        fclose(f);
        return -1;
    }
    if (fclose(f) != 0) {
        snprintf(err, err_len, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int cli_nonce_arg(const char *cmd, const char *usage, const char *text, const char *file,
                  char out[TG_NONCE_TEXT_LEN + 1])
{
    char err[512];
    char *buf = NULL;
    size_t len;

    if ((text == NULL) == (file == NULL))
        return cli_usage_error(cmd, usage, "give the nonce with exactly one of --nonce or --nonce-file");
    if (file != NULL) {
        buf = cli_read_file(file, TG_CLI_MAX_NONCE_FILE, &len, err, sizeof(err));
        if (buf == NULL)
            return cli_error(cmd, "%s", err);
        /* Secrets and `echo` add a trailing newline; nothing else is trimmed. */
        while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' ' ||
                           buf[len - 1] == '\t'))
            buf[--len] = '\0';
        text = buf;
    } else {
        len = strlen(text);
    }
    if (!tg_nonce_text_valid(text, len)) {
        cli_free_secret(buf, file != NULL ? strlen(buf) : 0);
        return cli_error(cmd, "the nonce must be %d characters of padded standard base64 "
                              "(64 bytes), found %zu characters", TG_NONCE_TEXT_LEN, len);
    }
    memcpy(out, text, TG_NONCE_TEXT_LEN);
    out[TG_NONCE_TEXT_LEN] = '\0';
    cli_free_secret(buf, file != NULL ? len : 0);
    return 0;
}

int cli_print_line(const char *cmd, const char *text)
{
    /* Flush here: a full disk or a closed pipe must fail the command, not
     * vanish at exit. */
    if (printf("%s\n", text) < 0 || fflush(stdout) != 0)
        return cli_error(cmd, "cannot write to standard output");
    return TG_EXIT_OK;
}

EVP_PKEY *cli_load_private_key(const char *cmd, const char *path)
{
    char err[512];
    size_t len;
    char *pem = cli_read_file(path, TG_CLI_MAX_INPUT, &len, err, sizeof(err));
    EVP_PKEY *key;

    if (pem == NULL) {
        cli_error(cmd, "%s", err);
        return NULL;
    }
    key = tg_key_private_from_pem(pem, len);
    cli_free_secret(pem, len);
    if (key == NULL)
        cli_error(cmd, "%s: not a PEM private key (PKCS#8, RSA or EC)", path);
    return key;
}

int cli_print_nonce(const char *cmd, char nonce[TG_NONCE_TEXT_LEN + 1])
{
    int rc = cli_print_line(cmd, nonce);

    OPENSSL_cleanse(nonce, TG_NONCE_TEXT_LEN + 1);
    return rc;
}
