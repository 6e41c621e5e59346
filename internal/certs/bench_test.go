package certs

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

// processCPU is the process's user+system CPU time so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the process's CPU seconds per GiB moved, both ends
// of the connection together.
func reportCPU(b *testing.B, bytesPerOp int64) {
	start := processCPU(b)
	b.Cleanup(func() {
		gib := float64(bytesPerOp) * float64(b.N) / (1 << 30)
		b.ReportMetric((processCPU(b)-start).Seconds()/gib, "cpu-s/GiB")
	})
}

// BenchmarkSeal is AES-128-GCM sealing 16 KiB TLS records on this CPU:
// the encryption floor under a TLS stream (decryption costs the same).
func BenchmarkSeal(b *testing.B) {
	key := make([]byte, 16)
	rand.Read(key)
	block, _ := aes.NewCipher(key)
	aead, _ := cipher.NewGCM(block)
	nonce := make([]byte, aead.NonceSize())
	rec := make([]byte, 16<<10)
	out := make([]byte, 0, len(rec)+aead.Overhead())
	b.SetBytes(int64(len(rec)))
	reportCPU(b, int64(len(rec)))
	for i := 0; i < b.N; i++ {
		out = aead.Seal(out[:0], nonce, rec, nil)
	}
}

// BenchmarkStream sends 64 MiB over one loopback connection in 256 KiB
// writes (a GET's write size) and reads it back in 256 KiB reads, plain
// TCP against TLS with the server's settings: what TLS adds to moving the
// bytes at all (encryption, decryption, 16 KiB records: a write system
// call each), both ends counted, as in a cluster's shard streams.
func BenchmarkStream(b *testing.B) {
	for _, useTLS := range []bool{false, true} {
		name := "plain"
		if useTLS {
			name = "tls"
		}
		b.Run(name, func(b *testing.B) { benchStream(b, useTLS) })
	}
}

func benchStream(b *testing.B, useTLS bool) {
	const size = 64 << 20
	const chunk = 256 << 10
	ca, err := NewCA("bench", time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	if err := ca.WriteCertsDir(dir, []string{"127.0.0.1"}, time.Hour); err != nil {
		b.Fatal(err)
	}
	s, err := Load(Options{Dir: dir, SystemRoots: func() (*x509.CertPool, error) { return x509.NewCertPool(), nil }})
	if err != nil {
		b.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	if useTLS {
		l = tls.NewListener(l, s.ServerConfig())
	}
	received := make(chan error, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			received <- err
			return
		}
		defer c.Close()
		buf := make([]byte, chunk)
		for {
			if _, err := io.ReadFull(c, buf[:0]); err != nil {
				received <- err
				return
			}
			var n int64
			for n < size {
				m, err := c.Read(buf)
				n += int64(m)
				if err != nil {
					received <- err
					return
				}
			}
			received <- nil
		}
	}()
	dial := (&net.Dialer{}).DialContext
	if useTLS {
		dial = s.DialTLS(dial)
	}
	c, err := dial(b.Context(), "tcp", l.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	data := make([]byte, chunk)
	rand.Read(data)
	b.SetBytes(size)
	reportCPU(b, size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for off := 0; off < size; off += chunk {
			if _, err := c.Write(data); err != nil {
				b.Fatal(err)
			}
		}
		if err := <-received; err != nil {
			b.Fatal(err)
		}
	}
}
