// Package console is shardstore's web console: a single-page browser
// application (embedded in the binary, plain HTML, CSS and JavaScript,
// no build step) and the JSON API behind it, served on an address of
// its own.
//
// The console holds no authority of its own. A user logs in with an
// access key and secret; every object and bucket action is then made as
// an S3 request signed with those credentials and handed to the S3
// server in process, and every operations view as a signed call to the
// admin API, so the console can do exactly what the identity may do
// through S3 and the admin API, no more. Sessions live in the server's
// memory and are named by an HttpOnly, SameSite=Strict cookie; every
// change needs the session's CSRF token and a same-origin request.
//
// # How a browser call becomes an S3 request
//
// A login keeps the access key and secret in a server-side session
// (session.go: a random id in the cookie, a per-session CSRF token the
// page keeps in a variable, a same-origin check on every change, a limit
// on failed logins per address). Each browser call is turned into the S3
// request a client would send, signed with SigV4 for that identity
// (s3call.go, auth.SignRequest; UNSIGNED-PAYLOAD, so bodies stream
// through unread; the browser's address as RemoteAddr for aws:SourceIp)
// and handed to the S3 server's ServeHTTP in process. Operations views
// call the admin API the same way (ops.go; admin:ServerInfo decides who
// sees them, asked again every 30 s), and /api/iam/... passes identity
// store calls (users, groups, policies, access keys, audit) to the admin
// API with the body's SHA-256, where each call's own admin: action
// decides. Event notification targets (notify.go) are listed from the
// admin status and tested, added and removed through the admin API's
// notify calls (admin:GetBucketTarget / admin:SetBucketTarget); the add
// form offers every kind the server has and draws the chosen kind's
// fields from notify/kinds (names, required, secret, help), and a
// bucket's page shows its rules (GetBucketNotificationConfiguration).
// So every access rule (policies, ACLs, ownership, public access
// block, object lock) applies unchanged, and a new rule needs no console
// change.
//
// A directory (LDAP) user logs in with its name and password where the
// server signs directory users in (Config.LDAP): the console asks the S3
// server's STS endpoint for AssumeRoleWithLDAPIdentity in process, with
// the browser's address (ldap.go), and keeps the temporary credentials;
// every call is then signed with them and carries their session token
// (share links too), so the user acts with its mapped policies and the
// session ends when the directory no longer confirms the user. The
// password is forwarded once and kept nowhere. "Sign in with <provider>"
// (oidc.go) runs OpenID Connect's authorization-code flow with PKCE,
// state and nonce against one of Config.OpenID (a button per provider)
// and ends the same way, with AssumeRoleWithWebIdentity in process; the
// pending login is sealed into the browser's cookie with the identity
// store's key (oidcstate.go), so any node of a cluster can take the
// provider's redirect.
//
// Answers are decoded from S3 XML into small JSON shapes (objects.go).
// Downloads stream through as attachments with a sandbox CSP, so an HTML
// object can never run in the console's origin. Share links are
// auth.PresignURL on the printed S3 endpoint.
//
// The numbers the console shows beyond S3: bucket usage from the scanner
// (engine.BucketUsage: each cycle counts current objects and bytes per
// bucket, saved on every drive and published after a restart until the
// next cycle ends), live load from the Prometheus registry and the
// per-core sampler (internal/cpustat), and the recent warnings and errors
// kept by internal/logring, which tees the server's logger.
//
// # The page
//
// web/index.html, app.js and app.css are plain JavaScript with no
// dependencies or build step, embedded with go:embed. The page puts every
// piece of data on the page with textContent, never as markup, and the
// CSP allows scripts and styles from the console's own origin only.
// Uploads go through XHR for progress; files over 16 MiB use the
// multipart calls, three parts at a time, retrying a failed part and
// resuming from ListParts.
//
// The browser tests are test/e2e/console_test.go (headless Chromium).
package console
