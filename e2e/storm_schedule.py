"""The fault storm's schedule: which fault strikes when, from a seed alone (no I/O).

test_fault_storm.py runs it against the provider; test_storm_schedule.py checks that one seed
always gives one schedule.  Times are seconds from the storm's start, rounded to 0.1 s so the
printed table is the schedule itself.

Faults (issue 39):
  signer-kill        SIGKILL of the provider signer, then a fresh start (every few seconds)
  webhook-restart    tenantgate-webhook stopped (SIGTERM) and started again
  apiserver-restart  e2e/cluster restart-apiserver of the provider (twice, one per half)
  etcd-pause         SIGSTOP of the provider's etcd, SIGCONT ETCD_PAUSE_S later (once)
"""

import random

SIGNER_KILL = "signer-kill"
WEBHOOK_RESTART = "webhook-restart"
APISERVER_RESTART = "apiserver-restart"
ETCD_PAUSE = "etcd-pause"
FAULTS = (SIGNER_KILL, WEBHOOK_RESTART, APISERVER_RESTART, ETCD_PAUSE)

ETCD_PAUSE_S = 3.0
SIGNER_GAP_S = (3.0, 7.0)       # "every few seconds"
WEBHOOK_RESTARTS = 2
MIN_DURATION_S = 30.0           # room for two apiserver restarts apart


def make_schedule(seed, duration):
    """[(t, fault)] sorted by t, for a storm of `duration` seconds; a pure function of both."""
    if duration < MIN_DURATION_S:
        raise ValueError(f"a storm needs at least {MIN_DURATION_S:.0f} s, not {duration}")
    rng = random.Random(f"tenantgate-storm:{seed}")    # a str seed hashes the same everywhere
    events = []
    t = rng.uniform(1.0, SIGNER_GAP_S[0])
    while t < duration:
        events.append((t, SIGNER_KILL))
        t += rng.uniform(*SIGNER_GAP_S)
    for _ in range(WEBHOOK_RESTARTS):
        events.append((rng.uniform(0.1, 0.9) * duration, WEBHOOK_RESTART))
    # one restart in each half, so they are apart and both land inside the onboarding
    events.append((rng.uniform(0.15, 0.45) * duration, APISERVER_RESTART))
    events.append((rng.uniform(0.55, 0.85) * duration, APISERVER_RESTART))
    events.append((rng.uniform(0.2, 0.8) * duration, ETCD_PAUSE))
    return sorted((round(t, 1), fault) for t, fault in events)


def format_schedule(schedule):
    """The schedule as a printable table, one row per fault."""
    rows = ["     t (s) | fault", "-----------+------------------"]
    rows += [f"{t:10.1f} | {fault}" for t, fault in schedule]
    return "\n".join(rows)
