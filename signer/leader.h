/* leader.h - the leader election loop on its own thread (lease.h decides,
 * this does the Lease reads and writes). Only the leader's workers act;
 * informers run everywhere. A leader that loses the lease exits the process
 * at once (status 3) so it restarts clean with fresh caches and no half-done
 * reconcile: every reconciler is idempotent, the new leader redoes it. */
#ifndef TG_SIGNER_LEADER_H
#define TG_SIGNER_LEADER_H

#include "signer/signer.h"

typedef struct tg_leader tg_leader;

/* Starts the thread. lease in namespace ns. NULL with err. */
tg_leader *tg_leader_start(tg_signer *s, const char *ns, const char *name, char *err, size_t err_len);

/* Stop the loop; a leader releases the lease (holder "") so another replica
 * takes over at once instead of after the lease duration. Joins the thread. */
void tg_leader_stop(tg_leader *l);

#endif
