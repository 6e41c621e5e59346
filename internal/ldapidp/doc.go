// Package ldapidp signs people in against an LDAP directory (OpenLDAP,
// Active Directory): it finds a user's entry by name, checks the
// password by binding as that entry, and lists the groups the entry
// belongs to. It is what STS AssumeRoleWithLDAPIdentity, the console's
// directory login and the periodic re-check of federated credentials ask
// (internal/iam holds the DN-to-policy mappings; internal/sts the STS
// call).
//
// # Configuration
//
// Config is read from SHARDSTORE_IDENTITY_LDAP_* environment variables,
// each of which may also be given as MinIO's MINIO_IDENTITY_LDAP_* name
// (ours win when both are set), or from the server's --identity-ldap-*
// flags (ConfigFromEnv, config.go): SERVER_ADDR (host:port),
// LOOKUP_BIND_DN and LOOKUP_BIND_PASSWORD (the read-only account that
// searches), USER_DN_SEARCH_BASE_DN (one base, or several separated by
// ';'), USER_DN_SEARCH_FILTER (with %s for the user name),
// GROUP_SEARCH_BASE_DN and GROUP_SEARCH_FILTER (%s the user name, %d the
// user's DN), SERVER_INSECURE (plain LDAP), SERVER_STARTTLS (StartTLS on
// the plain port), TLS_SKIP_VERIFY, and our own SERVER_CA (a PEM file of
// authorities trusted beside the system's and the certificates
// directory's CAs/).
//
// # Sign-in
//
// Authenticate: connect (LDAPS by default; StartTLS or plain when
// configured), bind with the lookup account, search the user bases with
// the filter, in which the user name is escaped as RFC 4515 says (so a
// name like "*" or ")(uid=*" matches only an entry of that literal name),
// require exactly one entry, bind as it with the password (an empty
// password is refused before anything is sent: LDAP would take it for an
// anonymous bind), then search the groups. Lookup does the same without
// the password: whether the user still exists and passes the filter (a
// disabled account fails it when the filter says so), and its groups now.
//
// Connections bound as the lookup account are reused (pool.go): up to
// four idle ones, each for at most 30 s; a sign-in binds as the user and
// then as the lookup account again before its connection goes back; one
// that failed or could not be rebound is closed, and a call meeting a
// dropped connection is retried once on a new one. Stats counts them
// (cmd/shardstore exports the counts as Prometheus metrics).
//
// Errors are ErrInvalidCredentials (unknown user, wrong password: the
// two are not told apart to the caller) or ErrUnavailable (the directory
// could not be reached, TLS failed, or the lookup bind was refused), each
// wrapped with the detail. No password, bind password or filter value
// with a password ever goes into an error or a log line.
package ldapidp
