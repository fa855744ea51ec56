package client

import (
	"strings"
	"testing"
)

func TestKeyNeverPrinted(t *testing.T) {
	t.Parallel()
	const key = "very-secret-key-123"
	c, err := New(Options{BaseURL: "https://backup.example.com", APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		sprint("%v", c), sprint("%+v", c), sprint("%#v", c), sprint("%s", c.key), sprint("%#v", c.opts),
	} {
		if strings.Contains(s, key) {
			t.Fatalf("key printed: %s", s)
		}
	}
}
