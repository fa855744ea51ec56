package main

import (
	"os"
	"testing"
)

func TestQuietSDKUnlessLogging(t *testing.T) {
	for _, name := range []string{"TF_LOG", "TF_LOG_PROVIDER", "TF_LOG_SDK", "TF_LOG_SDK_FRAMEWORK", "TF_LOG_SDK_PROTO", "TF_LOG_PATH", "TF_LOG_PROVIDER_BACKUP"} {
		t.Setenv(name, "")
	}
	quietSDKUnlessLogging()
	for _, name := range []string{"TF_LOG_SDK", "TF_LOG_SDK_FRAMEWORK", "TF_LOG_SDK_PROTO", "TF_LOG_PROVIDER_BACKUP"} {
		if got := os.Getenv(name); got != "off" {
			t.Errorf("no TF_LOG*: %s = %q, want off", name, got)
		}
	}

	t.Setenv("TF_LOG_SDK", "")
	t.Setenv("TF_LOG_PROVIDER_BACKUP", "")
	t.Setenv("TF_LOG_PROVIDER", "DEBUG")
	quietSDKUnlessLogging()
	if got := os.Getenv("TF_LOG_SDK"); got != "" {
		t.Fatalf("TF_LOG_PROVIDER set: TF_LOG_SDK changed to %q", got)
	}
}
