package admin

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/shardstore/shardstore/internal/engine"
)

type fakeEngine struct{ got engine.HealRequest }

func (f *fakeEngine) Heal(ctx context.Context, req engine.HealRequest, progress func(engine.HealProgress)) (engine.HealReport, error) {
	f.got = req
	for i := 1; i <= 3; i++ {
		progress(engine.HealProgress{Done: i, Total: 3, Result: engine.HealResult{Bucket: "b", Key: "k", Healed: 1, Missing: 1}})
	}
	return engine.HealReport{Objects: 3, Damaged: 3, ShardsRewritten: 3}, nil
}
func (f *fakeEngine) HealStatus() engine.HealStatus { return engine.HealStatus{Queued: 7} }
func (f *fakeEngine) Status() engine.Status         { return engine.Status{Drives: 16, DrivesOnline: 15} }
func (f *fakeEngine) Layout() engine.Layout {
	return engine.Layout{Sets: 1, SetSize: 16, Data: 12, Parity: 4}
}
func (f *fakeEngine) DriveStatus(context.Context) []engine.DriveStatus {
	return []engine.DriveStatus{{Path: "/d1", Set: 1, Slot: 1, State: "offline", Error: "gone"}}
}

func TestHandler(t *testing.T) {
	fe := &fakeEngine{}
	h := NewHandler(fe, func(r *http.Request, _ string, _ func(Actor) bool) (Actor, error) {
		if r.Header.Get("X-Test-Root") != "yes" {
			return Actor{}, errors.New("not root")
		}
		return Actor{Name: "root"}, nil
	}, nil)
	srv := httptest.NewServer(h)
	defer srv.Close()
	do := func(method, path string, root bool) *http.Response {
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		if root {
			req.Header.Set("X-Test-Root", "yes")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	if resp := do("POST", Prefix+"heal", false); resp.StatusCode != 403 {
		t.Fatalf("unauthenticated heal: %d", resp.StatusCode)
	}
	resp := do("POST", Prefix+"heal?bucket=b&prefix=p/&deep=true", true)
	if resp.StatusCode != 200 {
		t.Fatalf("heal: %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	var events []Event
	for sc.Scan() {
		var ev Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("bad line %q: %v", sc.Text(), err)
		}
		events = append(events, ev)
	}
	if len(events) < 2 || events[len(events)-1].Type != "report" || events[len(events)-1].Report.ShardsRewritten != 3 {
		t.Fatalf("events %+v", events)
	}
	if fe.got != (engine.HealRequest{Bucket: "b", Prefix: "p/", Deep: true}) {
		t.Fatalf("request %+v", fe.got)
	}
	var st StatusReply
	if err := json.NewDecoder(do("GET", Prefix+"status", true).Body).Decode(&st); err != nil || st.Heal.Queued != 7 || st.Status.DrivesOnline != 15 ||
		st.Layout.Parity != 4 || len(st.Drives) != 1 || st.Drives[0].Error != "gone" {
		t.Fatalf("status %+v %v", st, err)
	}
	if resp := do("GET", Prefix+"heal", true); resp.StatusCode != 405 {
		t.Fatalf("GET heal: %d", resp.StatusCode)
	}
}
