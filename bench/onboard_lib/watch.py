"""Our own watches on the provider and the first-seen times of each onboarding stage."""
import base64
import http.client
import json
import os
import socket
import ssl
import threading
import time

from onboard_lib.common import BenchError


class Watch(threading.Thread):
    """list+watch of one collection with the admin client cert; on_event(type, obj, t) is
    called with the monotonic time each event arrived. ready is set once the watch
    request's response headers arrived (events from then on are not missed)."""

    def __init__(self, env, path, selector, on_event):
        super().__init__(daemon=True)
        host, port = env["KUBE_APISERVER"].split("//", 1)[1].rsplit(":", 1)
        self.host, self.port = host, int(port)
        pki = os.path.join(env["KUBE_STATE_DIR"], "pki")
        self.ctx = ssl.create_default_context(cafile=env["KUBE_CA_FILE"])
        self.ctx.load_cert_chain(os.path.join(pki, "admin.crt"), os.path.join(pki, "admin.key"))
        self.path, self.selector, self.on_event = path, selector, on_event
        self.ready = threading.Event()
        self.error = None
        self.conn = None
        self.closed = False

    def _get(self, query):
        conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=600)
        conn.request("GET", f"{self.path}?{query}")
        resp = conn.getresponse()
        if resp.status != 200:
            raise BenchError(f"GET {self.path}?{query}: {resp.status} {resp.read()[:300]!r}")
        return conn, resp

    def run(self):
        sel = f"&labelSelector={self.selector}" if self.selector else ""
        try:
            conn, resp = self._get(f"limit=500{sel}")
            listed = json.loads(resp.read())
            conn.close()
            now = time.monotonic()
            for obj in listed.get("items") or []:
                self.on_event("ADDED", obj, now)
            rv = listed["metadata"]["resourceVersion"]
            # a 10,000-object burst outlasts one watch request: when the API server ends
            # it, watch again from the last event seen
            while not self.closed:
                self.conn, resp = self._get(f"watch=1&resourceVersion={rv}&timeoutSeconds=900{sel}")
                self.ready.set()
                while True:
                    line = resp.readline()
                    if not line:
                        break
                    t = time.monotonic()
                    ev = json.loads(line)
                    if ev["type"] == "ERROR":
                        raise BenchError(f"watch {self.path}: {ev['object']}")
                    rv = ev["object"]["metadata"].get("resourceVersion", rv)
                    if ev["type"] != "BOOKMARK":
                        self.on_event(ev["type"], ev["object"], t)
        except Exception as e:       # reported by the main thread, unless we closed it
            if not self.closed:
                self.error = e
            self.ready.set()

    def close(self):
        self.closed = True
        if self.conn:
            c, self.conn = self.conn, None
            try:
                c.sock.shutdown(socket.SHUT_RDWR)
            except (OSError, AttributeError):
                pass


def csr_consumer(obj):
    """The consumer of a Tenant CSR without our label (Liqo labels only liqo.io/remote-tenant-csr):
    the CN of the request when its O is liqo.io, as Liqo's Tenant CSRs are; else None."""
    from cryptography import x509
    from cryptography.x509.oid import NameOID
    try:
        req = x509.load_pem_x509_csr(base64.b64decode(obj["spec"]["request"]))
    except (KeyError, ValueError):
        return None
    org = [a.value for a in req.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]
    cn = [a.value for a in req.subject.get_attributes_for_oid(NameOID.COMMON_NAME)]
    return cn[0] if cn and org == ["liqo.io"] else None


class Timeline:
    """First-seen times per consumer id of each onboarding stage."""
    STAGES = ("added", "csr", "approved", "issued", "filled")

    def __init__(self):
        self.lock = threading.Lock()
        self.t = {s: {} for s in self.STAGES}
        self.all_filled = threading.Event()
        self.expect = 0

    def _first(self, stage, cid, t):
        if cid not in self.t[stage]:
            self.t[stage][cid] = t

    def on_tenant(self, typ, obj, t):
        cid = (obj.get("spec") or {}).get("clusterID") or obj["metadata"]["name"]
        st = obj.get("status") or {}
        with self.lock:
            self._first("added", cid, t)
            if (st.get("authParams") or {}).get("signedCRT") and st.get("tenantNamespace"):
                self._first("filled", cid, t)
            if self.expect and len(self.t["filled"]) >= self.expect:
                self.all_filled.set()

    def on_csr(self, typ, obj, t):
        cid = (obj["metadata"].get("labels") or {}).get("liqo.io/remote-cluster-id") or csr_consumer(obj)
        if not cid:
            return
        st = obj.get("status") or {}
        with self.lock:
            self._first("csr", cid, t)
            if any(c.get("type") == "Approved" for c in st.get("conditions") or []):
                self._first("approved", cid, t)
            if st.get("certificate"):
                self._first("issued", cid, t)

    def stage_deltas(self, a, b):
        """Seconds from stage a to stage b for every consumer that has both."""
        with self.lock:
            return [self.t[b][c] - self.t[a][c] for c in self.t[b] if c in self.t[a]]


class SliceTimeline:
    """First-seen times per slice (namespace/name) of the provider's verdict."""
    STAGES = ("added", "authenticated", "accepted")

    def __init__(self, expect):
        self.lock = threading.Lock()
        self.t = {s: {} for s in self.STAGES}
        self.denied = {}
        self.expect = expect
        self.all_accepted = threading.Event()

    def on_slice(self, typ, obj, t):
        key = f"{obj['metadata']['namespace']}/{obj['metadata']['name']}"
        conds = {c.get("type"): c for c in (obj.get("status") or {}).get("conditions") or []}
        with self.lock:
            self.t["added"].setdefault(key, t)
            auth, res = conds.get("Authentication", {}), conds.get("Resources", {})
            if auth.get("status") == "Accepted":
                self.t["authenticated"].setdefault(key, t)
                if res.get("status") == "Accepted":
                    self.t["accepted"].setdefault(key, t)
            for c in (auth, res):
                if c.get("status") == "Denied":
                    self.denied[key] = f"{c.get('type')}: {c.get('reason')}: {c.get('message')}"
            if len(self.t["accepted"]) >= self.expect:
                self.all_accepted.set()
