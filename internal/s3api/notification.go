package s3api

// Bucket event notifications (?notification on a bucket), and the
// events of successful mutating requests.
//
//   - PutBucketNotificationConfiguration validates the document as S3
//     does (notify.ParseConfig: event names with wildcards, prefix and
//     suffix filters, overlapping rules, destinations that no target
//     of Config.Notify has are refused with InvalidArgument "Unable to
//     validate the following destination configurations"), and stores
//     its canonical form in the bucket record
//     (engine.BucketConfigNotification), consensus-backed on a cluster.
//     An empty document removes it.
//   - GetBucketNotificationConfiguration answers it with S3's
//     namespace, an empty NotificationConfiguration when none is set.
//   - A request that changed an object (PutObject, PostObject,
//     CopyObject, CompleteMultipartUpload, DeleteObject, each key of
//     DeleteObjects, object tagging, retention and legal hold) notes
//     its event (q.notify); just before the answer's first byte the
//     events the bucket's rules match are queued durably on this node
//     (Notifier.Publish returns once they are synced), so an answered
//     request's event survives a kill -9. A write that makes a new
//     version (PutObject, PostObject, CopyObject, CompleteMultipart-
//     Upload) or removes one (DeleteObject, each key of DeleteObjects:
//     the object, a version or a delete marker removed, a marker made)
//     is enqueued earlier, by the engine's Committed callback under the
//     key's lock (commitHook, deleteCommitHook), so a key's events are
//     queued in commit order; the answer still waits for their sync.
//     Tagging, retention and legal-hold changes are enqueued the same
//     way, by the engine's WithUpdateCommitted hook (updateCommitHook).
//     A queue that refuses a record (full) is logged by the notifier
//     and the answer goes on: the request itself has been done.
//
// Access: s3:PutBucketNotification and s3:GetBucketNotification, the
// bucket owner's by default.

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/shardstore/shardstore/internal/access"
	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/notify"
)

// Notifier queues bucket events for their targets (package notify's
// Hub).
type Notifier interface {
	// Has reports whether a target key ("<ID>:<kind>") exists.
	Has(target string) bool
	// Publish queues ev durably for each target c's rules match.
	Publish(ev notify.Event, c *notify.Config) error
	// Enqueue places ev in those queues after what was enqueued before
	// it, at once; wait returns Publish's result once it is synced.
	Enqueue(ev notify.Event, c *notify.Config) (wait func() error)
}

// bucketNotification is bi's parsed notification configuration, nil
// when it has none; cached by bucket and text.
func (s *Server) bucketNotification(bi engine.BucketInfo) *notify.Config {
	if bi.Notification == "" {
		return nil
	}
	return s.notifications.get(bi.Name+"\x00"+bi.Notification, func() *notify.Config {
		c, err := notify.ParseConfig([]byte(bi.Notification), nil)
		if err != nil {
			return nil
		}
		return c
	})
}

func handlePutBucketNotificationConfiguration(q *request) error {
	if _, err := q.bucketAccess(q.bucket, access.BucketAdmin); err != nil {
		return err
	}
	body, err := q.readConfigBody(false)
	if err != nil {
		return err
	}
	known := func(string) bool { return false }
	if n := q.s.cfg.Notify; n != nil {
		known = n.Has
	}
	c, err := notify.ParseConfig(body, known)
	if err != nil {
		return notifyConfigError(err)
	}
	doc := ""
	if len(c.Rules) > 0 {
		doc = string(c.Marshal(""))
	}
	if err := q.s.cfg.Store.SetBucketConfig(q.ctx, q.bucket, engine.BucketConfigNotification, doc); err != nil {
		return err
	}
	q.writeEmpty(http.StatusOK)
	return nil
}

func handleGetBucketNotificationConfiguration(q *request) error {
	bi, err := q.bucketAccess(q.bucket, access.BucketAdmin)
	if err != nil {
		return err
	}
	c := q.s.bucketNotification(bi)
	if c == nil {
		c = &notify.Config{}
	}
	q.writeXMLBytes(http.StatusOK, c.Marshal(s3NS))
	return nil
}

// notifyConfigError is S3's answer to a refused configuration.
func notifyConfigError(err error) error {
	if ce, ok := err.(*notify.ConfigError); ok { //nolint:errorlint // ParseConfig returns it unwrapped
		if ce.Code == "MalformedXML" {
			return errMalformedXML()
		}
		return errorf(ce.Code, http.StatusBadRequest, "%s", ce.Message)
	}
	return errMalformedXML()
}

// notify notes an event of this request on key of bi; it is queued
// just before the answer starts (publishEvents).
func (q *request) notify(bi engine.BucketInfo, name notify.Name, key string, size int64, etag, versionID string) {
	if q.s.cfg.Notify == nil {
		return
	}
	c := q.s.bucketNotification(bi)
	if c == nil || len(c.Match(name, key)) == 0 {
		return
	}
	region := bi.Location
	if region == "" {
		region = q.s.cfg.Region
	}
	if region == "" {
		region = "us-east-1"
	}
	ip := q.r.RemoteAddr
	if h, _, err := net.SplitHostPort(ip); err == nil {
		ip = h
	}
	q.events = append(q.events, pendingEvent{cfg: c, ev: notify.Event{Name: name, Bucket: bi.Name, Key: key,
		Size: size, ETag: strings.Trim(etag, `"`), VersionID: versionID, Time: time.Now(), Region: region,
		Principal: q.caller.AccessKey, Owner: bi.Owner, SourceIP: ip, UserAgent: q.r.UserAgent(),
		RequestID: q.id, HostID: q.s.hostID}})
	q.w.beforeAnswer = q.publishEvents
}

// pendingEvent is an event noted and not yet queued, or (wait set)
// enqueued at its write's commit and not yet synced.
type pendingEvent struct {
	cfg  *notify.Config
	ev   notify.Event
	wait func() error
}

// commitHook returns the engine's PutOptions.Committed for this
// request's write of q.key (nil when no rule of bi matches name on
// it): under the key's lock it notes the event (notifyWrite) and
// enqueues it, so the events of one key are queued in the order the
// writes were committed, whatever order their requests answer in;
// publishEvents waits for the sync before the answer. The later
// notifyWrite of the handler then does nothing.
func (q *request) commitHook(bi engine.BucketInfo, name notify.Name) func(engine.ObjectInfo) {
	if q.s.cfg.Notify == nil {
		return nil
	}
	if c := q.s.bucketNotification(bi); c == nil || len(c.Match(name, q.key)) == 0 {
		return nil
	}
	return func(oi engine.ObjectInfo) {
		n := len(q.events)
		q.notifyWrite(bi, name, oi)
		if len(q.events) > n {
			pe := &q.events[n]
			pe.wait = q.s.cfg.Notify.Enqueue(pe.ev, pe.cfg)
		}
		q.committedEvent = true
	}
}

// publishEvents queues the request's events durably; the response
// writer calls it before the answer's first byte. Several (a
// DeleteObjects) are queued in parallel, so they share syncs.
func (q *request) publishEvents(status int) {
	evs := q.events
	q.events = nil
	// Events enqueued at commit are in the queue whatever the answer
	// (the write was done): wait for their sync.
	rest := evs[:0]
	for _, pe := range evs {
		if pe.wait != nil {
			_ = pe.wait() // refusals are logged by the notifier
			continue
		}
		rest = append(rest, pe)
	}
	evs = rest
	if status >= 400 || len(evs) == 0 {
		return
	}
	if len(evs) == 1 {
		_ = q.s.cfg.Notify.Publish(evs[0].ev, evs[0].cfg) // refusals are logged by the notifier
		return
	}
	done := make(chan struct{}, len(evs))
	for _, pe := range evs {
		go func() {
			_ = q.s.cfg.Notify.Publish(pe.ev, pe.cfg)
			done <- struct{}{}
		}()
	}
	for range evs {
		<-done
	}
}

// notifyWrite notes the event of a write that made oi: its time is
// the version's, which the engine sets under the key's lock, so the
// records' eventTime and sequencer follow the order the writes of one
// key took effect in, whatever order their events were queued in.
func (q *request) notifyWrite(bi engine.BucketInfo, name notify.Name, oi engine.ObjectInfo) {
	if q.committedEvent {
		return // noted and enqueued at the commit (commitHook)
	}
	n := len(q.events)
	q.notify(bi, name, q.key, oi.Size, oi.ETag, oi.VersionID)
	if len(q.events) > n && !oi.ModTime.IsZero() {
		q.events[n].ev.Time = oi.ModTime
	}
}

// deleteCommitHook returns the engine's DeleteOptions.Committed for a
// delete of key (asked: the versionId the request named) and whether it
// ran: under the key's lock, as the delete commits, it notes the
// delete's event (notifyDelete) and enqueues it, so a key's write and
// delete events are queued in the order they took effect, whatever
// order their requests answer in; publishEvents waits for the sync
// before the answer. A store that never calls it leaves *ran false and
// the handler notes the event after the call, as before. nil when no
// rule of bi can match a delete of key.
func (q *request) deleteCommitHook(bi engine.BucketInfo, key, asked string) (hook func(engine.DeleteResult), ran *bool) {
	ran = new(bool)
	if q.s.cfg.Notify == nil {
		return nil, ran
	}
	c := q.s.bucketNotification(bi)
	if c == nil || (len(c.Match(notify.ObjectRemovedDelete, key)) == 0 && len(c.Match(notify.ObjectRemovedDeleteMarker, key)) == 0) {
		return nil, ran
	}
	return func(res engine.DeleteResult) {
		n := len(q.events)
		q.notifyDelete(bi, key, asked, res)
		if len(q.events) > n {
			pe := &q.events[n]
			pe.wait = q.s.cfg.Notify.Enqueue(pe.ev, pe.cfg)
		}
		*ran = true
	}, ran
}

// updateCommitHook returns the context for an in-place metadata update
// of q.key (tagging, retention, legal hold) that carries the engine's
// WithUpdateCommitted hook, and whether the hook ran: under the key's
// lock, as the update commits, it notes the request's event (name) and
// enqueues it, as commitHook does for a write. Without a rule that can
// match, or with a store that never calls it, *ran stays false and the
// handler notes the event after the call.
func (q *request) updateCommitHook(bi engine.BucketInfo, name notify.Name) (ctx context.Context, ran *bool) {
	ran = new(bool)
	if q.s.cfg.Notify == nil {
		return q.ctx, ran
	}
	if c := q.s.bucketNotification(bi); c == nil || len(c.Match(name, q.key)) == 0 {
		return q.ctx, ran
	}
	return engine.WithUpdateCommitted(q.ctx, func(oi engine.ObjectInfo) {
		n := len(q.events)
		q.notify(bi, name, q.key, oi.Size, oi.ETag, oi.VersionID)
		if len(q.events) > n {
			pe := &q.events[n]
			pe.wait = q.s.cfg.Notify.Enqueue(pe.ev, pe.cfg)
		}
		*ran = true
	}), ran
}

// notifyDelete notes a delete's event: a delete marker made, or a
// version (or a marker) removed.
func (q *request) notifyDelete(bi engine.BucketInfo, key, asked string, res engine.DeleteResult) {
	name := notify.ObjectRemovedDelete
	if res.DeleteMarker && asked == "" {
		name = notify.ObjectRemovedDeleteMarker
	}
	q.notify(bi, name, key, 0, "", res.VersionID)
}

// Auditor queues audit records (package notify's Hub).
type Auditor interface {
	// HasAudit reports whether any audit target is configured.
	HasAudit() bool
	// Audit queues one record durably for every audit target.
	Audit(payload []byte, key string, t time.Time) error
}

// audit queues the request's audit record just before the answer's
// first byte (the response writer's onAnswer hook), so that, like the
// request's events, it is durable on the drives before the client can
// see the answer, and no crash loses the record of an answered request.
// So it holds what is known then: the bytes received, the answer's
// declared length as bytes sent (Content-Length; 0 for a streamed
// answer of unknown length), and the time to the answer's headers.
// A refusal is logged by the auditor.
func (s *Server) audit(q *request, status int) {
	if q.audited {
		return
	}
	q.audited = true
	ip := q.r.RemoteAddr
	if h, _, err := net.SplitHostPort(ip); err == nil {
		ip = h
	}
	var in int64
	if q.counted != nil {
		in = q.counted.n
	}
	out, err := strconv.ParseInt(q.w.Header().Get("Content-Length"), 10, 64)
	if err != nil || out < 0 {
		out = q.w.written
	}
	e := notify.AuditEntry{Time: q.start, API: q.api, Bucket: q.bucket, Object: q.key, StatusCode: status,
		BytesIn: in, BytesOut: out, Duration: time.Since(q.start), RemoteHost: ip, AccessKey: q.caller.AccessKey,
		RequestID: q.id, UserAgent: q.r.UserAgent(), Host: q.r.Host}
	key := ""
	if q.bucket != "" {
		key = q.bucket + "/" + q.key
	}
	_ = s.cfg.Audit.Audit(e.JSON(), key, q.start)
}
