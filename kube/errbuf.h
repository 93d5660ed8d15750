/* errbuf.h - the one way kube/ fills a caller's error buffer. */
#ifndef TG_KUBE_ERRBUF_H
#define TG_KUBE_ERRBUF_H

#include <stddef.h>

/* printf into err (when err is not NULL and err_len > 0); always returns -1 so
 * failure paths can `return tg_errf(err, err_len, ...)`. */
int tg_errf(char *err, size_t err_len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
