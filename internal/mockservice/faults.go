package mockservice

import (
	"maps"
	"net/http"
	"strconv"
	"time"
)

// Route names an endpoint of the API, for faults and counters.
type Route string

// The API's routes.
const (
	RouteToken        Route = "token"
	RouteListAccounts Route = "list_accounts"
	RouteGetAccount   Route = "get_account"
	RouteTrigger      Route = "trigger_backup"
	RouteListBackups  Route = "list_backups"
	RouteAuditLogs    Route = "audit_logs"
	RouteUnknown      Route = "unknown"
)

// FaultKind is what a fault does to a request.
type FaultKind int

// Fault kinds.
const (
	// FaultServerError answers 500 without processing the request.
	FaultServerError FaultKind = iota + 1
	// FaultAcceptThenError processes the request (a trigger queues its
	// backup) and then answers 500.
	FaultAcceptThenError
	// FaultOverload answers 429 without rate-limit headers, as aggregate
	// load does; with RetryAfter set it carries Retry-After.
	FaultOverload
	// FaultLatency delays the processing and the answer by Latency; the
	// request is processed even if the client has gone.
	FaultLatency
	// FaultMalformedJSON processes the request and answers 200 with a body
	// that is not JSON.
	FaultMalformedJSON
	// FaultTruncatedBody processes the request and cuts its body short.
	FaultTruncatedBody
	// FaultInvalidCursor answers a listing request that carries a cursor
	// with the 400 of an invalid cursor, as after a service restart; it
	// never hits first pages.
	FaultInvalidCursor
	// FaultRedirect answers 307 without processing the request, with
	// Location set to the fault's Location followed by the request's path
	// and query (no Location header when that is empty): a misconfigured
	// proxy, or a hostile host collecting API keys.
	FaultRedirect
	// FaultProxyNotFound answers an HTML 404 without processing the
	// request, as a proxy in front of the service does: it proves nothing.
	FaultProxyNotFound
	// FaultShuffledPage reverses the items of a listing's page, and
	// FaultDuplicateItem repeats its first item at its end: a listing
	// trusted for order or uniqueness is misled.
	FaultShuffledPage
	FaultDuplicateItem
	// FaultFront answers in the service's place, as a proxy or a load
	// balancer in front of it does: its own page (Front.Status, an HTML or
	// JSON body that is no problem document of the service) dated by its
	// own clock (Front.Date). The request is not processed unless
	// Front.Processed; with Front.Relay the service's own answer passes,
	// with the front's Date.
	FaultFront
	// FaultForeignItem lists, at the top of an account's backups page, the
	// newest backup of another account, as a cache keyed wrongly would: a
	// listing trusted for whose backups it holds is misled.
	FaultForeignItem
	// FaultOtherHistory answers an account's backups listing with the
	// history another deployment holds of that account (a wrong host behind
	// a load balancer, a region failed over): another account's newest
	// backups under this account's id, as a page that ends. It lists none
	// of what the service listed: a listing that lost what it listed before
	// proves nothing. A request with a cursor is refused as an invalid
	// cursor: another deployment cannot read this one's.
	FaultOtherHistory
	// FaultEmptyHistory answers an account's backups listing with an empty
	// page that ends, as a cache or a replica that holds none of the
	// account's history does: absence that proves nothing. A request with
	// a cursor is refused, as FaultOtherHistory's is.
	FaultEmptyHistory
)

// Front is what a FaultFront answers, and when.
type Front struct {
	// Status is its page's status (0: 502 Bad Gateway).
	Status int
	// JSON makes its page a JSON object, as API gateways send, not HTML.
	JSON bool
	// Date is how its Date header reads; Skew is how far its clock is
	// from true time (stale when negative) with FrontDateSkewed.
	Date FrontDate
	Skew time.Duration
	// Processed: the service processed the request (a trigger queued its
	// backup) before the front answered; the answer is lost.
	Processed bool
	// Relay: the service's own answer passes, with the front's Date (a
	// cache's header, a proxy that dates what it relays).
	Relay bool
	// Age, when set, is the Age header of its answers, whole seconds: a
	// cache says it held the answer this long (RFC 9111 section 5.1).
	Age time.Duration
}

// FrontDate is how a front's Date header reads.
type FrontDate int

// How a front dates its answers.
const (
	FrontDateTrue       FrontDate = iota // by true time
	FrontDateSkewed                      // by a clock Front.Skew from true time
	FrontDateYear1                       // Mon, 01 Jan 0001 00:00:00 GMT
	FrontDateYear9999                    // Fri, 31 Dec 9999 23:59:59 GMT
	FrontDateUnparsable                  // a value that is no HTTP date
	FrontDateNone                        // no Date header at all
)

// Fault is an injected failure.
type Fault struct {
	Kind FaultKind
	// Route limits the fault to one route; empty means every route.
	Route Route
	// AccountID limits the fault to the paths of one account.
	AccountID string
	// Times is how many requests the fault hits (per route with PerRoute);
	// 0 means every matching request.
	Times    int
	PerRoute bool
	// Probability that a matching request is hit (0 means 1).
	Probability float64
	RetryAfter  time.Duration
	// Latency is what FaultLatency adds to each request, at most
	// MaxLatency.
	Latency time.Duration
	// Location is where FaultRedirect sends requests (scheme://host[:port]).
	Location string
	// Front is what FaultFront answers.
	Front Front
	// Paged makes FaultOtherHistory's deployment list that history as the
	// service would its own: in pages that go on, read on by its own
	// cursors alone (another deployment's cursor, or this one's elsewhere,
	// is refused).
	Paged bool
	// OnceQueued holds the fault back until the service queues a backup of
	// AccountID (any account's, without one) after it was added: a front
	// that fails over after a write.
	OnceQueued bool
}

type faultState struct {
	Fault
	hits map[Route]int
	// queued is how many backups of AccountID were queued when it was added (queuedOf).
	queued int
}

// MaxLatency caps the delay a latency fault adds to a request: more would
// only hold the mock's goroutines (the request is served to the end, client
// gone or not) and, from the admin API, let one request stall it for hours.
const MaxLatency = 30 * time.Second

// requestLatency is the delay the latency faults that matched one request
// add to it: their sum, at most MaxLatency for the request, however many
// faults matched (two faults at the cap held a request for twice the cap).
func requestLatency(faults []Fault) time.Duration {
	var d time.Duration
	for _, f := range faults {
		if f.Kind == FaultLatency {
			d = min(d+f.Latency, MaxLatency)
		}
	}
	return d
}

// AddFault switches a fault on.
func (s *Server) AddFault(f Fault) {
	// Clamped, not refused: Go callers have no error to read. The admin
	// API and ParseFault refuse larger values instead.
	f.Latency = min(f.Latency, MaxLatency)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &faultState{Fault: f, hits: map[Route]int{}, queued: s.queuedOf(f.AccountID)})
}

// queuedOf is how many backups of accountID the service has queued, or of
// every account without one. The caller holds s.mu.
func (s *Server) queuedOf(accountID string) int {
	if accountID != "" {
		return s.stats.BackupsQueued[accountID]
	}
	n := 0
	for _, v := range s.stats.BackupsQueued {
		n += v
	}
	return n
}

// ClearFaults switches every fault off.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
}

// stops reports whether a fault answers in place of the service, so that
// at most one such fault can hit a request.
func (k FaultKind) stops() bool {
	return k == FaultServerError || k == FaultOverload || k == FaultInvalidCursor || k == FaultRedirect || k == FaultProxyNotFound ||
		k == FaultFront
}

// pickFaults returns the faults that hit this request, counting the hits.
// The caller holds s.mu.
func (s *Server) pickFaults(route Route, accountID string, hasCursor bool) []Fault {
	var out []Fault
	stopped := false
	for _, f := range s.faults {
		if (f.Route != "" && f.Route != route) || (f.AccountID != "" && f.AccountID != accountID) || (stopped && f.Kind.stops()) || (f.Kind == FaultInvalidCursor && !hasCursor) {
			continue
		}
		key := Route("")
		if f.PerRoute {
			key = route
		}
		if f.Times > 0 && f.hits[key] >= f.Times {
			continue
		}
		if f.OnceQueued && s.queuedOf(f.AccountID) <= f.queued {
			continue
		}
		if f.Probability > 0 && f.Probability < 1 && s.rng.Float64() >= f.Probability {
			continue
		}
		f.hits[key]++
		stopped = stopped || f.Kind.stops()
		out = append(out, f.Fault)
	}
	return out
}

// Stats are the counters tests inspect.
type Stats struct {
	Requests      map[Route]int  `json:"requests"`
	BackupsQueued map[string]int `json:"backups_queued"`
	// RateLimited counts 429s from the key's allowance; Overloaded those
	// injected as aggregate load.
	RateLimited int `json:"rate_limited"`
	Overloaded  int `json:"overloaded"`
	// AuthFailures counts 401s.
	AuthFailures int `json:"auth_failures"`
	// MaxConcurrent is the most requests in flight at once.
	MaxConcurrent int `json:"max_concurrent"`
}

func newStats() Stats {
	return Stats{Requests: map[Route]int{}, BackupsQueued: map[string]int{}}
}

// TotalRequests is the number of API requests of every route.
func (st Stats) TotalRequests() int {
	n := 0
	for _, v := range st.Requests {
		n += v
	}
	return n
}

// Stats returns a copy of the counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.stats
	out.Requests, out.BackupsQueued = maps.Clone(s.stats.Requests), maps.Clone(s.stats.BackupsQueued)
	return out
}

// Requests is the number of requests a route received.
func (s *Server) Requests(r Route) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats.Requests[r]
}

// BackupsQueued is the number of backups this server queued for an account.
func (s *Server) BackupsQueued(accountID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats.BackupsQueued[accountID]
}

// ResetStats zeroes the counters.
func (s *Server) ResetStats() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats = newStats()
}

// frontReply is a front's own page, at now (true time): it proves nothing of
// the service, and its Date is the front's.
func frontReply(f Front, now time.Time) *reply {
	status := f.Status
	if status == 0 {
		status = http.StatusBadGateway
	}
	rep := &reply{status: status, header: http.Header{}}
	text := http.StatusText(status)
	if f.JSON {
		rep.header.Set("Content-Type", "application/json")
		rep.body = []byte(`{"message":"` + text + `"}`)
	} else {
		rep.header.Set("Content-Type", "text/html")
		rep.body = []byte("<html><head><title>" + text + "</title></head><body><h1>" + text + "</h1><hr>front</body></html>")
	}
	return frontDated(f, now, rep)
}

// frontDated is rep with the front's Date header.
func frontDated(f Front, now time.Time, rep *reply) *reply {
	out := *rep
	out.header = rep.header.Clone()
	if out.header == nil {
		out.header = http.Header{}
	}
	switch f.Date {
	case FrontDateTrue:
		out.header.Set("Date", now.UTC().Format(http.TimeFormat))
	case FrontDateSkewed:
		out.header.Set("Date", now.Add(f.Skew).UTC().Format(http.TimeFormat))
	case FrontDateYear1:
		out.header.Set("Date", "Mon, 01 Jan 0001 00:00:00 GMT")
	case FrontDateYear9999:
		out.header.Set("Date", "Fri, 31 Dec 9999 23:59:59 GMT")
	case FrontDateUnparsable:
		out.header.Set("Date", "yesterday, around noon")
	case FrontDateNone:
		out.header["Date"] = nil // present and empty: ServeHTTP sends none
	}
	if f.Age > 0 {
		out.header.Set("Age", strconv.FormatInt(int64(f.Age/time.Second), 10))
	}
	return &out
}
