// peer-go: the webhook a Kubernetes engineer would write in Go instead of
// tenantgate, used by bench/webhook as a baseline only. Standard library only
// (net/http, crypto/tls, encoding/json, crypto/ed25519, crypto/x509). It makes
// the checks of SPEC section 5 that the bench exercises, in the same order,
// with the same reason codes, and logs one JSON line per review as tenantgate
// does.
//
// What the cluster would tell it (tenant namespaces and their labels, nonces)
// comes from a JSON file written by the bench from the same fixtures: a real Go
// webhook would keep client-go informers for that, which would only make it
// bigger, so the comparison errs in the peer's favour.
//
//	peer-go -cert F -key F -listen ADDR -metrics-listen ADDR -cluster FILE [-h2] [-allow-all]
//
// -allow-all makes it the floor of what an apiserver sees of a webhook: it still
// decodes each review, logs it and answers (the mutating path still adds the
// label), but the validating path allows every Tenant without a check
// (reason NotChecked). bench/webhook registers it for one burst of kubectl
// apply, to measure what the apiserver's own side of a webhook call costs.
//
// The metrics listener serves /readyz and the counter
// tenantgate_webhook_requests_total{path,verdict,reason} (the name bench/webhook
// reads for both servers).
package main

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/asn1"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

const (
	validatePath  = "/validate/tenants"
	mutatePath    = "/mutate/tenants"
	labelTenantNS = "liqo.io/tenant-namespace"
	labelCluster  = "liqo.io/remote-cluster-id"
	maxBody       = 3 << 20
)

// cluster is what the informers would hold.
type cluster struct {
	Namespaces map[string]map[string]string `json:"namespaces"` // name -> labels
	Nonces     map[string]string            `json:"nonces"`     // cluster id -> nonce text
	Tenants    map[string][]string          `json:"tenants"`    // namespace -> tenant names
}

type tenant struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		ClusterID   string `json:"clusterID"`
		AuthzPolicy string `json:"authzPolicy"`
		PublicKey   []byte `json:"publicKey"`
		CSR         []byte `json:"csr"`
		Signature   []byte `json:"signature"`
	} `json:"spec"`
}

type reviewRequest struct {
	UID       string          `json:"uid"`
	Name      string          `json:"name"`
	Namespace string          `json:"namespace"`
	Operation string          `json:"operation"`
	Object    json.RawMessage `json:"object"`
	OldObject json.RawMessage `json:"oldObject"`
}

type review struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Request    *reviewRequest `json:"request,omitempty"`
	Response   *reviewResp    `json:"response,omitempty"`
}

type status struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Reason  string `json:"reason,omitempty"`
}

type reviewResp struct {
	UID       string  `json:"uid"`
	Allowed   bool    `json:"allowed"`
	Status    *status `json:"status,omitempty"`
	PatchType string  `json:"patchType,omitempty"`
	Patch     []byte  `json:"patch,omitempty"`
}

type denial struct {
	reason string
	code   int
	msg    string
}

func deny(reason string, format string, args ...any) *denial {
	return &denial{reason, 400, fmt.Sprintf(format, args...)}
}

var clusterIDPattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

type server struct {
	allowAll bool // validate nothing: the floor of a webhook call
	cl       cluster
	mu       sync.Mutex
	counts   map[[3]string]int64
	log      *slog.Logger
}

func (s *server) count(path, verdict, reason string) {
	s.mu.Lock()
	s.counts[[3]string{path, verdict, reason}]++
	s.mu.Unlock()
}

// placement: SPEC 5 step 2.
func (s *server) placement(t *tenant, op string) *denial {
	ns := t.Metadata.Namespace
	labels, ok := s.cl.Namespaces[ns]
	if !ok || labels[labelTenantNS] != "true" {
		return deny("WrongNamespace", "expected a tenant namespace (label %s=true), found namespace %q without it",
			labelTenantNS, ns)
	}
	if l, ok := t.Metadata.Labels[labelCluster]; ok && l != t.Spec.ClusterID {
		return deny("LabelMismatch", "expected label %s=%s, found %q", labelCluster, t.Spec.ClusterID, l)
	}
	if labels[labelCluster] != t.Spec.ClusterID {
		return &denial{"LabelMismatch", 403, fmt.Sprintf("expected namespace of cluster %s, found one of %s",
			t.Spec.ClusterID, labels[labelCluster])}
	}
	if op == "CREATE" && len(s.cl.Tenants[ns]) > 0 {
		return &denial{"Duplicate", 403, "expected no other Tenant in the namespace, found one"}
	}
	return nil
}

// publicKey: SPEC 5 step 4, both forms.
func publicKey(b []byte) (crypto.PublicKey, []byte, *denial) {
	if len(b) == ed25519.PublicKeySize {
		k := ed25519.PublicKey(b)
		der, err := x509.MarshalPKIXPublicKey(k)
		if err != nil {
			return nil, nil, deny("InvalidPublicKey", "expected an Ed25519 key: %v", err)
		}
		return k, der, nil
	}
	blk, rest := pem.Decode(b)
	if blk == nil || blk.Type != "PUBLIC KEY" || len(bytes.TrimSpace(rest)) != 0 || len(blk.Headers) != 0 {
		return nil, nil, deny("InvalidPublicKey", "expected a raw 32-byte Ed25519 key or one PEM \"PUBLIC KEY\" block")
	}
	k, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		return nil, nil, deny("InvalidPublicKey", "expected a PKIX SubjectPublicKeyInfo: %v", err)
	}
	switch k := k.(type) {
	case ed25519.PublicKey:
	case *rsa.PublicKey:
		if k.N.BitLen() < 2048 {
			return nil, nil, deny("WeakKey", "expected an RSA key of at least 2048 bits, found %d", k.N.BitLen())
		}
	case *ecdsa.PublicKey:
		if k.Curve != elliptic.P256() && k.Curve != elliptic.P384() {
			return nil, nil, deny("WeakKey", "expected an EC key on P-256 or P-384")
		}
	default:
		return nil, nil, deny("InvalidPublicKey", "expected an Ed25519, RSA or ECDSA key, found %T", k)
	}
	der, err := x509.MarshalPKIXPublicKey(k)
	if err != nil {
		return nil, nil, deny("InvalidPublicKey", "expected an encodable key: %v", err)
	}
	return k, der, nil
}

func verify(k crypto.PublicKey, msg, sig []byte) bool {
	switch k := k.(type) {
	case ed25519.PublicKey:
		return ed25519.Verify(k, msg, sig)
	case *rsa.PublicKey:
		h := sha256.Sum256(msg)
		return rsa.VerifyPKCS1v15(k, crypto.SHA256, h[:], sig) == nil
	case *ecdsa.PublicKey:
		h := sha256.Sum256(msg)
		return ecdsa.VerifyASN1(k, h[:], sig)
	}
	return false
}

var (
	oidCN = asn1.ObjectIdentifier{2, 5, 4, 3}
	oidO  = asn1.ObjectIdentifier{2, 5, 4, 10}
)

// checkCSR: SPEC 5 steps 7-10.
func checkCSR(b []byte, clusterID string, keyDER []byte) *denial {
	blk, rest := pem.Decode(b)
	if blk == nil || blk.Type != "CERTIFICATE REQUEST" || len(bytes.TrimSpace(rest)) != 0 || len(blk.Headers) != 0 {
		return deny("InvalidCSR", "expected one PEM \"CERTIFICATE REQUEST\" block and nothing else")
	}
	csr, err := x509.ParseCertificateRequest(blk.Bytes)
	if err != nil {
		return deny("InvalidCSR", "expected a PKCS#10 request: %v", err)
	}
	if err := csr.CheckSignature(); err != nil {
		return deny("InvalidCSR", "expected a valid self-signature: %v", err)
	}
	cn, o := 0, 0
	for _, atv := range csr.Subject.Names {
		switch {
		case atv.Type.Equal(oidCN):
			cn++
			if v, _ := atv.Value.(string); v != clusterID {
				return deny("CSRSubjectMismatch", "expected CN=%s, found CN=%v", clusterID, atv.Value)
			}
		case atv.Type.Equal(oidO):
			o++
			if v, _ := atv.Value.(string); v != "liqo.io" {
				return deny("CSRSubjectMismatch", "expected O=liqo.io, found O=%v", atv.Value)
			}
		default:
			return deny("CSRForbiddenContent", "expected only O and CN in the subject, found %v", atv.Type)
		}
	}
	if len(csr.Extensions) > 0 || len(csr.Attributes) > 0 {
		return deny("CSRForbiddenContent", "expected no requested extensions or attributes")
	}
	if cn != 1 || o != 1 {
		return deny("CSRSubjectMismatch", "expected exactly one CN and one O, found %d and %d", cn, o)
	}
	if !bytes.Equal(csr.RawSubjectPublicKeyInfo, keyDER) {
		der, err := x509.MarshalPKIXPublicKey(csr.PublicKey)
		if err != nil || !bytes.Equal(der, keyDER) {
			return deny("CSRPublicKeyMismatch", "expected the key of spec.publicKey, found a different key")
		}
	}
	return nil
}

func (s *server) check(t *tenant, op string, old *tenant) *denial {
	if t.APIVersion != "authentication.liqo.io/v1beta1" || t.Kind != "Tenant" {
		return deny("MalformedTenant", "expected an authentication.liqo.io/v1beta1 Tenant")
	}
	if t.Spec.ClusterID == "" {
		return deny("MalformedTenant", "expected spec.clusterID, found none")
	}
	if d := s.placement(t, op); d != nil {
		return d
	}
	if len(t.Spec.ClusterID) > 63 || !clusterIDPattern.MatchString(t.Spec.ClusterID) {
		return deny("InvalidClusterID", "spec.clusterID: expected a DNS label")
	}
	if t.Spec.AuthzPolicy == "TolerateNoHandshake" {
		return deny("MalformedTenant", "spec.authzPolicy: expected KeysExchange")
	}
	if op == "UPDATE" && old != nil && bytes.Equal(old.Spec.PublicKey, t.Spec.PublicKey) &&
		bytes.Equal(old.Spec.CSR, t.Spec.CSR) && bytes.Equal(old.Spec.Signature, t.Spec.Signature) {
		return nil
	}
	if t.Metadata.Name != t.Spec.ClusterID {
		return deny("NameMismatch", "metadata.name: expected %s (spec.clusterID), found %q", t.Spec.ClusterID,
			t.Metadata.Name)
	}
	if len(t.Spec.PublicKey) == 0 || len(t.Spec.CSR) == 0 || len(t.Spec.Signature) == 0 {
		return deny("MalformedTenant", "expected spec.publicKey, spec.csr and spec.signature")
	}
	k, der, d := publicKey(t.Spec.PublicKey)
	if d != nil {
		return d
	}
	nonce, ok := s.cl.Nonces[t.Spec.ClusterID]
	if !ok || nonce == "" {
		return deny("NonceNotFound", "expected a nonce issued for cluster %s, found none", t.Spec.ClusterID)
	}
	if !verify(k, []byte(nonce), t.Spec.Signature) {
		return deny("SignatureVerificationFailed", "spec.signature: expected a signature of the issued nonce")
	}
	return checkCSR(t.Spec.CSR, t.Spec.ClusterID, der)
}

func (s *server) admit(path string, body []byte) ([]byte, error) {
	var rv review
	if err := json.Unmarshal(body, &rv); err != nil || rv.Request == nil {
		return nil, fmt.Errorf("not an AdmissionReview")
	}
	r := rv.Request
	resp := &reviewResp{UID: r.UID, Allowed: true}
	reason := "Accepted"
	switch r.Operation {
	case "CREATE", "UPDATE":
		var t tenant
		var old *tenant
		if err := json.Unmarshal(r.Object, &t); err != nil {
			resp.Allowed, reason = false, "MalformedTenant"
			resp.Status = &status{Code: 400, Reason: reason, Message: err.Error()}
			break
		}
		if len(r.OldObject) > 0 && string(r.OldObject) != "null" {
			old = new(tenant)
			if json.Unmarshal(r.OldObject, old) != nil {
				old = nil
			}
		}
		if path == mutatePath {
			// As tenantgate: the mutating webhook only adds the label, validation judges.
			reason = "Unchanged"
			if t.Metadata.Labels[labelCluster] == "" && t.Spec.ClusterID != "" {
				reason = "LabelAdded"
				op := `[{"op":"add","path":"/metadata/labels","value":{"` + labelCluster + `":"` +
					t.Spec.ClusterID + `"}}]`
				if t.Metadata.Labels != nil {
					op = `[{"op":"add","path":"/metadata/labels/liqo.io~1remote-cluster-id","value":"` +
						t.Spec.ClusterID + `"}]`
				}
				resp.PatchType, resp.Patch = "JSONPatch", []byte(op)
			}
		} else if s.allowAll {
			reason = "NotChecked"
		} else if d := s.check(&t, r.Operation, old); d != nil {
			resp.Allowed, reason = false, d.reason
			httpReason := "BadRequest"
			if d.code == 403 {
				httpReason = "Forbidden"
			}
			resp.Status = &status{Code: d.code, Reason: httpReason, Message: d.reason + ": " + d.msg}
		}

	default:
		reason = "NotIntercepted"
	}
	verdict := "allowed"
	level := slog.LevelInfo
	msg := ""
	if !resp.Allowed {
		verdict, level, msg = "denied", slog.LevelWarn, resp.Status.Message
	}
	s.count(path, verdict, reason)
	s.log.Log(nil, level, "admission", "path", path, "uid", r.UID, "tenant", r.Name, "namespace", r.Namespace,
		"op", r.Operation, "verdict", verdict, "reason", reason, "message", msg)
	return json.Marshal(review{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview", Response: resp})
}

func (s *server) handler(path string) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxBody))
		if err != nil {
			http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
			return
		}
		out, err := s.admit(path, body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(out)
	}
}

func (s *server) metrics(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	lines := make([]string, 0, len(s.counts))
	for k, n := range s.counts {
		lines = append(lines, fmt.Sprintf("tenantgate_webhook_requests_total{path=%q,verdict=%q,reason=%q} %d",
			k[0], k[1], k[2], n))
	}
	s.mu.Unlock()
	sort.Strings(lines)
	io.WriteString(w, strings.Join(lines, "\n")+"\n")
}

func main() {
	cert := flag.String("cert", "", "serving certificate (PEM)")
	key := flag.String("key", "", "serving key (PEM)")
	listen := flag.String("listen", "127.0.0.1:8443", "HTTPS address")
	metricsListen := flag.String("metrics-listen", "127.0.0.1:8080", "plain HTTP address for /readyz and /metrics")
	clusterFile := flag.String("cluster", "", "JSON: namespaces, nonces, tenants")
	h2 := flag.Bool("h2", false, "offer HTTP/2 over ALPN")
	allowAll := flag.Bool("allow-all", false, "allow every Tenant on the validating path without a check")
	flag.Parse()

	s := &server{allowAll: *allowAll, counts: map[[3]string]int64{},
		log: slog.New(slog.NewJSONHandler(os.Stderr, nil))}
	raw, err := os.ReadFile(*clusterFile)
	if err == nil {
		err = json.Unmarshal(raw, &s.cl)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "peer-go: -cluster: %v\n", err)
		os.Exit(2)
	}
	pair, err := tls.LoadX509KeyPair(*cert, *key)
	if err != nil {
		fmt.Fprintf(os.Stderr, "peer-go: %v\n", err)
		os.Exit(2)
	}
	mux := http.NewServeMux()
	mux.HandleFunc(validatePath, s.handler(validatePath))
	mux.HandleFunc(mutatePath, s.handler(mutatePath))
	srv := &http.Server{Addr: *listen, Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout: 90 * time.Second, TLSConfig: &tls.Config{Certificates: []tls.Certificate{pair},
			MinVersion: tls.VersionTLS12}}
	if !*h2 {
		srv.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){}
	}
	mm := http.NewServeMux()
	mm.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	mm.HandleFunc("/metrics", s.metrics)
	go func() {
		if err := http.ListenAndServe(*metricsListen, mm); err != nil {
			fmt.Fprintf(os.Stderr, "peer-go: metrics: %v\n", err)
			os.Exit(1)
		}
	}()
	s.log.Info("serving", "listen", *listen, "h2", *h2, "allowAll", *allowAll)
	if err := srv.ListenAndServeTLS("", ""); err != nil {
		fmt.Fprintf(os.Stderr, "peer-go: %v\n", err)
		os.Exit(1)
	}
}
