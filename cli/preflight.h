/* preflight.h - `kubectl tenantgate preflight` (docs/cli.md "Preflight"):
 * what a consumer's admin checks before peering, one line per check.
 *
 * Pure half (cmd_preflight_plan.c, unit tested): results and the verdict,
 * the clock-skew thresholds, the comparison of served API versions, the
 * rights each side's flow needs, the one-string token line and the key-type
 * names. The checks that talk to the clusters are cmd_preflight*.c. */
#ifndef TG_CLI_PREFLIGHT_H
#define TG_CLI_PREFLIGHT_H

#include <stddef.h>

#include "pki/keys.h"

typedef enum pf_result {
    PF_PASS = 0,
    PF_WARN,
    PF_FAIL,
    PF_SKIP,      /* the check could not be made: never counted as passed */
} pf_result;

/* "PASS", "WARN", "FAIL", "SKIP". */
const char *pf_result_name(pf_result r);

/* The tally of the lines printed so far. */
typedef struct pf_tally {
    int pass, warn, fail, skip;
} pf_tally;

void pf_tally_add(pf_tally *t, pf_result r);

/* The last line: "verdict: ready" or "verdict: not ready (N failed)"; returns
 * the exit status, 0 ready (no FAIL: a WARN or a SKIP does not stop a
 * peering), 1 not ready. */
int pf_verdict(const pf_tally *t, char *buf, size_t len);

/* Clock skew, in seconds, against the warn and fail thresholds: PASS up to
 * warn_s, WARN up to fail_s, FAIL above (either sign). */
#define PF_SKEW_WARN_S 5
#define PF_SKEW_FAIL_S 60
pf_result pf_skew_result(long skew_s, long warn_s, long fail_s);

/* The skew of a server's Date header (whole seconds) against the local clock
 * read when the request was sent and when its answer came (ms since the
 * epoch): date minus the midpoint, rounded toward zero, with a one-second
 * allowance for the header's resolution and half the round trip. */
long pf_skew_seconds(long long date_s, long long sent_ms, long long received_ms);

/* The plural resources of authentication.liqo.io a peering uses. */
#define PF_AUTH_RESOURCES "tenants,identities,resourceslices,renews"

/* The versions of authentication.liqo.io one cluster serves and, per
 * version, whether it serves every resource of PF_AUTH_RESOURCES. */
#define PF_MAX_VERSIONS 8
typedef struct pf_served {
    int n;
    char version[PF_MAX_VERSIONS][32];
    int complete[PF_MAX_VERSIONS];
} pf_served;

/* The newest version (Kubernetes order: v1 > v1beta2 > v1beta1 > v1alpha1)
 * that both serve completely, into out; -1 when there is none. */
int pf_common_version(const pf_served *a, const pf_served *b, char *out, size_t len);

/* Kubernetes' version priority: >0 when a is newer than b, 0 equal, <0 older. */
int pf_version_cmp(const char *a, const char *b);

/* One right a side's flow needs: verb on group/resource, in the tenant
 * namespace of the other cluster ("liqo-tenant-<id>") when ns is
 * PF_NS_TENANT, in Liqo's namespace when PF_NS_INSTALL, else cluster-wide. */
enum { PF_NS_CLUSTER = 0, PF_NS_TENANT, PF_NS_INSTALL };
typedef struct pf_right {
    const char *verb, *group, *resource, *subresource;
    const char *name;           /* a resourceName (the signer), or NULL */
    int ns;
} pf_right;

/* The rights `authenticate` uses on the provider, and on the consumer;
 * each table ends with a NULL verb. */
extern const pf_right pf_provider_rights[];
extern const pf_right pf_consumer_rights[];
/* What the CSR round trip needs: create and delete a CSR, approve it for
 * kubernetes.io/kube-apiserver-client. */
extern const pf_right pf_csr_rights[];
#define PF_CLIENT_SIGNER "kubernetes.io/kube-apiserver-client"

/* "create secrets" or "approve signers.certificates.k8s.io" (with a
 * subresource: "update certificatesigningrequests/approval...") into buf. */
void pf_right_text(const pf_right *r, char *buf, size_t len);

/* The one-string line `create token --auth-url` prints:
 * "kubectl tenantgate authenticate --auth-url URL --token ID.SECRET
 * --auth-ca-hash sha256:HEX" (leading words free). Each pointer is into buf,
 * a copy the caller owns and frees. 0, or -1 with why. */
typedef struct pf_token_line {
    char *buf;
    const char *auth_url, *token, *pin;
} pf_token_line;
int pf_token_line_parse(const char *text, pf_token_line *out, char *why, size_t why_len);
void pf_token_line_free(pf_token_line *t);

/* The image tag of a container image reference ("ghcr.io/liqotech/x:v1.2.0"
 * -> "v1.2.0"; a digest or no tag -> the whole reference). */
const char *pf_image_tag(const char *image);

#endif
