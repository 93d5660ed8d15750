package main

// What Liqo's controllers get from their manager in a real cluster, reduced to what a
// one-shot decision needs: an event recorder we can read back, and an identity provider that
// records the request to sign instead of creating a CertificateSigningRequest.

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"

	authv1beta1 "github.com/liqotech/liqo/apis/authentication/v1beta1"
	identitymanager "github.com/liqotech/liqo/pkg/identityManager"
	responsetypes "github.com/liqotech/liqo/pkg/identityManager/responseTypes"
)

type eventLog struct {
	*record.FakeRecorder
}

func newRecorder() *eventLog {
	return &eventLog{record.NewFakeRecorder(64)}
}

// lastWarning drains the recorded events and returns the last Warning's reason and message.
// FakeRecorder formats each event as "<type> <reason> <message>".
func (l *eventLog) lastWarning() (reason, message string, found bool) {
	for {
		select {
		case ev := <-l.Events:
			parts := strings.SplitN(ev, " ", 3)
			if len(parts) == 3 && parts[0] == "Warning" {
				reason, message, found = parts[1], parts[2], true
			}
		default:
			return reason, message, found
		}
	}
}

func requestFor(key types.NamespacedName) ctrl.Request {
	return ctrl.Request{NamespacedName: key}
}

// recordingIdentityProvider stands in for Liqo's certificate identity provider: the tenant
// controller calls ForgeAuthParams only after the nonce signature and the CSR passed its checks.
type recordingIdentityProvider struct {
	forged bool
}

var _ identitymanager.IdentityProvider = &recordingIdentityProvider{}

func (p *recordingIdentityProvider) GetRemoteCertificate(context.Context,
	*identitymanager.SigningRequestOptions) (*responsetypes.SigningRequestResponse, error) {
	return &responsetypes.SigningRequestResponse{}, nil
}

func (p *recordingIdentityProvider) ApproveSigningRequest(context.Context,
	*identitymanager.SigningRequestOptions) (*responsetypes.SigningRequestResponse, error) {
	return &responsetypes.SigningRequestResponse{}, nil
}

func (p *recordingIdentityProvider) ForgeAuthParams(context.Context,
	*identitymanager.SigningRequestOptions) (*authv1beta1.AuthParams, error) {
	p.forged = true
	return &authv1beta1.AuthParams{}, nil
}
