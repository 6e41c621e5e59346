package notify

import (
	"fmt"
	"sort"
	"strings"
)

// Spec is one target configured by environment, file or admin call:
// its kind, ID ("_" for the ID-less default target, as MinIO names
// it), settings by Field name, and whether it receives audit records
// instead of bucket events.
type Spec struct {
	Kind     string            `json:"kind"`
	ID       string            `json:"id"`
	Settings map[string]string `json:"settings"`
	Audit    bool              `json:"audit,omitempty"`
}

// DefaultID is the ID of a target configured without one
// (MINIO_NOTIFY_WEBHOOK_ENDPOINT=...), as in MinIO.
const DefaultID = "_"

// FromEnv reads targets from environment entries ("NAME=value"):
//
//	MINIO_NOTIFY_<KIND>_ENABLE[_<ID>]=on
//	MINIO_NOTIFY_<KIND>_<FIELD>[_<ID>]=value
//	MINIO_AUDIT_<KIND>_ENABLE[_<ID>]=on   (and _<FIELD>...)
//
// and the same with SHARDSTORE_ instead of MINIO_ (which wins where both
// are set). KIND and FIELD are a kind's Name and Fields upper-cased, so
// every kind is configured the same way. A target counts only when
// ENABLE is on; one enabled without a required field, or with a
// setting its kind does not have, is an error naming the variable
// (never its value). Variables of kinds this server does not have are
// returned in unknown, for a warning.
func FromEnv(environ []string, kinds []Kind) (specs []Spec, unknown []string, err error) {
	type tkey struct {
		kind, id string
		audit    bool
	}
	settings := map[tkey]map[string]string{}
	enabled := map[tkey]string{}
	prio := map[string]int{} // variable (without vendor prefix) -> precedence seen
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		var rest string
		p := 0
		switch {
		case strings.HasPrefix(name, "SHARDSTORE_"):
			rest, p = strings.TrimPrefix(name, "SHARDSTORE_"), 2
		case strings.HasPrefix(name, "MINIO_"):
			rest, p = strings.TrimPrefix(name, "MINIO_"), 1
		default:
			continue
		}
		audit := false
		switch {
		case strings.HasPrefix(rest, "NOTIFY_"):
			rest = strings.TrimPrefix(rest, "NOTIFY_")
		case strings.HasPrefix(rest, "AUDIT_"):
			rest, audit = strings.TrimPrefix(rest, "AUDIT_"), true
		default:
			continue
		}
		kind, field, id, known := splitVar(rest, kinds)
		if !known {
			unknown = append(unknown, name)
			continue
		}
		if field == "" {
			unknown = append(unknown, name) // a setting this kind does not have
			continue
		}
		if id != DefaultID && !validName(id) {
			return nil, nil, fmt.Errorf("notify: %s: the target ID must be 1-64 letters, digits, '-' or '_'", name)
		}
		if prio[rest+fmt.Sprint(audit)] > p {
			continue
		}
		prio[rest+fmt.Sprint(audit)] = p
		k := tkey{kind.Name, id, audit}
		if field == "enable" {
			enabled[k] = name + "=" + val
			continue
		}
		if settings[k] == nil {
			settings[k] = map[string]string{}
		}
		settings[k][field] = val
	}
	keys := make([]tkey, 0, len(enabled))
	for k := range enabled {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.audit != b.audit {
			return !a.audit
		}
		if a.kind != b.kind {
			return a.kind < b.kind
		}
		return a.id < b.id
	})
	for _, k := range keys {
		name, val, _ := strings.Cut(enabled[k], "=")
		on, err := parseSwitch(val)
		if err != nil {
			return nil, nil, fmt.Errorf("notify: %s: %w", name, err)
		}
		if !on {
			continue
		}
		kind := kindNamed(kinds, k.kind)
		s := settings[k]
		if s == nil {
			s = map[string]string{}
		}
		for _, f := range kind.Fields {
			if f.Required && strings.TrimSpace(s[f.Name]) == "" {
				return nil, nil, fmt.Errorf("notify: target %s of kind %s is enabled without %s", k.id, k.kind, f.Name)
			}
		}
		specs = append(specs, Spec{Kind: k.kind, ID: k.id, Settings: s, Audit: k.audit})
	}
	sort.Strings(unknown)
	return specs, unknown, nil
}

// splitVar splits "<KIND>_<FIELD>[_<ID>]" (already without the vendor
// and NOTIFY_/AUDIT_ prefixes). The longest field name that fits wins,
// so AUTH_TOKEN is not read as AUTH with ID TOKEN.
func splitVar(rest string, kinds []Kind) (kind Kind, field, id string, known bool) {
	for _, k := range kinds {
		up := strings.ToUpper(k.ConfigName()) + "_"
		if !strings.HasPrefix(rest, up) {
			if up = strings.ToUpper(k.Name) + "_"; !strings.HasPrefix(rest, up) {
				continue
			}
		}
		tail := strings.TrimPrefix(rest, up)
		best := ""
		fields := append([]string{"enable"}, fieldNames(k)...)
		for _, f := range QueueFields() {
			fields = append(fields, f.Name)
		}
		for _, f := range fields {
			F := strings.ToUpper(f)
			if (tail == F || strings.HasPrefix(tail, F+"_")) && len(f) > len(best) {
				best = f
			}
		}
		if best == "" {
			return k, "", "", true
		}
		id = DefaultID
		if len(tail) > len(best) {
			id = tail[len(best)+1:]
		}
		return k, best, id, true
	}
	return Kind{}, "", "", false
}

func fieldNames(k Kind) []string {
	out := make([]string, len(k.Fields))
	for i, f := range k.Fields {
		out[i] = f.Name
	}
	return out
}

func kindNamed(kinds []Kind, name string) Kind {
	for _, k := range kinds {
		if k.Name == name || k.ConfigName() == name {
			return k
		}
	}
	return Kind{}
}

// parseSwitch reads MinIO's on/off values.
func parseSwitch(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "on", "true", "yes", "1", "enable", "enabled":
		return true, nil
	case "off", "false", "no", "0", "disable", "disabled", "":
		return false, nil
	}
	return false, fmt.Errorf("ENABLE must be on or off")
}

// KindNamed finds a kind by name; ok is false when there is none.
func KindNamed(kinds []Kind, name string) (Kind, bool) {
	k := kindNamed(kinds, name)
	return k, k.Name != ""
}
