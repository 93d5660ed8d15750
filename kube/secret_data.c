/* secret_data.c - the text a Secret keeps under one key of its data (secret_data.h). */
#include "kube/secret_data.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "kube/base64.h"
#include "kube/json.h"

int tg_secret_data_text(json_object *secret, const char *key, char *buf, size_t len)
{
    const char *b64 = tg_json_path_string(secret, "data", key, NULL);
    size_t n = 0;
    unsigned char *raw = b64 ? tg_base64_decode(b64, strlen(b64), &n, NULL, 0) : NULL;
    int rc = -1;

    if (raw && n < len && !memchr(raw, '\0', n)) {
        memcpy(buf, raw, n);
        buf[n] = '\0';
        rc = 0;
    }
    if (raw)
        OPENSSL_cleanse(raw, n);
    free(raw);
    return rc;
}
