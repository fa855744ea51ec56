package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// maxTrackedSize bounds a tracked file: nothing the project writes by hand
// comes near it, and a build output (an 11 MB binary was once committed)
// goes far past it.
const maxTrackedSize = 1 << 20

// executableMagic are the first bytes of the binaries a Go build writes on
// the platforms we release for: ELF, Mach-O (32/64, both byte orders, and
// universal), PE.
var executableMagic = [][]byte{
	[]byte("\x7fELF"),
	{0xfe, 0xed, 0xfa, 0xce}, {0xfe, 0xed, 0xfa, 0xcf}, {0xce, 0xfa, 0xed, 0xfe}, {0xcf, 0xfa, 0xed, 0xfe}, {0xca, 0xfe, 0xba, 0xbe},
	[]byte("MZ"),
}

// buildOutputIn lists the files among names (relative to root) that are
// build output: over maxTrackedSize, or an executable binary.
func buildOutputIn(root string, names []string) []string {
	var found []string
	for _, name := range names {
		path := filepath.Join(root, name)
		info, err := os.Lstat(path)
		if err != nil || !info.Mode().IsRegular() {
			continue // deleted in the work tree, or a link
		}
		if info.Size() > maxTrackedSize {
			found = append(found, fmt.Sprintf("%s: %d bytes, over the %d-byte bound", name, info.Size(), maxTrackedSize))
			continue
		}
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		head := make([]byte, 4)
		n, _ := f.Read(head)
		_ = f.Close()
		for _, magic := range executableMagic {
			if n >= len(magic) && bytes.Equal(head[:len(magic)], magic) {
				found = append(found, name+": an executable binary")
				break
			}
		}
	}
	return found
}

// The repository tracks no build output: no executable, no file over 1 MiB.
func TestRepositoryTracksNoBuildOutput(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("git", "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git work tree (%v)", err)
	}
	names := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	if found := buildOutputIn(".", names); len(found) > 0 {
		t.Errorf("tracked build output (git rm --cached it, and ignore it in .gitignore):\n%s", strings.Join(found, "\n"))
	}
}

// The check finds what it is for: a planted binary and a planted large
// file, and nothing in ordinary files.
func TestBuildOutputCheckFindsPlantedFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string][]byte{
		"bench":      append([]byte("\x7fELF\x02\x01\x01"), make([]byte, 100)...),
		"tool.exe":   []byte("MZ\x90\x00"),
		"big.json":   bytes.Repeat([]byte("x"), maxTrackedSize+1),
		"main.go":    []byte("package main\n"),
		"README.md":  []byte("# MZ is not at the start\n"),
		"limit.json": bytes.Repeat([]byte("x"), maxTrackedSize),
	}
	var names []string
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	found := strings.Join(buildOutputIn(dir, names), "\n")
	for _, want := range []string{"bench: an executable binary", "tool.exe: an executable binary", "big.json: 1048577 bytes"} {
		if !strings.Contains(found, want) {
			t.Errorf("not found: %q in\n%s", want, found)
		}
	}
	for _, ok := range []string{"main.go", "README.md", "limit.json"} {
		if strings.Contains(found, ok+":") {
			t.Errorf("%s reported:\n%s", ok, found)
		}
	}
}
