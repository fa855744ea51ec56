package mockservice

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestParseFault(t *testing.T) {
	t.Parallel()
	f, err := ParseFault("overload,route=trigger_backup,times=2,per-route,p=0.5,retry-after=3s")
	if err != nil {
		t.Fatal(err)
	}
	want := Fault{Kind: FaultOverload, Route: RouteTrigger, Times: 2, PerRoute: true, Probability: 0.5, RetryAfter: 3 * time.Second}
	if f != want {
		t.Errorf("got %+v, want %+v", f, want)
	}
	if f, err := ParseFault("redirect,location=http://127.0.0.2:9"); err != nil || f.Kind != FaultRedirect || f.Location != "http://127.0.0.2:9" {
		t.Errorf("redirect: %+v, %v", f, err)
	}
	f, err = ParseFault("front,route=list_backups,account=acc_0123456789abcdef,status=503,json,date=skewed,skew=-30m,processed,relay,age=10m")
	wantFront := Front{Status: 503, JSON: true, Date: FrontDateSkewed, Skew: -30 * time.Minute, Processed: true, Relay: true, Age: 10 * time.Minute}
	if err != nil || f.Kind != FaultFront || f.Route != RouteListBackups || f.AccountID != "acc_0123456789abcdef" || f.Front != wantFront {
		t.Errorf("front: %+v, %v; want its settings %+v", f, err, wantFront)
	}
	if f, err := ParseFault("other-history,route=list_backups,p=0.5"); err != nil || f.Kind != FaultOtherHistory || f.Probability != 0.5 || f.Paged {
		t.Errorf("other-history: %+v, %v", f, err)
	}
	if f, err := ParseFault("other-history,paged"); err != nil || !f.Paged {
		t.Errorf("other-history, paged: %+v, %v", f, err)
	}
	for _, bad := range []string{"", "explode", "overload,route=nowhere", "overload,times=x", "latency", "overload,colour=red",
		"front,status=200", "front,date=tomorrow", "front,skew=-400d", "front,skew=9000h", "front,route=list_backup",
		"other-history,p=1.5", "other-history,p=-1", "overload,times=-1", "shuffled-page,date=skewed",
		"front,age=-1s", "front,age=9000h", "front,age=soon", "empty-history,age=10m", "empty-history,paged"} {
		if _, err := ParseFault(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// Every role refuses as it says.
func TestRolesRefuseAsTheySay(t *testing.T) {
	t.Parallel()
	s := New(Options{Seed: 3, RateLimit: 1000})
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	roles := map[string]string{}
	for _, r := range s.AddRoles() {
		roles[r.Name] = r.Value
	}
	do := func(method, path, key string) int {
		req, _ := http.NewRequestWithContext(t.Context(), method, ts.URL+path, nil)
		req.Header.Set("X-API-Key", key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		return res.StatusCode
	}
	demo := s.DemoKey()
	for _, c := range []struct {
		method, path, key string
		want              int
	}{
		{"POST", "/api/v1/accounts/" + roles["ACCOUNT_PAUSED"] + "/backup", demo, 422},
		{"POST", "/api/v1/accounts/" + roles["ACCOUNT_LAPSED"] + "/backup", demo, 422},
		{"POST", "/api/v1/accounts/" + roles["ACCOUNT_REAUTH"] + "/backup", demo, 422},
		{"GET", "/api/v1/accounts/" + roles["ACCOUNT_FOREIGN"], demo, 403},
		{"GET", "/api/v1/accounts/" + roles["ACCOUNT_RESTRICTED"], roles["KEY_RESTRICTED"], 403},
		{"GET", "/api/v1/token", roles["KEY_EXPIRED"], 401},
		{"GET", "/api/v1/token", roles["KEY_OWNER_REVOKED"], 401},
		{"GET", "/api/v1/token", roles["KEY_OTHER_ORG"], 401},
		{"GET", "/api/v1/token", roles["KEY_EXPIRING"], 200},
		{"POST", "/api/v1/accounts/" + roles["ACCOUNT_FAILING"] + "/backup", roles["KEY_READ_ONLY"], 403},
		{"POST", "/api/v1/accounts/" + roles["ACCOUNT_FAILING"] + "/backup", demo, 202},
	} {
		if got := do(c.method, c.path, c.key); got != c.want {
			t.Errorf("%s %s: %d, want %d", c.method, strings.TrimPrefix(c.path, "/api/v1"), got, c.want)
		}
	}
}
