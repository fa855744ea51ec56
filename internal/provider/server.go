package provider

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// NewServer is the provider as Terraform is served it (main.go and the
// tests alike): the framework's server, with interrupts delivered to
// action invocations before the plugin server cancels them (see
// interruptFirst).
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
	return &interruptFirst{fullServer: s, stop: make(chan struct{}), running: map[chan struct{}]struct{}{}}
}

// fullServer is what the framework's server implements and the plugin
// server looks for: resources and data sources, list resources, actions.
type fullServer interface {
	tfprotov6.ProviderServer
	tfprotov6.ListResourceServer
	tfprotov6.ActionServer
}

// stopGrace bounds how long an interrupt waits for interrupted
// invocations to report; each reports at once, so this is a safety net.
const stopGrace = 10 * time.Second

// interruptFirst makes an interrupted action invocation fail as an
// invocation, so that the change it guards does not go ahead.
//
// The upstream behaviour it works around, read in terraform-plugin-go
// v0.31.0 (tfprotov6/tf6server/server.go) and seen with Terraform
// 1.16.0-rc2:
//   - on Ctrl-C, Terraform calls StopProvider, and the plugin server's
//     StopProvider closes stopCh, which cancels every request's context
//     (stoppableContext);
//   - its InvokeAction loop, `for ev := range resp.Events`, returns nil as
//     soon as that context is done, dropping the invocation's remaining
//     events, its final one (with its error) included, and ends the
//     stream as if the invocation had completed;
//   - Terraform 1.16.0-rc2 reads a stream that ends without a Completed
//     event as a successful invocation, and makes the guarded change.
//
// So StopProvider first stops the invocations itself, waits until each has
// sent its outcome (an error: the wait was interrupted), and only then lets
// the plugin server cancel. TestInterruptReachesInvocationsFirst pins the
// order. When a terraform-plugin-go release delivers the final event of a
// cancelled stream, this wrapper can go.
type interruptFirst struct {
	fullServer

	mu      sync.Mutex
	stop    chan struct{}              // closed (and renewed) by each StopProvider
	running map[chan struct{}]struct{} // each closed once its invocation has sent its outcome
}

func (s *interruptFirst) InvokeAction(ctx context.Context, req *tfprotov6.InvokeActionRequest) (*tfprotov6.InvokeActionServerStream, error) {
	ctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	stop := s.stop
	reported := make(chan struct{})
	s.running[reported] = struct{}{}
	s.mu.Unlock()
	finish := sync.OnceFunc(func() {
		cancel()
		s.mu.Lock()
		delete(s.running, reported)
		s.mu.Unlock()
		close(reported)
	})
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
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
	close(s.stop)
	s.stop = make(chan struct{})
	waiting := make([]chan struct{}, 0, len(s.running))
	for r := range s.running {
		waiting = append(waiting, r)
	}
	s.mu.Unlock()
	grace := time.NewTimer(stopGrace)
	defer grace.Stop()
	for _, r := range waiting {
		select {
		case <-r:
		case <-grace.C:
			return s.fullServer.StopProvider(ctx, req)
		case <-ctx.Done():
			return s.fullServer.StopProvider(ctx, req)
		}
	}
	return s.fullServer.StopProvider(ctx, req)
}
