package provider

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// invokingServer stands for the framework's server: an invocation waits
// until its context ends, then reports; StopProvider records whether that
// report had already gone out, as the plugin server cancels every context
// right after it and drops any later event.
type invokingServer struct {
	fullServer     // only the two methods below are called
	reported       atomic.Bool
	reportedAtStop chan bool
}

func (s *invokingServer) InvokeAction(ctx context.Context, _ *tfprotov6.InvokeActionRequest) (*tfprotov6.InvokeActionServerStream, error) {
	return &tfprotov6.InvokeActionServerStream{Events: func(yield func(tfprotov6.InvokeActionEvent) bool) {
		<-ctx.Done()
		yield(tfprotov6.InvokeActionEvent{Type: &tfprotov6.CompletedInvokeActionEventType{}})
	}}, nil
}

func (s *invokingServer) StopProvider(context.Context, *tfprotov6.StopProviderRequest) (*tfprotov6.StopProviderResponse, error) {
	s.reportedAtStop <- s.reported.Load()
	return &tfprotov6.StopProviderResponse{}, nil
}

// An interrupt reaches a running invocation before the plugin server's
// own cancellation, and StopProvider returns only once the invocation has
// sent its outcome; the outcome is consumed as the plugin server does.
func TestInterruptReachesInvocationsFirst(t *testing.T) {
	t.Parallel()
	fake := &invokingServer{reportedAtStop: make(chan bool, 1)}
	s := newInterruptFirst(fake)
	resp, err := s.InvokeAction(t.Context(), &tfprotov6.InvokeActionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	consumed := make(chan struct{})
	go func() {
		defer close(consumed)
		for ev := range resp.Events {
			if _, ok := ev.Type.(*tfprotov6.CompletedInvokeActionEventType); ok {
				time.Sleep(time.Millisecond) // the plugin server sending it
				fake.reported.Store(true)
			}
		}
	}()
	if _, err := s.StopProvider(t.Context(), &tfprotov6.StopProviderRequest{}); err != nil {
		t.Fatal(err)
	}
	if !<-fake.reportedAtStop {
		t.Error("the plugin server was told to stop before the interrupted invocation sent its outcome")
	}
	<-consumed
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.running) != 0 {
		t.Errorf("%d invocations still counted as running", len(s.running))
	}
}
