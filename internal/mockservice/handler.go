package mockservice

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"

	"sort"
	"strconv"
	"strings"
	"time"
)

// reply is a response before faults are applied to it.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// Titles the API document shows.
const (
	titleBadRequest    = "Bad Request"
	titleUnauth        = "Unauthenticated"
	titleForbidden     = "You are not authorized to perform this action."
	titleNotFound      = "Resource not found."
	titleConflict      = "Conflict"
	titleUnprocessable = "Unprocessable Entity"
	titleTooMany       = "Too Many Requests"
	titleInternal      = "Internal Server Error"
	// Titles of the mock's own refusals.
	titleMisdirected = "Misdirected Request"
	titleUnsupported = "Unsupported Media Type"
)

// ServeHTTP answers one request of the API (or, under /_mock/, of the
// inspection API).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	requestID := newRequestID()
	if !s.hostAllowed(r.Host) {
		// A page that rebinds its own name to 127.0.0.1 reaches the mock
		// with that name in Host: refused, API and admin alike.
		writeReply(w, problemReply(http.StatusMisdirectedRequest, titleMisdirected,
			fmt.Sprintf("The mock service answers loopback host names only (localhost, 127.0.0.1, [::1]), not Host %q.", r.Host), r, requestID))
		return
	}
	if strings.HasPrefix(r.URL.Path, "/_mock/") {
		s.serveAdmin(w, r, requestID)
		return
	}
	route, accountID := matchRoute(r.Method, r.URL.Path)

	s.mu.Lock()
	s.stats.Requests[route]++
	s.inFlight++
	s.stats.MaxConcurrent = max(s.stats.MaxConcurrent, s.inFlight)
	// An answer the admin API queued stands for the service: no fault hits.
	answer := s.ctl.takeAnswer(route, accountID)
	var faults []Fault
	if answer == nil {
		faults = s.pickFaults(route, accountID, r.URL.Query().Get("cursor") != "")
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()

	if d := requestLatency(faults); d > 0 {
		// A slow service goes on with a request whose client gave up:
		// a trigger may still queue its backup after the client's timeout.
		// Real time, whatever the mock's clock: what it meets is the
		// client's per-request timeout, a socket's, on the wall clock.
		time.Sleep(d)
	}

	var rep *reply
	if answer != nil {
		rep = answer.reply(r, requestID)
	} else {
		rep = s.preFaults(faults, r, requestID)
	}
	if rep == nil {
		rep = s.handle(r, route, accountID, requestID)
		rep = s.postFaults(faults, rep, r, requestID, accountID)
		if route == RouteListBackups && rep.status < 300 {
			s.noteListing(queuedByFrom(r.Context()), faults)
		}
		switch s.takeLost(route, accountID) {
		case lostAsError:
			rep = problemReply(http.StatusInternalServerError, titleInternal, "An unexpected error occurred.", r, requestID)
		case lostAsDrop:
			dropConnection(w)
			return
		}
	}
	if s.echoKey && rep.status >= 400 {
		rep = echoKey(rep, r.Header.Get("X-API-Key"))
	}
	for k, v := range rep.header {
		w.Header()[k] = v
	}
	if rep.status >= 200 && rep.status < 300 {
		w.Header().Set("X-Request-ID", requestID)
	}
	// Dated by the service's own clock, as a real deployment's answers are,
	// unless a front dated it (or sent no Date: a nil value).
	if _, dated := rep.header["Date"]; !dated {
		w.Header().Set("Date", s.shownNow().UTC().Format(http.TimeFormat))
	}
	for _, f := range faults {
		if f.Kind == FaultTruncatedBody {
			// Promise the whole body, send half: the connection closes early.
			w.Header().Set("Content-Length", strconv.Itoa(len(rep.body)))
			w.WriteHeader(rep.status)
			_, _ = w.Write(rep.body[:len(rep.body)/2])
			return
		}
	}
	w.WriteHeader(rep.status)
	_, _ = w.Write(rep.body)
}

// preFaults answers for the faults that stop a request before processing.
func (s *Server) preFaults(faults []Fault, r *http.Request, requestID string) *reply {
	for _, f := range faults {
		switch f.Kind {
		case FaultServerError:
			return problemReply(http.StatusInternalServerError, titleInternal, "An unexpected error occurred.", r, requestID)
		case FaultInvalidCursor:
			return problemReply(http.StatusBadRequest, titleBadRequest, "invalid cursor", r, requestID)
		case FaultRedirect:
			rep := &reply{status: http.StatusTemporaryRedirect, header: http.Header{}}
			if f.Location != "" {
				rep.header.Set("Location", f.Location+r.URL.RequestURI())
			}
			return rep
		case FaultFront:
			if !f.Front.Processed && !f.Front.Relay {
				return frontReply(f.Front, s.clock.Now())
			}
		case FaultProxyNotFound:
			rep := &reply{status: http.StatusNotFound, header: http.Header{}, body: []byte("<html><body>404 Not Found</body></html>")}
			rep.header.Set("Content-Type", "text/html")
			return rep
		case FaultOverload:
			s.mu.Lock()
			s.stats.Overloaded++
			s.mu.Unlock()
			rep := problemReply(http.StatusTooManyRequests, titleTooMany, "The service is under heavy load; try again later.", r, requestID)
			if f.RetryAfter > 0 {
				rep.header.Set("Retry-After", strconv.Itoa(int(f.RetryAfter.Round(time.Second)/time.Second)))
			}
			return rep
		}
	}
	return nil
}

// postFaults changes the answer of a request that was processed, about
// accountID's paths when it names one.
func (s *Server) postFaults(faults []Fault, rep *reply, r *http.Request, requestID, accountID string) *reply {
	now := s.clock.Now() // true time, for a front's clock
	for _, f := range faults {
		switch f.Kind {
		case FaultFront:
			if f.Front.Relay {
				return frontDated(f.Front, now, rep)
			}
			return frontReply(f.Front, now)
		case FaultForeignItem:
			rep = s.foreignItem(rep, accountID)
		case FaultOtherHistory, FaultEmptyHistory:
			if f.Kind == FaultOtherHistory && f.Paged {
				rep = s.otherDeployment(rep, r, requestID, accountID)
				break
			}
			if r.URL.Query().Get("cursor") != "" {
				// Another deployment cannot read this one's cursor (api-contract.md: a foreign cursor is a 400).
				return problemReply(http.StatusBadRequest, titleBadRequest, "invalid cursor", r, requestID)
			}
			if f.Kind == FaultEmptyHistory {
				rep = emptyHistory(rep)
				break
			}
			rep = s.otherHistory(rep, accountID)
		case FaultAcceptThenError:
			return problemReply(http.StatusInternalServerError, titleInternal, "An unexpected error occurred.", r, requestID)
		case FaultShuffledPage, FaultDuplicateItem:
			rep = disorderPage(f.Kind, rep)
		case FaultMalformedJSON:
			if rep.status < 300 {
				rep.body = []byte(`{"data": [{"id": "acc_`)
				rep.body = append(rep.body, []byte(`<html>oops`)...)
			}
		}
	}
	return rep
}

// matchRoute maps a method and path to a route, and the account id in it.
func matchRoute(method, path string) (Route, string) {
	rest, ok := strings.CutPrefix(path, "/api/v1/")
	if !ok {
		return RouteUnknown, ""
	}
	parts := strings.Split(rest, "/")
	switch {
	case method == http.MethodGet && len(parts) == 1 && parts[0] == "token":
		return RouteToken, ""
	case method == http.MethodGet && len(parts) == 1 && parts[0] == "accounts":
		return RouteListAccounts, ""
	case method == http.MethodGet && len(parts) == 1 && parts[0] == "audit-logs":
		return RouteAuditLogs, ""
	case method == http.MethodGet && len(parts) == 2 && parts[0] == "accounts":
		return RouteGetAccount, parts[1]
	case method == http.MethodPost && len(parts) == 3 && parts[0] == "accounts" && parts[2] == "backup":
		return RouteTrigger, parts[1]
	case method == http.MethodGet && len(parts) == 3 && parts[0] == "accounts" && parts[2] == "backups":
		return RouteListBackups, parts[1]
	}
	return RouteUnknown, ""
}

// handle answers a request that no fault stopped.
func (s *Server) handle(r *http.Request, route Route, accountID, requestID string) *reply {
	s.mu.Lock()
	defer s.mu.Unlock()

	key := s.keys[r.Header.Get("X-API-Key")]
	if key == nil || key.ownerRevoked || key.orgID != s.org.ID || !s.clock.Now().Before(key.expiresAt) {
		s.stats.AuthFailures++
		return problemReply(http.StatusUnauthorized, titleUnauth, "", r, requestID)
	}
	rl, limited := s.takeAllowance(key)
	var out *reply
	if limited {
		s.stats.RateLimited++
		out = problemReply(http.StatusTooManyRequests, titleTooMany,
			fmt.Sprintf("The key's allowance of %d requests per second is used up.", s.rateLimit), r, requestID)
		out.header.Set("Retry-After", "1")
	} else {
		out = s.route(r, route, accountID, key, requestID)
	}
	for k, v := range rl {
		out.header[k] = v
	}
	return out
}

// takeAllowance counts a request against the key's allowance for this
// second of the rate clock and returns the rate-limit headers, and whether the request
// is over the allowance. The caller holds s.mu.
func (s *Server) takeAllowance(key *apiKey) (http.Header, bool) {
	now := s.rateClock.Now().Unix()
	w := s.windows[key.secret]
	if w == nil || w.second != now {
		w = &window{second: now}
		s.windows[key.secret] = w
	}
	w.count++
	h := http.Header{}
	h.Set("X-RateLimit-Limit", strconv.Itoa(s.rateLimit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(max(s.rateLimit-w.count, 0)))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(now+1, 10))
	return h, w.count > s.rateLimit
}

// route dispatches an authenticated request within its allowance. The
// caller holds s.mu.
func (s *Server) route(r *http.Request, route Route, accountID string, key *apiKey, requestID string) *reply {
	switch route {
	case RouteToken:
		return jsonReply(http.StatusOK, tokenJSON{Name: key.name, ExpiresAt: rfc3339(key.expiresAt), Organization: s.org})
	case RouteListAccounts:
		var items []*account
		for _, a := range s.accounts {
			if a.orgID == s.org.ID && !a.deleted {
				items = append(items, a)
			}
		}
		return listReply(s, r, requestID, "accounts", items, true, s.accountJSON)
	case RouteAuditLogs:
		items := append([]*auditLog(nil), s.logs...)
		return listReply(s, r, requestID, "audit-logs", items, true, auditJSON)
	case RouteGetAccount, RouteTrigger, RouteListBackups:
		acc, rep := s.lookupAccount(r, accountID, key, requestID)
		if rep != nil {
			return rep
		}
		switch route {
		case RouteGetAccount:
			return jsonReply(http.StatusOK, s.accountJSON(acc))
		case RouteTrigger:
			return s.trigger(r, acc, key, requestID)
		default:
			return s.listBackups(r, acc, requestID)
		}
	}
	return problemReply(http.StatusNotFound, titleNotFound, "No such endpoint: "+r.Method+" "+r.URL.Path+".", r, requestID)
}

// lookupAccount finds an account the key may use, or the error to answer.
func (s *Server) lookupAccount(r *http.Request, id string, key *apiKey, requestID string) (*account, *reply) {
	if !accountIDFormat.MatchString(id) {
		return nil, problemReply(http.StatusUnprocessableEntity, titleUnprocessable,
			fmt.Sprintf("Account id %q does not match acc_ followed by 16 letters or digits.", id), r, requestID)
	}
	acc := s.accounts[id]
	switch {
	case acc == nil || acc.deleted:
		return nil, problemReply(http.StatusNotFound, titleNotFound, "No account "+id+".", r, requestID)
	case acc.orgID != s.org.ID:
		return nil, problemReply(http.StatusForbidden, titleForbidden, "Account "+id+" is outside the key's organization.", r, requestID)
	case key.restricted[id]:
		return nil, problemReply(http.StatusForbidden, titleForbidden, "The key may not access account "+id+".", r, requestID)
	}
	return acc, nil
}

// trigger queues a backup, or refuses as the document says.
func (s *Server) trigger(r *http.Request, acc *account, key *apiKey, requestID string) *reply {
	if key.readOnly {
		return problemReply(http.StatusForbidden, titleForbidden, "The key's permissions do not allow triggering backups.", r, requestID)
	}
	if acc.state != StateActive {
		return problemReply(http.StatusUnprocessableEntity, titleUnprocessable,
			fmt.Sprintf("Account %s is not in a backupable state: %s", acc.id, acc.state.reason()), r, requestID)
	}
	if inProgress(s.accountStatus(acc)) {
		return problemReply(http.StatusConflict, titleConflict,
			fmt.Sprintf("A backup for account %s is already in progress.", acc.id), r, requestID)
	}
	now := s.clock.Now()
	s.seq++
	pending, running := s.newBackupLength()
	b := &backup{shownOffset: s.offset,
		id: newID(backupPrefix, s.rng.IntN), accountID: acc.id, createdAt: now, seq: s.seq,
		pendingFor: pending, runningFor: running, failWith: acc.failWith,
		queuedBy: queuedByFrom(r.Context()), quirk: acc.quirk,
	}
	s.ctl.shape(b)
	acc.backups = append(acc.backups, b)
	s.seq++
	s.logs = append(s.logs, &auditLog{
		id: newID(auditLogPrefix, s.rng.IntN), orgID: s.org.ID, createdAt: now, seq: s.seq,
		action: "backup.triggered", actor: "api_key:" + key.name, resourceType: "account", resourceID: acc.id,
	})
	s.stats.BackupsQueued[acc.id]++
	return jsonReply(http.StatusAccepted, s.accountJSON(acc))
}

// listReply answers one page of a listing, rendering each item with render.
// items may come in any order; listReply sorts them.
func listReply[T item, J any](s *Server, r *http.Request, requestID, scope string, items []T, hasOrder bool, render func(T) J) *reply {
	q := r.URL.Query()
	limit := 25
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return problemReply(http.StatusBadRequest, titleBadRequest, "limit must be an integer.", r, requestID)
		}
		limit = min(max(n, 1), 50)
	}
	desc := true
	if hasOrder {
		switch q.Get("order") {
		case "", "desc":
		case "asc":
			desc = false
		default:
			return problemReply(http.StatusUnprocessableEntity, titleUnprocessable, "order must be asc or desc.", r, requestID)
		}
	}
	var pos *cursorPos
	if c := q.Get("cursor"); c != "" {
		p, err := decodeCursor(s.cursorKey, scope, c)
		if err != nil {
			return problemReply(http.StatusBadRequest, titleBadRequest, "invalid cursor", r, requestID)
		}
		pos, desc = &p, p.Desc // the cursor carries its order
	}
	sort.Slice(items, func(i, j int) bool {
		ti, qi := items[i].sortKey()
		tj, qj := items[j].sortKey()
		if desc {
			return less(tj, qj, ti, qi)
		}
		return less(ti, qi, tj, qj)
	})
	start := 0
	if pos != nil {
		start = sort.Search(len(items), func(i int) bool { return after(items[i], *pos) })
	}
	size := limit
	if s.pageCap > 0 {
		size = min(size, s.pageCap)
	}
	end := min(start+size, len(items))
	if s.shuffledTies && end == len(items) {
		shuffleTies(items[start:end], s.rng.Shuffle)
	}
	data := make([]J, 0, end-start)
	for _, it := range items[start:end] {
		data = append(data, render(it))
	}
	var next *string
	if end < len(items) {
		t, seq := items[end-1].sortKey()
		c := encodeCursor(s.cursorKey, cursorPos{Scope: scope, Desc: desc, Time: t.UnixNano(), Seq: seq})
		next = &c
	}
	type pagination struct {
		Limit      int     `json:"limit"`
		NextCursor *string `json:"next_cursor"`
	}
	return jsonReply(http.StatusOK, struct {
		Data       []J        `json:"data"`
		Pagination pagination `json:"pagination"`
	}{data, pagination{limit, next}})
}

// shuffleTies lists the records of one second in any order, as the
// contract lets the service do (a last page only, so no cursor moves).
func shuffleTies[T item](page []T, shuffle func(int, func(i, j int))) {
	for i := 0; i < len(page); {
		t, _ := page[i].sortKey()
		j := i + 1
		for ; j < len(page); j++ {
			if u, _ := page[j].sortKey(); !u.Truncate(time.Second).Equal(t.Truncate(time.Second)) {
				break
			}
		}
		run := page[i:j]
		shuffle(len(run), func(a, b int) { run[a], run[b] = run[b], run[a] })
		i = j
	}
}

func (s *Server) accountJSON(a *account) accountJSON {
	return accountJSON{ID: a.id, Name: a.name, BackupStatus: s.accountStatus(a), Platform: a.platform,
		ServiceType: a.serviceType, CreatedAt: rfc3339(a.createdAt)}
}

func (s *Server) backupJSON(b *backup) backupJSON {
	st, done, errText := b.status(s.clock.Now())
	out := backupJSON{ID: b.id, AccountID: b.accountID, Status: st, CreatedAt: rfc3339(b.createdAt.Add(b.shownOffset)), Error: errText}
	if done != nil {
		v := rfc3339(done.Add(b.shownOffset))
		out.CompletedAt = &v
	}
	if st == "success" {
		quirkRecord(b, &out)
	}
	if b.quirk == QuirkOtherAccount {
		out.AccountID = otherAccountID(b.accountID)
	}
	return out
}

func auditJSON(l *auditLog) auditLogJSON {
	return auditLogJSON{ID: l.id, CreatedAt: rfc3339(l.createdAt), Action: l.action, Actor: l.actor,
		ResourceType: l.resourceType, ResourceID: l.resourceID}
}

func jsonReply(status int, v any) *reply {
	body, _ := json.Marshal(v)
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	return &reply{status: status, header: h, body: body}
}

// problemReply is an RFC 7807 error; detail is left out when empty, as the
// service does on 401.
func problemReply(status int, title, detail string, r *http.Request, requestID string) *reply {
	p := struct {
		Title     string `json:"title"`
		Status    int    `json:"status"`
		Detail    string `json:"detail,omitempty"`
		Instance  string `json:"instance"`
		RequestID string `json:"request_id"`
	}{title, status, detail, r.URL.Path, requestID}
	rep := jsonReply(status, p)
	rep.header.Set("Content-Type", "application/problem+json")
	return rep
}

// writeReply sends a reply as it is.
func writeReply(w http.ResponseWriter, rep *reply) {
	for k, v := range rep.header {
		w.Header()[k] = v
	}
	w.WriteHeader(rep.status)
	_, _ = w.Write(rep.body)
}

// hostAllowed reports whether a Host header names a loopback host
// (localhost, 127.0.0.0/8 or ::1, with any port) or one of
// Options.AllowHosts.
func (s *Server) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.Zone() == "" && ip.Unmap().IsLoopback() {
		return true
	}
	for _, h := range s.allowHosts {
		if strings.EqualFold(host, h) {
			return true
		}
	}
	return false
}

// newRequestID returns a random UUID v4.
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// echoKey quotes the presented key in an error body: in the problem's
// detail, or after whatever else the body holds.
func echoKey(rep *reply, key string) *reply {
	out := *rep
	var p map[string]any
	if json.Unmarshal(rep.body, &p) == nil && p != nil {
		detail, _ := p["detail"].(string)
		p["detail"] = strings.TrimSpace(detail + " (the key presented was " + key + ")")
		out.body, _ = json.Marshal(p)
		return &out
	}
	out.body = append(append([]byte{}, rep.body...), []byte(" key="+key)...)
	return &out
}
