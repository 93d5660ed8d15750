/* base64.h - the base64 of Kubernetes `bytes` fields (PROTOCOL.md 2): standard
 * alphabet, padded, no line breaks - exactly what the API server emits for a
 * Go []byte. Encoding and decoding are OpenSSL's; this module adds the strict
 * shape check OpenSSL's EVP_DecodeBlock does not do (it skips whitespace and
 * cannot tell padding from data). */
#ifndef TG_KUBE_BASE64_H
#define TG_KUBE_BASE64_H

#include <stddef.h>

/* malloc'd NUL-terminated base64 of data; *out_len (if not NULL) excludes the
 * NUL. NULL on allocation failure or when len is too large. */
char *tg_base64_encode(const unsigned char *data, size_t len, size_t *out_len);

/* Strictly decode text[0..len). Returns a malloc'd buffer (never NULL on
 * success, even for empty input) and its length in *out_len, or NULL with a
 * one-line reason in err: bad length, a character outside the alphabet (its
 * position, not the text: the field may be secret), misplaced padding. */
unsigned char *tg_base64_decode(const char *text, size_t len, size_t *out_len, char *err,
                                size_t err_len);

#endif
