package kms

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultVaultTimeout bounds one Vault operation (login and one retry
// included) when VaultConfig.Timeout is zero.
const DefaultVaultTimeout = 10 * time.Second

// VaultConfig says how to reach a Vault (or OpenBao) transit engine.
// Token, AppRoleID and AppRoleSecret are secrets: String, GoString and
// Format redact them, but a VaultConfig in an unexported field of another
// value is printed by %v without those methods, so keep it out of values
// that are logged.
type VaultConfig struct {
	Endpoint   string // https://vault.example:8200 (a path prefix is kept)
	Mount      string // transit engine mount; default "transit"
	DefaultKey string // key for requests that name none
	Namespace  string // X-Vault-Namespace, when set

	// Either Token, or AppRoleID and AppRoleSecret (logged in at
	// auth/{AppRoleMount}/login, default mount "approle").
	Token         string
	AppRoleID     string
	AppRoleSecret string
	AppRoleMount  string

	TLS     *tls.Config   // nil: the system roots
	Timeout time.Duration // per operation; 0: DefaultVaultTimeout
}

// String shows the configuration with its secrets redacted.
func (c VaultConfig) String() string {
	roots := "system roots"
	if c.TLS != nil {
		roots = "custom"
	}
	return fmt.Sprintf("kms.VaultConfig{Endpoint: %q, Mount: %q, DefaultKey: %q, Namespace: %q, Token: %s, AppRoleID: %s, AppRoleSecret: %s, AppRoleMount: %q, TLS: %s, Timeout: %v}",
		c.Endpoint, c.Mount, c.DefaultKey, c.Namespace,
		redacted(c.Token), redacted(c.AppRoleID), redacted(c.AppRoleSecret), c.AppRoleMount,
		roots, c.Timeout)
}

// GoString is String.
func (c VaultConfig) GoString() string { return c.String() }

// Format prints String for every verb.
func (c VaultConfig) Format(f fmt.State, verb rune) { formatRedacted(f, verb, c.String()) }

func redacted(s string) string {
	if s == "" {
		return `""`
	}
	return "<redacted>"
}

// LoadVaultConfig reads a Vault configuration from the environment; the
// SHARDSTORE_ spelling wins over MinIO's where both exist:
//
//	SHARDSTORE_KMS_VAULT_ENDPOINT        MINIO_KMS_VAULT_ENDPOINT
//	SHARDSTORE_KMS_VAULT_KEY_NAME        MINIO_KMS_VAULT_KEY_NAME
//	SHARDSTORE_KMS_VAULT_MOUNT           (default transit)
//	SHARDSTORE_KMS_VAULT_NAMESPACE       MINIO_KMS_VAULT_NAMESPACE
//	SHARDSTORE_KMS_VAULT_TOKEN
//	SHARDSTORE_KMS_VAULT_APPROLE_ID      MINIO_KMS_VAULT_APPROLE_ID
//	SHARDSTORE_KMS_VAULT_APPROLE_SECRET  MINIO_KMS_VAULT_APPROLE_SECRET
//	SHARDSTORE_KMS_VAULT_APPROLE_MOUNT   (default approle)
//
// ok is false when no endpoint is set (and then err is non-nil only if
// other Vault variables are set, which is a mistake worth stopping on).
// TLS is left nil (system roots) for the caller to set.
func LoadVaultConfig(env func(string) string) (cfg VaultConfig, ok bool, err error) {
	get := func(name string) string {
		_, v := firstSet(env, "SHARDSTORE_KMS_VAULT_"+name, "MINIO_KMS_VAULT_"+name)
		return v
	}
	cfg = VaultConfig{
		Endpoint:      get("ENDPOINT"),
		DefaultKey:    get("KEY_NAME"),
		Namespace:     get("NAMESPACE"),
		AppRoleID:     get("APPROLE_ID"),
		AppRoleSecret: get("APPROLE_SECRET"),
	}
	_, cfg.Mount = firstSet(env, "SHARDSTORE_KMS_VAULT_MOUNT")
	_, cfg.Token = firstSet(env, "SHARDSTORE_KMS_VAULT_TOKEN")
	_, cfg.AppRoleMount = firstSet(env, "SHARDSTORE_KMS_VAULT_APPROLE_MOUNT")
	if cfg.Endpoint == "" {
		if cfg != (VaultConfig{}) {
			return VaultConfig{}, false, errors.New("kms: SHARDSTORE_KMS_VAULT_* (or MINIO_KMS_VAULT_*) variables are set but no SHARDSTORE_KMS_VAULT_ENDPOINT")
		}
		return VaultConfig{}, false, nil
	}
	cfg = cfg.withDefaults()
	if err := cfg.check(); err != nil {
		return cfg, true, err
	}
	return cfg, true, nil
}

func (c VaultConfig) withDefaults() VaultConfig {
	if c.Mount == "" {
		c.Mount = "transit"
	}
	if c.AppRoleMount == "" {
		c.AppRoleMount = "approle"
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultVaultTimeout
	}
	return c
}

// check validates a configuration with defaults applied; its errors name
// settings, never their secret values.
func (c VaultConfig) check() error {
	u, err := url.Parse(c.Endpoint)
	switch {
	case err != nil:
		return errors.New("kms: vault endpoint is not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return errors.New("kms: vault endpoint must start with https:// (or http://)")
	case u.Host == "":
		return errors.New("kms: vault endpoint has no host")
	case u.User != nil:
		return errors.New("kms: vault endpoint must not hold credentials; set the token or AppRole instead")
	case u.RawQuery != "" || u.Fragment != "":
		return errors.New("kms: vault endpoint must not have a query or fragment")
	}
	for _, seg := range strings.Split(c.Mount, "/") {
		if keyNameProblem(seg) != "" {
			return fmt.Errorf("kms: vault mount %s: segments must be letters, digits, '-', '_', '.'", quoteName(c.Mount))
		}
	}
	if p := keyNameProblem(c.AppRoleMount); p != "" {
		return fmt.Errorf("kms: vault AppRole mount %s: %s", quoteName(c.AppRoleMount), p)
	}
	if err := CheckKeyName(c.DefaultKey); err != nil {
		return fmt.Errorf("kms: vault default key (SHARDSTORE_KMS_VAULT_KEY_NAME): %w", err)
	}
	if strings.ContainsAny(c.Namespace, "\r\n\x00") {
		return errors.New("kms: vault namespace contains a control character")
	}
	approle := c.AppRoleID != "" || c.AppRoleSecret != ""
	switch {
	case approle && (c.AppRoleID == "" || c.AppRoleSecret == ""):
		return errors.New("kms: vault AppRole needs both a role id and a secret id")
	case approle && c.Token != "":
		return errors.New("kms: vault: set a token or an AppRole, not both")
	case !approle && c.Token == "":
		return errors.New("kms: vault needs a token or an AppRole role id and secret id")
	}
	for _, s := range []string{c.Token, c.AppRoleID, c.AppRoleSecret} {
		if strings.ContainsAny(s, "\r\n\x00") {
			return errors.New("kms: vault credentials contain a control character")
		}
	}
	return nil
}

// Vault is a KMS backed by the transit secrets engine of a Vault or
// OpenBao server, spoken over its HTTP API. Key material stays in Vault:
// GenerateKey's ciphertext is Vault's "vault:vN:…" string as bytes.
//
// Context is not sent: transit binds context only to derived keys, and
// keys created by CreateKey (or by operators for MinIO) are not derived.
// Callers that need a ciphertext tied to one object bind that themselves.
type Vault struct {
	endpoint   string // no trailing slash
	mount      string
	defaultKey string
	namespace  string
	timeout    time.Duration
	client     *http.Client
	auth       *vaultAuth
}

var _ KMS = (*Vault)(nil)

// NewVault checks cfg and makes a client. It does not contact the server:
// the first call logs in (AppRole) and Status checks reachability.
func NewVault(cfg VaultConfig) (*Vault, error) {
	cfg = cfg.withDefaults()
	if err := cfg.check(); err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if cfg.TLS != nil {
		tr.TLSClientConfig = cfg.TLS.Clone()
	}
	v := &Vault{
		endpoint:   strings.TrimRight(cfg.Endpoint, "/"),
		mount:      cfg.Mount,
		defaultKey: cfg.DefaultKey,
		namespace:  cfg.Namespace,
		timeout:    cfg.Timeout,
		auth: &vaultAuth{
			token:    secretString(cfg.Token),
			roleID:   secretString(cfg.AppRoleID),
			secretID: secretString(cfg.AppRoleSecret),
			approle:  cfg.AppRoleID != "",
			mount:    cfg.AppRoleMount,
		},
	}
	v.client = &http.Client{
		Transport: tr,
		// The token travels in X-Vault-Token, which net/http forwards on
		// every redirect, so only same-host redirects without a downgrade
		// to http are followed.
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			first := via[0].URL
			if req.URL.Host != first.Host || (first.Scheme == "https" && req.URL.Scheme != "https") || len(via) >= 5 {
				return http.ErrUseLastResponse
			}
			return nil
		},
	}
	return v, nil
}

// Kind is "vault".
func (v *Vault) Kind() string { return "vault" }

// DefaultKey is the configured key name.
func (v *Vault) DefaultKey() string { return v.defaultKey }

// String names the endpoint, mount and default key, never the token.
func (v *Vault) String() string {
	return fmt.Sprintf("kms.Vault{endpoint: %q, mount: %q, default: %q}", v.endpoint, v.mount, v.defaultKey)
}

// GoString is String.
func (v *Vault) GoString() string { return v.String() }

// Format prints String for every verb.
func (v *Vault) Format(f fmt.State, verb rune) { formatRedacted(f, verb, v.String()) }

// vaultAuth holds the token: a static one, or one from AppRole login that
// is replaced before its lease runs out.
type vaultAuth struct {
	approle          bool
	roleID, secretID func() string // see secretBytes: fmt cannot print these
	mount            string

	mu        sync.Mutex
	token     func() string // nil: none
	refreshAt time.Time     // log in again from then on; zero: never
	gen       uint64        // bumped on each login, so a stale 403 does not discard a fresh token
}

// secretString hides s from fmt (see secretBytes); "" gives nil.
func secretString(s string) func() string {
	if s == "" {
		return nil
	}
	return func() string { return s }
}

// current returns a token to use, logging in first when there is none or
// its lease is two thirds gone. Holding mu while logging in makes
// concurrent callers wait for one login instead of each doing their own.
func (a *vaultAuth) current(ctx context.Context, v *Vault) (string, uint64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.approle {
		if a.token == nil {
			return "", 0, nil
		}
		return a.token(), 0, nil
	}
	if a.token != nil && (a.refreshAt.IsZero() || time.Now().Before(a.refreshAt)) {
		return a.token(), a.gen, nil
	}
	var out struct {
		Auth *struct {
			ClientToken   string `json:"client_token"`
			LeaseDuration int64  `json:"lease_duration"`
		} `json:"auth"`
	}
	body := map[string]string{"role_id": a.roleID(), "secret_id": a.secretID()}
	if err := v.send(ctx, "login", http.MethodPost, "/v1/auth/"+a.mount+"/login", "", body, &out); err != nil {
		return "", 0, err
	}
	if out.Auth == nil || out.Auth.ClientToken == "" {
		return "", 0, fmt.Errorf("kms: vault login at %s: the answer holds no token", v.endpoint)
	}
	a.token = secretString(out.Auth.ClientToken)
	a.refreshAt = time.Time{}
	if d := out.Auth.LeaseDuration; d > 0 {
		a.refreshAt = time.Now().Add(time.Duration(d) * time.Second * 2 / 3)
	}
	a.gen++
	return a.token(), a.gen, nil
}

// invalidate drops the token of generation gen, so the next call logs in.
func (a *vaultAuth) invalidate(gen uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.gen == gen {
		a.token = nil
	}
}

// call runs one operation under the configured timeout: it gets a token,
// sends the request and, when an AppRole token is refused (403: revoked,
// or expired early), logs in again and retries once.
func (v *Vault) call(ctx context.Context, op, method, path string, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, v.timeout)
	defer cancel()
	for attempt := 0; ; attempt++ {
		token, gen, err := v.auth.current(ctx, v)
		if err != nil {
			return err
		}
		err = v.send(ctx, op, method, path, token, in, out)
		var se *vaultStatusError
		if attempt == 0 && v.auth.approle && errors.As(err, &se) && se.status == http.StatusForbidden {
			v.auth.invalidate(gen)
			continue
		}
		return err
	}
}

// vaultStatusError is an answer other than 2xx, already mapped onto the
// package's errors (kind) where one fits.
type vaultStatusError struct {
	op, endpoint string
	status       int
	msg          string
	kind         error // ErrKeyNotFound, ErrDecrypt, ErrUnavailable or nil
}

func (e *vaultStatusError) Error() string {
	s := fmt.Sprintf("vault %s at %s: HTTP %d", e.op, e.endpoint, e.status)
	if e.msg != "" {
		s += ": " + e.msg
	}
	if e.kind != nil {
		return e.kind.Error() + ": " + s
	}
	return "kms: " + s
}

func (e *vaultStatusError) Unwrap() error { return e.kind }

// send makes one HTTP request and decodes a 2xx answer's JSON into out.
func (v *Vault) send(ctx context.Context, op, method, path, token string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("kms: vault %s: %w", op, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, v.endpoint+path, body)
	if err != nil {
		return fmt.Errorf("kms: vault %s: %w", op, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-Vault-Request", "true")
	if token != "" {
		req.Header.Set("X-Vault-Token", token)
	}
	if v.namespace != "" {
		req.Header.Set("X-Vault-Namespace", v.namespace)
	}
	resp, err := v.client.Do(req)
	if err != nil {
		// url.Error repeats method and URL (which hold no secret); its
		// cause is what matters: refused, timed out, TLS.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("%w: vault %s at %s: %w", ErrUnavailable, op, v.endpoint, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%w: vault %s at %s: reading the answer: %w", ErrUnavailable, op, v.endpoint, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return v.statusError(op, resp.StatusCode, data)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		// A proxy's HTML page or a truncated answer: the server is not
		// answering as Vault.
		return fmt.Errorf("%w: vault %s at %s: answer is not Vault's JSON", ErrUnavailable, op, v.endpoint)
	}
	return nil
}

// statusError maps a non-2xx answer: 5xx and 429 are the server's
// trouble (ErrUnavailable); 404 and "key not found" messages are
// ErrKeyNotFound; a 400 to decrypt or rewrap is a ciphertext that does
// not unseal (ErrDecrypt), except a version retired by
// min_decryption_version, which is a key version that is gone.
func (v *Vault) statusError(op string, status int, body []byte) error {
	var parsed struct {
		Errors []string `json:"errors"`
	}
	_ = json.Unmarshal(body, &parsed)
	msg := strings.Join(parsed.Errors, "; ")
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	e := &vaultStatusError{op: op, endpoint: v.endpoint, status: status, msg: msg}
	lower := strings.ToLower(msg)
	switch {
	case status >= 500 || status == http.StatusTooManyRequests:
		e.kind = ErrUnavailable
	case op == "login":
		// A refused login is a configuration error, not a missing key.
	case status == http.StatusNotFound,
		strings.Contains(lower, "encryption key not found"),
		strings.Contains(lower, "no existing key"),
		strings.Contains(lower, "disallowed by policy"):
		e.kind = ErrKeyNotFound
	case status == http.StatusBadRequest && (op == "decrypt" || op == "rewrap"):
		// "cipher: message authentication failed", "invalid ciphertext…",
		// "…version is too new", "could not decode base64".
		e.kind = ErrDecrypt
	}
	return e
}

// keyPath is /v1/{mount}/{action}/{key} for a checked key name.
func (v *Vault) keyPath(action, keyID string) (string, error) {
	if p := keyNameProblem(keyID); p != "" {
		// A name that cannot exist does not: no request is sent.
		return "", fmt.Errorf("%w: invalid key name %s: %s", ErrKeyNotFound, quoteName(keyID), p)
	}
	return "/v1/" + v.mount + "/" + action + "/" + url.PathEscape(keyID), nil
}

// GenerateKey asks transit for a data key (datakey/plaintext). c is not
// sent (see Vault).
func (v *Vault) GenerateKey(ctx context.Context, keyID string, _ Context) (DataKey, error) {
	path, err := v.keyPath("datakey/plaintext", keyID)
	if err != nil {
		return DataKey{}, err
	}
	var out struct {
		Data struct {
			Plaintext  string `json:"plaintext"`
			Ciphertext string `json:"ciphertext"`
		} `json:"data"`
	}
	if err := v.call(ctx, "generate", http.MethodPost, path, map[string]any{"bits": 256}, &out); err != nil {
		return DataKey{}, err
	}
	plain, err := base64.StdEncoding.DecodeString(out.Data.Plaintext)
	if err != nil || len(plain) != dataKeyLen || !strings.HasPrefix(out.Data.Ciphertext, "vault:v") {
		clear(plain)
		return DataKey{}, fmt.Errorf("kms: vault generate at %s: answer holds no 32-byte data key and ciphertext", v.endpoint)
	}
	return DataKey{KeyID: keyID, Plaintext: plain, Ciphertext: []byte(out.Data.Ciphertext)}, nil
}

// checkVaultCiphertext refuses, without a round trip, what cannot be a
// transit ciphertext.
// latestVersion is the newest version of a transit key.
func (v *Vault) latestVersion(ctx context.Context, keyID string) (int, error) {
	path, err := v.keyPath("keys", keyID)
	if err != nil {
		return 0, err
	}
	var out struct {
		Data struct {
			LatestVersion int `json:"latest_version"`
		} `json:"data"`
	}
	if err := v.call(ctx, "rewrap", http.MethodGet, path, nil, &out); err != nil {
		return 0, err
	}
	return out.Data.LatestVersion, nil
}

// vaultCiphertextVersion is N of a "vault:vN:..." ciphertext (0 if none).
func vaultCiphertextVersion(ct []byte) int {
	rest, ok := bytes.CutPrefix(ct, []byte("vault:v"))
	if !ok {
		return 0
	}
	digits, _, ok := bytes.Cut(rest, []byte(":"))
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(string(digits))
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

func checkVaultCiphertext(ct []byte) error {
	if len(ct) > 64<<10 || !bytes.HasPrefix(ct, []byte("vault:v")) {
		return fmt.Errorf("%w: not a vault transit ciphertext", ErrDecrypt)
	}
	for _, c := range ct {
		if c < 0x21 || c > 0x7e {
			return fmt.Errorf("%w: not a vault transit ciphertext", ErrDecrypt)
		}
	}
	return nil
}

// Decrypt asks transit to unseal ciphertext. c is not sent (see Vault).
func (v *Vault) Decrypt(ctx context.Context, keyID string, ciphertext []byte, _ Context) ([]byte, error) {
	path, err := v.keyPath("decrypt", keyID)
	if err != nil {
		return nil, err
	}
	if err := checkVaultCiphertext(ciphertext); err != nil {
		return nil, err
	}
	var out struct {
		Data struct {
			Plaintext string `json:"plaintext"`
		} `json:"data"`
	}
	if err := v.call(ctx, "decrypt", http.MethodPost, path, map[string]string{"ciphertext": string(ciphertext)}, &out); err != nil {
		return nil, err
	}
	plain, err := base64.StdEncoding.DecodeString(out.Data.Plaintext)
	if err != nil || len(plain) != dataKeyLen {
		// Something transit sealed, but not one of our data keys.
		clear(plain)
		return nil, fmt.Errorf("%w: vault key %s: ciphertext does not hold a 32-byte data key", ErrDecrypt, quoteName(keyID))
	}
	return plain, nil
}

// Rewrap asks transit to reseal ciphertext under keyID's newest version.
func (v *Vault) Rewrap(ctx context.Context, keyID string, ciphertext []byte, _ Context) ([]byte, error) {
	path, err := v.keyPath("rewrap", keyID)
	if err != nil {
		return nil, err
	}
	if err := checkVaultCiphertext(ciphertext); err != nil {
		return nil, err
	}
	// Transit rewraps even a ciphertext of the newest version (a fresh
	// nonce); leave those as they are, so the caller sees what changed.
	if latest, err := v.latestVersion(ctx, keyID); err != nil {
		return nil, err
	} else if vaultCiphertextVersion(ciphertext) == latest {
		// Still check that it opens: a damaged ciphertext is refused,
		// as a rewrap would refuse it.
		plain, err := v.Decrypt(ctx, keyID, ciphertext, nil)
		if err != nil {
			return nil, err
		}
		clear(plain)
		return ciphertext, nil
	}
	var out struct {
		Data struct {
			Ciphertext string `json:"ciphertext"`
		} `json:"data"`
	}
	if err := v.call(ctx, "rewrap", http.MethodPost, path, map[string]string{"ciphertext": string(ciphertext)}, &out); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(out.Data.Ciphertext, "vault:v") {
		return nil, fmt.Errorf("kms: vault rewrap at %s: answer holds no ciphertext", v.endpoint)
	}
	return []byte(out.Data.Ciphertext), nil
}

// CreateKey creates an aes256-gcm96 transit key. Transit's create is an
// upsert that answers success for an existing key, hence the read first;
// two CreateKey calls racing on one name may both succeed.
func (v *Vault) CreateKey(ctx context.Context, keyID string) error {
	if err := CheckKeyName(keyID); err != nil {
		return err
	}
	path, err := v.keyPath("keys", keyID)
	if err != nil {
		return err
	}
	switch err := v.call(ctx, "create", http.MethodGet, path, nil, nil); {
	case err == nil:
		return fmt.Errorf("%w: vault key %s", ErrKeyExists, quoteName(keyID))
	case !errors.Is(err, ErrKeyNotFound):
		return err
	}
	return v.call(ctx, "create", http.MethodPost, path, map[string]string{"type": "aes256-gcm96"}, nil)
}

// Status reads the default key: that checks reachability, the token or
// AppRole, the policy and that the key exists and suits us.
func (v *Vault) Status(ctx context.Context) Status {
	st := Status{Kind: v.Kind(), Endpoint: v.endpoint, DefaultKey: v.defaultKey}
	start := time.Now()
	path, err := v.keyPath("keys", v.defaultKey)
	var out struct {
		Data struct {
			Derived            bool `json:"derived"`
			SupportsEncryption bool `json:"supports_encryption"`
			SupportsDecryption bool `json:"supports_decryption"`
		} `json:"data"`
	}
	if err == nil {
		err = v.call(ctx, "status", http.MethodGet, path, nil, &out)
	}
	st.Latency = time.Since(start)
	switch {
	case err != nil:
		st.Error = err.Error()
	case out.Data.Derived:
		st.Error = "vault key " + quoteName(v.defaultKey) + " is derived (needs a context on every call); shardstore needs a non-derived aes256-gcm96 key"
	case !out.Data.SupportsEncryption || !out.Data.SupportsDecryption:
		st.Error = "vault key " + quoteName(v.defaultKey) + " does not support encryption and decryption"
	default:
		st.OK = true
	}
	return st
}
