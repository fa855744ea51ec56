package mockservice

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The admin API's failure controls (admin API v1, documented in the guide
// "Integration tests against the mock service"): each makes the service
// fail in one way a module's pipeline must survive, until POST /_mock/reset.
//
//	POST /_mock/accounts/{id}/state                {"state": "paused"}
//	POST /_mock/accounts/{id}/fail-backups         {"count": 1, "error": "quota exceeded"}
//	POST /_mock/accounts/{id}/hold                 {"duration": "60s"}
//	POST /_mock/accounts/{id}/lose-trigger-answer  {"how": "error", "count": 1}
//	POST /_mock/answers                            {"status": 503, "count": 2, "route": "trigger_backup"}
//	POST /_mock/clock                              {"offset": "-90s"}
//
// and two that make the service misreport, for the provider's own paths
// (which backup counts) rather than a module's:
//
//	POST /_mock/accounts/{id}/record-quirk         {"quirk": "no_completed_at"} (or "other_account", ...)
//	POST /_mock/listing-lag                        {"lag": "5s"}
//
// Bodies are JSON objects, read strictly: an unknown field, a value of the
// wrong type or out of range is refused (400) with a problem document
// naming the field and why, in its detail and in RFC 7807's invalid-params.

// Limits of the controls' values.
const (
	maxHold       = 24 * time.Hour
	maxRetryAfter = 24 * time.Hour
	maxOffset     = 366 * 24 * time.Hour
	maxLag        = time.Hour
	maxTextLen    = 1024
)

// defaultFailure is the error text of a failed backup when none is given:
// the -roles failing account's.
const defaultFailure = "the platform refused the export"

// fieldError is a control's request refused: the field, and why.
type fieldError struct{ name, reason string }

func (e *fieldError) Error() string { return fmt.Sprintf("Field %q %s.", e.name, e.reason) }

// accountControls are the controls under /_mock/accounts/{id}/.
var accountControls = []string{"state", "fail-backups", "hold", "lose-trigger-answer", "record-quirk"}

// serveAccountControl answers POST /_mock/accounts/{id}/{control}.
func (s *Server) serveAccountControl(w http.ResponseWriter, r *http.Request, requestID string) {
	id, control, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/_mock/accounts/"), "/")
	if !slices.Contains(accountControls, control) {
		writeReply(w, problemReply(http.StatusNotFound, titleNotFound, "No such admin endpoint: "+r.Method+" "+r.URL.Path+
			". Account controls: "+strings.Join(accountControls, ", ")+".", r, requestID))
		return
	}
	var err error
	switch control {
	case "state":
		err = s.controlState(r, id)
	case "fail-backups":
		err = s.controlFailBackups(r, id)
	case "hold":
		err = s.controlHold(r, id)
	case "lose-trigger-answer":
		err = s.controlLoseTriggerAnswer(r, id)
	case "record-quirk":
		err = s.controlRecordQuirk(r, id)
	}
	writeControlResult(w, r, requestID, err)
}

// noAccountError: the account of a control is not one the mock serves.
type noAccountError struct{ id string }

func (e *noAccountError) Error() string { return "No account " + e.id + "." }

// writeControlResult answers a control: 204 when it took, else the refusal.
func writeControlResult(w http.ResponseWriter, r *http.Request, requestID string, err error) {
	var invalid *fieldError
	var missing *noAccountError
	switch {
	case err == nil:
		w.WriteHeader(http.StatusNoContent)
	case errors.As(err, &invalid):
		writeReply(w, invalidReply(invalid, r, requestID))
	case errors.As(err, &missing):
		writeReply(w, problemReply(http.StatusNotFound, titleNotFound, missing.Error(), r, requestID))
	default:
		writeReply(w, problemReply(http.StatusConflict, titleConflict, err.Error(), r, requestID))
	}
}

// withAccount runs f on the account id names, under s.mu, or says there is
// none (deleted accounts included).
func (s *Server) withAccount(id string, f func(*account)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	acc := s.accounts[id]
	if acc == nil || acc.deleted {
		return &noAccountError{id}
	}
	f(acc)
	return nil
}

var accountStates = []AccountState{StateActive, StatePaused, StateSubscriptionLapsed, StateNeedsReauthorization}

// controlState sets whether the account is backupable: a trigger of an
// account not active answers the service's 422.
func (s *Server) controlState(r *http.Request, id string) error {
	var body struct {
		State *string `json:"state"`
	}
	if err := decodeControl(r, &body, "state"); err != nil {
		return err
	}
	if body.State == nil || !slices.Contains(accountStates, AccountState(*body.State)) {
		return &fieldError{"state", "must be one of " + joinStates() + got(body.State)}
	}
	return s.withAccount(id, func(acc *account) { s.ctl.setAccountState(acc, AccountState(*body.State)) })
}

func joinStates() string {
	names := make([]string, len(accountStates))
	for i, st := range accountStates {
		names[i] = string(st)
	}
	return strings.Join(names, ", ")
}

// controlFailBackups makes the account's next count backups (every one
// when count is left out) end failed with the error text.
func (s *Server) controlFailBackups(r *http.Request, id string) error {
	var body struct {
		Count *int    `json:"count"`
		Error *string `json:"error"`
	}
	if err := decodeControl(r, &body, "count", "error"); err != nil {
		return err
	}
	n, text := -1, defaultFailure
	if body.Count != nil {
		if n = *body.Count; n < 0 {
			return &fieldError{"count", fmt.Sprintf("must be 0 or more (leave it out for every backup until a reset), not %d", n)}
		}
	}
	if body.Error != nil {
		if text = *body.Error; text == "" || len(text) > maxTextLen {
			return &fieldError{"error", fmt.Sprintf("must be 1 to %d bytes of text (leave it out for %q)", maxTextLen, defaultFailure)}
		}
	}
	return s.withAccount(id, func(acc *account) { s.ctl.failBackups(acc.id, n, text) })
}

// controlHold keeps the account's backup in progress, or else its next
// one, running for the duration: triggers meanwhile answer 409.
func (s *Server) controlHold(r *http.Request, id string) error {
	var body struct {
		Duration *string `json:"duration"`
	}
	if err := decodeControl(r, &body, "duration"); err != nil {
		return err
	}
	d, err := parseDuration("duration", body.Duration, true)
	if err != nil {
		return err
	}
	if d <= 0 || d > maxHold {
		return &fieldError{"duration", fmt.Sprintf("must be more than 0s and at most %v, not %v", maxHold, d)}
	}
	return s.withAccount(id, func(acc *account) { s.ctl.hold(acc, s.clock.Now(), d) })
}

// controlLoseTriggerAnswer loses the answers of the account's next count
// triggers (default 1) once the service has processed them: a 500, or a
// connection closed without an answer.
func (s *Server) controlLoseTriggerAnswer(r *http.Request, id string) error {
	var body struct {
		How   *string `json:"how"`
		Count *int    `json:"count"`
	}
	if err := decodeControl(r, &body, "how", "count"); err != nil {
		return err
	}
	how := lostAsError
	if body.How != nil {
		if how = lostHow(*body.How); how != lostAsError && how != lostAsDrop {
			return &fieldError{"how", `must be "error" (a 500 once processed) or "drop" (the connection closed without an answer)` + got(body.How)}
		}
	}
	n, err := positiveCount(body.Count)
	if err != nil {
		return err
	}
	return s.withAccount(id, func(acc *account) { s.ctl.loseTriggerAnswers(acc.id, n, how) })
}

// recordQuirks are the record quirks by the names the admin API takes.
var recordQuirks = []struct {
	name  string
	quirk RecordQuirk
}{
	{"none", QuirkNone},
	{"no_completed_at", QuirkNoCompletedAt},
	{"completed_before_created", QuirkCompletedBeforeCreated},
	{"error_set", QuirkErrorSet},
	{"future_dated", QuirkFutureDated},
	{"other_account", QuirkOtherAccount},
}

// controlRecordQuirk makes the records of the account's backups queued from
// now on contradict themselves once they succeed, or name another account.
func (s *Server) controlRecordQuirk(r *http.Request, id string) error {
	var body struct {
		Quirk *string `json:"quirk"`
	}
	if err := decodeControl(r, &body, "quirk"); err != nil {
		return err
	}
	names := make([]string, len(recordQuirks))
	for i, q := range recordQuirks {
		names[i] = q.name
		if body.Quirk != nil && *body.Quirk == q.name {
			return s.withAccount(id, func(acc *account) { s.ctl.setRecordQuirk(acc, q.quirk) })
		}
	}
	return &fieldError{"quirk", "must be one of " + strings.Join(names, ", ") + got(body.Quirk)}
}

// serveListingLag answers POST /_mock/listing-lag: the backups listing
// leaves out each backup for lag after it was queued, as a read replica
// behind its primary does.
func (s *Server) serveListingLag(w http.ResponseWriter, r *http.Request, requestID string) {
	writeControlResult(w, r, requestID, s.controlListingLag(r))
}

func (s *Server) controlListingLag(r *http.Request) error {
	var body struct {
		Lag *string `json:"lag"`
	}
	if err := decodeControl(r, &body, "lag"); err != nil {
		return err
	}
	d, err := parseDuration("lag", body.Lag, true)
	if err != nil {
		return err
	}
	if d < 0 || d > maxLag {
		return &fieldError{"lag", fmt.Sprintf("must be from 0s to %v, not %v", maxLag, d)}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ctl.setListingLag(s, d)
	return nil
}

// serveAnswers answers POST /_mock/answers: the next count requests (of
// route and account, when given) get a problem document of status,
// without being processed.
func (s *Server) serveAnswers(w http.ResponseWriter, r *http.Request, requestID string) {
	writeControlResult(w, r, requestID, s.controlAnswers(r))
}

func (s *Server) controlAnswers(r *http.Request) error {
	var body struct {
		Status     *int    `json:"status"`
		Count      *int    `json:"count"`
		Route      *string `json:"route"`
		AccountID  *string `json:"account_id"`
		Detail     *string `json:"detail"`
		RetryAfter *string `json:"retry_after"`
	}
	if err := decodeControl(r, &body, "status", "count", "route", "account_id", "detail", "retry_after"); err != nil {
		return err
	}
	a := &answerControl{}
	if body.Status == nil || *body.Status < 400 || *body.Status > 599 {
		reason := "must be an HTTP error status, 400 to 599"
		if body.Status != nil {
			reason += fmt.Sprintf(", not %d", *body.Status)
		}
		return &fieldError{"status", reason}
	}
	a.status = *body.Status
	a.detail = defaultDetail(a.status)
	var err error
	if a.remaining, err = positiveCount(body.Count); err != nil {
		return err
	}
	if body.Route != nil {
		if a.route = Route(*body.Route); !slices.Contains(routes, a.route) {
			return &fieldError{"route", "must be one of " + joinRoutes() + got(body.Route)}
		}
	}
	if body.AccountID != nil {
		if a.accountID = *body.AccountID; !accountIDFormat.MatchString(a.accountID) {
			return &fieldError{"account_id", "must be acc_ followed by 16 letters or digits" + got(body.AccountID)}
		}
	}
	if body.Detail != nil {
		if a.detail = *body.Detail; len(a.detail) > maxTextLen {
			return &fieldError{"detail", fmt.Sprintf("must be at most %d bytes", maxTextLen)}
		}
	}
	if body.RetryAfter != nil {
		if a.retryAfter, err = parseDuration("retry_after", body.RetryAfter, false); err != nil {
			return err
		}
		if a.retryAfter < 0 || a.retryAfter > maxRetryAfter || a.retryAfter%time.Second != 0 {
			return &fieldError{"retry_after", fmt.Sprintf("must be whole seconds from 0s to %v (Retry-After counts seconds), not %v", maxRetryAfter, a.retryAfter)}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if acc := s.accounts[a.accountID]; a.accountID != "" && (acc == nil || acc.deleted) {
		return &noAccountError{a.accountID} // an answer aimed at no account would wait in a slot for ever
	}
	if !s.ctl.addAnswer(a) {
		return fmt.Errorf("%d answers are already waiting to be given; POST /_mock/reset drops them", maxAnswerControls)
	}
	return nil
}

// defaultDetail is the detail of an answer given in the service's place:
// the document's for a 500, none for a 401 (the service gives none), else
// one that says who answered.
func defaultDetail(status int) string {
	switch status {
	case http.StatusInternalServerError:
		return "An unexpected error occurred."
	case http.StatusUnauthorized:
		return ""
	}
	return fmt.Sprintf("backup-mock answered %d in the service's place (POST /_mock/answers).", status)
}

// serveClock answers POST /_mock/clock: the service's clock runs offset
// ahead (behind when negative) in the Date header and in the records of
// backups queued from now on.
func (s *Server) serveClock(w http.ResponseWriter, r *http.Request, requestID string) {
	writeControlResult(w, r, requestID, s.controlClock(r))
}

// faultFields are the fields of POST /_mock/faults, as the integration guide names them.
var faultFields = []string{"Kind", "Route", "AccountID", "Times", "PerRoute", "Probability", "RetryAfter", "Latency", "Location",
	"Front (Status, JSON, Date, Skew, Processed, Relay, Age)"}

// controlFault switches on the fault in the body, read as strictly as the other controls.
func (s *Server) controlFault(r *http.Request) error {
	var f Fault
	if err := decodeControl(r, &f, faultFields...); err != nil {
		return err
	}
	if !f.Kind.valid() {
		return &fieldError{"Kind", fmt.Sprintf("must be a fault kind from %d to %d (the integration guide's table), not %d", FaultServerError, FaultEmptyHistory, f.Kind)}
	}
	if err := f.check(); err != nil {
		return err
	}
	s.mu.Lock()
	_, known := s.accounts[f.AccountID]
	s.mu.Unlock()
	if f.AccountID != "" && !known {
		return &fieldError{"AccountID", "is no account of this mock: " + strconv.Quote(f.AccountID)}
	}
	s.AddFault(f)
	return nil
}

func (s *Server) controlClock(r *http.Request) error {
	var body struct {
		Offset *string `json:"offset"`
	}
	if err := decodeControl(r, &body, "offset"); err != nil {
		return err
	}
	d, err := parseDuration("offset", body.Offset, true)
	if err != nil {
		return err
	}
	if d < -maxOffset || d > maxOffset {
		return &fieldError{"offset", fmt.Sprintf("must be at most %v either way, not %v", maxOffset, d)}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ctl.setClockOffset(s, d)
	return nil
}

// positiveCount is a count of 1 or more, 1 when left out.
func positiveCount(count *int) (int, error) {
	if count == nil {
		return 1, nil
	}
	if *count < 1 {
		return 0, &fieldError{"count", fmt.Sprintf("must be 1 or more, not %d", *count)}
	}
	return *count, nil
}

// parseDuration reads a field written as a Go duration ("30s"; a clock
// offset may be negative, "-1m30s").
func parseDuration(name string, v *string, required bool) (time.Duration, error) {
	example := `"30s"`
	if name == "offset" {
		example = `"30s" or "-1m30s"`
	}
	if v == nil {
		if required {
			return 0, &fieldError{name, "is required: a duration such as " + example}
		}
		return 0, nil
	}
	d, err := time.ParseDuration(*v)
	if err != nil {
		return 0, &fieldError{name, "must be a duration such as " + example + got(v)}
	}
	return d, nil
}

// got is ", not <value>" for a reason, or "" when the field was left out.
func got(v *string) string {
	if v == nil {
		return ""
	}
	return fmt.Sprintf(", not %q", *v)
}

// decodeControl reads a control's body, a JSON object of the named fields
// (an empty body is an empty object), into v.
func decodeControl(r *http.Request, v any, fields ...string) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return decodeError(err, fields)
	}
	if name, ok := repeatedField(body); ok {
		// encoding/json keeps the last of two: a control that did the one the user did not mean.
		return &fieldError{name, "is given more than once"}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err = dec.Decode(v)
	if errors.Is(err, io.EOF) {
		return nil
	}
	if err == nil {
		if dec.Decode(&json.RawMessage{}) != io.EOF {
			return &fieldError{"body", "must hold one JSON object, and nothing after it"}
		}
		return nil
	}
	return decodeError(err, fields)
}

// repeatedField is the first field a JSON object names twice; false for
// anything else (what the decoder then refuses, it names).
func repeatedField(body []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", false
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		name, isName := t.(string)
		if err != nil || !isName {
			return "", false
		}
		if seen[name] {
			return name, true
		}
		seen[name] = true
		if dec.Decode(&json.RawMessage{}) != nil {
			return "", false
		}
	}
	return "", false
}

// decodeError names the field or the part of a control's body a decode refused.
func decodeError(err error, fields []string) error {
	var (
		syntax   *json.SyntaxError
		typ      *json.UnmarshalTypeError
		tooLarge *http.MaxBytesError
	)
	switch {
	case errors.As(err, &tooLarge):
		return &fieldError{"body", fmt.Sprintf("must be at most %d bytes", tooLarge.Limit)}
	case errors.As(err, &syntax):
		return &fieldError{"body", fmt.Sprintf("must be JSON: %v (at byte %d)", syntax, syntax.Offset)}
	case errors.As(err, &typ) && typ.Field == "":
		return &fieldError{"body", "must be a JSON object, not a JSON " + typ.Value}
	case errors.As(err, &typ):
		return &fieldError{typ.Field, "must be a JSON " + jsonKind(typ.Type.String()) + ", not a JSON " + typ.Value}
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return &fieldError{strings.Trim(name, `"`), "is not a field of this control; its fields: " + strings.Join(fields, ", ")}
	}
	return &fieldError{"body", "must be complete JSON: " + err.Error()}
}

// jsonKind names the JSON kind of a Go field type.
func jsonKind(goType string) string {
	switch strings.TrimPrefix(goType, "*") {
	case "int", "mockservice.FaultKind", "mockservice.FrontDate":
		return "number (an integer)"
	case "time.Duration":
		return "number (nanoseconds)"
	case "string", "mockservice.Route":
		return "string"
	}
	return goType
}

// invalidReply is the 400 of a refused control: the problem names the
// field in its detail and in RFC 7807's invalid-params extension.
func invalidReply(f *fieldError, r *http.Request, requestID string) *reply {
	type param struct {
		Name   string `json:"name"`
		Reason string `json:"reason"`
	}
	rep := jsonReply(http.StatusBadRequest, struct {
		Title         string  `json:"title"`
		Status        int     `json:"status"`
		Detail        string  `json:"detail"`
		Instance      string  `json:"instance"`
		RequestID     string  `json:"request_id"`
		InvalidParams []param `json:"invalid-params"`
	}{titleBadRequest, http.StatusBadRequest, f.Error(), r.URL.Path, requestID, []param{{f.name, f.reason}}})
	rep.header.Set("Content-Type", "application/problem+json")
	return rep
}
