/* secret_data.h - the text a Secret keeps under one key of its data. */
#ifndef TG_KUBE_SECRET_DATA_H
#define TG_KUBE_SECRET_DATA_H

#include <stddef.h>

#include <json-c/json.h>

/* data[key] of a Secret, base64-decoded into buf as a NUL-terminated string.
 * 0; -1 when the key is absent, not base64, holds a NUL byte, or does not fit
 * in len with its NUL. The decoded copy is wiped before it is freed: Secret
 * values are often credentials. */
int tg_secret_data_text(json_object *secret, const char *key, char *buf, size_t len);

#endif
