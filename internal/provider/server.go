package provider

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// NewServer is the provider as Terraform is served it (main.go and tests alike), interrupts first delivered to invocations.
func NewServer(version string) func() (tfprotov6.ProviderServer, error) {
	return serve(New(version)())
}

func serve(p provider.Provider) func() (tfprotov6.ProviderServer, error) {
	return func() (tfprotov6.ProviderServer, error) {
		s, err := providerserver.NewProtocol6WithError(p)()
		if err != nil {
			return nil, err
		}
		full, ok := s.(fullServer)
		if !ok {
			return s, nil // a framework without actions or list resources
		}
		return newInterruptFirst(full), nil
	}
}

func newInterruptFirst(s fullServer) *interruptFirst {
	return &interruptFirst{fullServer: s, running: map[chan struct{}]context.CancelFunc{}}
}

// fullServer is what the framework's server implements and the plugin server looks for: resources, list resources, actions.
type fullServer interface {
	tfprotov6.ProviderServer
	tfprotov6.ListResourceServer
	tfprotov6.ActionServer
}

// stopGrace bounds an interrupt's wait for interrupted invocations to report; each reports at once: this is a safety net.
const stopGrace = 10 * time.Second

// interruptFirst makes an interrupted action invocation fail as an invocation: StopProvider stops the invocations and waits
// for their outcome before the plugin server cancels their streams, whose last event terraform-plugin-go v0.31 drops
// (Terraform then makes the guarded change).
type interruptFirst struct {
	fullServer

	mu sync.Mutex
	// running: each key is closed once its invocation has sent its outcome; its value stops the invocation.
	running map[chan struct{}]context.CancelFunc
}

func (s *interruptFirst) InvokeAction(ctx context.Context, req *tfprotov6.InvokeActionRequest) (*tfprotov6.InvokeActionServerStream, error) {
	ctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	reported := make(chan struct{})
	s.running[reported] = cancel
	s.mu.Unlock()
	finish := sync.OnceFunc(func() {
		cancel()
		s.mu.Lock()
		delete(s.running, reported)
		s.mu.Unlock()
		close(reported)
	})
	resp, err := s.fullServer.InvokeAction(ctx, req)
	if err != nil || resp == nil || resp.Events == nil {
		finish()
		return resp, err
	}
	events := resp.Events
	resp.Events = func(yield func(tfprotov6.InvokeActionEvent) bool) {
		defer finish()
		for ev := range events {
			if !yield(ev) {
				return
			}
		}
	}
	return resp, nil
}

func (s *interruptFirst) StopProvider(ctx context.Context, req *tfprotov6.StopProviderRequest) (*tfprotov6.StopProviderResponse, error) {
	s.mu.Lock()
	var waiting []chan struct{}
	for reported, stop := range s.running {
		stop()
		waiting = append(waiting, reported)
	}
	s.mu.Unlock()
	// Once the grace is over or ctx is done, the remaining invocations are not waited for.
	graceCtx, cancel := context.WithTimeout(ctx, stopGrace)
	defer cancel()
	for _, r := range waiting {
		select {
		case <-r:
		case <-graceCtx.Done():
		}
	}
	return s.fullServer.StopProvider(ctx, req)
}
