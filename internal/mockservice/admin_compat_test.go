package mockservice

import (
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The guide "Integration tests against the mock service" documents the
// mock's command line v1 and admin API v1 as a stable interface for module
// authors. These tests read the guide's template and hold the mock to it:
// every curl line of its admin API section runs, as written, against the
// mock over HTTP and must get the status the guide shows after it; the
// tables of fault kinds, roles and flags must name exactly what the mock
// has. A change to the mock that breaks the documented interface fails
// here; so does one the guide does not show yet.
const guidePath = "../../templates/guides/integration-testing.md.tmpl"

func readGuide(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(guidePath)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// section is the text of the guide from the heading "## <title>" to the
// next "## " heading.
func section(t *testing.T, guide, title string) string {
	t.Helper()
	_, rest, ok := strings.Cut(guide, "\n## "+title+"\n")
	if !ok {
		t.Fatalf("the guide has no section %q", title)
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// docCall is one curl line of the guide and the status shown after it.
type docCall struct {
	line   string
	method string
	url    string
	header http.Header
	host   string
	body   string
	status int
}

var (
	shBlock    = regexp.MustCompile("(?s)```sh\n(.*?)```")
	statusNote = regexp.MustCompile(`^# → (\d{3})$`)
)

// docCalls parses the curl lines of the sh blocks of text: each must be
// followed by "# → <status>". It understands the quoting and the curl
// options the guide uses, and refuses anything else, so that the guide
// cannot show a request this test does not run.
func docCalls(t *testing.T, text string, env map[string]string) []docCall {
	t.Helper()
	var calls []docCall
	for _, block := range shBlock.FindAllStringSubmatch(text, -1) {
		lines := strings.Split(strings.ReplaceAll(block[1], "\\\n", " "), "\n")
		for i := 0; i < len(lines); i++ {
			line := strings.TrimSpace(lines[i])
			if line == "" || !strings.HasPrefix(line, "curl ") {
				if line != "" && !strings.HasPrefix(line, "# ") {
					t.Fatalf("guide: %q in the admin API section is not a curl line", line)
				}
				continue
			}
			if i+1 >= len(lines) || !statusNote.MatchString(strings.TrimSpace(lines[i+1])) {
				t.Fatalf("guide: %q is not followed by \"# → <status>\"", line)
			}
			c := parseCurl(t, line, env)
			c.status, _ = strconv.Atoi(statusNote.FindStringSubmatch(strings.TrimSpace(lines[i+1]))[1])
			calls = append(calls, c)
			i++
		}
	}
	return calls
}

func parseCurl(t *testing.T, line string, env map[string]string) docCall {
	t.Helper()
	words := shellWords(t, line, env)
	c := docCall{line: line, method: http.MethodGet, header: http.Header{}}
	for i := 1; i < len(words); i++ {
		w := words[i]
		next := func() string {
			i++
			if i >= len(words) {
				t.Fatalf("guide: %q: %s wants a value", line, w)
			}
			return words[i]
		}
		switch {
		case w == "-sS" || w == "-s" || w == "-S" || w == "-i" || w == "-f" || w == "-fsS":
		case w == "-X":
			c.method = next()
		case w == "-H":
			name, value, ok := strings.Cut(next(), ":")
			if !ok {
				t.Fatalf("guide: %q: header %q", line, words[i])
			}
			if strings.EqualFold(name, "Host") {
				c.host = strings.TrimSpace(value)
				continue
			}
			c.header.Add(name, strings.TrimSpace(value))
		case w == "-d":
			c.body = next()
			if c.method == http.MethodGet {
				c.method = http.MethodPost
			}
		case strings.HasPrefix(w, "-"):
			t.Fatalf("guide: %q: curl option %s is unknown to this test", line, w)
		default:
			if c.url != "" {
				t.Fatalf("guide: %q: two URLs", line)
			}
			c.url = w
		}
	}
	if c.url == "" {
		t.Fatalf("guide: %q: no URL", line)
	}
	return c
}

// shellWords splits a command line as sh does for the guide's lines: words
// separated by blanks, '…' literal, "…" and bare words with $NAME and
// ${NAME} expanded from env (a name env lacks fails the test).
func shellWords(t *testing.T, line string, env map[string]string) []string {
	t.Helper()
	var (
		words []string
		cur   strings.Builder
		in    bool // inside a word
		quote byte
	)
	expand := func(i int) int { // line[i] == '$'; returns the index after the name
		j := i + 1
		braced := j < len(line) && line[j] == '{'
		if braced {
			j++
		}
		k := j
		for k < len(line) && (line[k] == '_' || line[k] >= 'A' && line[k] <= 'Z' || line[k] >= '0' && line[k] <= '9') {
			k++
		}
		name := line[j:k]
		if braced {
			if k >= len(line) || line[k] != '}' {
				t.Fatalf("guide: %q: unclosed ${", line)
			}
			k++
		}
		v, ok := env[name]
		if !ok {
			t.Fatalf("guide: %q: $%s is not a setting of the mock", line, name)
		}
		cur.WriteString(v)
		return k
	}
	for i := 0; i < len(line); {
		ch := line[i]
		switch {
		case quote == '\'':
			if ch == '\'' {
				quote = 0
			} else {
				cur.WriteByte(ch)
			}
			i++
		case quote == '"':
			switch ch {
			case '"':
				quote = 0
				i++
			case '$':
				i = expand(i)
			default:
				cur.WriteByte(ch)
				i++
			}
		case ch == ' ' || ch == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
			i++
		case ch == '\'' || ch == '"':
			quote, in = ch, true
			i++
		case ch == '$':
			in = true
			i = expand(i)
		default:
			in = true
			cur.WriteByte(ch)
			i++
		}
	}
	if quote != 0 {
		t.Fatalf("guide: %q: unclosed quote", line)
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// TestAdminAPICompat runs the admin API section's curl lines against the
// mock over HTTP, in the guide's order, and checks each documented status,
// the problem bodies of refusals, the stats fields the guide shows, and
// that the documented fault body means what the guide's -fault example
// means.
func TestAdminAPICompat(t *testing.T) {
	t.Parallel()
	guide := readGuide(t)
	admin := section(t, guide, "Admin API v1")
	s := New(Options{Seed: 33})
	s.AddExamples()
	ts := httptest.NewServer(s)
	defer ts.Close()
	env := map[string]string{"BACKUP_BASE_URL": ts.URL, "BACKUP_MOCK_ADMIN_TOKEN": s.AdminToken(), "BACKUP_API_KEY": s.DemoKey()}

	calls := docCalls(t, admin, env)
	if len(calls) < 10 {
		t.Fatalf("the admin API section shows %d curl lines", len(calls))
	}
	seen := map[string]bool{}  // "METHOD /path" of successful calls
	statuses := map[int]bool{} // every documented status
	tokenForms := map[string]bool{}
	for _, c := range calls {
		req, body, ok := runDocCall(t, ts, c)
		statuses[c.status] = true
		if !ok || c.status >= 400 {
			continue
		}
		seen[c.method+" "+req.URL.Path] = true
		if c.header.Get(AdminTokenHeader) != "" {
			tokenForms[AdminTokenHeader] = true
		}
		if strings.HasPrefix(c.header.Get("Authorization"), "Bearer ") {
			tokenForms["Authorization"] = true
		}
		switch req.URL.Path {
		case "/_mock/stats":
			checkDocStats(t, guide, body)
		case "/_mock/faults":
			checkDocFault(t, guide, c.body)
		}
	}
	for _, want := range []string{"GET /_mock/stats", "POST /_mock/reset", "POST /_mock/faults", "POST /_mock/rate-limit"} {
		if !seen[want] {
			t.Errorf("the guide shows no successful %s", want)
		}
	}
	if len(tokenForms) != 2 {
		t.Errorf("the guide's successful calls use the token as %v; want both Authorization: Bearer and %s", slices.Sorted(maps.Keys(tokenForms)), AdminTokenHeader)
	}
	// Every status of the guide's table of refusals has its example.
	for _, m := range regexp.MustCompile(`(?m)^\| (\d{3}) \|`).FindAllStringSubmatch(admin, -1) {
		if n, _ := strconv.Atoi(m[1]); !statuses[n] {
			t.Errorf("the guide's table lists %d, but no curl line shows it", n)
		}
	}
}

// runDocCall sends one curl line of the guide to ts and checks that it
// answers the status the guide shows, and that a refusal is the problem
// body the guide describes; ok when both hold.
func runDocCall(t *testing.T, ts *httptest.Server, c docCall) (req *http.Request, body []byte, ok bool) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), c.method, c.url, strings.NewReader(c.body))
	if err != nil {
		t.Fatalf("%s: %v", c.line, err)
	}
	req.Header = c.header
	if c.host != "" {
		req.Host = c.host
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatalf("%s: %v", c.line, err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != c.status {
		t.Errorf("%s\n  answered %d, the guide shows %d: %s", c.line, resp.StatusCode, c.status, body)
		return req, body, false
	}
	if c.status >= 400 {
		checkDocProblem(t, c, resp, body)
	}
	return req, body, true
}

// checkDocProblem: a refusal is the problem body the guide describes.
func checkDocProblem(t *testing.T, c docCall, resp *http.Response, body []byte) {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("%s: Content-Type %q, want application/problem+json", c.line, ct)
	}
	var p map[string]any
	if err := json.Unmarshal(body, &p); err != nil {
		t.Errorf("%s: %v: %s", c.line, err, body)
		return
	}
	// The fields the guide names for refusals.
	for _, f := range []string{"title", "status", "detail", "instance", "request_id"} {
		if _, ok := p[f]; !ok {
			t.Errorf("%s: the problem body lacks %q: %s", c.line, f, body)
		}
	}
	if st, _ := p["status"].(float64); int(st) != c.status {
		t.Errorf("%s: body status %v, want %d", c.line, p["status"], c.status)
	}
	if want := `Bearer realm="backup-mock admin"`; c.status == http.StatusUnauthorized && resp.Header.Get("WWW-Authenticate") != want {
		t.Errorf("%s: WWW-Authenticate %q, want %q", c.line, resp.Header.Get("WWW-Authenticate"), want)
	}
}

// checkDocStats: the stats answer has exactly the fields of the guide's
// JSON example.
func checkDocStats(t *testing.T, guide string, body []byte) {
	t.Helper()
	stats := section(t, guide, "Admin API v1")
	_, stats, _ = strings.Cut(stats, "### GET /_mock/stats")
	m := regexp.MustCompile("(?s)```json\n(.*?)```").FindStringSubmatch(stats)
	if m == nil {
		t.Fatal("the guide shows no JSON answer of GET /_mock/stats")
	}
	var doc, got map[string]any
	if err := json.Unmarshal([]byte(m[1]), &doc); err != nil {
		t.Fatalf("the guide's stats example: %v", err)
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("GET /_mock/stats: %v: %s", err, body)
	}
	if d, g := slices.Sorted(maps.Keys(doc)), slices.Sorted(maps.Keys(got)); !slices.Equal(d, g) {
		t.Errorf("GET /_mock/stats answers the fields %v; the guide shows %v", g, d)
	}
	for _, k := range []string{"requests", "backups_queued"} {
		if _, ok := got[k].(map[string]any); !ok {
			t.Errorf("stats %q is %T, want an object", k, got[k])
		}
	}
}

// checkDocFault: the guide's admin API fault body and its -fault example
// ("Two 429s with Retry-After: 3 on triggers") are the same fault.
func checkDocFault(t *testing.T, guide, body string) {
	t.Helper()
	var got Fault
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	var shown []string
	for _, m := range regexp.MustCompile("`-fault ([^`]*)`").FindAllStringSubmatch(section(t, guide, "Faults"), -1) {
		if _, example := faultNames[strings.Split(m[1], ",")[0]]; !example {
			continue // the flag's syntax, not an example
		}
		want, err := ParseFault(m[1])
		if err != nil {
			t.Fatal(err)
		}
		if got == want {
			return
		}
		shown = append(shown, m[1])
	}
	t.Errorf("the guide's fault body %s is %+v, which none of its -fault examples %q is", body, got, shown)
}

// TestGuideFaultKinds: the guide's table of fault kinds gives every kind
// ParseFault knows, with the number the admin API takes for it.
func TestGuideFaultKinds(t *testing.T) {
	t.Parallel()
	faults := section(t, readGuide(t), "Faults")
	rows := regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\| (\\d+) \\|").FindAllStringSubmatch(faults, -1)
	var names []string
	for _, r := range rows {
		n, _ := strconv.Atoi(r[2])
		if kind, ok := faultNames[r[1]]; !ok || int(kind) != n {
			t.Errorf("the guide gives fault %s as Kind %d; the mock has %d", r[1], n, kind)
		}
		names = append(names, r[1])
	}
	slices.Sort(names)
	if !slices.Equal(names, FaultNames()) {
		t.Errorf("the guide's fault kinds %v, the mock's %v", names, FaultNames())
	}
	for _, r := range routes {
		if !strings.Contains(faults, "`"+string(r)+"`") {
			t.Errorf("the guide's Faults section does not name the route %s", r)
		}
	}
}

// TestGuideRoles: the guide's table of -roles names every role the mock
// adds, and no other.
func TestGuideRoles(t *testing.T) {
	t.Parallel()
	roles := section(t, readGuide(t), "Accounts and keys with roles")
	var doc []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([A-Z_]+)` \\|").FindAllStringSubmatch(roles, -1) {
		doc = append(doc, m[1])
	}
	var got []string
	for _, r := range New(Options{Seed: 33}).AddRoles() {
		got = append(got, r.Name)
	}
	slices.Sort(doc)
	slices.Sort(got)
	if !slices.Equal(doc, got) {
		t.Errorf("the guide's roles %v, the mock's %v", doc, got)
	}
}

// TestGuideCommandLine: the guide's table of flags names every flag the
// command defines, and no other, and the guide names every setting the
// command prints. Read from the command's source: it is package main.
func TestGuideCommandLine(t *testing.T) {
	t.Parallel()
	guide := readGuide(t)
	src, err := os.ReadFile("../cmd/backup-mock/main.go")
	if err != nil {
		t.Fatal(err)
	}
	var defined []string
	for _, m := range regexp.MustCompile(`flag\.\w+\((?:&\w+, )?"([a-z-]+)"`).FindAllStringSubmatch(string(src), -1) {
		defined = append(defined, m[1])
	}
	var doc []string
	for _, m := range regexp.MustCompile("(?m)^\\| `-([a-z-]+)` \\|").FindAllStringSubmatch(section(t, guide, "Start it"), -1) {
		doc = append(doc, m[1])
	}
	slices.Sort(defined)
	slices.Sort(doc)
	if len(defined) < 10 || !slices.Equal(doc, defined) {
		t.Errorf("the guide's flags %v, the command's %v", doc, defined)
	}
	settings := regexp.MustCompile(`([A-Z][A-Z_]+)=%s`).FindAllStringSubmatch(string(src), -1)
	if len(settings) < 3 {
		t.Fatalf("the command prints %d settings?", len(settings))
	}
	for _, m := range settings {
		if !strings.Contains(guide, m[1]+"=") {
			t.Errorf("the guide does not show the setting %s the command prints", m[1])
		}
	}
}

// controlEndpoints are the failure controls the mock serves, as the guide
// writes them.
func controlEndpoints() []string {
	out := []string{"POST /_mock/answers", "POST /_mock/clock", "POST /_mock/listing-lag"}
	for _, c := range accountControls {
		out = append(out, "POST /_mock/accounts/{account_id}/"+c)
	}
	slices.Sort(out)
	return out
}

var (
	controlRow   = regexp.MustCompile("(?m)^\\| `(POST /_mock/[^`]+)` \\| ([^|]+) \\|")
	docField     = regexp.MustCompile("`([a-z_]+)`:")
	knownFields  = regexp.MustCompile(`its fields: ([a-z_, ]+)$`)
	docAccountID = regexp.MustCompile(`/accounts/acc_[0-9A-Za-z]{16}/`)
)

// TestFailureControlsCompat holds the mock to the guide's section "Failure
// controls": its table names every control the mock serves, and no other,
// with exactly the fields each control reads; its curl lines run, in order,
// against a mock over HTTP and get the statuses shown, each control taking
// at least once; the refusal it shows in full is what the mock answers; and
// the table of failure paths names only controls that exist, each of them.
func TestFailureControlsCompat(t *testing.T) {
	t.Parallel()
	text := section(t, readGuide(t), "Failure controls")
	s := New(Options{Seed: 34})
	s.AddExamples()
	ts := httptest.NewServer(s)
	defer ts.Close()
	env := map[string]string{"BACKUP_BASE_URL": ts.URL, "BACKUP_MOCK_ADMIN_TOKEN": s.AdminToken(), "BACKUP_API_KEY": s.DemoKey()}

	// The table: endpoints, and the fields of each.
	var documented []string
	for _, m := range controlRow.FindAllStringSubmatch(text, -1) {
		documented = append(documented, m[1])
		var fields []string
		for _, f := range docField.FindAllStringSubmatch(m[2], -1) {
			fields = append(fields, f[1])
		}
		slices.Sort(fields)
		if got := controlFields(t, ts, env, m[1]); !slices.Equal(fields, got) {
			t.Errorf("the guide gives %s the fields %v; the mock reads %v", m[1], fields, got)
		}
	}
	slices.Sort(documented)
	if !slices.Equal(documented, controlEndpoints()) {
		t.Errorf("the guide's controls %v, the mock's %v", documented, controlEndpoints())
	}

	// The curl lines.
	calls := docCalls(t, text, env)
	if len(calls) < 20 {
		t.Fatalf("the section shows %d curl lines", len(calls))
	}
	took := map[string]bool{}
	var firstRefusal []byte
	for _, c := range calls {
		req, body, ok := runDocCall(t, ts, c)
		switch {
		case !ok:
		case c.status == http.StatusNoContent:
			took["POST "+docAccountID.ReplaceAllString(req.URL.Path, "/accounts/{account_id}/")] = true
		case c.status == http.StatusBadRequest:
			checkFieldRefusal(t, c, body)
			if firstRefusal == nil {
				firstRefusal = body
			}
		}
	}
	for _, e := range controlEndpoints() {
		if !took[e] {
			t.Errorf("no curl line of the guide shows %s taking (204)", e)
		}
	}
	checkDocRefusal(t, text, firstRefusal)

	// The failure paths, each reached by a control that exists.
	_, paths, _ := strings.Cut(text, "### Which control reaches which failure path")
	used := map[string]bool{}
	for _, row := range regexp.MustCompile(`(?m)^\| [^|]+ \| ([^|]+) \|$`).FindAllStringSubmatch(paths, -1)[1:] { // the header first
		names := regexp.MustCompile("`([a-z-]+)`").FindAllStringSubmatch(row[1], -1)
		if len(names) == 0 && !strings.Contains(row[1], "DELETE /_mock/accounts/") {
			t.Errorf("the failure path row %q names no control", row[0])
		}
		for _, n := range names {
			if e := controlEndpointNamed(n[1]); e != "" {
				used[e] = true
			}
		}
	}
	for _, e := range controlEndpoints() {
		if !used[e] {
			t.Errorf("the table of failure paths names no path for %s", e)
		}
	}
}

// controlEndpointNamed is the endpoint of the control a failure-path row
// names (`hold`, `answers`), or "" for a value (`paused`, `error`).
func controlEndpointNamed(name string) string {
	for _, e := range controlEndpoints() {
		if strings.HasSuffix(e, "/"+name) {
			return e
		}
	}
	return ""
}

// controlFields asks the mock which fields a control reads: its refusal of
// an unknown field lists them.
func controlFields(t *testing.T, ts *httptest.Server, env map[string]string, endpoint string) []string {
	t.Helper()
	path := strings.ReplaceAll(strings.TrimPrefix(endpoint, "POST "), "{account_id}", ExampleAccountID)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, ts.URL+path, strings.NewReader(`{"zz_unknown": 1}`))
	req.Header.Set("Authorization", "Bearer "+env["BACKUP_MOCK_ADMIN_TOKEN"])
	req.Header.Set("Content-Type", "application/json")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p struct {
		Params []struct{ Name, Reason string } `json:"invalid-params"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil || len(p.Params) != 1 {
		t.Fatalf("%s with an unknown field: %d, %v %+v", endpoint, resp.StatusCode, err, p)
	}
	m := knownFields.FindStringSubmatch(p.Params[0].Reason)
	if m == nil {
		t.Fatalf("%s: %q names no fields", endpoint, p.Params[0].Reason)
	}
	fields := strings.Split(m[1], ", ")
	slices.Sort(fields)
	return fields
}

// checkFieldRefusal: a 400 of a control names one field, in its detail and
// in invalid-params.
func checkFieldRefusal(t *testing.T, c docCall, body []byte) {
	t.Helper()
	var p struct {
		Detail string                          `json:"detail"`
		Params []struct{ Name, Reason string } `json:"invalid-params"`
	}
	if err := json.Unmarshal(body, &p); err != nil || len(p.Params) != 1 {
		t.Errorf("%s: %s", c.line, body)
		return
	}
	if want := `Field "` + p.Params[0].Name + `" ` + p.Params[0].Reason + "."; p.Detail != want {
		t.Errorf("%s: detail %q, want %q", c.line, p.Detail, want)
	}
}

// checkDocRefusal: the refusal the guide shows in full is the first one its
// curl lines get, but for the request id.
func checkDocRefusal(t *testing.T, text string, got []byte) {
	t.Helper()
	_, after, _ := strings.Cut(text, "### Refused controls")
	m := regexp.MustCompile("(?s)```json\n(.*?)```").FindStringSubmatch(after)
	if m == nil || got == nil {
		t.Fatal("the guide shows no refused control's answer, or no curl line got one")
	}
	var doc, ans map[string]any
	if err := json.Unmarshal([]byte(m[1]), &doc); err != nil {
		t.Fatalf("the guide's refusal: %v", err)
	}
	if err := json.Unmarshal(got, &ans); err != nil {
		t.Fatal(err)
	}
	delete(doc, "request_id")
	delete(ans, "request_id")
	if d, a := mustJSON(doc), mustJSON(ans); d != a {
		t.Errorf("the guide shows the refusal\n  %s\nthe mock answers\n  %s", d, a)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
