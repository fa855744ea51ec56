package main

import (
	"bufio"
	"os"
	"regexp"
	"strings"
	"testing"

	goversion "github.com/hashicorp/go-version"
)

// CHANGELOG.md keeps HashiCorp's changelog form, which release tooling and
// the registry's readers expect: version sections, newest first, titled
// "## X.Y.Z (Unreleased)" (only the first) or "## X.Y.Z (Month D, YYYY)";
// in each, upper-case kind lines ("FEATURES:") followed by "* " entries.
func TestChangelogForm(t *testing.T) {
	f, err := os.Open("CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	heading := regexp.MustCompile(`^## (\d+\.\d+\.\d+) \((Unreleased|(January|February|March|April|May|June|July|August|September|October|November|December) \d{1,2}, \d{4})\)$`)
	kinds := map[string]bool{"NOTES:": true, "BREAKING CHANGES:": true, "FEATURES:": true, "ENHANCEMENTS:": true, "BUG FIXES:": true}
	var prev *goversion.Version
	sections, kind, entries := 0, "", 0
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case line == "":
		case strings.HasPrefix(line, "## "):
			m := heading.FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("line %d: %q is not \"## X.Y.Z (Unreleased)\" or \"## X.Y.Z (Month D, YYYY)\"", n, line)
			}
			if m[2] == "Unreleased" && sections > 0 {
				t.Errorf("line %d: only the first section may be unreleased", n)
			}
			v := goversion.Must(goversion.NewVersion(m[1]))
			if prev != nil && !v.LessThan(prev) {
				t.Errorf("line %d: %s is not older than %s above it", n, v, prev)
			}
			prev, kind = v, ""
			sections++
		case kinds[line]:
			kind = line
		case strings.HasPrefix(line, "* "):
			if kind == "" {
				t.Errorf("line %d: an entry outside a kind line (FEATURES: and the like)", n)
			}
			entries++
		default:
			t.Errorf("line %d: %q is neither a heading, a kind line nor a \"* \" entry", n, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if sections == 0 || entries == 0 {
		t.Fatalf("%d sections, %d entries", sections, entries)
	}
}
