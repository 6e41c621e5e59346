package policy

import "strings"

// actionScope is what an S3 action acts on.
type actionScope uint8

const (
	onBucket actionScope = iota + 1
	onObject
	onService // s3:ListAllMyBuckets and other account-level actions
	anyScope  // a wildcard that may cover several
)

// s3Actions are the S3 actions of AWS's service authorization
// reference, by lower-cased name, with what they act on. Every S3 API
// this server serves maps to one of them (see the s3api package's
// action table); the rest are accepted in policies so that documents
// written for AWS load unchanged.
var s3Actions = map[string]actionScope{}

func init() {
	for _, a := range strings.Fields(`
		AbortMultipartUpload DeleteObject DeleteObjectTagging DeleteObjectVersion
		DeleteObjectVersionTagging GetObject GetObjectAcl GetObjectAttributes
		GetObjectLegalHold GetObjectRetention GetObjectTagging GetObjectTorrent
		GetObjectVersion GetObjectVersionAcl GetObjectVersionAttributes
		GetObjectVersionForReplication GetObjectVersionTagging GetObjectVersionTorrent
		ListMultipartUploadParts PutObject PutObjectAcl PutObjectLegalHold
		PutObjectRetention PutObjectTagging PutObjectVersionAcl PutObjectVersionTagging
		RestoreObject BypassGovernanceRetention ReplicateObject ReplicateDelete ReplicateTags
		ObjectOwnerOverrideToBucketOwner InitiateReplication`) {
		s3Actions[strings.ToLower(a)] = onObject
	}
	for _, a := range strings.Fields(`
		CreateBucket DeleteBucket DeleteBucketPolicy DeleteBucketWebsite
		DeleteBucketOwnershipControls GetAccelerateConfiguration GetAnalyticsConfiguration
		GetBucketAcl GetBucketCORS GetBucketLocation GetBucketLogging GetBucketNotification
		GetBucketObjectLockConfiguration GetBucketOwnershipControls GetBucketPolicy
		GetBucketPolicyStatus GetBucketPublicAccessBlock GetBucketRequestPayment
		GetBucketTagging GetBucketVersioning GetBucketWebsite GetEncryptionConfiguration
		GetIntelligentTieringConfiguration GetInventoryConfiguration GetLifecycleConfiguration
		GetMetricsConfiguration GetReplicationConfiguration ListBucket
		ListBucketMultipartUploads ListBucketVersions PutAccelerateConfiguration
		PutAnalyticsConfiguration PutBucketAcl PutBucketCORS PutBucketLogging
		PutBucketNotification PutBucketObjectLockConfiguration PutBucketOwnershipControls
		PutBucketPolicy PutBucketPublicAccessBlock PutBucketRequestPayment PutBucketTagging
		PutBucketVersioning PutBucketWebsite PutEncryptionConfiguration
		PutIntelligentTieringConfiguration PutInventoryConfiguration PutLifecycleConfiguration
		PutMetricsConfiguration PutReplicationConfiguration`) {
		s3Actions[strings.ToLower(a)] = onBucket
	}
	for _, a := range strings.Fields(`ListAllMyBuckets GetAccountPublicAccessBlock PutAccountPublicAccessBlock
		CreateJob DescribeJob ListJobs UpdateJobPriority UpdateJobStatus`) {
		s3Actions[strings.ToLower(a)] = onService
	}
}

// adminActions are the server's administration actions, which identity
// policies (never bucket policies) may grant: "admin:CreateUser" lets a
// user add users through the admin API. The names are the ones MinIO
// users already have in their policies.
var adminActions = map[string]bool{}

func init() {
	for _, a := range strings.Fields(`
		ServerInfo Heal CreateUser DeleteUser ListUsers GetUser EnableUser DisableUser
		AddUserToGroup RemoveUserFromGroup GetGroup ListGroups EnableGroup DisableGroup
		CreatePolicy DeletePolicy GetPolicy ListUserPolicies AttachUserOrGroupPolicy
		CreateServiceAccount UpdateServiceAccount RemoveServiceAccount ListServiceAccounts
		ImportObject Decommission Rebalance`) { // ImportObject: PutObject's import path (migrate from-s3)
		adminActions[strings.ToLower(a)] = true
	}
}

// validAction reports whether a is "*", "s3:*" or an S3 action, with
// wildcards allowed in the name when at least one action matches; with
// admin set (identity policies), "admin:" actions are accepted as well.
func validAction(a string, admin bool) bool {
	if a == "*" {
		return true
	}
	svc, name, ok := strings.Cut(strings.ToLower(a), ":")
	if !ok || name == "" {
		return false
	}
	var names []string
	switch {
	case svc == "s3":
		if _, ok := s3Actions[name]; ok {
			return true
		}
		for k := range s3Actions {
			names = append(names, k)
		}
	case svc == "admin" && admin:
		if adminActions[name] {
			return true
		}
		for k := range adminActions {
			names = append(names, k)
		}
	default:
		return false
	}
	if !strings.ContainsAny(name, "*?") {
		return false
	}
	p := compilePattern(name, false)
	for _, k := range names {
		if p.match(k, nil) {
			return true
		}
	}
	return false
}

// isAdminAction reports whether a (validated) action is an admin one.
func isAdminAction(a string) bool {
	return strings.HasPrefix(strings.ToLower(a), "admin:")
}

// actionKind is what a (validated) action acts on; anyScope for wildcards.
func actionKind(a string) actionScope {
	name := strings.TrimPrefix(strings.ToLower(a), "s3:")
	if strings.ContainsAny(name, "*?") {
		return anyScope
	}
	return s3Actions[name]
}
