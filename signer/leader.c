/* leader.c - see leader.h. */
#include "signer/leader.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "kube/json.h"
#include "signer/lease.h"

struct tg_leader {
    tg_signer *s;
    char ns[256], name[256];
    tg_elector e;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
};

static void micro_time(char *buf, size_t len)
{
    struct timeval tv;
    struct tm tm;
    char base[32];

    gettimeofday(&tv, NULL);
    gmtime_r(&tv.tv_sec, &tm);
    strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, len, "%s.%06ldZ", base, (long)tv.tv_usec);
}

/* Write ourselves (or "" to release) as holder. lease is the object read
 * (NULL: create). Returns 1 when the API accepted it; *rv gets the new RV. */
static int write_lease(tg_leader *l, tg_api *api, json_object *lease, const char *holder, char *rv, size_t rv_len)
{
    char path[768], now[40], err[512];
    json_object *obj = lease ? json_object_get(lease) : json_object_new_object(), *spec, *out = NULL;
    const char *p = lease ? tg_json_path_string(lease, "spec", "holderIdentity", NULL) : NULL;
    json_object *tr = lease ? tg_json_path(lease, "spec", "leaseTransitions", NULL) : NULL;
    int transitions = tr ? json_object_get_int(tr) : 0;
    char prev[TG_LEASE_HOLDER_MAX];
    long st;

    /* copied: obj is the same tree, and the holder is overwritten below */
    snprintf(prev, sizeof(prev), "%s", p ? p : "");

    micro_time(now, sizeof(now));
    if (!lease) {
        json_object *meta = json_object_new_object();
        json_object_object_add(obj, "apiVersion", json_object_new_string("coordination.k8s.io/v1"));
        json_object_object_add(obj, "kind", json_object_new_string("Lease"));
        json_object_object_add(meta, "name", json_object_new_string(l->name));
        json_object_object_add(meta, "namespace", json_object_new_string(l->ns));
        json_object_object_add(obj, "metadata", meta);
    }
    if (!(spec = tg_json_path(obj, "spec", NULL))) {
        spec = json_object_new_object();
        json_object_object_add(obj, "spec", spec);
    }
    json_object_object_add(spec, "holderIdentity", json_object_new_string(holder));
    json_object_object_add(spec, "leaseDurationSeconds", json_object_new_int((int)(l->e.lease_ms / 1000)));
    json_object_object_add(spec, "renewTime", json_object_new_string(now));
    if (strcmp(prev, holder) != 0) {
        json_object_object_add(spec, "acquireTime", json_object_new_string(now));
        json_object_object_add(spec, "leaseTransitions", json_object_new_int(transitions + (prev[0] ? 1 : 0)));
    }
    if (lease) {   /* PUT carries metadata.resourceVersion: a 409 if someone wrote first */
        snprintf(path, sizeof(path), "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s", l->ns, l->name);
        st = tg_api_call(api, "PUT", path, TG_KUBE_CT_JSON, obj, &out, err, sizeof(err));
    } else {
        snprintf(path, sizeof(path), "/apis/coordination.k8s.io/v1/namespaces/%s/leases", l->ns);
        st = tg_api_call(api, "POST", path, TG_KUBE_CT_JSON, obj, &out, err, sizeof(err));
    }
    if ((st == 200 || st == 201) && out)
        snprintf(rv, rv_len, "%s", tg_json_path_string(out, "metadata", "resourceVersion", NULL)
                                       ? tg_json_path_string(out, "metadata", "resourceVersion", NULL) : "");
    else
        tg_log(TG_LOG_DEBUG, "lease write refused", TG_LOG_STR("error", err));
    json_object_put(out);
    json_object_put(obj);
    return st == 200 || st == 201;
}

static int wait_retry(tg_leader *l)
{
    struct timespec ts;
    int stop;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += (time_t)(l->e.retry_ms / 1000);
    ts.tv_nsec += (long)(l->e.retry_ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&l->mu);
    if (!l->stop)
        pthread_cond_timedwait(&l->cv, &l->mu, &ts);
    stop = l->stop;
    pthread_mutex_unlock(&l->mu);
    return stop;
}

static void *leader_main(void *arg)
{
    tg_leader *l = arg;
    char path[768], err[512], rv[64];
    tg_api *api = tg_api_new(&l->s->cfg, err, sizeof(err));

    if (!api) {
        tg_log(TG_LOG_ERROR, "leader election cannot create its API client", TG_LOG_STR("error", err));
        _exit(1);
    }
    snprintf(path, sizeof(path), "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s", l->ns, l->name);
    do {
        json_object *lease = NULL;
        uint64_t now = tg_wq_now_ms();
        long st = tg_api_get(api, path, &lease, err, sizeof(err));
        int was = l->e.leader, lost = 0;
        tg_lease_action a;

        if (st == 200)
            tg_elector_observe(&l->e, tg_json_path_string(lease, "spec", "holderIdentity", NULL),
                               tg_json_path_string(lease, "metadata", "resourceVersion", NULL), now);
        else if (st == 404)
            l->e.observed = 0;
        if (st == 200 || st == 404) {
            a = tg_elector_decide(&l->e, now);
            if (a == TG_LEASE_ACQUIRE || a == TG_LEASE_RENEW) {
                int ok = write_lease(l, api, lease, l->e.id, rv, sizeof(rv));
                lost = tg_elector_written(&l->e, ok, rv, tg_wq_now_ms());
            } else {
                lost = tg_elector_tick(&l->e, now);
            }
        } else {
            tg_log(TG_LOG_WARN, "cannot read the lease", TG_LOG_STR("error", err));
            lost = tg_elector_tick(&l->e, now);
        }
        if (was && !l->e.leader)
            lost = 1;
        json_object_put(lease);
        if (lost) {
            __atomic_store_n(&l->s->is_leader, 0, __ATOMIC_SEQ_CST);
            tg_log(TG_LOG_ERROR, "leadership lost: exiting to restart clean", TG_LOG_STR("lease", l->name));
            _exit(3);
        }
        if (!was && l->e.leader)
            tg_log(TG_LOG_INFO, "leadership acquired", TG_LOG_STR("lease", l->name), TG_LOG_STR("holder", l->e.id));
        __atomic_store_n(&l->s->is_leader, tg_elector_is_leader(&l->e, tg_wq_now_ms()), __ATOMIC_SEQ_CST);
    } while (!wait_retry(l));

    if (l->e.leader) {   /* hand over at once */
        json_object *lease = NULL;
        if (tg_api_get(api, path, &lease, err, sizeof(err)) == 200 &&
            strcmp(tg_json_path_string(lease, "spec", "holderIdentity", NULL) ? tg_json_path_string(lease, "spec", "holderIdentity", NULL) : "",
                   l->e.id) == 0 &&
            write_lease(l, api, lease, "", rv, sizeof(rv)))
            tg_log(TG_LOG_INFO, "lease released", TG_LOG_STR("lease", l->name));
        json_object_put(lease);
    }
    tg_api_free(api);
    return NULL;
}

tg_leader *tg_leader_start(tg_signer *s, const char *ns, const char *name, char *err, size_t err_len)
{
    tg_leader *l = calloc(1, sizeof(*l));
    char host[200] = "unknown", id[TG_LEASE_HOLDER_MAX];
    pthread_condattr_t ca;

    if (!l) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    gethostname(host, sizeof(host) - 1);
    snprintf(id, sizeof(id), "%s_%ld", host, (long)getpid());
    tg_elector_init(&l->e, id, 0, 0, 0);
    l->s = s;
    snprintf(l->ns, sizeof(l->ns), "%s", ns);
    snprintf(l->name, sizeof(l->name), "%s", name);
    pthread_mutex_init(&l->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&l->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&l->thread, NULL, leader_main, l) != 0) {
        snprintf(err, err_len, "cannot start the leader election thread");
        free(l);
        return NULL;
    }
    tg_log(TG_LOG_INFO, "leader election started", TG_LOG_STR("lease", name), TG_LOG_STR("namespace", ns),
           TG_LOG_STR("holder", id));
    return l;
}

void tg_leader_stop(tg_leader *l)
{
    if (!l)
        return;
    pthread_mutex_lock(&l->mu);
    l->stop = 1;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
    pthread_join(l->thread, NULL);
    pthread_cond_destroy(&l->cv);
    pthread_mutex_destroy(&l->mu);
    free(l);
}
