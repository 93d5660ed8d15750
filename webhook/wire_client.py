"""Raw HTTP/1.1 and HTTP/2 client pieces for hostile-client tests of tenantgate-webhook.

Shared by webhook/test_server.py (the binary alone) and e2e/test_webhook.py (the binary on the
bed).  `webhook` arguments need .port, .server_hostname and .ssl_context(alpn=...) -> SSLContext.
"""
import contextlib
import socket
import ssl
import struct
import threading
import time


def h1_post(body, path=b"/validate/tenants"):
    """The bytes of one HTTP/1.1 POST of a JSON body (keep-alive)."""
    return (b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % (path, len(body))) + body


H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def h2_frame(ftype, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack(">I", stream) + payload


def hpack_literal(index, value):
    """Literal header field without indexing, name from the static table
    (index < 15), value not Huffman-coded (< 127 bytes)."""
    assert index < 15 and len(value) < 127
    return bytes([index, len(value)]) + value


def h2_post(stream, body=None, end_stream=True):
    """HEADERS (and DATA) of a POST /validate/tenants."""
    block = (b"\x83\x87" + hpack_literal(4, b"/validate/tenants") + hpack_literal(1, b"localhost") +
             b"\x0f\x10" + bytes([16]) + b"application/json")       # content-type: static index 31
    if body is None:
        return h2_frame(1, 0x4 | (0x1 if end_stream else 0), stream, block)
    return h2_frame(1, 0x4, stream, block) + h2_frame(0, 0x1 if end_stream else 0, stream, body)


def h2_connect(webhook, initial_window=None):
    """A TLS connection that negotiated h2, preface and SETTINGS sent."""
    s = webhook.ssl_context(alpn=("h2",)).wrap_socket(socket.create_connection(("127.0.0.1", webhook.port)),
                                                      server_hostname=webhook.server_hostname)
    assert s.selected_alpn_protocol() == "h2"
    settings = b"" if initial_window is None else struct.pack(">HI", 4, initial_window)
    s.sendall(H2_PREFACE + h2_frame(4, 0, 0, settings))
    return s


@contextlib.contextmanager
def stalled_h2_streams(webhook, body, n=10):
    """Yields 2n HTTP/2 connections with one stream each that cannot make progress: n whose
    answer the client never lets through (flow-control window 0) and n whose body never ends,
    kept busy with PINGs (h2o's idle timer restarts on every read).  Closed on exit."""
    stalled = []
    stop = threading.Event()

    def ping():
        while not stop.wait(0.3):
            for s in stalled[n:]:
                try:
                    s.sendall(h2_frame(6, 0, 0, b"\0" * 8))
                except OSError:
                    pass
    pinger = threading.Thread(target=ping)
    try:
        for _ in range(n):
            s = h2_connect(webhook, initial_window=0)
            s.sendall(h2_post(1, body))
            stalled.append(s)
        for _ in range(n):
            s = h2_connect(webhook)
            s.sendall(h2_post(1, body[:20], end_stream=False))
            stalled.append(s)
        pinger.start()
        yield stalled
    finally:
        stop.set()
        if pinger.is_alive():
            pinger.join()
        for s in stalled:
            s.close()


def idle_after_one_request(webhook, body, h1=60, h2=8, resets=30):
    """h1 HTTP/1.1 keep-alive and h2 HTTP/2 connections, each idle after one answered POST of
    body (returned, open), and `resets` peers that reset right after their answer."""
    keep = []
    for _ in range(h1):
        s = raw_tls(webhook)
        s.sendall(h1_post(body))
        assert s.recv(65536).startswith(b"HTTP/1.1 200")
        keep.append(s)
    for _ in range(h2):
        s = h2_connect(webhook)
        s.sendall(h2_post(1, body))
        s.recv(65536)
        keep.append(s)
    for _ in range(resets):
        s = raw_tls(webhook)
        s.sendall(h1_post(body))
        s.recv(65536)
        reset_close(s)
    return keep


def closed_by_server(s, wait):
    """True once the server has closed s (EOF or reset) within wait seconds;
    whatever it sends before (SETTINGS, GOAWAY, answers) is read and dropped."""
    s.settimeout(wait)
    deadline = time.time() + wait
    try:
        while time.time() < deadline:
            if not s.recv(65536):
                return True
    except (socket.timeout, TimeoutError):
        return False
    except (ConnectionResetError, BrokenPipeError, ssl.SSLError, OSError):
        return True
    return False


def raw_tls(webhook):
    """An HTTP/1.1 TLS connection (5 s timeout)."""
    s = webhook.ssl_context().wrap_socket(socket.create_connection(("127.0.0.1", webhook.port)),
                                          server_hostname=webhook.server_hostname)
    s.settimeout(5)
    return s


def tls_records(webhook, plaintext):
    """A TCP connection that has done its TLS handshake, and the TLS records that carry
    plaintext on it, unsent: a test can then send them in pieces smaller than one record."""
    raw = socket.create_connection(("127.0.0.1", webhook.port))
    raw.settimeout(5)
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = webhook.ssl_context().wrap_bio(incoming, outgoing, server_hostname=webhook.server_hostname)
    while True:
        try:
            tls.do_handshake()
            break
        except ssl.SSLWantReadError:
            raw.sendall(outgoing.read())
            data = raw.recv(65536)
            if not data:
                raise ConnectionError("closed during the TLS handshake")
            incoming.write(data)
    raw.sendall(outgoing.read())
    tls.write(plaintext)
    return raw, outgoing.read()


def reset_close(s):
    """Close with a TCP reset (SO_LINGER 0), as a crashed or impatient peer does."""
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()


def burst(webhook, n, request):
    """n connections at once, each sends request and reads the answer; then half close
    normally and half with a reset."""
    socks = []
    for _ in range(n):
        s = webhook.ssl_context().wrap_socket(socket.create_connection(("127.0.0.1", webhook.port)),
                                              server_hostname=webhook.server_hostname)
        s.sendall(request)
        socks.append(s)
    for s in socks:
        s.settimeout(5)
        try:
            s.recv(65536)
        except OSError:
            pass
    for i, s in enumerate(socks):
        if i % 2:
            reset_close(s)
        else:
            s.close()
