/* answer.h - the JSON bodies the auth server sends (pure). The bytes of
 * Liqo v0.10.3's structs as Go's encoding/json writes them (field order,
 * omitempty; auth/testdata/liqo-v0.10.3): GET /ids {"clusterId",
 * "clusterName" (omitempty)} (pkg/auth/ids.go); 202 {"namespace",
 * "certificate","apiServerUrl","apiServerCA" (omitempty),"aws":{zero}}
 * (pkg/auth/identityresponse.go; certificate and CA base64 of their PEM);
 * any other answer {"reason","message"} with a reason of reason.h (Liqo's
 * is a text/plain line: docs/auth.md "Conformance"). malloc'd,
 * NUL-terminated; NULL when out of memory. */
#ifndef TG_AUTH_ANSWER_H
#define TG_AUTH_ANSWER_H

#include <stddef.h>

#include "auth/reason.h"

char *tg_auth_answer_ids(const char *cluster_id, const char *cluster_name, size_t *len);

/* ca_pem may be NULL or empty: no apiServerCA (the consumer trusts its own store). */
char *tg_auth_answer_identity(const char *ns, const char *cert_pem, size_t cert_len, const char *api_server_url,
                              const char *ca_pem, size_t ca_len, size_t *len);

char *tg_auth_answer_error(tg_auth_reason r, const char *message, size_t *len);

#endif
