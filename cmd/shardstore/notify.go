package main

import (
	"context"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/lifecycle"
	"github.com/shardstore/shardstore/internal/notify"
	"github.com/shardstore/shardstore/internal/notifytarget"
)

// notifyKinds are the kinds of notification target, the webhook's TLS
// trusting the system roots and the certificates directory's CAs.
func notifyKinds(roots func() *x509.CertPool) []notify.Kind {
	kinds := notifytarget.All()
	for i, k := range kinds {
		if k.Name == "webhook" {
			kinds[i] = notifytarget.Webhook(roots)
		}
	}
	return kinds
}

// openNotify opens the node's notification targets: their queues live
// under .shardstore.sys/notify on the same drives as the access log
// spool (one per filesystem, up to parity+1), and the targets come
// from the --notify-config file (notify.FromConfigFile) and the
// MINIO_NOTIFY_* / SHARDSTORE_NOTIFY_* and MINIO_AUDIT_* variables
// (notify.FromEnv), a variable's target replacing the file's of the same
// ID. A target whose system is down does not stop the server: its
// records wait in its queue. shared is the drives' sync group: a queue
// directory on a filesystem two or more drives share rides their
// syncfs instead of an fdatasync of its own (drive.SharedSync.Guest).
func openNotify(environ []string, configFile string, roots []string, parity int, shared *drive.SharedSync, kinds []notify.Kind, retryMax time.Duration, logger *slog.Logger) (*notify.Hub, error) {
	specs, err := notifySpecs(environ, configFile, kinds, logger)
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, d := range accessLogDirs(roots, parity) {
		// accessLogDirs names .shardstore.sys/accesslog; the queues sit beside it.
		dirs = append(dirs, filepath.Join(filepath.Dir(d), "notify"))
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("notifications: none of this node's drives %v is formatted", roots)
	}
	hub, err := notify.NewHub(notify.HubConfig{Dirs: dirs, Logger: logger,
		Queue: notify.QueueConfig{RetryMax: retryMax, SyncWith: shared.Guest}})
	if err != nil {
		return nil, err
	}
	for _, s := range specs {
		kind, ok := notify.KindNamed(kinds, s.Kind)
		if !ok {
			continue
		}
		if err := hub.Add(s.ID, kind, s.Settings, s.Audit, "env"); err != nil {
			_ = hub.Close()
			return nil, err
		}
		what := "bucket events"
		if s.Audit {
			what = "audit records"
		}
		logger.Info("notification target configured", "arn", notify.ARN(s.ID, s.Kind), "receives", what)
	}
	return hub, nil
}

// notifySpecs are the targets of the configuration file and of the
// environment; a target the environment names replaces the file's.
func notifySpecs(environ []string, configFile string, kinds []notify.Kind, logger *slog.Logger) ([]notify.Spec, error) {
	var specs []notify.Spec
	if configFile != "" {
		data, err := os.ReadFile(configFile)
		if err != nil {
			return nil, fmt.Errorf("notify configuration: %w", err)
		}
		fromFile, ignored, err := notify.FromConfigFile(data, kinds)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", configFile, err)
		}
		for _, what := range ignored {
			logger.Warn("notification configuration file: not read by this server", "file", configFile, "what", what)
		}
		specs = fromFile
	}
	fromEnv, unknown, err := notify.FromEnv(environ, kinds)
	if err != nil {
		return nil, err
	}
	for _, name := range unknown {
		logger.Warn("notification setting of a target kind this server does not have is ignored", "variable", name)
	}
	for _, e := range fromEnv {
		key := notify.TargetKey(e.ID, e.Kind, e.Audit)
		replaced := false
		for i, f := range specs {
			if notify.TargetKey(f.ID, f.Kind, f.Audit) == key {
				specs[i], replaced = e, true
			}
		}
		if !replaced {
			specs = append(specs, e)
		}
	}
	return specs, nil
}

// publishExpiry queues the bucket event of a lifecycle removal
// (s3:LifecycleExpiration:Delete or :DeleteMarkerCreated) for the
// targets the bucket's rules name; a refusal is logged by the hub.
func publishExpiry(h *notify.Hub, r lifecycle.Removal, region string) {
	if r.Bucket.Notification == "" {
		return
	}
	c, err := notify.ParseConfig([]byte(r.Bucket.Notification), nil)
	if err != nil {
		return
	}
	name := notify.LifecycleExpirationDelete
	if r.Marker {
		name = notify.LifecycleExpirationMarker
	}
	if r.Bucket.Location != "" {
		region = r.Bucket.Location
	}
	if region == "" {
		region = "us-east-1"
	}
	_ = h.Publish(notify.Event{Name: name, Bucket: r.Bucket.Name, Key: r.Key, Size: r.Size, ETag: r.ETag,
		VersionID: r.VersionID, Time: time.Now(), Region: region, Owner: r.Bucket.Owner,
		UserAgent: "Internal: [ILM-Expiry]"}, c)
}

// notifyAdmin serves the admin API's notify calls: the hub's targets,
// and the run-time ones kept in the config document.
type notifyAdmin struct {
	hub   *notify.Hub
	store *notify.TargetStore
}

func (n notifyAdmin) Targets() []notify.TargetInfo { return n.hub.Targets() }

func (n notifyAdmin) Put(ctx context.Context, s notify.Spec) error { return n.store.Put(ctx, s) }

func (n notifyAdmin) Delete(ctx context.Context, key string) error {
	for _, t := range n.hub.Targets() {
		if t.Key == key && t.Source == "env" {
			return fmt.Errorf("%w: %s (remove its variables instead)", notify.ErrExists, key)
		}
	}
	return n.store.Delete(ctx, key)
}

func (n notifyAdmin) Test(ctx context.Context, key string) error { return n.hub.Test(ctx, key) }

// notifyKeyMaterial is what the run-time targets' secrets are sealed
// under: SHARDSTORE_IAM_KEY when set, else the root credentials (as
// the identity store's; derived with a salt of its own).
func notifyKeyMaterial(iamKey, rootUser, rootSecret string) []byte {
	if iamKey != "" {
		return []byte("key:" + iamKey)
	}
	return []byte("root:" + rootUser + ":" + rootSecret)
}
