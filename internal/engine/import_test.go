package engine

import (
	"errors"
	"testing"

	"github.com/shardstore/shardstore/internal/drive"
)

// TestAdoptedVersionIDs: a UUID (a version id adopted from MinIO) is a
// version reference whose time comes from its versions-table key, while
// ids that are neither ours nor UUIDs stay invalid.
func TestAdoptedVersionIDs(t *testing.T) {
	const id = "5bfa2865-0dbe-4e67-87b6-27b05911f90e"
	ref, err := parseVersionID(id)
	if err != nil || !ref.adopted || ref.id != id || ref.time != 0 {
		t.Fatalf("parseVersionID(%q) = %+v, %v", id, ref, err)
	}
	if _, err := parseVersionID("5BFA2865-0DBE-4E67-87B6-27B05911F90E"); !errors.Is(err, ErrNoSuchVersion) {
		t.Errorf("an upper-case UUID: %v, want ErrNoSuchVersion", err)
	}
	for _, bad := range []string{"{5bfa2865-0dbe-4e67-87b6-27b05911f90e}", "not-a-version"} {
		if _, err := parseVersionID(bad); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("parseVersionID(%q): %v, want ErrInvalidArgument", bad, err)
		}
	}
	const mod = int64(1795832466804000000)
	prefix := drive.VersionPrefix("b", "k")
	ref, ok := refOfVersionKey(prefix, drive.VersionKey("b", "k", mod, id))
	if !ok || ref.adopted || ref.time != mod || ref.id != id {
		t.Fatalf("refOfVersionKey of an adopted version = %+v, %v; want time %d", ref, ok, mod)
	}
}
