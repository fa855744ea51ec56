package mockservice

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// serveAdmin answers the inspection API used by tests and benchmarks that
// run the mock as a separate process:
//
//	GET  /_mock/stats              counters (requests per route, backups queued, 429s)
//	POST /_mock/reset              zero the counters and switch faults off
//	POST /_mock/faults             switch on the Fault in the JSON body
//	POST /_mock/rate-limit?n=N     set every key's per-second allowance
func (s *Server) serveAdmin(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/_mock/stats":
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s.Stats())
	case r.Method == http.MethodPost && r.URL.Path == "/_mock/reset":
		s.ResetStats()
		s.ClearFaults()
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodPost && r.URL.Path == "/_mock/faults":
		var f Fault
		if err := json.NewDecoder(r.Body).Decode(&f); err != nil || !f.Kind.valid() {
			http.Error(w, "want a JSON fault", http.StatusBadRequest)
			return
		}
		s.AddFault(f)
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodPost && r.URL.Path == "/_mock/rate-limit":
		n, err := strconv.Atoi(r.URL.Query().Get("n"))
		if err != nil || n < 1 {
			http.Error(w, "want n=positive integer", http.StatusBadRequest)
			return
		}
		s.SetRateLimit(n)
		w.WriteHeader(http.StatusNoContent)
	default:
		http.NotFound(w, r)
	}
}
