package client

import "fmt"

func sprint(format string, v any) string { return fmt.Sprintf(format, v) }

func itoa(n int64) string { return fmt.Sprint(n) }
