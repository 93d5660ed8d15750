package main

// go test -bench Ed25519Verify: Go's crypto/ed25519 verify of an 88-byte
// message (the nonce text), for bench/pki's side-by-side line.

import (
	"crypto/ed25519"
	"crypto/rand"
	"testing"
)

func BenchmarkEd25519Verify(b *testing.B) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	msg := make([]byte, 88)
	sig := ed25519.Sign(priv, msg)
	for i := 0; i < b.N; i++ {
		if !ed25519.Verify(pub, msg, sig) {
			b.Fatal("does not verify")
		}
	}
}
