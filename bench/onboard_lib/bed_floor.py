"""The bed's own floor for a burst of certificates: how long the bed takes to issue N client
certificates when no controller stands between the request and the signing.

A slice (or Tenant) is done once the controller-manager has signed its CSR, so no provider
process, tenantgate's or Liqo's, can finish a burst faster than the bed does this: N CSRs
created by the same kubectl processes as the burst, each approved the moment our watch sees
it (one PUT of its approval, four at a time), until the controller-manager has issued every
certificate. The CSRs are then deleted. A time target below this floor is out of reach on
the bed, whatever the provider process does.
"""
import base64
import http.client
import json
import os
import queue
import subprocess
import threading
import time

from onboard_lib.common import BenchError, run
from onboard_lib.watch import Watch

CSR_API = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
LABEL = "tenantgate-bench-floor"
APPROVERS = 4


class FloorTimeline:
    """First-seen times per CSR: created, issued; new CSRs go to the approvers' queue."""

    def __init__(self, expect):
        self.lock = threading.Lock()
        self.added, self.issued = {}, {}
        self.expect = expect
        self.todo = queue.Queue()
        self.all_issued = threading.Event()

    def on_csr(self, typ, obj, t):
        name, st = obj["metadata"]["name"], obj.get("status") or {}
        with self.lock:
            if name not in self.added:
                self.added[name] = t
                if not st.get("conditions"):
                    self.todo.put(obj)
            if st.get("certificate"):
                self.issued.setdefault(name, t)
            if len(self.issued) >= self.expect:
                self.all_issued.set()


class Approver(threading.Thread):
    """Approves what the timeline queues, over one kept connection (the admin's)."""

    def __init__(self, watch, tl):
        super().__init__(daemon=True)
        self.watch, self.tl, self.error = watch, tl, None

    def run(self):
        conn = http.client.HTTPSConnection(self.watch.host, self.watch.port, context=self.watch.ctx, timeout=60)
        while True:
            obj = self.tl.todo.get()
            if obj is None:
                break
            obj.setdefault("status", {})["conditions"] = [{
                "type": "Approved", "status": "True", "reason": "BedFloor", "message": "bench/onboard floor"}]
            try:
                conn.request("PUT", f"{CSR_API}/{obj['metadata']['name']}/approval", body=json.dumps(obj),
                             headers={"Content-Type": "application/json"})
                resp = conn.getresponse()
                body = resp.read()
                if resp.status != 200:
                    raise BenchError(f"approval of {obj['metadata']['name']}: {resp.status} {body[:200]!r}")
            except Exception as e:          # reported by measure(); the rest stay unapproved
                self.error = e
                break
        conn.close()


def client_csr():
    """One PEM certificate request (P-256, CN tenantgate-bench-floor): every floor CSR carries it."""
    key = run(["openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout"]).stdout
    p = subprocess.run(["openssl", "req", "-new", "-key", "/dev/stdin", "-subj", "/CN=tenantgate-bench-floor"],
                       input=key, text=True, capture_output=True, check=True)
    return base64.b64encode(p.stdout.encode()).decode()


def measure(p, n, parallel, timeout, write_lists, burst):
    """Seconds from the first kubectl create until the controller-manager has issued all n
    certificates (None if it did not within timeout), and the create time alone."""
    request = client_csr()
    items = [{"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
              "metadata": {"name": f"tg-bench-floor-{i:05d}", "labels": {LABEL: "true"}},
              "spec": {"request": request, "signerName": "kubernetes.io/kube-apiserver-client",
                       "usages": ["client auth"], "expirationSeconds": 3600}} for i in range(n)]
    files = write_lists(p.work, "floor", items, parallel)
    tl = FloorTimeline(n)
    watch = Watch(p.env, CSR_API, f"{LABEL}=true", tl.on_csr)
    watch.start()
    watch.ready.wait(30)
    if watch.error or not watch.ready.is_set():
        raise BenchError(f"floor watch did not start: {watch.error}")
    approvers = [Approver(watch, tl) for _ in range(APPROVERS)]
    for a in approvers:
        a.start()
    t0 = time.monotonic()
    try:
        burst(p, files)
        create_s = time.monotonic() - t0
        done = tl.all_issued.wait(timeout)
    finally:
        for _ in approvers:
            tl.todo.put(None)
        watch.close()
        p.kubectl("delete", "csr", "-l", f"{LABEL}=true", "--wait=false")
        for f in files:
            os.unlink(f)
    errors = [a.error for a in approvers if a.error] + ([watch.error] if watch.error else [])
    if errors:
        raise BenchError(f"floor: {errors[0]}")
    with tl.lock:
        last = max(tl.issued.values()) if tl.issued else None
    return (last - t0 if done and last else None), create_s
