/* slice_settled.h - what spares the provider's ResourceSlice controller a
 * pass: the watch event of its own status write (settled.h) costs no GET.
 *
 * A pass that ends with nothing left to do until a time records the slice's
 * resourceVersion after its write and what the outcome depended on, as the
 * informers show it: its Tenant's resourceVersion and the newest CSR made for
 * the slice (name, issued, denied). A later wake-up of the slice whose caches
 * show exactly that is skipped; anything else (the consumer's edit, a Tenant
 * change, a CSR issued or denied, the time passed) runs the full pass. */
#ifndef TG_SIGNER_SLICE_SETTLED_H
#define TG_SIGNER_SLICE_SETTLED_H

#include <stddef.h>

#include "signer/signer.h"

#define RS_DEPS_MAX 400

/* The dependency text of slice ns/name (consumer: its namespace's remote
 * cluster id) as the Tenant and CSR caches show it now. made (or NULL): the
 * name of a CSR this pass made, which the cache may not show yet: the text
 * as it will read once it does. 0, or -1 (no caches, out of memory). */
int rs_settled_deps(tg_signer *s, const char *ns, const char *name, const char *consumer, const char *made,
                    char *deps, size_t len);

/* Milliseconds until the slice needs a look when the slice cache shows it at
 * a version we settled, with the same dependencies; 0: run the full pass.
 * deps (len >= RS_DEPS_MAX) receives rs_settled_deps's text, or "": the
 * pass settles with it, and the consumer's CSRs are walked once a pass. */
long rs_settled_left(tg_signer *s, const char *ns, const char *name, const char *consumer, char *deps, size_t len);

/* Record that the slice at rv needs nothing for delay_ms while its
 * dependencies read deps_a or deps_b (may be NULL). Best effort. */
void rs_settle(tg_signer *s, const char *ns, const char *name, const char *rv, const char *deps_a,
               const char *deps_b, long delay_ms);

#endif
