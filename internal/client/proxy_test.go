package client

import (
	"net/http"
	"testing"
)

// The proxy settings are read when a client is built, not once per
// process; NO_PROXY and loopback bypass the proxy.
func TestProxyFromEnvironmentIsReadPerClient(t *testing.T) {
	for _, v := range []string{"HTTP_PROXY", "http_proxy", "https_proxy", "no_proxy"} {
		t.Setenv(v, "")
	}
	cases := []struct {
		proxy, noProxy, url, want string
	}{
		{"", "", "https://backup.example.com/api/v1/token", ""},
		{"http://proxy.corp:3128", "", "https://backup.example.com/api/v1/token", "http://proxy.corp:3128"},
		{"http://proxy.corp:3128", "example.com", "https://backup.example.com/api/v1/token", ""},
		{"http://proxy.corp:3128", "", "https://127.0.0.1:8443/api/v1/token", ""},
		{"http://proxy.corp:3128", "", "https://localhost:8443/api/v1/token", ""},
	}
	for _, c := range cases {
		t.Setenv("HTTPS_PROXY", c.proxy)
		t.Setenv("NO_PROXY", c.noProxy)
		req, err := http.NewRequest(http.MethodGet, c.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := proxyFromEnvironment()(req)
		if err != nil {
			t.Fatal(err)
		}
		shown := ""
		if got != nil {
			shown = got.String()
		}
		if shown != c.want {
			t.Errorf("HTTPS_PROXY=%q NO_PROXY=%q %s: proxy %q, want %q", c.proxy, c.noProxy, c.url, shown, c.want)
		}
	}
}
