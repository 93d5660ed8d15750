/* shutdown.c - see shutdown.h. */
#include "shutdown.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "webhook/server_metrics.h"
#include "webhook/workers.h"

#define DRAIN_POLL_MS 50

static void stop_everything(tg_server *s)
{
    if (s->stopped)
        return;
    s->stopped = 1;
    tg_workers_set_phase(s, PHASE_STOP);
    uv_close((uv_handle_t *)&s->drain_timer, NULL);
    uv_close((uv_handle_t *)&s->trim_timer, NULL);
    uv_close((uv_handle_t *)&s->sigterm, NULL);
    uv_close((uv_handle_t *)&s->sigint, NULL);
    if (s->watch_started)
        tg_certwatch_stop(&s->watch, NULL);
    if (s->probe)
        tg_probe_server_close(s->probe);
    /* The main loop ends once its remaining metrics connections close; do not
     * wait for a scraper that keeps one alive. */
    uv_stop(s->main_loop);
}

static void on_drain_tick(uv_timer_t *t)
{
    tg_server *s = t->data;
    long conns = tg_server_total(s, 0), in_flight = tg_server_total(s, 1);

    if (conns == 0 && in_flight == 0) {
        tg_log_msg(TG_LOG_INFO, "shutdown complete");
        stop_everything(s);
    } else if (uv_now(s->main_loop) >= s->drain_deadline) {
        tg_log(TG_LOG_WARN, "grace period over, closing connections", TG_LOG_INT("connections", conns),
               TG_LOG_INT("in_flight", in_flight));
        stop_everything(s);
    }
}

/* The drain gives up a little before the grace period ends, so that closing
 * and tearing down still fit in it: a quarter of it, at most a second. */
static uint64_t drain_budget_ms(uint64_t grace_ms)
{
    uint64_t margin = grace_ms / 4 < 1000 ? grace_ms / 4 : 1000;
    return grace_ms - margin;
}

static void *exit_backstop_main(void *arg)
{
    uint64_t ms = (uint64_t)(uintptr_t)arg;
    struct timespec ts = {.tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000};

    while (nanosleep(&ts, &ts) != 0)
        ;
    tg_log_msg(TG_LOG_WARN, "shutdown did not finish within the grace period, exiting");
    tg_log_flush();
    _exit(0);
    return NULL;
}

/* Whatever the teardown waits for (an informer's connection, a stuck
 * handler), the process is gone before the grace period ends: kubelet's
 * SIGKILL would otherwise come first, and a caller's bound is a bound. */
static void start_exit_backstop(uint64_t grace_ms)
{
    pthread_t t;
    pthread_attr_t attr;
    uint64_t at = grace_ms > 100 ? grace_ms - 50 : grace_ms;

    if (pthread_attr_init(&attr) != 0)
        return;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &attr, exit_backstop_main, (void *)(uintptr_t)at) != 0)
        tg_log_msg(TG_LOG_WARN, "cannot start the shutdown backstop");
    pthread_attr_destroy(&attr);
}

void tg_server_shutdown(tg_server *s)
{
    if (atomic_exchange(&s->draining, 1))
        return;
    start_exit_backstop(s->cfg.shutdown_grace_ms);
    tg_log(TG_LOG_INFO, "shutting down", TG_LOG_INT("grace_ms", (int64_t)s->cfg.shutdown_grace_ms),
           TG_LOG_INT("connections", tg_server_total(s, 0)), TG_LOG_INT("in_flight", tg_server_total(s, 1)));
    tg_workers_set_phase(s, PHASE_DRAIN);
    s->drain_deadline = uv_now(s->main_loop) + drain_budget_ms(s->cfg.shutdown_grace_ms);
    uv_timer_start(&s->drain_timer, on_drain_tick, DRAIN_POLL_MS, DRAIN_POLL_MS);
}

static void on_signal(uv_signal_t *sig, int signum)
{
    tg_server_shutdown(sig->data);
}

void tg_shutdown_init(tg_server *s)
{
    uv_timer_init(s->main_loop, &s->drain_timer);
    s->drain_timer.data = s;
    uv_signal_init(s->main_loop, &s->sigterm);
    uv_signal_init(s->main_loop, &s->sigint);
    s->sigterm.data = s->sigint.data = s;
    uv_signal_start(&s->sigterm, on_signal, SIGTERM);
    uv_signal_start(&s->sigint, on_signal, SIGINT);
}
