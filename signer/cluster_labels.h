/* cluster_labels.h - the provider's cluster labels, which the
 * remoteresourceslice controller offers as a slice's status.nodeLabels
 * (Liqo's --cluster-labels: the consumer's virtual node carries them).
 * Pure: text in, a JSON map out; no I/O.
 *
 * The flag is "key=value,key=value". Each key and value must be a valid
 * Kubernetes label (apimachinery's IsQualifiedName and IsValidLabelValue),
 * checked here, because a consumer's virtual node with a label the API server
 * refuses would fail there, on the other cluster, far from the typo. */
#ifndef TG_SIGNER_CLUSTER_LABELS_H
#define TG_SIGNER_CLUSTER_LABELS_H

#include <stddef.h>
#include <json-c/json.h>

/* At most this many labels (a node's labels are a small map). */
#define TG_CLUSTER_LABELS_MAX 64

/* Parse text into a new JSON object {key: value}. An empty text is an empty
 * map. NULL, with err naming the bad pair and what was expected, on a pair
 * without '=', an invalid key or value, a key given twice, or too many. */
json_object *tg_cluster_labels_parse(const char *text, char *err, size_t err_len);

/* 1 when s is a valid label key: an optional DNS subdomain prefix (at most
 * 253 characters) and '/', then a name of 1-63 characters [A-Za-z0-9._-]
 * that starts and ends with a letter or digit. */
int tg_label_key_valid(const char *s, size_t len);

/* 1 when s is a valid label value: empty, or 1-63 characters like a name. */
int tg_label_value_valid(const char *s, size_t len);

#endif
