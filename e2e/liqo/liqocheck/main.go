// liqocheck runs Liqo's own authentication code outside a cluster, so the e2e suite can ask
// "what would Liqo do with this?" and compare the answer with tenantgate's.
//
// It is built once per pinned Liqo release (e2e/liqo-bin), from the same source: every Liqo
// call it makes has the same signature in all the releases we pin.  The only code here is glue:
// in-memory clients (controller-runtime's fake client, client-go's fake clientset) holding the
// objects Liqo's controllers would find in a cluster, and a stand-in for the identity provider
// that records whether Liqo's tenant controller got far enough to sign the CSR.
//
//	liqocheck version
//	liqocheck keygen
//	liqocheck consumer --key FILE --cluster-id C --provider-id P --nonce N [--proxy-url U]
//	liqocheck provider --tenant FILE --nonce N [--consumer-id C]
//
// Output is one JSON document on stdout; Liqo's own logs (klog) go to stderr.
package main

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/debug"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	authv1beta1 "github.com/liqotech/liqo/apis/authentication/v1beta1"
	liqov1beta1 "github.com/liqotech/liqo/apis/core/v1beta1"
	"github.com/liqotech/liqo/pkg/consts"
	"github.com/liqotech/liqo/pkg/liqo-controller-manager/authentication"
	noncesigner "github.com/liqotech/liqo/pkg/liqo-controller-manager/authentication/noncesigner-controller"
	tenantcontroller "github.com/liqotech/liqo/pkg/liqo-controller-manager/authentication/tenant-controller"
	authutils "github.com/liqotech/liqo/pkg/liqo-controller-manager/authentication/utils"
	tenantnamespace "github.com/liqotech/liqo/pkg/tenantNamespace"
)

// liqoNamespace is where Liqo keeps the cluster keys (Secret authentication-keys).
const liqoNamespace = "liqo"

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "version":
		err = printJSON(map[string]string{"liqo": liqoVersion()})
	case "keygen":
		err = runKeygen()
	case "consumer":
		err = runConsumer(os.Args[2:])
	case "provider":
		err = runProvider(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "liqocheck: %v\n", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `usage: liqocheck version | keygen
       liqocheck consumer --key FILE --cluster-id C --provider-id P --nonce N [--proxy-url U]
       liqocheck provider --tenant FILE --nonce N [--consumer-id C]
`)
	os.Exit(2)
}

func printJSON(v any) error {
	out, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Printf("%s\n", out)
	return err
}

// liqoVersion is the github.com/liqotech/liqo version this binary was linked with.
func liqoVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/liqotech/liqo" {
				return dep.Version
			}
		}
	}
	return "unknown"
}

func newScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := authv1beta1.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}

// runKeygen prints a key pair made by Liqo's consumer (what a fresh Liqo install stores in
// Secret liqo/authentication-keys).
func runKeygen() error {
	priv, pub, err := authentication.GenerateEd25519Keys()
	if err != nil {
		return err
	}
	return printJSON(map[string]string{"privateKey": string(priv), "publicKey": string(pub)})
}

// publicPEM derives the PEM PKIX public key Liqo stores beside a PKCS#8 private key.
func publicPEM(privPEM []byte) ([]byte, error) {
	block, _ := pem.Decode(privPEM)
	if block == nil {
		return nil, errors.New("key file: no PEM block")
	}
	priv, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("key file: %w", err)
	}
	signer, ok := priv.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("key file: %T cannot sign", priv)
	}
	der, err := x509.MarshalPKIXPublicKey(signer.Public())
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// runConsumer plays the consumer side of `liqoctl generate tenant`: Liqo's nonce-signer
// controller signs the provider's nonce with the cluster keys, then Liqo's GenerateTenant
// builds the Tenant from that signature.
func runConsumer(args []string) (err error) {
	fs := flag.NewFlagSet("consumer", flag.ExitOnError)
	keyFile := fs.String("key", "", "PEM PKCS#8 private key (the consumer's cluster key)")
	clusterID := fs.String("cluster-id", "", "consumer cluster id")
	providerID := fs.String("provider-id", "", "provider cluster id")
	nonce := fs.String("nonce", "", "the provider's nonce")
	proxyURL := fs.String("proxy-url", "", "proxy URL to put in the Tenant")
	_ = fs.Parse(args)
	if *keyFile == "" || *clusterID == "" || *providerID == "" || *nonce == "" {
		usage()
	}
	privPEM, err := os.ReadFile(*keyFile)
	if err != nil {
		return err
	}
	pubPEM, err := publicPEM(privPEM)
	if err != nil {
		return err
	}
	// Liqo's code panics on some inputs (e.g. a non-Ed25519 key in Liqo 1.0.x); say so.
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic in Liqo code: %v", p)
		}
	}()

	ctx := context.Background()
	s, err := newScheme()
	if err != nil {
		return err
	}
	keys := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: consts.AuthKeysSecretName, Namespace: liqoNamespace},
		Data:       map[string][]byte{consts.PrivateKeyField: privPEM, consts.PublicKeyField: pubPEM},
	}
	cl := crfake.NewClientBuilder().WithScheme(s).WithObjects(keys).Build()
	nsManager := tenantnamespace.NewManager(kubefake.NewClientset(), s)

	provider := liqov1beta1.ClusterID(*providerID)
	tenantNs, err := nsManager.CreateNamespace(ctx, provider)
	if err != nil {
		return fmt.Errorf("tenant namespace: %w", err)
	}
	if err := authutils.EnsureSignedNonceSecret(ctx, cl, provider, tenantNs.Name, nonce); err != nil {
		return err
	}
	if err := foldStringData(ctx, cl, tenantNs.Name); err != nil {
		return err
	}
	if err := signPendingNonces(ctx, cl, s, nsManager, tenantNs.Name); err != nil {
		return err
	}
	signature, err := authutils.RetrieveSignedNonce(ctx, cl, provider, tenantNs.Name)
	if err != nil {
		return err
	}
	// The remote tenant namespace is the provider's name for ours: liqo-tenant-<consumer>.
	remoteNs := nsManager.ForgeNamespace(liqov1beta1.ClusterID(*clusterID), nil).Name
	tenant, err := authutils.GenerateTenant(ctx, cl, liqov1beta1.ClusterID(*clusterID), liqoNamespace,
		remoteNs, signature, proxyURL)
	if err != nil {
		return err
	}
	return printJSON(tenant)
}

// foldStringData does what the API server does on every Secret write and the fake client does
// not: Liqo writes the nonce to sign as stringData and reads it back from data.
func foldStringData(ctx context.Context, cl client.Client, namespace string) error {
	var secrets corev1.SecretList
	if err := cl.List(ctx, &secrets, client.InNamespace(namespace)); err != nil {
		return err
	}
	for i := range secrets.Items {
		sec := &secrets.Items[i]
		if len(sec.StringData) == 0 {
			continue
		}
		if sec.Data == nil {
			sec.Data = map[string][]byte{}
		}
		for k, v := range sec.StringData {
			sec.Data[k] = []byte(v)
		}
		sec.StringData = nil
		if err := cl.Update(ctx, sec); err != nil {
			return err
		}
	}
	return nil
}

// signPendingNonces runs Liqo's nonce-signer reconciler on every Secret of the namespace, as
// its controller would on their creation.
func signPendingNonces(ctx context.Context, cl client.Client, s *runtime.Scheme,
	nsManager tenantnamespace.Manager, namespace string) error {
	var secrets corev1.SecretList
	if err := cl.List(ctx, &secrets, client.InNamespace(namespace)); err != nil {
		return err
	}
	r := noncesigner.NewNonceSignerReconciler(cl, s, newRecorder(), nsManager, liqoNamespace)
	for i := range secrets.Items {
		key := types.NamespacedName{Namespace: namespace, Name: secrets.Items[i].Name}
		if _, err := r.Reconcile(ctx, requestFor(key)); err != nil {
			return fmt.Errorf("nonce signer: %w", err)
		}
	}
	return nil
}

// providerVerdict is what Liqo's tenant controller made of a Tenant.
type providerVerdict struct {
	// Accepted: the handshake checks passed and the controller went on to have the CSR signed.
	Accepted bool `json:"accepted"`
	// Reason: the Warning event's reason, "ReconcileError", "Panic" or "Undecodable".
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	Liqo    string `json:"liqo"`
}

// runProvider hands a Tenant to Liqo's own tenant controller, on a provider that issued the
// given nonce to the consumer, and reports whether the controller accepted the handshake.
func runProvider(args []string) error {
	fs := flag.NewFlagSet("provider", flag.ExitOnError)
	tenantFile := fs.String("tenant", "", "Tenant, JSON or YAML")
	nonce := fs.String("nonce", "", "the nonce the provider issued")
	consumerID := fs.String("consumer-id", "", "cluster the nonce was issued to (default: spec.clusterID)")
	_ = fs.Parse(args)
	if *tenantFile == "" || *nonce == "" {
		usage()
	}
	raw, err := os.ReadFile(*tenantFile)
	if err != nil {
		return err
	}
	v := judgeTenant(raw, *nonce, *consumerID)
	v.Liqo = liqoVersion()
	return printJSON(v)
}

func judgeTenant(raw []byte, nonce, consumerID string) (v providerVerdict) {
	defer func() {
		if p := recover(); p != nil {
			v = providerVerdict{Reason: "Panic", Message: fmt.Sprint(p)}
		}
	}()
	tenant := &authv1beta1.Tenant{}
	if err := yaml.UnmarshalStrict(raw, tenant); err != nil {
		// The API server would have refused it too: it does not fit Liqo's types.
		return providerVerdict{Reason: "Undecodable", Message: err.Error()}
	}
	if tenant.Name == "" {
		return providerVerdict{Reason: "Undecodable", Message: "metadata.name: missing"}
	}
	if tenant.Namespace == "" {
		tenant.Namespace = "default"
	}
	if consumerID == "" {
		consumerID = string(tenant.Spec.ClusterID)
	}
	ctx := context.Background()
	s, err := newScheme()
	if err != nil {
		return providerVerdict{Reason: "ReconcileError", Message: err.Error()}
	}
	cl := crfake.NewClientBuilder().WithScheme(s).
		WithStatusSubresource(&authv1beta1.Tenant{}).
		WithObjects(tenant, tenantClusterRole("remote-controlplane"),
			tenantClusterRole("virtual-kubelet-remote-clusterwide")).
		Build()
	if err := issueNonce(ctx, cl, liqov1beta1.ClusterID(consumerID), tenant.Namespace, nonce); err != nil {
		return providerVerdict{Reason: "ReconcileError", Message: err.Error()}
	}

	signer := &recordingIdentityProvider{}
	recorder := newRecorder()
	r := tenantcontroller.NewTenantReconciler(cl, s, nil, recorder, signer,
		tenantnamespace.NewManager(kubefake.NewClientset(), s), "", nil, false)
	req := requestFor(types.NamespacedName{Namespace: tenant.Namespace, Name: tenant.Name})
	// The first pass adds the finalizer; the second runs the handshake checks.
	for pass := 0; pass < 3; pass++ {
		_, err := r.Reconcile(ctx, req)
		if signer.forged {
			return providerVerdict{Accepted: true}
		}
		if reason, msg, ok := recorder.lastWarning(); ok {
			return providerVerdict{Reason: reason, Message: msg}
		}
		if err != nil {
			return providerVerdict{Reason: "ReconcileError", Message: err.Error()}
		}
	}
	return providerVerdict{Reason: "NoDecision", Message: "the tenant controller neither refused nor signed"}
}

// issueNonce creates the provider's nonce Secret the way Liqo does, holding the given nonce.
func issueNonce(ctx context.Context, cl client.Client, consumer liqov1beta1.ClusterID, namespace, nonce string) error {
	if err := authutils.EnsureNonceSecret(ctx, cl, consumer, namespace); err != nil {
		return err
	}
	var secrets corev1.SecretList
	if err := cl.List(ctx, &secrets, client.InNamespace(namespace)); err != nil {
		return err
	}
	for i := range secrets.Items {
		sec := &secrets.Items[i]
		if sec.Labels[consts.NonceSecretLabelKey] == "" {
			continue
		}
		sec.Data = map[string][]byte{consts.NonceSecretField: []byte(nonce)}
		return cl.Update(ctx, sec)
	}
	return errors.New("Liqo's EnsureNonceSecret made no nonce Secret")
}

// tenantClusterRole is one of the ClusterRoles Liqo's chart installs and its tenant controller
// looks up (by app.kubernetes.io/name) before it reconciles anything.
func tenantClusterRole(appName string) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{
		Name:   "liqo-" + appName,
		Labels: map[string]string{consts.K8sAppNameKey: appName},
	}}
}
