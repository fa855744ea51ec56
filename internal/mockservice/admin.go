package mockservice

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// AdminTokenHeader carries the admin token, as does
// "Authorization: Bearer <token>".
const AdminTokenHeader = "X-Mock-Admin-Token"

// serveAdmin answers the inspection API used by tests and benchmarks that
// run the mock as a separate process:
//
//	GET    /_mock/stats              counters (requests per route, backups queued, 429s)
//	POST   /_mock/reset              zero the counters, switch faults and controls off
//	POST   /_mock/faults             switch on the Fault in the JSON body
//	POST   /_mock/rate-limit?n=N     set every key's per-second allowance
//	DELETE /_mock/accounts/{id}      delete an account
//
// and the failure controls of admin_controls.go.
//
// Every admin request carries the server's admin token (AdminToken), in
// "Authorization: Bearer <token>" or X-Mock-Admin-Token: a page in a
// browser cannot, and a request without it changes nothing (401). Every
// POST, PUT, PATCH or DELETE says Content-Type: application/json (else
// 415), which a browser sends cross-origin only after a preflight the mock
// never grants. The Host check of ServeHTTP comes first.
func (s *Server) serveAdmin(w http.ResponseWriter, r *http.Request, requestID string) {
	if !s.adminAuthorized(r) {
		rep := problemReply(http.StatusUnauthorized, titleUnauth,
			"The admin API wants the mock's admin token (BACKUP_MOCK_ADMIN_TOKEN, printed at start), as Authorization: Bearer <token> or "+
				AdminTokenHeader+": <token>.", r, requestID)
		rep.header.Set("WWW-Authenticate", `Bearer realm="backup-mock admin"`)
		writeReply(w, rep)
		return
	}
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			writeReply(w, problemReply(http.StatusUnsupportedMediaType, titleUnsupported,
				fmt.Sprintf("Admin %s requests want Content-Type: application/json, not %q.", r.Method, r.Header.Get("Content-Type")), r, requestID))
			return
		}
	}
	r.Body = http.MaxBytesReader(w, r.Body, 1<<16)
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/_mock/stats":
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s.Stats())
	case r.Method == http.MethodPost && r.URL.Path == "/_mock/reset":
		s.ResetStats()
		s.ClearFaults()
		s.resetControls()
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodPost && r.URL.Path == "/_mock/faults":
		writeControlResult(w, r, requestID, s.controlFault(r))
	case r.Method == http.MethodPost && r.URL.Path == "/_mock/rate-limit":
		n, err := strconv.Atoi(r.URL.Query().Get("n"))
		if err != nil || n < 1 {
			writeControlResult(w, r, requestID, &fieldError{"n", fmt.Sprintf("(a query parameter) must be a positive integer, not %q", r.URL.Query().Get("n"))})
			return
		}
		s.SetRateLimit(n)
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodPost && r.URL.Path == "/_mock/answers":
		s.serveAnswers(w, r, requestID)
	case r.Method == http.MethodPost && r.URL.Path == "/_mock/clock":
		s.serveClock(w, r, requestID)
	case r.Method == http.MethodPost && r.URL.Path == "/_mock/listing-lag":
		s.serveListingLag(w, r, requestID)
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/_mock/accounts/"):
		s.serveAccountControl(w, r, requestID)
	case r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, "/_mock/accounts/"):
		id := strings.TrimPrefix(r.URL.Path, "/_mock/accounts/")
		if !s.deleteAccount(id) {
			writeReply(w, problemReply(http.StatusNotFound, titleNotFound, "No account "+id+".", r, requestID))
			return
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		writeReply(w, problemReply(http.StatusNotFound, titleNotFound, "No such admin endpoint: "+r.Method+" "+r.URL.Path+".", r, requestID))
	}
}

// adminAuthorized reports whether the request carries the admin token.
func (s *Server) adminAuthorized(r *http.Request) bool {
	got := r.Header.Get(AdminTokenHeader)
	if auth := r.Header.Get("Authorization"); got == "" && len(auth) > 7 && strings.EqualFold(auth[:7], "bearer ") {
		got = strings.TrimSpace(auth[7:])
	}
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.adminToken)) == 1
}

// AdminToken is the token admin requests must carry: Options.AdminToken,
// or one drawn at random when the server was built.
func (s *Server) AdminToken() string { return s.adminToken }

// NewAdminToken returns a random admin token.
func NewAdminToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "bkm_" + hex.EncodeToString(b[:])
}
