package testenv

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TLSFiles are PEM files of a certificate authority made for one test, a server
// certificate it signed for 127.0.0.1 and localhost, and an unrelated CA that did not
// sign it (for "unknown authority" errors).
type TLSFiles struct {
	CAFile, CertFile, KeyFile string
	OtherCAFile               string
}

// NewTLSFiles makes a CA, a server certificate and an unrelated CA in the test's
// temporary directory, with crypto/x509: no openssl needed.
func NewTLSFiles(t testing.TB) *TLSFiles {
	t.Helper()
	dir := t.TempDir()
	f := &TLSFiles{
		CAFile: filepath.Join(dir, "ca.pem"), CertFile: filepath.Join(dir, "server.pem"),
		KeyFile: filepath.Join(dir, "server-key.pem"), OtherCAFile: filepath.Join(dir, "other-ca.pem"),
	}
	caKey, caCert, caDER := newCA(t, "laraq test CA")
	writePEM(t, f.CAFile, "CERTIFICATE", caDER)
	_, _, otherDER := newCA(t, "laraq unrelated CA")
	writePEM(t, f.OtherCAFile, "CERTIFICATE", otherDER)

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, f.CertFile, "CERTIFICATE", der)
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, f.KeyFile, "EC PRIVATE KEY", keyDER)
	return f
}

func newCA(t testing.TB, name string) (*ecdsa.PrivateKey, *x509.Certificate, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return key, cert, der
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// PrivateTLSRedis starts a redis-server for this test alone with a TLS listener
// (TLSAddr) beside its plain one, serving f's certificate; clients need no certificate
// of their own (tls-auth-clients no). Debian's redis-server 7 is built with TLS.
func PrivateTLSRedis(t testing.TB, f *TLSFiles) *Redis {
	t.Helper()
	return PrivateRedis(t, "--tls-port", "TLSPORT", "--tls-cert-file", f.CertFile, "--tls-key-file", f.KeyFile,
		"--tls-ca-cert-file", f.CAFile, "--tls-auth-clients", "no")
}
