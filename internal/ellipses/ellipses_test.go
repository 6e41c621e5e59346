package ellipses

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"/data", []string{"/data"}},
		{"/data/d{1...3}", []string{"/data/d1", "/data/d2", "/data/d3"}},
		{"/d{8...10}/x", []string{"/d8/x", "/d9/x", "/d10/x"}},
		{"/d{01...03}", []string{"/d01", "/d02", "/d03"}},
		{"/mnt/disk{1...2}/x{1...2}", []string{"/mnt/disk1/x1", "/mnt/disk1/x2", "/mnt/disk2/x1", "/mnt/disk2/x2"}},
		{"/d{5...5}", []string{"/d5"}},
		{"{1...2}", []string{"1", "2"}},
	}
	for _, c := range cases {
		got, err := Expand(c.in)
		if err != nil {
			t.Errorf("Expand(%q): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Expand(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestExpandSixteen(t *testing.T) {
	got, err := Expand("/data/d{1...16}")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 16 || got[0] != "/data/d1" || got[15] != "/data/d16" {
		t.Fatalf("got %v", got)
	}
	got, err = Expand("/mnt/disk{1...4}/x{1...4}")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 16 || got[4] != "/mnt/disk2/x1" {
		t.Fatalf("got %v", got)
	}
}

func TestExpandErrors(t *testing.T) {
	cases := map[string]string{
		"":                       "empty",
		"/d{1..4}":               "three dots",
		"/d{4...1}":              "greater than",
		"/d{a...4}":              "not a non-negative integer",
		"/d{1...b}":              "not a non-negative integer",
		"/d{...4}":               "not a non-negative integer",
		"/d{1...4":               "unbalanced '{'",
		"/d1...4}":               "unbalanced '}'",
		"/d{1...{2...3}}":        "unbalanced '{'",
		"/d{-1...3}":             "not a non-negative integer",
		"/d{1...100000}":         "more than",
		"/a{1...200}/b{1...200}": "more than",
	}
	for in, want := range cases {
		_, err := Expand(in)
		if err == nil {
			t.Errorf("Expand(%q) succeeded, want error containing %q", in, want)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Expand(%q) error %q, want it to contain %q", in, err, want)
		}
	}
}

func TestExpandAll(t *testing.T) {
	got, err := ExpandAll([]string{"/a{1...2}", "/b"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/a1", "/a2", "/b"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
	if _, err := ExpandAll([]string{"/a{1...2}", "/a2"}); err == nil || !strings.Contains(err.Error(), "more than once") {
		t.Fatalf("duplicate not refused: %v", err)
	}
	if _, err := ExpandAll([]string{"/ok", "/bad{"}); err == nil {
		t.Fatal("bad pattern not refused")
	}
}

func TestHasPattern(t *testing.T) {
	if !HasPattern("/d{1...2}") || HasPattern("/plain") {
		t.Fatal("HasPattern wrong")
	}
}

func ExampleExpand() {
	paths, _ := Expand("/data/d{1...4}")
	fmt.Println(paths)
	// Output: [/data/d1 /data/d2 /data/d3 /data/d4]
}

func TestPools(t *testing.T) {
	cases := []struct {
		args []string
		want string // pool sizes
		bad  bool
	}{
		{[]string{"/a{1...4}", "/b{1...8}"}, "[4 8]", false},
		{[]string{"/a{1...4}"}, "[4]", false},
		{[]string{"/d1", "/d2", "/d3"}, "[3]", false},
		{[]string{"/a{1...4}", "/b1"}, "[5]", false},
		{[]string{"http://n{1...4}:9000/d{1...4}", "http://n{5...8}:9000/d{1...8}"}, "[16 32]", false},
		{[]string{"/a{1...4}", "/b{1..8}"}, "", true},
		{[]string{"/a{1...4}", "/b{8...1}"}, "", true},
		{[]string{"/a{1...4}", "/b{}"}, "", true},
		{nil, "[0]", false},
	}
	for _, c := range cases {
		pools, err := Pools(c.args)
		if c.bad {
			if err == nil {
				t.Errorf("Pools(%q) accepted", c.args)
			}
			continue
		}
		if err != nil {
			t.Errorf("Pools(%q): %v", c.args, err)
			continue
		}
		var sizes []int
		for _, p := range pools {
			sizes = append(sizes, len(p))
		}
		if got := fmt.Sprint(sizes); got != c.want {
			t.Errorf("Pools(%q) sizes %s, want %s", c.args, got, c.want)
		}
	}
}
