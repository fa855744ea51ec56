package mockservice

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// faultNames are the fault kinds by the names the backup-mock command and
// its users write.
var faultNames = map[string]FaultKind{
	"server-error":      FaultServerError,
	"accept-then-error": FaultAcceptThenError,
	"overload":          FaultOverload,
	"latency":           FaultLatency,
	"malformed-json":    FaultMalformedJSON,
	"truncated-body":    FaultTruncatedBody,
	"invalid-cursor":    FaultInvalidCursor,
	"redirect":          FaultRedirect,
	// Misreports: the service's own answers altered, or a front's in their place.
	"proxy-not-found": FaultProxyNotFound,
	"shuffled-page":   FaultShuffledPage,
	"duplicate-item":  FaultDuplicateItem,
	"front":           FaultFront,
	"foreign-item":    FaultForeignItem,
	"other-history":   FaultOtherHistory,
	"empty-history":   FaultEmptyHistory,
}

// frontDates are a front's Date settings by the names its users write.
var frontDates = map[string]FrontDate{
	"true": FrontDateTrue, "skewed": FrontDateSkewed, "year-1": FrontDateYear1, "year-9999": FrontDateYear9999,
	"unparsable": FrontDateUnparsable, "none": FrontDateNone,
}

// FaultNames lists the names ParseFault knows, sorted.
func FaultNames() []string {
	names := make([]string, 0, len(faultNames))
	for n := range faultNames {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func (k FaultKind) valid() bool { return k >= FaultServerError && k <= FaultEmptyHistory }

// ParseFault reads a fault written as
//
//	kind[,route=R][,account=ID][,times=N][,per-route][,p=F][,retry-after=D][,latency=D][,location=URL]
//
// and, for a front, [,status=N][,json][,date=D][,skew=D][,processed][,relay][,age=D]; for another history, [,paged]
//
// for example "overload,route=trigger_backup,times=2,retry-after=3s";
// latency is at most MaxLatency.
func ParseFault(spec string) (Fault, error) {
	parts := strings.Split(spec, ",")
	kind, ok := faultNames[parts[0]]
	if !ok {
		return Fault{}, fmt.Errorf("unknown fault %q; known: %s", parts[0], strings.Join(FaultNames(), ", "))
	}
	f := Fault{Kind: kind}
	for _, p := range parts[1:] {
		name, value, _ := strings.Cut(p, "=")
		var err error
		switch name {
		case "route":
			f.Route = Route(value)
			if !slices.Contains(routes, f.Route) {
				err = fmt.Errorf("unknown route; known: %s", joinRoutes())
			}
		case "times":
			f.Times, err = strconv.Atoi(value)
		case "per-route":
			f.PerRoute = true
		case "p":
			f.Probability, err = strconv.ParseFloat(value, 64)
		case "retry-after":
			f.RetryAfter, err = time.ParseDuration(value)
		case "latency":
			if f.Latency, err = time.ParseDuration(value); err == nil {
				err = checkLatency(f.Latency)
			}
		case "location":
			f.Location = value
		case "account":
			f.AccountID = value
		case "status":
			f.Front.Status, err = strconv.Atoi(value)
		case "json":
			f.Front.JSON = true
		case "date":
			var ok bool
			if f.Front.Date, ok = frontDates[value]; !ok {
				err = fmt.Errorf("unknown date; known: true, skewed, year-1, year-9999, unparsable, none")
			}
		case "skew":
			f.Front.Skew, err = time.ParseDuration(value)
		case "processed":
			f.Front.Processed = true
		case "relay":
			f.Front.Relay = true
		case "age":
			f.Front.Age, err = time.ParseDuration(value)
		case "paged":
			f.Paged = true
		default:
			err = fmt.Errorf("unknown setting")
		}
		if err != nil {
			return Fault{}, fmt.Errorf("fault %q, %q: %w", spec, p, err)
		}
	}
	if f.Kind == FaultLatency && f.Latency <= 0 {
		return Fault{}, fmt.Errorf("fault %q: latency needs latency=DURATION", spec)
	}
	if err := f.check(); err != nil {
		return Fault{}, fmt.Errorf("fault %q: %s %s", spec, err.name, err.reason)
	}
	return f, nil
}

// check refuses a fault's settings that are out of range, as the admin API
// names them (a front's as Front.Status, ...).
func (f Fault) check() *fieldError {
	switch {
	case f.Route != "" && !slices.Contains(routes, f.Route):
		return &fieldError{"Route", "must be one of " + joinRoutes() + ", or left out for every route, not " + strconv.Quote(string(f.Route))}
	case f.Times < 0:
		return &fieldError{"Times", fmt.Sprintf("must be 0 (every request) or more, not %d", f.Times)}
	case f.Probability < 0 || f.Probability > 1:
		return &fieldError{"Probability", fmt.Sprintf("must be 0 to 1 (0: every matching request), not %v", f.Probability)}
	case f.Latency < 0 || f.Latency > MaxLatency:
		return &fieldError{"Latency", fmt.Sprintf("must be 0 to at most %v, not %v", MaxLatency, f.Latency)}
	case f.Kind != FaultFront && f.Front != Front{}:
		return &fieldError{"Front", "is a front's (Kind 12) only"}
	case f.Paged && f.Kind != FaultOtherHistory:
		return &fieldError{"Paged", "is another deployment's (Kind 14) only"}
	}
	return f.Front.check()
}

// check refuses a front's settings that no front sends: a status that is
// no error, a Date setting the mock does not know, a skew or an Age beyond a year.
func (f Front) check() *fieldError {
	switch {
	case f.Status != 0 && (f.Status < 400 || f.Status > 599):
		return &fieldError{"Front.Status", fmt.Sprintf("must be 400 to 599 (0: 502), not %d", f.Status)}
	case f.Date < FrontDateTrue || f.Date > FrontDateNone:
		return &fieldError{"Front.Date", fmt.Sprintf("must be %d to %d, not %d", FrontDateTrue, FrontDateNone, f.Date)}
	case f.Skew < -maxOffset || f.Skew > maxOffset:
		return &fieldError{"Front.Skew", fmt.Sprintf("must be at most %v either way, not %v", maxOffset, f.Skew)}
	case f.Age < 0 || f.Age > maxOffset:
		return &fieldError{"Front.Age", fmt.Sprintf("must be 0 (none) to %v, not %v", maxOffset, f.Age)}
	}
	return nil
}

// checkLatency refuses a latency fault's delay over MaxLatency.
func checkLatency(d time.Duration) error {
	if d < 0 || d > MaxLatency {
		return fmt.Errorf("latency %v is out of range: a latency fault delays each request by at most %v", d, MaxLatency)
	}
	return nil
}

var routes = []Route{RouteToken, RouteListAccounts, RouteGetAccount, RouteTrigger, RouteListBackups, RouteAuditLogs}

func joinRoutes() string {
	names := make([]string, len(routes))
	for i, r := range routes {
		names[i] = string(r)
	}
	return strings.Join(names, ", ")
}

// Role is an account or a key added to rehearse a failure path.
type Role struct {
	Name  string // for example ACCOUNT_PAUSED or KEY_READ_ONLY
	Value string // the account id or the key
	About string
}

// AddRoles adds one account or key for each refusal the service can give,
// and returns them, so that users can rehearse every failure path without
// writing Go.
func (s *Server) AddRoles() []Role {
	paused := s.AddAccount(AccountSpec{Name: "paused account", State: StatePaused})
	lapsed := s.AddAccount(AccountSpec{Name: "lapsed subscription", State: StateSubscriptionLapsed})
	reauth := s.AddAccount(AccountSpec{Name: "needs re-authorization", State: StateNeedsReauthorization})
	failing := s.AddAccount(AccountSpec{Name: "failing backups", FailWith: "the platform refused the export"})
	restricted := s.AddAccount(AccountSpec{Name: "restricted account"})
	return []Role{
		{"ACCOUNT_PAUSED", paused, "a trigger answers 422 (paused)"},
		{"ACCOUNT_LAPSED", lapsed, "a trigger answers 422 (subscription lapsed)"},
		{"ACCOUNT_REAUTH", reauth, "a trigger answers 422 (connection needs re-authorization)"},
		{"ACCOUNT_FAILING", failing, "every backup ends failed"},
		{"ACCOUNT_RESTRICTED", restricted, "off limits (403) to KEY_RESTRICTED"},
		{"ACCOUNT_FOREIGN", s.ForeignAccountID(), "another organization's account (403)"},
		{"KEY_EXPIRED", s.AddKey(KeySpec{Name: "expired", ExpiresAt: s.clock.Now().Add(-time.Hour)}), "401"},
		{"KEY_READ_ONLY", s.AddKey(KeySpec{Name: "read-only", ReadOnly: true}), "reads work, triggers answer 403"},
		{"KEY_OWNER_REVOKED", s.AddKey(KeySpec{Name: "owner-revoked", OwnerRevoked: true}), "401: its creator lost access"},
		{"KEY_OTHER_ORG", s.AddKey(KeySpec{Name: "other-org", OtherOrganization: true}), "401: another organization's key"},
		{"KEY_RESTRICTED", s.AddKey(KeySpec{Name: "restricted", Restricted: []string{restricted}}), "403 on ACCOUNT_RESTRICTED"},
		{"KEY_EXPIRING", s.AddKey(KeySpec{Name: "expiring", ExpiresAt: s.clock.Now().Add(7 * 24 * time.Hour)}), "valid, expires in 7 days"},
	}
}
