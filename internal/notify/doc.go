// Package notify sends bucket event notifications and audit records to
// external systems (webhooks, message brokers, databases) without losing
// one: records are queued durably on the drives before the request that
// caused them is answered, and delivered at least once, in order per
// object key, with retries while a target is down.
//
// The seam is Target (target.go): one external system. The kinds of
// target live in package notifytarget, one file each; this package knows
// none of their protocols.
package notify
