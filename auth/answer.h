/* answer.h - the JSON bodies the auth server sends (pure). Liqo v0.10's
 * field names: GET /ids {"clusterId","clusterName"}; 202
 * {"namespace","certificate","apiServerUrl","apiServerCA"} (certificate and
 * CA base64 of their PEM); any other answer {"reason","message"} with a
 * reason of reason.h. malloc'd, NUL-terminated; NULL when out of memory. */
#ifndef TG_AUTH_ANSWER_H
#define TG_AUTH_ANSWER_H

#include <stddef.h>

#include "auth/reason.h"

char *tg_auth_answer_ids(const char *cluster_id, const char *cluster_name, size_t *len);

/* ca_pem may be NULL or empty: apiServerCA "" (the consumer trusts its own store). */
char *tg_auth_answer_identity(const char *ns, const char *cert_pem, size_t cert_len, const char *api_server_url,
                              const char *ca_pem, size_t ca_len, size_t *len);

char *tg_auth_answer_error(tg_auth_reason r, const char *message, size_t *len);

#endif
