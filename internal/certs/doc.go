// Package certs reads a certificates directory and gives the server and
// its clients their TLS settings.
//
// The directory is laid out as MinIO's, so an operator moving over points
// --certs-dir at the one they have:
//
//	DIR/public.crt          the server's certificate (and any intermediates after it)
//	DIR/private.key         its key: RSA, ECDSA or Ed25519; PKCS#1, PKCS#8 or SEC1;
//	                        encrypted keys need SHARDSTORE_CERT_PASSWD (or MINIO_CERT_PASSWD)
//	DIR/NAME/public.crt     more certificates, one per subdirectory, chosen by the
//	DIR/NAME/private.key    name a client asks for (SNI); the directory's name is free
//	DIR/CAs/*               certificates this process trusts as a client (other
//	                        nodes, and later key servers and event targets), beside
//	                        the system's roots
//
// A Store holds what was read. The server's tls.Config asks the Store for
// the certificate of each new connection, so Reload (on SIGHUP, or when
// Watch sees a file change) takes effect for new connections without a
// restart; a replacement that does not load (a key that does not match,
// a half-written file) is refused with an error and the old material
// keeps serving. Certificates that have expired or are not valid yet are
// loaded with a warning: refusing to start would take down a server whose
// clients may still accept them (or that serves an internal name).
//
// The TLS settings are the same on both ends: TLS 1.2 and 1.3 only,
// forward-secret AEAD cipher suites for 1.2 (1.3's are all AEAD), and
// HTTP/1.1 by ALPN. S3 clients use HTTP/1.1 and open connections in
// parallel; HTTP/2 would multiplex large shard and object streams over one
// connection's flow-control window for no gain, and adds a second
// protocol implementation to the attack surface.
//
// Clients (node to node) verify the server's certificate against the
// system's roots plus CAs/, for the host name or IP address the endpoint
// names; DialTLS wraps a dial function with that handshake. NewCA makes a
// throwaway authority for `cluster demo --tls` and the tests.
package certs
