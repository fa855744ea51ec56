package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/clock/clocktest"
)

// faultyService plays a Backup Service that departs from the mock in the
// ways real deployments do: a backups listing that lags behind the POST
// (a read replica), a clock that is not the client's, a POST processed but
// answered with a reset connection, a listing that fails. It serves one
// account; its time is the client's fake clock plus skew.
type faultyService struct {
	t       *testing.T
	clock   *clocktest.Virtual
	account string
	url     string

	mu sync.Mutex
	// skew is the service's clock minus the client's.
	skew time.Duration
	// backups, newest first; hiddenFor counts listings that still omit one.
	backups   []client.Backup
	hiddenFor map[string]int
	// lag is how many listings omit a backup after its POST; -1: forever.
	lag int
	// resetPOSTs: the next POSTs are processed, then their connection is
	// closed without an answer.
	resetPOSTs int
	// dropPOSTs: the next POSTs get their connection closed unprocessed;
	// the service processes each later, after processLater listings.
	dropPOSTs    int
	processLater int
	later        []int // listings left before each dropped POST is processed
	// listingStatus, when set, answers every listing with this status.
	listingStatus int
	// failPOSTs: the next POSTs are answered 500, unprocessed.
	failPOSTs int
	// onListing, when set, is called with each listing's number (from
	// 1) before it is answered, under the service's lock.
	onListing func(n int)
	// onPOST, when set, is called with each POST's number (from 1) before
	// it is answered, under the service's lock.
	onPOST func(n int)
	// failing backups end failed instead of succeeding.
	failing map[string]bool
	// spoil, when set, changes each backup's record as it succeeds.
	spoil func(*client.Backup)
	// rawListing, when set, answers the next listing, once.
	rawListing string
	// runFor is how long a backup runs before it succeeds.
	runFor time.Duration
	// date, when set, is the Date header of every answer, as is (a cache's
	// stale one, one years off, one that does not parse).
	date string
	// age, when set, is the Age header of the next listing's answer, once
	// (a cache's stored page).
	age string
	// byCreated lists backups by created_at, newest first, as a service
	// whose clock was set back lists a new backup below older ones.
	byCreated bool
	// pageSize, when set, pages the listing (the cursor is an offset).
	pageSize int
	// refuseCursors answers every listing with a cursor 400, as another
	// deployment answers this one's cursor.
	refuseCursors bool

	posts, listings int
}

func newFaultyService(t *testing.T) (*faultyService, *Runner) {
	t.Helper()
	fs := &faultyService{t: t, clock: newFakeClock(), account: "acc_0123456789abcdef", hiddenFor: map[string]int{}, runFor: time.Hour}
	ts := httptest.NewServer(fs)
	t.Cleanup(ts.Close)
	fs.url = ts.URL
	c := newRunner(t, client.Options{BaseURL: ts.URL, APIKey: "bks_test", Clock: fs.clock, MaxRetries: 1}, Settings{})
	return fs, c
}

// elsewhere is a page of another listing of fs's account, as a wrong host
// answers it: its n newest backups (bkp_elsewhere…), newest first, ending.
func (fs *faultyService) elsewhere(n int) string {
	items := make([]string, 0, n)
	for i := n; i >= 1; i-- {
		created := time.Date(2001, 1, i, 0, 0, 0, 0, time.UTC)
		items = append(items, fmt.Sprintf(`{"id":"bkp_elsewhere%07d","account_id":%q,"status":"success","created_at":%q,"completed_at":%q}`,
			i, fs.account, created.Format(time.RFC3339), created.Add(time.Minute).Format(time.RFC3339)))
	}
	return `{"data":[` + strings.Join(items, ",") + `],"pagination":{"limit":50,"next_cursor":null}}`
}

func (fs *faultyService) now() time.Time { return fs.clock.Now().Add(fs.skew).Truncate(time.Second) }

// addOld adds a finished backup created age ago.
func (fs *faultyService) addOld(status string, age time.Duration) client.Backup {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	created := fs.now().Add(-age)
	done := created.Add(time.Minute)
	b := client.Backup{ID: fmt.Sprintf("bkp_old%013d", len(fs.backups)), AccountID: fs.account, Status: status, CreatedAt: created, CompletedAt: &done}
	fs.backups = append([]client.Backup{b}, fs.backups...)
	return b
}

// datedAhead adds to fs's account a backup dated an hour ahead, listed by
// created_at (what starts now is listed below it, as after a clock set
// back), and returns the read before a trigger there.
func datedAhead(t *testing.T, fs *faultyService, w *Runner) looked {
	t.Helper()
	fs.addOld(client.StatusSuccess, -time.Hour)
	fs.mu.Lock()
	fs.byCreated = true
	fs.mu.Unlock()
	l, err := w.look(context.Background(), fs.account)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// queue creates a backup as the service does on an accepted POST.
func (fs *faultyService) queue() {
	b := client.Backup{ID: fmt.Sprintf("bkp_new%013d", fs.posts), AccountID: fs.account, Status: client.StatusRunning, CreatedAt: fs.now()}
	fs.backups = append([]client.Backup{b}, fs.backups...)
	fs.hiddenFor[b.ID] = fs.lag
}

func (fs *faultyService) queuedIDs() []string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	var out []string
	for _, b := range fs.backups {
		if strings.HasPrefix(b.ID, "bkp_new") {
			out = append(out, b.ID)
		}
	}
	return out
}

func (fs *faultyService) counts() (posts, listings int) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.posts, fs.listings
}

func (fs *faultyService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	w.Header().Set("X-Request-ID", "6f1c2a9e-0b7d-4c3e-9a51-2d8e4f7b6a10")
	w.Header().Set("Date", fs.now().UTC().Format(http.TimeFormat))
	if fs.date != "" {
		w.Header()["Date"] = []string{fs.date}
	}
	base := "/api/v1/accounts/" + fs.account
	for i, b := range fs.backups {
		if b.Status == client.StatusRunning && !fs.now().Before(b.CreatedAt.Add(fs.runFor)) {
			done := b.CreatedAt.Add(fs.runFor)
			fs.backups[i].Status, fs.backups[i].CompletedAt = client.StatusSuccess, &done
			if fs.failing[b.ID] {
				fs.backups[i].Status = client.StatusFailed
			}
			if fs.spoil != nil && fs.backups[i].Status == client.StatusSuccess {
				fs.spoil(&fs.backups[i])
			}
		}
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == base+"/backup":
		fs.posts++
		if fs.onPOST != nil {
			fs.onPOST(fs.posts)
		}
		if fs.failPOSTs > 0 {
			fs.failPOSTs--
			fs.problem(w, http.StatusInternalServerError, "Internal Server Error")
			return
		}
		if fs.dropPOSTs > 0 {
			fs.dropPOSTs--
			fs.later = append(fs.later, fs.processLater)
			fs.hangUp(w)
			return
		}
		for _, b := range fs.backups {
			if client.InProgress(b.Status) {
				fs.problem(w, http.StatusConflict, "Conflict")
				return
			}
		}
		fs.queue()
		if fs.resetPOSTs > 0 {
			fs.resetPOSTs--
			fs.hangUp(w)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		_ = json.NewEncoder(w).Encode(client.Account{ID: fs.account, Name: "crm", BackupStatus: client.StatusPending, Platform: "slack", ServiceType: "backup"})
	case r.Method == http.MethodGet && r.URL.Path == base+"/backups":
		fs.listings++
		if fs.onListing != nil {
			fs.onListing(fs.listings)
		}
		for i := range fs.later {
			if fs.later[i]--; fs.later[i] == 0 {
				fs.queue()
			}
		}
		if fs.age != "" {
			w.Header().Set("Age", fs.age)
			fs.age = ""
		}
		if fs.refuseCursors && r.URL.Query().Get("cursor") != "" {
			fs.problem(w, http.StatusBadRequest, "Bad Request")
			return
		}
		if raw := fs.rawListing; raw != "" {
			fs.rawListing = ""
			_, _ = w.Write([]byte(raw))
			return
		}
		if fs.listingStatus != 0 {
			fs.problem(w, fs.listingStatus, http.StatusText(fs.listingStatus))
			return
		}
		data, listed := []client.Backup{}, fs.backups
		if fs.byCreated {
			listed = slices.Clone(fs.backups)
			slices.SortStableFunc(listed, func(a, b client.Backup) int { return b.CreatedAt.Compare(a.CreatedAt) })
		}
		for _, b := range listed {
			switch n := fs.hiddenFor[b.ID]; {
			case n < 0:
				continue
			case n > 0:
				fs.hiddenFor[b.ID]--
				continue
			}
			data = append(data, b)
		}
		var next any
		if fs.pageSize > 0 {
			from, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
			if from+fs.pageSize < len(data) {
				next = strconv.Itoa(from + fs.pageSize)
			}
			data = data[min(from, len(data)):min(from+fs.pageSize, len(data))]
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"data": data, "pagination": map[string]any{"limit": 50, "next_cursor": next}})
	default:
		fs.problem(w, http.StatusNotFound, "Resource not found.")
	}
}

func (fs *faultyService) problem(w http.ResponseWriter, status int, title string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"title": title, "status": status, "request_id": "6f1c2a9e-0b7d-4c3e-9a51-2d8e4f7b6a10"})
}

// hangUp closes the connection without an answer, after the request was
// read: the client cannot tell whether it was processed.
func (fs *faultyService) hangUp(w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		fs.t.Error(err)
		return
	}
	_ = conn.Close()
}
