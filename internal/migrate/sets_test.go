package migrate

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/shardstore/shardstore/internal/placement"
)

// writeMinIOFormats writes a format.json on each drive directory of a
// MinIO deployment of sets sets of size drives (drive i is position
// i%size of set i/size) and returns the paths.
func writeMinIOFormats(t *testing.T, sets, size int, algo string, edit func(i int, f map[string]any)) []string {
	t.Helper()
	root := t.TempDir()
	dep := "ecf5b48f-a874-4de9-834b-d916fc7aa2a3"
	ids := make([][]string, sets)
	for s := range ids {
		for range size {
			ids[s] = append(ids[s], uuid.NewString())
		}
	}
	var paths []string
	for i := range sets * size {
		p := filepath.Join(root, fmt.Sprintf("d%d", i+1))
		if err := os.MkdirAll(filepath.Join(p, minioSys), 0o755); err != nil {
			t.Fatal(err)
		}
		f := map[string]any{"version": "1", "format": "xl", "id": dep,
			"xl": map[string]any{"version": "3", "this": ids[i/size][i%size], "sets": ids, "distributionAlgo": algo}}
		if edit != nil {
			edit(i, f)
		}
		b, _ := json.Marshal(f)
		if err := os.WriteFile(filepath.Join(p, minioSys, "format.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// TestOrderDrives: the drives are ordered set by set, by MinIO's
// positions, whatever the arguments' order; layouts adoption cannot
// take are refused before anything is written, saying why.
func TestOrderDrives(t *testing.T) {
	paths := writeMinIOFormats(t, 3, 4, "SIPMOD+PARITY", nil)
	rev := make([]string, len(paths))
	for i, p := range paths {
		rev[len(paths)-1-i] = p
	}
	a := &adopter{opts: Options{Drives: rev}}
	if err := a.orderDrives(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(a.paths) != fmt.Sprint(paths) || a.sets != 3 || a.setSize != 4 || a.placer.Algorithm() != placement.MinIOSipMod {
		t.Fatalf("ordered %v (%d sets of %d, %s), want %v", a.paths, a.sets, a.setSize, a.placer.Algorithm(), paths)
	}
	if fmt.Sprint(a.setPaths(1)) != fmt.Sprint(paths[4:8]) {
		t.Fatalf("set 2: %v", a.setPaths(1))
	}
	if !strings.Contains(a.describeLayout(), "shardstore server "+strings.Join(paths, " ")) {
		t.Fatalf("no hint of MinIO's order:\n%s", a.describeLayout())
	}
	a = &adopter{opts: Options{Drives: paths}}
	if err := a.orderDrives(); err != nil || strings.Contains(a.describeLayout(), "another order") {
		t.Fatalf("arguments in MinIO's order: %v\n%s", err, a.describeLayout())
	}

	crc := writeMinIOFormats(t, 2, 2, "CRCMOD", nil)
	a = &adopter{opts: Options{Drives: crc}}
	if err := a.orderDrives(); err != nil || a.placer.Algorithm() != placement.MinIOCRCMod {
		t.Fatalf("CRCMOD deployment: %v", err)
	}

	big := writeMinIOFormats(t, 1, 17, "SIPMOD+PARITY", nil)
	dup := writeMinIOFormats(t, 2, 2, "SIPMOD", func(i int, f map[string]any) {
		if i == 3 { // claims drive 3's place
			xl := f["xl"].(map[string]any)
			xl["this"] = xl["sets"].([][]string)[1][0]
		}
	})
	other := writeMinIOFormats(t, 2, 2, "SIPMOD", func(i int, f map[string]any) {
		if i == 2 {
			f["id"] = "11111111-2222-3333-4444-555555555555"
		}
	})
	// Two pools of one deployment: each has its own sets.
	pool2 := writeMinIOFormats(t, 1, 4, "SIPMOD+PARITY", nil)
	pools := append(append([]string{}, paths...), pool2...)
	for name, c := range map[string]struct {
		drives []string
		want   string
	}{
		"a node's share":       {paths[:8], "the endpoints the MinIO servers had"},
		"one drive missing":    {paths[1:], "give every drive of it"},
		"sets of 17":           {big, "shardstore forms sets of 1..16"},
		"two drives one place": {dup, "both claim position 1 of set 2"},
		"another deployment":   {other, "deployment"},
		"none":                 {nil, "no drives"},
		"two pools":            {pools, "one argument per pool as MinIO had them"},
		"cluster endpoints":    {[]string{"http://n1:9000/d1", "http://n2:9000/d1"}, "the endpoints the MinIO servers had"},
		"not MinIO":            {[]string{t.TempDir()}, "is it a MinIO drive"},
	} {
		a := &adopter{opts: Options{Drives: c.drives}}
		err := a.orderDrives()
		if err == nil || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a refusal saying %q", name, err, c.want)
		}
	}
}
