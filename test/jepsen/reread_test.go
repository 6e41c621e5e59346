package jepsen

import "testing"

// TestTmpfsSize: SHARDSTORE_JEPSEN_TMPFS goes on a mount command line,
// so only a plain size passes.
func TestTmpfsSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		ok   bool
	}{
		{"", tmpfsSize, true}, {"256m", "256m", true}, {"1g", "1g", true}, {"900000k", "900000k", true},
		{"0m", "", false}, {"256", "", false}, {"256M", "", false}, {"1g,mode=777", "", false},
		{"-1g", "", false}, {" 1g", "", false}, {"1g\n", "", false}, {"9999999k", "", false},
		{"1t", "", false}, {"1e3m", "", false}, {"m", "", false}, {"256m;rm", "", false},
	} {
		t.Setenv("SHARDSTORE_JEPSEN_TMPFS", tc.in)
		got, err := driveTmpfsSize()
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("SHARDSTORE_JEPSEN_TMPFS=%q: %q, %v; want %q, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}
