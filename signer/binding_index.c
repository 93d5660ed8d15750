/* binding_index.c - see binding_index.h. */
#include "signer/binding_index.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strtab.h"
#include "kube/json.h"
#include "pki/name_owner.h"

/* A subject's bindings: their keys, each ended by '\n' (a key holds no
 * newline: namespaces and names are DNS labels or paths without one). One
 * record and one string a subject, where json-c's {subject: {key: null}}
 * cost about 1,000 bytes a Tenant (an object, its 16-slot hash table, a
 * copy of each key): at 10,000 Tenants 9 MB of the signer's peak. */
typedef struct subject_keys {
    char *keys;
    char name[];
} subject_keys;

struct tg_binding_index {
    pthread_mutex_t mu;
    tg_strtab *by_name;   /* subject_keys by subject name (owned); under mu */
};

static const char *subject_name(const void *sk)
{
    return ((const subject_keys *)sk)->name;
}

static void subject_free(subject_keys *sk)
{
    if (sk)
        free(sk->keys);
    free(sk);
}

tg_binding_index *tg_binding_index_new(void)
{
    tg_binding_index *x = calloc(1, sizeof(*x));
    if (!x || !(x->by_name = tg_strtab_new(subject_name))) {
        free(x);
        return NULL;
    }
    pthread_mutex_init(&x->mu, NULL);
    return x;
}

void tg_binding_index_free(tg_binding_index *x)
{
    if (!x)
        return;
    size_t at = 0;
    subject_keys *sk;

    while ((sk = tg_strtab_next(x->by_name, &at)) != NULL)
        subject_free(sk);
    tg_strtab_free(x->by_name);
    pthread_mutex_destroy(&x->mu);
    free(x);
}

/* "ns/name" or "name" (cluster-scoped) into key; -1 when it does not fit. */
static int binding_key(json_object *b, char *key, size_t len)
{
    const char *ns = tg_json_path_string(b, "metadata", "namespace", NULL);
    const char *name = tg_json_path_string(b, "metadata", "name", NULL);
    int n;

    if (!name)
        return -1;
    n = ns && *ns ? snprintf(key, len, "%s/%s", ns, name) : snprintf(key, len, "%s", name);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* Where key's line starts in keys, or NULL. */
static char *find_key(char *keys, const char *key)
{
    size_t n = strlen(key);

    for (char *p = keys; p && *p; p = strchr(p, '\n') + 1)
        if (strncmp(p, key, n) == 0 && p[n] == '\n')
            return p;
    return NULL;
}

static void add_key(tg_binding_index *x, const char *subject, const char *key)
{
    subject_keys *sk = tg_strtab_get(x->by_name, subject);
    size_t have = sk && sk->keys ? strlen(sk->keys) : 0, n = strlen(key);
    char *grown;

    if (strchr(key, '\n') || (sk && find_key(sk->keys, key)))
        return;   /* no valid name holds a newline; the key is there */
    if (!sk) {
        size_t sl = strlen(subject);
        if (!(sk = calloc(1, sizeof(*sk) + sl + 1)))
            return;   /* out of memory: as a binding not yet seen */
        memcpy(sk->name, subject, sl + 1);
        if (tg_strtab_add(x->by_name, sk) != 0) {
            free(sk);
            return;
        }
    }
    if (!(grown = realloc(sk->keys, have + n + 2)))
        return;
    memcpy(grown + have, key, n);
    memcpy(grown + have + n, "\n", 2);
    sk->keys = grown;
}

static void drop_key(tg_binding_index *x, const char *subject, const char *key)
{
    subject_keys *sk = tg_strtab_get(x->by_name, subject);
    char *at = sk ? find_key(sk->keys, key) : NULL;

    if (!at)
        return;
    memmove(at, at + strlen(key) + 1, strlen(at + strlen(key) + 1) + 1);
    if (*sk->keys == '\0')
        subject_free(tg_strtab_take(x->by_name, subject));
}

static void note_subject(tg_binding_index *x, const char *subject, const char *key, int deleted)
{
    if (deleted)
        drop_key(x, subject, key);
    else
        add_key(x, subject, key);
}

void tg_binding_index_note(tg_binding_index *x, json_object *b, int deleted)
{
    json_object *subs = tg_json_path(b, "subjects", NULL);
    char key[320];

    if (!x || binding_key(b, key, sizeof(key)) != 0 || !subs || !json_object_is_type(subs, json_type_array))
        return;
    pthread_mutex_lock(&x->mu);
    for (size_t i = 0; i < json_object_array_length(subs); i++) {
        json_object *s = json_object_array_get_idx(subs, i);
        const char *kind = tg_json_string(s, "kind"), *name = tg_json_string(s, "name");
        if (kind && name && (strcmp(kind, "User") == 0 || strcmp(kind, "Group") == 0))
            note_subject(x, name, key, deleted);
    }
    pthread_mutex_unlock(&x->mu);
}

typedef struct fill_ctx {
    json_object *copies;
} fill_ctx;

/* Under the cache's read lock: copy (a visitor keeps no pointer). */
static void on_fill_visit(json_object *o, void *data)
{
    fill_ctx *f = data;
    json_object *copy = NULL;

    if (json_object_deep_copy(o, &copy, NULL) == 0)
        json_object_array_add(f->copies, copy);
}

void tg_binding_index_fill(tg_binding_index *x, tg_cache *c)
{
    fill_ctx f = {.copies = json_object_new_array()};

    if (!x || !c || !f.copies)
        return;
    tg_cache_foreach(c, on_fill_visit, &f);
    for (size_t i = 0; i < json_object_array_length(f.copies); i++)
        tg_binding_index_note(x, json_object_array_get_idx(f.copies, i), 0);
    json_object_put(f.copies);
}

typedef struct owner_look {
    const char *name;
    tg_binding_owner owner;
} owner_look;

/* Under the cache's read lock: the rule reads with getters only. */
static void on_owner_visit(json_object *o, void *data)
{
    owner_look *l = data;

    l->owner = tg_binding_owner_of(o, l->name);
}

/* Whose the binding of key is, read from its cache now. */
static tg_binding_owner owner_now(tg_cache *rb, tg_cache *crb, const char *key, const char *name)
{
    const char *slash = strchr(key, '/');
    owner_look l = {.name = name, .owner = TG_BINDING_NONE};
    char ns[256];

    if (!slash) {
        tg_cache_get(crb, NULL, key, on_owner_visit, &l);
        return l.owner;
    }
    if ((size_t)(slash - key) >= sizeof(ns))
        return TG_BINDING_NONE;
    memcpy(ns, key, (size_t)(slash - key));
    ns[slash - key] = '\0';
    tg_cache_get(rb, ns, slash + 1, on_owner_visit, &l);
    return l.owner;
}

int tg_binding_index_foreign(tg_binding_index *x, tg_cache *rb, tg_cache *crb, const char *name, char *where,
                             size_t where_len)
{
    const subject_keys *sk;
    int found = 0;

    if (!x || !name)
        return 0;
    /* The cache's read lock is taken inside ours; its writer calls the
     * handlers (and so tg_binding_index_note) after releasing it. */
    pthread_mutex_lock(&x->mu);
    if ((sk = tg_strtab_get(x->by_name, name)) != NULL) {
        for (const char *p = sk->keys, *nl; !found && p && (nl = strchr(p, '\n')); p = nl + 1) {
            char key[320];
            if ((size_t)(nl - p) >= sizeof(key))
                continue;   /* never stored: binding_key's limit */
            memcpy(key, p, (size_t)(nl - p));
            key[nl - p] = '\0';
            /* TG_BINDING_TOKEN is tenantgate-auth's: the NameClaim tells it apart (NameOwned) */
            if (owner_now(rb, crb, key, name) == TG_BINDING_FOREIGN) {
                snprintf(where, where_len, "%s %s", strchr(key, '/') ? "RoleBinding" : "ClusterRoleBinding", key);
                found = 1;
            }
        }
    }
    pthread_mutex_unlock(&x->mu);
    return found;
}
