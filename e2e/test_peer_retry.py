"""`peer` of e2e/liqo_repeer.py without clusters: it peers again, at most WEDGE_RETRIES times,
only when liqoctl failed for a slice never Accepted and Liqo's crd-replicator logged, during that
peer, that it could not stop the old peering's reflections (docs/LIQO.md, "Liqo's own commands in
each mode")."""

from types import SimpleNamespace

import pytest

from liqo_repeer import REPLICATOR_WEDGED, SLICE_NOT_ACCEPTED, WEDGE_RETRIES, peer

ARGS = ("--kubeconfig", "consumer", "--remote-kubeconfig", "provider", "--timeout", "120s")
NOT_ACCEPTED = (1, "", f"ERRO: {SLICE_NOT_ACCEPTED}: timed out waiting for the condition")


class FakeLiqo:
    """liqoctl: each peer answers the next of answers and appends line to the replicator's log."""

    def __init__(self, answers, log, line):
        self.calls, self.answers, self.log, self.line = [], list(answers), log, line

    def ctl(self, *args, timeout=180):
        self.calls.append(args[0])
        if args[0] != "peer":
            return 0, "", ""
        if self.line:
            with open(self.log, "a") as f:
                f.write(self.line + "\n")
        return self.answers.pop(0)


WEDGED = f"E1207 crdReplicator-operator.go:113] {REPLICATOR_WEDGED}: renews still present"
OK = (0, "ok", "")


@pytest.mark.parametrize("answers, line, calls, retried, rc", [
    ([NOT_ACCEPTED, OK], WEDGED, ["peer", "unpeer", "peer"], 1, 0),
    ([NOT_ACCEPTED, NOT_ACCEPTED, OK], WEDGED, ["peer", "unpeer", "peer", "unpeer", "peer"], 2, 0),
    ([NOT_ACCEPTED] * 3, WEDGED, ["peer", "unpeer", "peer", "unpeer", "peer"], WEDGE_RETRIES, 1),
    ([NOT_ACCEPTED], "", ["peer"], 0, 1),                          # nothing logged during this peer
    ([(1, "", "ERRO: forbidden")], REPLICATOR_WEDGED, ["peer"], 0, 1),   # another failure
    ([OK], REPLICATOR_WEDGED, ["peer"], 0, 0),
], ids=["wedged: peered again", "wedged twice", "wedged past the retries", "nothing logged",
        "another failure", "peered"])
def test_peer_again_only_on_liqos_replicator_wedge(tmp_path, answers, line, calls, retried, rc):
    log = tmp_path / "crd-replicator.log"
    log.write_text(f"an earlier peering's line: {REPLICATOR_WEDGED}\n")     # before the peer: not counted
    liqo = FakeLiqo(answers, log, line)
    cons = SimpleNamespace(processes={"crd-replicator": SimpleNamespace(log_path=log)})
    got_rc, _, _, again = peer(liqo, cons, *ARGS)
    assert liqo.calls == calls and again == retried and got_rc == rc
