/* slice_offer.h - the storage, ingress and load-balancer classes a provider
 * offers in an accepted slice's status, as Liqo's --enable-storage,
 * --real-storage-class-name, --ingress-classes and --load-balancer-classes
 * fill them (its remoteresourceslice controller, slicestatus.go). Pure: no
 * I/O; the StorageClass list is read by the caller. */
#ifndef TG_SIGNER_SLICE_OFFER_H
#define TG_SIGNER_SLICE_OFFER_H

#include <stddef.h>
#include <json-c/json.h>

typedef struct tg_slice_offer {
    int enable_storage;               /* --enable-storage: offer the cluster's StorageClasses */
    const char *real_storage_class;   /* --real-storage-class-name; NULL or "": the cluster's default */
    json_object *ingress_classes;     /* status.ingressClasses as written; NULL: [] */
    json_object *load_balancer_classes; /* status.loadBalancerClasses as written; NULL: [] */
} tg_slice_offer;

/* Liqo's class list "nginx;default,traefik" (its ClassNameList,
 * pkg/utils/args/classnamelist.go) as the status array, in the flag's order:
 * [{"<name_key>": "nginx", "default": true}, {"<name_key>": "traefik"}].
 * Empty chunks are skipped and "" gives [], as Liqo. NULL with err for an
 * empty name, a name over 253 characters, or a suffix other than ";default". */
json_object *tg_slice_class_list_parse(const char *flag, const char *name_key, char *err, size_t err_len);

/* status.storageClasses from a StorageClassList (items[].metadata.name and
 * the annotation storageclass.kubernetes.io/is-default-class), sorted by
 * name: [{"storageClassName": "x", "default": true}, ...]. The default is
 * real_name when given, else every class annotated "true". Never NULL. */
json_object *tg_slice_storage_classes(json_object *list, const char *real_name);

#endif
