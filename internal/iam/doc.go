// Package iam is shardstore's identity store: users, groups, managed
// policies, access keys for applications and temporary (STS) sessions.
//
// The whole store is one document kept on the drives through a Backend
// (the engine's quorum-written config documents), read into memory at
// start and replaced on every change, so every request sees the same
// identities and a change survives the loss of parity drives. Secrets
// are sealed with AES-256-GCM under a key derived (HKDF-SHA256) from the
// configured key or the root credentials; they never leave the package
// except to verify signatures and, once, to whoever created them.
// Session tokens are sealed the same way and hold everything a session
// is (its keys, user, expiry and policies), so sessions need no storage.
//
// What an identity may do is its Permissions (access.IdentityPolicies,
// permissions.go): the policies attached to its user and the user's
// enabled groups, narrowed by an access key's or a session's own policy.
// Package access combines them with bucket policies.
//
// # Where the document lives
//
// The document is the engine's config document "iam"
// (engine.ReadConfig / WriteConfig, internal/engine/config.go): on a
// single node it is written to every drive's index with a sequence number
// and a CRC, acknowledged on a majority of all drives, read as the newest
// version at least half of the drives hold and repaired on the drives
// that missed it; on a cluster it lives in the consensus group. Writes
// are compare-and-swap on the sequence number, so two writers cannot lose
// an update. Store keeps an immutable snapshot (credentials with their
// decrypted secrets and compiled permissions) behind an atomic pointer;
// every change builds a new snapshot, so requests never lock.
//
// # Keys
//
// The sealing key comes from SHARDSTORE_IAM_KEY, else the root
// credentials (crypt.go); each secret is bound to its access key as
// associated data. A check value in the document detects changed key
// material at start, and SHARDSTORE_IAM_PREVIOUS_KEY opens a store sealed
// with the previous material so it can be resealed.
//
// # Sessions
//
// STS AssumeRole (package sts parses the form; auth.Verifier.VerifySTS
// checks the SigV4 signature for service "sts" over the hashed body)
// returns credentials whose session token is the sealed session itself
// (sts.go). LookupSession checks the token against the access key it
// came with, the expiry and the user's current status, caching decoded
// tokens until the store changes.
//
// # Who asks it
//
// auth.Verifier looks an access key up in auth.Users (root, the users
// file) and then in its IdentityStore, which Store implements; a request
// with x-amz-security-token (header, presigned query, POST form field)
// goes to LookupSession. The admin API (internal/admin, identities.go)
// routes the JSON calls that change the store; cmd/shardstore's
// adminAuthorize lets root through and decides an identity's calls by
// their admin: action (a user may always manage its own access keys).
// Every change is an audit record (actor, action, target, time; never a
// secret) in the server log and in GET /shardstore/admin/audit.
//
// # Directory (LDAP) users
//
// A directory user has no record in the store. The document maps DNs
// (users' and groups', normalized by ldapidp.NormalizeDN) to policies
// (state.LDAPPolicies, AttachLDAPPolicies). AssumeRoleWithLDAP issues a
// session naming the user and its DN for someone package sts has just
// signed in through ldapidp; an access key may name a DN as its parent
// with the user's name. Every use of either asks Options.Directory
// whether the name still finds that DN and which groups it has now
// (ldap.go: answers cached for DirectoryRecheck, failures for 5 s, one
// lookup per name at a time) and decides with the mappings of that
// moment, so a removed or disabled user is refused within the interval,
// and an unreachable directory refuses directory users only
// (docs/sso.md).
//
// OpenID Connect sessions (AssumeRoleWithWebIdentity and
// AssumeRoleWithClientGrants, oidc.go) record the token's subject,
// issuer, the policy names its claim (or its provider's role) gave and
// its other string claims for ${jwt:*} (package sts validated it through
// oidcidp); they are decided at each use with those policies as they are
// then. Policy variables are substituted as literal text (package
// policy), so a claim holding * or ${...} cannot widen a policy.
package iam
