/* listen.h - listening sockets: the probe port's, and the HTTPS ports' (one
 * per worker, joined by SO_REUSEPORT, so the kernel spreads new connections
 * evenly: server.h). */
#ifndef TG_COMMON_LISTEN_H
#define TG_COMMON_LISTEN_H

#include <stddef.h>

/* A bound, listening socket on host:port (IPv4 or IPv6 literal; port 0:
 * any), SO_REUSEPORT when reuseport. Its fd and *bound_port, or -1 with
 * err. */
int tg_listen_socket(const char *host, int port, int reuseport, int *bound_port, char *err, size_t err_len);

#endif
