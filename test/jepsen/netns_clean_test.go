package jepsen

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestCleanStaleNetworks leaves a network as a test killed before its
// cleanup would (a namespace with no process and a bridge, no owner
// file) and one whose recorded owner is alive (this process), and checks
// that cleanStale removes the first and keeps the second.
func TestCleanStaleNetworks(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: network namespaces cannot be made (the harness uses its proxy network then)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skipf("no ip tool: %v", err)
	}
	used, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Skipf("ip netns list: %v", err)
	}
	free := func() string {
		for {
			id := fmt.Sprintf("%03x", rand.IntN(0x1000))
			if !strings.Contains(string(used), "jepsen-"+id+"-") {
				return id
			}
		}
	}
	dead, live := free(), free()
	for dead == live {
		live = free()
	}
	for _, id := range []string{dead, live} {
		if err := ip("netns", "add", "jepsen-"+id+"-1"); err != nil {
			t.Fatal(err)
		}
		if err := ip("link", "add", "jc"+id, "type", "bridge"); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = removeNetwork(live) })
	if err := writeOwner(live); err != nil {
		t.Fatal(err)
	}
	removed, err := cleanStale()
	if err != nil {
		t.Fatal(err)
	}
	ns, _ := exec.Command("ip", "netns", "list").Output()
	links, _ := exec.Command("ip", "-o", "link", "show").Output()
	if strings.Contains(string(ns), "jepsen-"+dead+"-1") || strings.Contains(string(links), "jc"+dead) {
		t.Errorf("the dead network %s is still there (removed %v)", dead, removed)
	}
	if !strings.Contains(string(ns), "jepsen-"+live+"-1") || !strings.Contains(string(links), "jc"+live) {
		t.Errorf("the live network %s was removed (removed %v)", live, removed)
	}
}
