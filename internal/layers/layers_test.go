package layers

import (
	"os/exec"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/shardstore/shardstore/"

// floors is every package's floor (see the package doc). Test-only
// packages (suites and harnesses) sit just above what they exercise.
var floors = map[string]int{
	"internal/bitrot":      0,
	"internal/certs":       0,
	"internal/ldapidp":     0,
	"internal/oidcidp":     0,
	"internal/cli":         0,
	"internal/cpustat":     0,
	"internal/durable":     0,
	"internal/ellipses":    0,
	"internal/erasure":     0,
	"internal/kms":         0,
	"internal/sse":         0,
	"internal/layers":      0,
	"internal/logring":     0,
	"internal/md5lanes":    0,
	"internal/meta":        0,
	"internal/minioformat": 0,
	"internal/minioexport": 0,
	"internal/objectlock":  0,
	"internal/wallclock":   0,
	"internal/placement":   0,
	"internal/policy":      0,
	"internal/release":     0,
	"internal/testinstall": 0,

	"internal/access":                   1,
	"internal/accesslog":                1,
	"internal/notify":                   1,
	"internal/kms/baotest":              1,
	"internal/minioformat/miniofixture": 1,
	"internal/sealing":                  1,
	"internal/ldapidp/slapdtest":        1,
	"internal/oidcidp/oidctest":         1,
	"internal/quorum":                   1,
	"internal/peerauth":                 1,
	"internal/hashing":                  1,
	"internal/drive":                    1,

	"internal/background":              2,
	"internal/notifytarget":            2,
	"internal/notifytarget/targettest": 3,
	"internal/drive/drivetest":         2,
	"internal/drivefault":              2,
	"internal/driverpc":                2,
	"internal/dlock":                   2,
	"internal/consensus":               2,
	"internal/cluster":                 2,

	"internal/engine": 3,

	"internal/auth":            4,
	"internal/lifecycle":       4,
	"internal/s3api/storetest": 4,

	"internal/iam":     5,
	"internal/migrate": 5,

	"internal/sts":     6,
	"internal/s3api":   6,
	"internal/admin":   6,
	"internal/metrics": 6,

	"internal/console": 7,
	"internal/bench":   7,

	"cmd/shardstore": 8,
}

// TestImportsGoDown: every package of the module has a floor, and imports
// only packages on lower floors.
func TestImportsGoDown(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \",\"}}", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var problems []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, " ")
		pkg = strings.TrimPrefix(pkg, module)
		if strings.HasPrefix(pkg, "test/") || strings.Contains(pkg, "/gen") {
			continue // end-to-end tests and generators are outside the layers
		}
		floor, ok := floors[pkg]
		if !ok {
			problems = append(problems, pkg+" has no floor: add it to floors (internal/layers) where it belongs")
			continue
		}
		for _, imp := range strings.Split(imports, ",") {
			dep, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			if df, known := floors[dep]; known && df >= floor {
				problems = append(problems, pkg+" (floor "+itoa(floor)+") imports "+dep+" (floor "+itoa(df)+")")
			}
		}
	}
	sort.Strings(problems)
	for _, p := range problems {
		t.Error(p)
	}
}

func itoa(n int) string { return string(rune('0' + n)) }
