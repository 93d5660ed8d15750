/* local_writers.h - who the provider trusts to write its own local
 * ResourceSlices in a tenant namespace (--local-slice-writers), as data, and
 * the one check of a request against it. Pure: no I/O.
 *
 * A slice labelled liqo.io/replication=true that names this cluster as its
 * consumer is this cluster's own local slice (a two-way peering): the signer
 * then signs for it with the cluster key. A consumer must not be able to make
 * one, so only these writers may (slice_decide.h, SliceClaimsLocalCluster).
 * The list is comma-separated; an entry is a user name, or group:<name>. */
#ifndef TG_WEBHOOK_LOCAL_WRITERS_H
#define TG_WEBHOOK_LOCAL_WRITERS_H

#include <stddef.h>

#include "webhook/review.h"

#define TG_LOCAL_WRITERS_MAX 16
#define TG_LOCAL_WRITER_NAME_MAX 254     /* a user or group name, NUL included */
#define TG_LOCAL_WRITERS_GROUP_PREFIX "group:"

typedef struct tg_local_writer {
    int group;                           /* 1: a group name, 0: a user name */
    char name[TG_LOCAL_WRITER_NAME_MAX];
} tg_local_writer;

typedef struct tg_local_writers {
    tg_local_writer entries[TG_LOCAL_WRITERS_MAX];
    size_t n;
} tg_local_writers;

/* Parse list into w. "" is a valid empty list (nobody). An empty entry, an
 * empty name, a name too long, or more than TG_LOCAL_WRITERS_MAX entries:
 * -1 with err. */
int tg_local_writers_parse(const char *list, tg_local_writers *w, char *err, size_t err_len);

/* 1 when the requester is one of w (its user name, or one of its groups).
 * w NULL: nobody. */
int tg_local_writers_match(const tg_local_writers *w, const tg_review_request *req);

#endif
