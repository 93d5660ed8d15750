"""The fault storm's schedule (storm_schedule.py) without a cluster: a seed reproduces it.

Cheap, so in the default run; the storm itself (test_fault_storm.py) is marked slow."""

from storm_schedule import (APISERVER_RESTART, ETCD_PAUSE, FAULTS, SIGNER_GAP_S, SIGNER_KILL,
                            WEBHOOK_RESTART, format_schedule, make_schedule)


def test_same_seed_same_schedule_other_seed_another():
    a = make_schedule(12345, 120.0)
    assert a == make_schedule(12345, 120.0)
    assert format_schedule(a) == format_schedule(make_schedule("12345", 120.0))
    assert a != make_schedule(12346, 120.0)


def test_schedule_has_every_fault_issue_39_asks_for():
    for seed in range(50):
        s = make_schedule(seed, 90.0)
        assert [t for t, _ in s] == sorted(t for t, _ in s)
        assert all(0 < t < 90.0 and f in FAULTS for t, f in s), s
        by = {f: [t for t, g in s if g == f] for f in FAULTS}
        assert len(by[APISERVER_RESTART]) == 2 and by[APISERVER_RESTART][0] < 45 <= by[APISERVER_RESTART][1]
        assert len(by[ETCD_PAUSE]) == 1
        assert len(by[WEBHOOK_RESTART]) == 2
        kills = by[SIGNER_KILL]
        gaps = [b - a for a, b in zip(kills, kills[1:])]
        assert kills[0] <= SIGNER_GAP_S[0] and 90.0 - kills[-1] <= SIGNER_GAP_S[1]
        assert all(SIGNER_GAP_S[0] - 0.11 <= g <= SIGNER_GAP_S[1] + 0.11 for g in gaps), gaps


def test_too_short_a_storm_is_refused():
    try:
        make_schedule(1, 10.0)
    except ValueError as e:
        assert "at least" in str(e)
    else:
        raise AssertionError("a 10 s storm was accepted")
