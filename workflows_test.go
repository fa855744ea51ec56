package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A workflow runs third-party code with the job's token and, in the release
// job, the signing key: every action and reusable workflow it uses is pinned
// by full commit SHA (a tag or branch can be moved to other code), with the
// tag it was taken from in a trailing comment, which Dependabot keeps in
// step with the SHA. Local actions (./…) and docker:// images are outside
// this rule.
var (
	// usesKey finds a `uses:` key: at the start of a line, after a list
	// dash, or inside a flow mapping ({ uses: … }).
	usesKey = regexp.MustCompile(`(?:^|[\s{,-])uses:[ \t]*(.*)$`)
	// pinnedRef is owner/repo[/path]@<40 hex>.
	pinnedRef = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(?:/[^@\s]*)?@[0-9a-f]{40}$`)
	// tagComment is the trailing "# v1.2.3" naming the pinned tag.
	tagComment = regexp.MustCompile(`^#\s*v\d+(?:\.\d+)*\S*$`)
)

// unpinnedUses returns one line per `uses:` in text (a workflow named name)
// that is not pinned by commit SHA with its tag in a trailing comment, and
// the number of `uses:` it found.
func unpinnedUses(name, text string) (problems []string, found int) {
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		m := usesKey.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		found++
		value, comment, _ := strings.Cut(m[1], "#")
		// The value ends at a space, or at the , or } of a flow mapping.
		if end := strings.IndexAny(value, " \t,}"); end >= 0 {
			value = value[:end]
		}
		value = strings.Trim(value, `"'`)
		comment = "#" + strings.TrimSpace(comment)
		where := fmt.Sprintf("%s:%d: %s", name, i+1, strings.TrimSpace(line))
		switch {
		case strings.HasPrefix(value, "./"), strings.HasPrefix(value, "docker://"):
		case !pinnedRef.MatchString(value):
			problems = append(problems, where+": not pinned to a 40-hex commit SHA")
		case !tagComment.MatchString(comment):
			problems = append(problems, where+`: no trailing "# vX.Y.Z" naming the pinned tag`)
		}
	}
	return problems, found
}

func TestWorkflowActionsPinnedBySHA(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(".github", "workflows", "*.yml"))
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob(filepath.Join(".github", "workflows", "*.yaml"))
	files = append(files, more...)
	if len(files) == 0 {
		t.Fatal("no workflows under .github/workflows")
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		problems, found := unpinnedUses(file, string(b))
		if found == 0 {
			t.Errorf("%s: no uses: found; is the check still reading it right?", file)
		}
		for _, p := range problems {
			t.Error(p)
		}
	}
}

// The check refuses what it is for and passes what it should.
func TestUnpinnedUsesCases(t *testing.T) {
	t.Parallel()
	const sha = "3d3c42e5aac5ba805825da76410c181273ba90b1"
	cases := []struct {
		line string
		ok   bool
	}{
		{"      - uses: actions/checkout@" + sha + " # v7.0.1", true},
		{"        uses: hashicorp/setup-terraform@" + sha + " # v4.0.1", true},
		{`      - uses: "actions/checkout@` + sha + `" # v7.0.1`, true},
		{"    uses: org/repo/.github/workflows/release.yml@" + sha + " # v1", true},
		{"      - uses: ./.github/actions/setup", true},
		{"      - uses: docker://alpine:3.20", true},
		{"      # - uses: actions/checkout@v4", true},
		{"      - run: echo build", true},
		{"      - uses: actions/checkout@v4", false},
		{"      - uses: actions/checkout@v4.2.2 # v4.2.2", false},
		{"      - uses: actions/checkout@main", false},
		{"      - uses: actions/checkout", false},
		{"      - uses: actions/checkout@3d3c42e # v7.0.1", false},
		{"      - uses: actions/checkout@" + strings.ToUpper(sha) + " # v7.0.1", false},
		{"      - uses: actions/checkout@" + sha, false},
		{"      - uses: actions/checkout@" + sha + " # pinned", false},
		{"      - { uses: actions/checkout@v4, with: { fetch-depth: 0 } }", false},
		{"      - { uses: actions/checkout@" + sha + ", with: { fetch-depth: 0 } } # v7.0.1", true},
		{"    uses: org/repo/.github/workflows/release.yml@main", false},
	}
	for _, c := range cases {
		problems, _ := unpinnedUses("case.yml", c.line)
		if got := len(problems) == 0; got != c.ok {
			t.Errorf("%q: passes = %v, want %v (%v)", c.line, got, c.ok, problems)
		}
	}
}

// block returns the lines of the YAML block that starts at lines[start]:
// that line and the following ones indented deeper than it (blank lines
// included).
func block(lines []string, start int) []string {
	indent := func(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }
	end := start + 1
	for end < len(lines) && (strings.TrimSpace(lines[end]) == "" || indent(lines[end]) > indent(lines[start])) {
		end++
	}
	return lines[start:end]
}

// job returns the text of one job of a workflow.
func job(t *testing.T, text, name string) string {
	t.Helper()
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		if line == "  "+name+":" {
			return strings.Join(block(lines, i), "\n")
		}
	}
	t.Fatalf("no job %q", name)
	return ""
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The release signs with the goreleaser that make release-check tests: the
// goreleaser-action step's version input is the GNUmakefile's
// GORELEASER_VERSION.
func TestReleaseGoreleaserPinnedAsMakefile(t *testing.T) {
	t.Parallel()
	m := regexp.MustCompile(`(?m)^GORELEASER_VERSION\s*:?=\s*(\S+)\s*$`).FindStringSubmatch(readFile(t, "GNUmakefile"))
	if m == nil {
		t.Fatal("GNUmakefile: no GORELEASER_VERSION")
	}
	lines := strings.Split(readFile(t, filepath.Join(".github", "workflows", "release.yml")), "\n")
	var versions []string
	for i, line := range lines {
		if !strings.Contains(line, "goreleaser/goreleaser-action@") {
			continue
		}
		start := i
		for start > 0 && !strings.HasPrefix(strings.TrimLeft(lines[start], " "), "- ") {
			start--
		}
		v := regexp.MustCompile(`(?m)^\s+version:\s*["']?([^"'\s#]+)`).FindStringSubmatch(strings.Join(block(lines, start), "\n"))
		if v == nil {
			t.Errorf("release.yml:%d: goreleaser-action without a version input (it would install its default)", i+1)
			continue
		}
		versions = append(versions, v[1])
	}
	if len(versions) == 0 {
		t.Fatal("release.yml: no goreleaser-action step")
	}
	for _, v := range versions {
		if v != m[1] {
			t.Errorf("release.yml installs goreleaser %s, the GNUmakefile's release-check %s", v, m[1])
		}
	}
}

// The release publishes the provider first and then the mock service from
// its own configuration, appending to that release: the registry's set is
// complete before anything else is added to the release.
func TestReleasePublishesProviderThenMock(t *testing.T) {
	t.Parallel()
	release := readFile(t, filepath.Join(".github", "workflows", "release.yml"))
	provider := strings.Index(release, "args: release --clean\n")
	mock := strings.Index(release, "args: release --clean -f .goreleaser-mock.yml")
	if provider < 0 || mock < 0 || mock < provider {
		t.Errorf("release.yml: want the provider's goreleaser run (at %d), then the mock's (at %d)", provider, mock)
	}
	cfg := readFile(t, ".goreleaser-mock.yml")
	for _, want := range []string{"mode: append", "dist: dist-mock", `name_template: "backup-mock_{{ .Version }}_SHA256SUMS"`} {
		if !strings.Contains(cfg, want) {
			t.Errorf(".goreleaser-mock.yml lacks %q", want)
		}
	}
}

// The mock's checksums file is signed as the provider's is: the same signs
// section (the same key, from GPG_FINGERPRINT), and the release job gives
// that variable to both goreleaser runs (without it, the mock's run would
// fail to render its signing arguments).
func TestReleaseSignsTheMocksChecksumsAsTheProviders(t *testing.T) {
	t.Parallel()
	signs := func(name string) string {
		lines := strings.Split(readFile(t, name), "\n")
		for i, line := range lines {
			if line == "signs:" {
				return strings.TrimSpace(strings.Join(block(lines, i), "\n"))
			}
		}
		t.Errorf("%s has no signs section", name)
		return ""
	}
	provider, mock := signs(".goreleaser.yml"), signs(".goreleaser-mock.yml")
	if provider == "" || mock != provider {
		t.Errorf(".goreleaser-mock.yml signs:\n%s\nwant the provider's:\n%s", mock, provider)
	}
	if !strings.Contains(provider, "artifacts: checksum") || !strings.Contains(provider, "{{ .Env.GPG_FINGERPRINT }}") {
		t.Errorf("the provider's signs section does not sign the checksums with GPG_FINGERPRINT:\n%s", provider)
	}
	lines := strings.Split(readFile(t, filepath.Join(".github", "workflows", "release.yml")), "\n")
	runs := 0
	for i, line := range lines {
		if !strings.Contains(line, "goreleaser/goreleaser-action@") {
			continue
		}
		runs++
		start := i
		for start > 0 && !strings.HasPrefix(strings.TrimLeft(lines[start], " "), "- ") {
			start--
		}
		if !strings.Contains(strings.Join(block(lines, start), "\n"), "GPG_FINGERPRINT: ${{ steps.import_gpg.outputs.fingerprint }}") {
			t.Errorf("release.yml:%d: a goreleaser run without GPG_FINGERPRINT", i+1)
		}
	}
	if runs != 2 {
		t.Errorf("release.yml: %d goreleaser runs, want 2 (the provider's, the mock's)", runs)
	}
}

// test.yml's testmatrix job installs the binaries of its acceptance matrix,
// no more and no fewer, and puts each where TF_MATRIX reads it.
func TestWorkflowTestmatrixMatchesAcceptanceMatrix(t *testing.T) {
	t.Parallel()
	text := readFile(t, filepath.Join(".github", "workflows", "test.yml"))
	collect := func(re, s string) []string {
		var out []string
		for _, m := range regexp.MustCompile(re).FindAllStringSubmatch(s, -1) {
			out = append(out, m[1]+" "+m[2])
		}
		slices.Sort(out)
		return out
	}
	matrix := collect(`\{\s*cli:\s*(\w+),\s*version:\s*"([^"]+)"\s*\}`, job(t, text, "acceptance"))
	tm := job(t, text, "testmatrix")
	installed := collect(`(terraform|tofu)_version:\s*"([^"]+)"`, tm)
	copied := collect(`tf-matrix/(terraform|tofu)_([^"\s/]+)"`, tm)
	if len(matrix) == 0 {
		t.Fatal("acceptance: no { cli, version } entries found")
	}
	if !slices.Equal(installed, matrix) {
		t.Errorf("testmatrix installs %v, the acceptance matrix is %v", installed, matrix)
	}
	if !slices.Equal(copied, matrix) {
		t.Errorf("testmatrix copies %v into tf-matrix/, the acceptance matrix is %v", copied, matrix)
	}
	if !strings.Contains(tm, "make testmatrix") {
		t.Error("testmatrix job does not run make testmatrix")
	}
}
