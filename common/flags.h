/* flags.h - the command-line values the services share, parsed one way.
 *
 * The webhook and the signer take the same kinds of values (listen
 * addresses, bounded integers); one parser each keeps their flags' meaning
 * identical. Pure functions: no output, no globals. */
#ifndef TG_COMMON_FLAGS_H
#define TG_COMMON_FLAGS_H

#include <stddef.h>
#include <stdint.h>

/* A decimal integer in [min, max], the whole string (no blanks, no '+').
 * 0, or -1 (out untouched). */
int tg_flag_long(const char *arg, long min, long max, long *out);

/* A duration in seconds: digits, an optional fraction ("0.25"), an optional
 * "s" suffix; no sign, blank, exponent, hex, inf or nan (which strtod would
 * take). *ms gets it in milliseconds (finer fractions are dropped) when it is
 * in [min_ms, max_ms]. 0, or -1 (ms untouched). */
int tg_flag_seconds(const char *arg, uint64_t min_ms, uint64_t max_ms, uint64_t *ms);

/* A listen address: "host:port", "[v6]:port", or ":port" (all IPv4
 * interfaces, host "0.0.0.0"); port 0-65535. host gets a NUL-terminated copy
 * (host_len bytes at most). 0, or -1 when malformed or too long. */
int tg_flag_listen_addr(const char *arg, char *host, size_t host_len, int *port);

/* The same, or "off": *port -1 (the --metrics-listen of every program). */
int tg_flag_listen_addr_or_off(const char *arg, char *host, size_t host_len, int *port);

#endif
