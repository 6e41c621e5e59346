package engine

import "context"

// An in-place metadata update (SetObjectTags, SetObjectRetention,
// SetObjectLegalHold, SetObjectACL, SetObjectSealed: updateVersionMeta)
// has no options to carry a commit callback, so a caller gives one the
// way net/http/httptrace gives a request its hooks: in the context of
// that one call. It is called with the updated version once the update
// is committed, still under the key's lock, so calls for one key come
// in commit order with PutOptions.Committed and DeleteOptions.Committed;
// it must not block (the S3 layer queues the request's event there).

type updateCommittedKey struct{}

// WithUpdateCommitted returns ctx carrying fn for the in-place metadata
// update it is passed to.
func WithUpdateCommitted(ctx context.Context, fn func(ObjectInfo)) context.Context {
	return context.WithValue(ctx, updateCommittedKey{}, fn)
}

// UpdateCommitted calls ctx's hook, if any, with oi: the engine calls
// it under the key's lock once an in-place update is committed (another
// implementation of the S3 layer's store, a test's, calls it the same).
func UpdateCommitted(ctx context.Context, oi ObjectInfo) {
	if fn, ok := ctx.Value(updateCommittedKey{}).(func(ObjectInfo)); ok && fn != nil {
		fn(oi)
	}
}
