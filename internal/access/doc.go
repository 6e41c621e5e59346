// Package access is shardstore's one access decision: Decide(Request)
// Decision answers whether a caller may perform an action on a resource.
// It is pure: the Request carries everything the decision reads (the
// caller, the operation and its S3 action, the bucket's and object's
// owners and decoded ACL grants, the bucket policy, the public access
// block, the object ownership setting and the request's condition keys),
// and Decide reads no HTTP request and no storage. Package s3api builds
// the Request from the HTTP request and the bucket's and object's records
// (internal/s3api: q.allows, q.accessRequest); the admin API builds one
// for admin actions (cmd/shardstore: adminDecide). Parsing stays with
// them: ACL documents and headers, policy JSON (package policy compiles
// it), condition keys.
//
// # The order of the decision
//
// S3 documents its evaluation as: an explicit Deny anywhere refuses; the
// public access block limits what public grants count for; an Allow in
// an identity policy (of the bucket owner's account) or in the bucket
// policy grants; otherwise the ACLs decide, unless the bucket's object
// ownership is BucketOwnerEnforced; and owners have full control of what
// they own. Decide follows that order in stages, for each kind of
// caller:
//
//  1. Root (the server's root user) is allowed everything; no policy
//     denies it.
//  2. Account actions (CreateBucket, ListAllMyBuckets: AccountAction)
//     and admin actions (AdminAction, evaluated on AdminResource) are
//     decided by an identity's policies alone, except that a user manages
//     its own access keys with its own key where no policy speaks
//     (OwnAccessKeys: self-service; a Deny still refuses). A users-file user acts in
//     an account of its own (it creates buckets, and ListBuckets shows it
//     the ones it owns); anonymous callers have no account; only
//     identities have admin permissions.
//  3. An identity of the identity store (Kind Identity) is decided as
//     AWS decides an IAM principal (identityDecision): a Deny in its
//     Permissions or in the bucket policy refuses; in its own account's
//     bucket an Allow in its policies grants, and an Allow in the bucket
//     policy or an ACL grant to everyone (AllUsers, AuthenticatedUsers)
//     grants within the bounds of its access key's or session's own
//     policy (Permissions.Bounded); its account's ownership gives it
//     nothing its policies do not. In another owner's bucket its policies
//     must allow and so must the resource: the bucket policy, or the ACLs
//     as they answer its account (aclDecision for the account: a grant to
//     the account's canonical id or to everyone, or the account owning
//     the object), as AWS lets an account delegate an ACL grant it was
//     given to its users. A write that sets an
//     ACL (SetsACL) needs s3:PutObjectAcl too. IdentityPolicies is the
//     identity store's Permissions: the union of a user's and its groups'
//     policies, narrowed by bounds that must all allow. Under
//     RestrictPublicBuckets a public bucket policy grants nothing to an
//     identity of another account.
//  4. Anyone else (Anonymous, User, Service) meets the bucket policy
//     first: a Deny refuses (except that the bucket owner may always read
//     and change the policy itself, so a policy cannot lock its owner
//     out), an Allow grants, except that RestrictPublicBuckets confines a
//     public policy's grants to service principals and the bucket owner's
//     account (policyGrantCounts). A Service caller (ServiceCaller: server
//     access logging writing a log object) is named only by "*" or its
//     own Service principal, owns nothing and has no account actions; of
//     the ACL grants only AllUsers' and, for the logging service,
//     LogDelivery's reach it.
//  5. Then ownership and ACLs (aclDecision): with BucketOwnerEnforced the
//     bucket owner owns everything and no grant counts; otherwise owners
//     keep every permission on what they own, and a grant of the
//     Operation's ACL permission allows (IgnorePublicAcls drops grants to
//     AllUsers and AuthenticatedUsers). A bucket's READ lists it and its
//     WRITE creates, overwrites and deletes objects in it; an object's
//     READ reads it (a bucket's grants never open an object, and owning
//     the bucket does not either); READ_ACP and WRITE_ACP read and change
//     an ACL. CannedGrants is S3's canned ACL table.
//  6. S3 maps no ACL permission to tagging and object lock: without a
//     policy, tags belong to the object's owner, retentions and legal
//     holds to the object's owner and the bucket's, and only the bucket's
//     owner may bypass GOVERNANCE retention. When such an action is the
//     second half of a write that sets it (PartOfWrite: PutObject with
//     tags or a lock), only a policy can refuse it: where none speaks,
//     the write's own permission is enough.
//
// BlockPublicAcls and BlockPublicPolicy act when an ACL or a policy is
// stored, not on requests: s3api asks PublicAccessBlock.RefusesACL and
// RefusesPolicy then.
//
// shardstore's simplifications, documented in the README: the root user
// is an administrator allowed everything; a bucket policy applies to
// every object in the bucket, whoever wrote it; an ACL that leaves its
// owner out does not lock them out; an object with no recorded owner
// (written anonymously into a public-read-write bucket) belongs to the
// bucket's owner; GetBucketLocation needs only bucket READ.
//
// # Where a new rule goes
//
//   - A new S3 API picks an Operation for its handler's access check
//     (s3api's q.bucketAccess or q.objectAccess) and gets its action name
//     in s3api's q.action. An Operation is added only where S3's
//     permission model differs from every existing one: add it to
//     Operation, to OnObject if it acts on an object, and to aclDecision.
//   - A rule about who may do what goes into Decide's stage above, with
//     table rows in decide_test.go. Decide's Reason says which stage
//     decided.
//   - A new fact a rule needs is a field of Request or Resource, filled by
//     s3api's q.accessRequest or q.bucketResource / q.objectResource; a
//     new condition key goes into s3api's q.conditionKeys.
package access
