package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/shardstore/shardstore/internal/iam"
)

// Identities is the identity store as the admin API uses it
// (iam.Store implements it).
type Identities interface {
	AddUser(ctx context.Context, actor, name, secret string) (string, error)
	SetUserStatus(ctx context.Context, actor, name string, enabled bool) error
	RemoveUser(ctx context.Context, actor, name string) error
	Users() []iam.UserInfo
	User(name string) (iam.UserInfo, error)
	UpdateGroupMembers(ctx context.Context, actor, group string, add, del []string) error
	SetGroupStatus(ctx context.Context, actor, group string, enabled bool) error
	RemoveGroup(ctx context.Context, actor, group string) error
	Groups() []iam.GroupInfo
	Group(name string) (iam.GroupInfo, error)
	PutPolicy(ctx context.Context, actor, name, doc string) error
	RemovePolicy(ctx context.Context, actor, name string) error
	Policies() []iam.PolicyInfo
	Policy(name string) (iam.PolicyInfo, error)
	AttachPolicies(ctx context.Context, actor string, policies []string, user, group string, attach bool) error
	CreateAccessKey(ctx context.Context, actor string, req iam.NewAccessKey) (iam.Credentials, error)
	AccessKeys(parent string) []iam.AccessKeyInfo
	AccessKeyParent(ak string) (string, error)
	RemoveAccessKey(ctx context.Context, actor, ak string) error
	SetAccessKeyStatus(ctx context.Context, actor, ak string, enabled bool) error
	Audit() []iam.AuditRecord
	Record(rec iam.AuditRecord)
}

// Bodies of the identity calls.
type (
	// NewUser is the body of POST users.
	NewUser struct {
		Name      string `json:"name"`
		SecretKey string `json:"secretKey,omitempty"`
	}
	// NewUserReply answers POST users: the secret, shown once.
	NewUserReply struct {
		Name      string `json:"name"`
		SecretKey string `json:"secretKey"`
	}
	// Members is the body of POST groups/NAME/members.
	Members struct {
		Add    []string `json:"add,omitempty"`
		Remove []string `json:"remove,omitempty"`
	}
	// Attachment is the body of POST policies/attach and policies/detach.
	Attachment struct {
		Policies []string `json:"policies"`
		User     string   `json:"user,omitempty"`
		Group    string   `json:"group,omitempty"`
	}
)

// maxBody bounds a request body (a policy document is at most 6 KiB).
const maxBody = 64 << 10

// readJSON decodes a request body. It reads the body to its end, which
// is when a signed body's hash is checked.
func readJSON(r *http.Request, v any) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return fmt.Errorf("%w: request body: %v", iam.ErrInvalid, err)
	}
	if len(body) > maxBody {
		return fmt.Errorf("%w: request body is larger than %d bytes", iam.ErrInvalid, maxBody)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: request body: %v", iam.ErrInvalid, err)
	}
	return nil
}

// writeStoreError answers an identity store error with its status.
func writeStoreError(w http.ResponseWriter, err error) {
	var pe *iam.PolicyError
	switch {
	case errors.As(err, &pe):
		writeJSONError(w, http.StatusBadRequest, "MalformedPolicy: "+pe.Message)
	case errors.Is(err, iam.ErrNotFound):
		writeJSONError(w, http.StatusNotFound, err.Error())
	case errors.Is(err, iam.ErrExists), errors.Is(err, iam.ErrConflict):
		writeJSONError(w, http.StatusConflict, err.Error())
	case errors.Is(err, iam.ErrInvalid):
		writeJSONError(w, http.StatusBadRequest, err.Error())
	default:
		writeJSONError(w, http.StatusServiceUnavailable, err.Error())
	}
}

// done answers a change: 204, or the error.
func done(w http.ResponseWriter, err error) {
	if err != nil {
		writeStoreError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// routeIdentities routes the identity calls:
//
//	GET users | POST users | GET, DELETE users/NAME | POST users/NAME/enable|disable
//	GET groups | GET, DELETE groups/NAME | POST groups/NAME/members[?remove] | POST groups/NAME/enable|disable
//	GET policies | GET, PUT, DELETE policies/NAME | POST policies/attach|detach
//	GET accesskeys[?user=U] | POST accesskeys | DELETE accesskeys/AK | POST accesskeys/AK/enable|disable
//	GET audit
//	GET idp/ldap/policies | POST idp/ldap/policies/attach|detach (ldap.go)
func (h *Handler) routeIdentities(method, path string, r *http.Request) (*call, int, string, bool) {
	parts := strings.Split(path, "/")
	switch parts[0] {
	case "users", "groups", "policies", "accesskeys", "audit", "idp":
	default:
		return nil, 0, "", false
	}
	if h.ids == nil {
		return nil, http.StatusNotImplemented, "this server has no identity store", true
	}
	for i := range parts {
		p, err := url.PathUnescape(parts[i])
		if err != nil {
			return nil, http.StatusBadRequest, "bad path segment " + parts[i], true
		}
		parts[i] = p
	}
	c := h.identityCall(method, parts, r)
	if c == nil {
		return nil, http.StatusNotFound, fmt.Sprintf("unknown admin call %s %s%s", method, Prefix, path), true
	}
	return c, 0, "", true
}

func (h *Handler) identityCall(method string, p []string, r *http.Request) *call {
	ids := h.ids
	is := func(m string, n int) bool { return method == m && len(p) == n }
	ctx := r.Context()
	switch p[0] {
	case "audit":
		if is(http.MethodGet, 1) {
			return &call{action: "admin:ServerInfo", serve: func(w http.ResponseWriter, _ *http.Request, _ Actor) {
				writeJSON(w, http.StatusOK, ids.Audit())
			}}
		}
	case "users":
		switch {
		case is(http.MethodGet, 1):
			return &call{action: "admin:ListUsers", serve: func(w http.ResponseWriter, _ *http.Request, _ Actor) {
				writeJSON(w, http.StatusOK, ids.Users())
			}}
		case is(http.MethodPost, 1):
			return &call{action: "admin:CreateUser", serve: func(w http.ResponseWriter, r *http.Request, a Actor) {
				var req NewUser
				if err := readJSON(r, &req); err != nil {
					writeStoreError(w, err)
					return
				}
				secret, err := ids.AddUser(ctx, a.Name, req.Name, req.SecretKey)
				if err != nil {
					writeStoreError(w, err)
					return
				}
				writeJSON(w, http.StatusCreated, NewUserReply{Name: req.Name, SecretKey: secret})
			}}
		case is(http.MethodGet, 2):
			return &call{action: "admin:GetUser", serve: func(w http.ResponseWriter, _ *http.Request, _ Actor) {
				info, err := ids.User(p[1])
				if err != nil {
					writeStoreError(w, err)
					return
				}
				writeJSON(w, http.StatusOK, info)
			}}
		case is(http.MethodDelete, 2):
			return &call{action: "admin:DeleteUser", serve: func(w http.ResponseWriter, _ *http.Request, a Actor) {
				done(w, ids.RemoveUser(ctx, a.Name, p[1]))
			}}
		case is(http.MethodPost, 3) && (p[2] == "enable" || p[2] == "disable"):
			action := map[string]string{"enable": "admin:EnableUser", "disable": "admin:DisableUser"}[p[2]]
			return &call{action: action, serve: func(w http.ResponseWriter, _ *http.Request, a Actor) {
				done(w, ids.SetUserStatus(ctx, a.Name, p[1], p[2] == "enable"))
			}}
		}
	case "groups":
		switch {
		case is(http.MethodGet, 1):
			return &call{action: "admin:ListGroups", serve: func(w http.ResponseWriter, _ *http.Request, _ Actor) {
				writeJSON(w, http.StatusOK, ids.Groups())
			}}
		case is(http.MethodGet, 2):
			return &call{action: "admin:GetGroup", serve: func(w http.ResponseWriter, _ *http.Request, _ Actor) {
				info, err := ids.Group(p[1])
				if err != nil {
					writeStoreError(w, err)
					return
				}
				writeJSON(w, http.StatusOK, info)
			}}
		case is(http.MethodDelete, 2):
			return &call{action: "admin:RemoveUserFromGroup", serve: func(w http.ResponseWriter, _ *http.Request, a Actor) {
				done(w, ids.RemoveGroup(ctx, a.Name, p[1]))
			}}
		case is(http.MethodPost, 3) && p[2] == "members":
			// Adding and removing members are separate actions; the query
			// (signed) says which this call is, so it is authorized
			// before its body is read.
			removing := r.URL.Query().Has("remove")
			action := "admin:AddUserToGroup"
			if removing {
				action = "admin:RemoveUserFromGroup"
			}
			return &call{action: action, serve: func(w http.ResponseWriter, r *http.Request, a Actor) {
				var m Members
				if err := readJSON(r, &m); err != nil {
					writeStoreError(w, err)
					return
				}
				if removing && len(m.Add) > 0 || !removing && len(m.Remove) > 0 {
					writeJSONError(w, http.StatusBadRequest, "add members with POST groups/NAME/members, remove them with POST groups/NAME/members?remove")
					return
				}
				done(w, ids.UpdateGroupMembers(ctx, a.Name, p[1], m.Add, m.Remove))
			}}
		case is(http.MethodPost, 3) && (p[2] == "enable" || p[2] == "disable"):
			action := map[string]string{"enable": "admin:EnableGroup", "disable": "admin:DisableGroup"}[p[2]]
			return &call{action: action, serve: func(w http.ResponseWriter, _ *http.Request, a Actor) {
				done(w, ids.SetGroupStatus(ctx, a.Name, p[1], p[2] == "enable"))
			}}
		}
	case "policies":
		switch {
		case is(http.MethodGet, 1):
			return &call{action: "admin:GetPolicy", serve: func(w http.ResponseWriter, _ *http.Request, _ Actor) {
				writeJSON(w, http.StatusOK, ids.Policies())
			}}
		case is(http.MethodPost, 2) && (p[1] == "attach" || p[1] == "detach"):
			return &call{action: "admin:AttachUserOrGroupPolicy", serve: func(w http.ResponseWriter, r *http.Request, a Actor) {
				var at Attachment
				if err := readJSON(r, &at); err != nil {
					writeStoreError(w, err)
					return
				}
				done(w, ids.AttachPolicies(ctx, a.Name, at.Policies, at.User, at.Group, p[1] == "attach"))
			}}
		case is(http.MethodGet, 2):
			return &call{action: "admin:GetPolicy", serve: func(w http.ResponseWriter, _ *http.Request, _ Actor) {
				info, err := ids.Policy(p[1])
				if err != nil {
					writeStoreError(w, err)
					return
				}
				writeJSON(w, http.StatusOK, info)
			}}
		case is(http.MethodPut, 2):
			return &call{action: "admin:CreatePolicy", serve: func(w http.ResponseWriter, r *http.Request, a Actor) {
				doc, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
				if err != nil || len(doc) > maxBody {
					writeJSONError(w, http.StatusBadRequest, "MalformedPolicy: the policy document is too large or unreadable")
					return
				}
				// Replacing an attached policy changes what its users may do,
				// which is what attaching policies is.
				if info, err := ids.Policy(p[1]); err == nil && len(info.Users)+len(info.Groups) > 0 && !a.can("admin:AttachUserOrGroupPolicy") {
					writeJSONError(w, http.StatusForbidden, "access denied: replacing a policy that is attached needs admin:AttachUserOrGroupPolicy")
					return
				}
				done(w, ids.PutPolicy(ctx, a.Name, p[1], string(doc)))
			}}
		case is(http.MethodDelete, 2):
			return &call{action: "admin:DeletePolicy", serve: func(w http.ResponseWriter, _ *http.Request, a Actor) {
				done(w, ids.RemovePolicy(ctx, a.Name, p[1]))
			}}
		}
	case "accesskeys":
		return h.accessKeyCall(method, p, r)
	case "idp":
		return h.idpCall(method, p, r) // ldap.go
	}
	return nil
}

// accessKeyCall routes the access key calls, which a user may also make
// for its own keys.
func (h *Handler) accessKeyCall(method string, p []string, r *http.Request) *call {
	ids := h.ids
	ctx := r.Context()
	ownKey := func(ak string) func(a Actor) bool {
		return func(a Actor) bool {
			parent, err := ids.AccessKeyParent(ak)
			return err == nil && parent == a.User
		}
	}
	switch {
	case method == http.MethodGet && len(p) == 1:
		user := r.URL.Query().Get("user")
		return &call{action: "admin:ListServiceAccounts",
			self: func(a Actor) bool { return user == a.User },
			serve: func(w http.ResponseWriter, _ *http.Request, _ Actor) {
				writeJSON(w, http.StatusOK, ids.AccessKeys(user))
			}}
	case method == http.MethodPost && len(p) == 1:
		// Whether the key is the caller's own depends on the body, which
		// is read once authentication has put the verified body in place.
		var req iam.NewAccessKey
		load := sync.OnceValue(func() error { return readJSON(r, &req) })
		return &call{action: "admin:CreateServiceAccount",
			self: func(a Actor) bool {
				return load() == nil && (req.Parent == "" || req.Parent == a.User)
			},
			serve: func(w http.ResponseWriter, _ *http.Request, a Actor) {
				if bodyErr := load(); bodyErr != nil {
					writeStoreError(w, bodyErr)
					return
				}
				if req.Parent == "" {
					req.Parent = a.User
				}
				if req.Parent == "" {
					writeJSONError(w, http.StatusBadRequest, "name the parent user of the access key")
					return
				}
				// A key for another user carries that user's permissions:
				// only who could grant them anyway may create it.
				if req.Parent != a.User && !a.can("admin:AttachUserOrGroupPolicy") {
					writeJSONError(w, http.StatusForbidden, "access denied: an access key for another user needs admin:AttachUserOrGroupPolicy besides admin:CreateServiceAccount")
					return
				}
				creds, err := ids.CreateAccessKey(ctx, a.Name, req)
				if err != nil {
					writeStoreError(w, err)
					return
				}
				writeJSON(w, http.StatusCreated, creds)
			}}
	case method == http.MethodDelete && len(p) == 2:
		return &call{action: "admin:RemoveServiceAccount", self: ownKey(p[1]),
			serve: func(w http.ResponseWriter, _ *http.Request, a Actor) {
				done(w, ids.RemoveAccessKey(ctx, a.Name, p[1]))
			}}
	case method == http.MethodPost && len(p) == 3 && (p[2] == "enable" || p[2] == "disable"):
		// Not self-service: a user must not re-enable a key an
		// administrator disabled.
		return &call{action: "admin:UpdateServiceAccount",
			serve: func(w http.ResponseWriter, _ *http.Request, a Actor) {
				done(w, ids.SetAccessKeyStatus(ctx, a.Name, p[1], p[2] == "enable"))
			}}
	}
	return nil
}
