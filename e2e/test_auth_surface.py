"""tenantgate-auth against a network client without credentials (issue 44 findings 8 and 9), on
the bed: the server runs with the shipped RBAC against the real API server (as in
test_auth_server.py), and the consumer that must still get through asks for, and gets, a real
identity (202, a CSR approved and signed).

  slots   17 loopback addresses hold 16 idle TLS connections each (the per-peer cap), 272
          attempts for 256 slots; a new client's /ids and its POST with the good token are still
          answered: an idle connection is evicted for each newcomer.
  sets    eight addresses chosen to share 127.0.0.1's set of the limiter under the unkeyed FNV-1a
          it used before fail once each and sit in a long back-off; 127.0.0.1's first POST is still
          answered (202), not 429: the sets are keyed with a secret no client knows.
"""
import socket
import struct

import pytest

from tenantgate_services import http_get
from test_auth_server import AuthServer, auth_env, new_cluster_id  # noqa: F401

IDLE_ADDRESSES, PER_PEER = 17, 16


def _tls(server, source):
    s = socket.create_connection(("127.0.0.1", server.port), timeout=10, source_address=(source, 0))
    return server.client.ctx.wrap_socket(s, server_hostname="127.0.0.1")


def _hold_idle(server, source, n):
    """n kept-alive TLS connections from source, each after one answered /ids."""
    held = []
    for _ in range(n):
        s = _tls(server, source)
        s.sendall(b"GET /ids HTTP/1.1\r\nHost: x\r\n\r\n")
        assert s.recv(4096).startswith(b"HTTP/1.1 200")
        held.append(s)
    return held


def _metric(server, name):
    status, text = http_get(server.metrics_port, "/metrics")
    assert status == 200
    text = text.decode() if isinstance(text, bytes) else text
    return sum(float(line.split()[-1]) for line in text.splitlines() if line.startswith(name))


@pytest.fixture
def server(provider, auth_env):  # noqa: F811
    s = AuthServer(provider, auth_env["binary"], auth_env["ns"], auth_env["work"], "--token-namespace",
                   auth_env["tokens_ns"], "--request-timeout", "120", "--free-failures", "0",
                   "--backoff-base", "600", "--backoff-max", "600")
    auth_env["servers"].append(s)
    yield s
    s.stop()


def test_idle_connections_from_many_addresses_do_not_lock_out_a_consumer(server, auth_env):  # noqa: F811
    held = []
    try:
        for i in range(IDLE_ADDRESSES):
            held += _hold_idle(server, f"127.0.9.{i + 1}", PER_PEER)
        status, ids = server.client.ids()
        assert status == 200 and ids["clusterId"] == server.cluster_id
        status, answer, _, auth_status = server.client.identity(new_cluster_id(auth_env), server.token())
        assert (status, auth_status) == (202, "Established"), answer
        assert _metric(server, "tenantgate_auth_connections_evicted_total") >= PER_PEER + 1    # the 17th address evicted 16, the newcomer one
        assert _metric(server, 'tenantgate_auth_connections_rejected_total{why="max_connections"}') == 0
    finally:
        for s in held:
            s.close()


def _old_fnv_set(ip, nsets=1024):
    """The limiter's set before issue 44: FNV-1a of the peer key (family byte 4, then the
    address), masked to the sets (4096 sources / 8 ways + 1, rounded up to 1024)."""
    h = 2166136261
    for b in bytes([4]) + socket.inet_aton(ip):
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return h & (nsets - 1)


def _chosen_for(victim, n=8):
    want, found = _old_fnv_set(victim), []
    for i in range(1, 1 << 24):
        ip = socket.inet_ntoa(struct.pack("!I", (127 << 24) | i))
        if ip != victim and _old_fnv_set(ip) == want:
            found.append(ip)
            if len(found) == n:
                return found
    raise AssertionError("no chosen addresses")


def _fail_once(server, source):
    """One POST with a wrong token from source: 401, a failure the limiter counts."""
    s = _tls(server, source)
    body = b'{"cluster":{"clusterID":"00000000-0000-4000-8000-000000000000","clusterName":"x"},' \
           b'"destinationClusterToken":"wrong","certificateSigningRequest":""}'
    s.sendall(b"POST /identity/certificate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
    head = s.recv(4096)
    s.close()
    return int(head.split()[1])


def test_chosen_addresses_cannot_lock_out_a_consumer_before_it_asks(server, auth_env):  # noqa: F811
    chosen = _chosen_for("127.0.0.1")
    assert [_fail_once(server, ip) for ip in chosen] != [429] * len(chosen)
    # every chosen address is now in a 600 s back-off
    assert all(_fail_once(server, ip) == 429 for ip in chosen)
    status, answer, _, auth_status = server.client.identity(new_cluster_id(auth_env), server.token())
    assert (status, auth_status) == (202, "Established"), answer
