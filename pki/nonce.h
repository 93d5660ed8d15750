/* nonce.h - the provider's challenge: 64 CSPRNG bytes as padded base64. */
#ifndef TG_PKI_NONCE_H
#define TG_PKI_NONCE_H

#include <stddef.h>

#define TG_NONCE_RAW_LEN 64
#define TG_NONCE_TEXT_LEN 88   /* 4 * ceil(64 / 3), with "==" padding */

/* Fill out with a new nonce text and a terminating NUL. 0 on success. */
int tg_nonce_generate(char out[TG_NONCE_TEXT_LEN + 1]);

/* 1 when s is exactly 88 characters of standard padded base64 decoding to 64 bytes. */
int tg_nonce_text_valid(const char *s, size_t len);

#endif
