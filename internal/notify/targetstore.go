package notify

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
)

// DocumentName is the config document that keeps the targets added at
// run time (`shardstore admin notify add`): on the drives' quorum, or in
// the cluster's Raft group, so every node has them.
const DocumentName = "notify"

// Backend reads and writes config documents (the engine's ReadConfig
// and WriteConfig: versioned, compare-and-swap).
type Backend interface {
	ReadConfig(ctx context.Context, name string) ([]byte, uint64, error)
	WriteConfig(ctx context.Context, name string, prev uint64, data []byte) (uint64, error)
}

// Errors of a TargetStore; the admin API maps them to statuses.
var (
	ErrInvalid  = errors.New("invalid target")
	ErrExists   = errors.New("target configured by the environment")
	ErrNotFound = errors.New("no such target")
)

// storedDoc is the document: settings in clear, secret settings sealed.
type storedDoc struct {
	Version int            `json:"version"`
	Targets []storedTarget `json:"targets"`
}

type storedTarget struct {
	Kind     string            `json:"kind"`
	ID       string            `json:"id"`
	Audit    bool              `json:"audit,omitempty"`
	Settings map[string]string `json:"settings,omitempty"`
	Sealed   map[string]string `json:"sealed,omitempty"`
}

// TargetStore keeps the targets added at run time in the config
// document and applies them to the hub on every node (Reload). Secret
// settings (Field.Secret) are sealed with AES-256-GCM under a key
// derived (HKDF-SHA256) from key material the server gives (the
// identity store's), bound to the target and field.
type TargetStore struct {
	backend  Backend
	hub      *Hub
	kinds    []Kind
	aead     cipher.AEAD
	log      *slog.Logger
	noDoc    error // the backend's "never written"
	conflict error // the backend's "changed since read"

	mu sync.Mutex
	// applied is what Reload last applied, by key, to change only
	// what changed.
	applied map[string]string
}

// NewTargetStore returns a store over backend applying targets to hub.
// noDoc and conflict are the backend's errors for a document never
// written and one changed since it was read.
func NewTargetStore(backend Backend, hub *Hub, kinds []Kind, material []byte, noDoc, conflict error, log *slog.Logger) (*TargetStore, error) {
	k, err := hkdf.Key(sha256.New, material, []byte("shardstore notify targets v1"), "secrets", 32)
	if err != nil {
		return nil, fmt.Errorf("notify: derive key: %w", err)
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, fmt.Errorf("notify: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("notify: %w", err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &TargetStore{backend: backend, hub: hub, kinds: kinds, aead: aead, log: log, noDoc: noDoc, conflict: conflict,
		applied: map[string]string{}}, nil
}

func (s *TargetStore) read(ctx context.Context) (storedDoc, uint64, error) {
	var doc storedDoc
	data, seq, err := s.backend.ReadConfig(ctx, DocumentName)
	if err != nil {
		if s.noDoc != nil && errors.Is(err, s.noDoc) {
			return doc, 0, nil
		}
		return doc, 0, fmt.Errorf("notify: read targets: %w", err)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return doc, 0, fmt.Errorf("notify: targets document: %w", err)
	}
	return doc, seq, nil
}

func sealContext(t storedTarget, field string) []byte {
	return []byte(TargetKey(t.ID, t.Kind, t.Audit) + "\x00" + field)
}

// Put adds (or replaces) a run-time target. It is validated by making
// it (kind.New) before it is stored; a target the environment
// configures cannot be replaced (ErrExists).
func (s *TargetStore) Put(ctx context.Context, spec Spec) error {
	kind, ok := KindNamed(s.kinds, spec.Kind)
	if !ok {
		return fmt.Errorf("%w: unknown kind %q", ErrInvalid, clip(spec.Kind))
	}
	if !validName(spec.ID) {
		return fmt.Errorf("%w: the ID must be 1-64 letters, digits, '-' or '_'", ErrInvalid)
	}
	key := TargetKey(spec.ID, spec.Kind, spec.Audit)
	for _, t := range s.hub.Targets() {
		if t.Key == key && t.Source == "env" {
			return fmt.Errorf("%w: %s", ErrExists, key)
		}
	}
	fields := map[string]Field{}
	for _, f := range append(QueueFields(), kind.Fields...) {
		fields[f.Name] = f
	}
	if _, err := parallelSetting(spec.Settings["parallel"]); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	st := storedTarget{Kind: spec.Kind, ID: spec.ID, Audit: spec.Audit, Settings: map[string]string{}, Sealed: map[string]string{}}
	for k, v := range spec.Settings {
		f, ok := fields[k]
		if !ok {
			return fmt.Errorf("%w: kind %s has no setting %q", ErrInvalid, kind.Name, clip(k))
		}
		if f.Secret {
			nonce := make([]byte, s.aead.NonceSize())
			if _, err := rand.Read(nonce); err != nil {
				return fmt.Errorf("notify: %w", err)
			}
			st.Sealed[k] = base64.RawStdEncoding.EncodeToString(s.aead.Seal(nonce, nonce, []byte(v), sealContext(st, k)))
		} else {
			st.Settings[k] = v
		}
	}
	for _, f := range kind.Fields {
		if f.Required && strings.TrimSpace(spec.Settings[f.Name]) == "" {
			return fmt.Errorf("%w: %s is required", ErrInvalid, f.Name)
		}
	}
	// Made once to validate; the hub makes its own on Reload.
	t, err := kind.New(spec.ID, spec.Settings)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	_ = t.Close()
	return s.update(ctx, func(doc *storedDoc) error {
		out := doc.Targets[:0]
		for _, o := range doc.Targets {
			if TargetKey(o.ID, o.Kind, o.Audit) != key {
				out = append(out, o)
			}
		}
		doc.Targets = append(out, st)
		return nil
	})
}

// Delete removes a run-time target; ErrNotFound when there is none
// (an environment's target is removed by changing the environment).
func (s *TargetStore) Delete(ctx context.Context, key string) error {
	return s.update(ctx, func(doc *storedDoc) error {
		out := doc.Targets[:0]
		found := false
		for _, o := range doc.Targets {
			if TargetKey(o.ID, o.Kind, o.Audit) == key {
				found = true
				continue
			}
			out = append(out, o)
		}
		if !found {
			return fmt.Errorf("%w: %s", ErrNotFound, key)
		}
		doc.Targets = out
		return nil
	})
}

// update changes the document (retrying a concurrent change) and
// applies it here.
func (s *TargetStore) update(ctx context.Context, change func(*storedDoc) error) error {
	for range 5 {
		doc, seq, err := s.read(ctx)
		if err != nil {
			return err
		}
		doc.Version = 1
		if err := change(&doc); err != nil {
			return err
		}
		data, err := json.Marshal(doc)
		if err != nil {
			return fmt.Errorf("notify: %w", err)
		}
		if _, err := s.backend.WriteConfig(ctx, DocumentName, seq, data); err != nil {
			if s.conflict != nil && errors.Is(err, s.conflict) {
				continue
			}
			return fmt.Errorf("notify: write targets: %w", err)
		}
		return s.Reload(ctx)
	}
	return errors.New("notify: targets document kept changing; try again")
}

// Reload reads the document and makes the hub's run-time targets match
// it: new ones added, changed ones replaced, removed ones removed
// (their queues deleted). Environment targets are left alone.
func (s *TargetStore) Reload(ctx context.Context) error {
	doc, _, err := s.read(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	want := map[string]storedTarget{}
	for _, t := range doc.Targets {
		want[TargetKey(t.ID, t.Kind, t.Audit)] = t
	}
	env := map[string]bool{}
	for _, t := range s.hub.Targets() {
		if t.Source == "env" {
			env[t.Key] = true
		}
	}
	var errs []error
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		t := want[key]
		if env[key] {
			continue
		}
		fp, _ := json.Marshal(t)
		if s.applied[key] == string(fp) {
			continue
		}
		kind, ok := KindNamed(s.kinds, t.Kind)
		if !ok {
			errs = append(errs, fmt.Errorf("notify: target %s: kind %s not in this server", key, t.Kind))
			continue
		}
		settings := map[string]string{}
		for k, v := range t.Settings {
			settings[k] = v
		}
		for k, v := range t.Sealed {
			raw, err := base64.RawStdEncoding.DecodeString(v)
			n := s.aead.NonceSize()
			if err != nil || len(raw) < n {
				errs = append(errs, fmt.Errorf("notify: target %s: sealed %s is damaged", key, k))
				continue
			}
			plain, err := s.aead.Open(nil, raw[:n], raw[n:], sealContext(t, k))
			if err != nil {
				errs = append(errs, fmt.Errorf("notify: target %s: sealed %s does not open (another key?)", key, k))
				continue
			}
			settings[k] = string(plain)
		}
		if err := s.hub.Add(t.ID, kind, settings, t.Audit, "admin"); err != nil {
			errs = append(errs, err)
			continue
		}
		s.applied[key] = string(fp)
		s.log.Info("notification target configured", "arn", ARN(t.ID, t.Kind), "audit", t.Audit, "source", "admin")
	}
	for key := range s.applied {
		if _, ok := want[key]; !ok {
			if _, err := s.hub.Remove(key); err != nil {
				errs = append(errs, err)
			}
			delete(s.applied, key)
			s.log.Info("notification target removed", "target", key)
		}
	}
	return errors.Join(errs...)
}
