package engine

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/weftstudio/weft/checkpoint"
)

// This file is a task's retry policy: when another attempt is worth it and
// how long to wait before it.

// withRetry calls attempt until it succeeds, stops at an interrupt, fails
// with an error the policy does not retry, runs out of attempts or ctx
// ends, waiting between attempts as the policy says. A nil policy means one
// attempt; ref is the reference whose default retry-on applies when the
// policy has no RetryOn. It returns the last attempt's error.
func withRetry(ctx context.Context, policy *RetryPolicy, ref Reference, attempt func() error) error {
	for n := 1; ; n++ {
		err := attempt()
		if err == nil || isInterrupt(err) || policy == nil || n >= policy.MaxAttempts || !retryable(policy, ref, err) || ctx.Err() != nil {
			return err
		}
		select {
		case <-time.After(backoff(policy, n)):
		case <-ctx.Done():
			return err
		}
	}
}

// retryable reports whether policy retries err: RetryOn decides when set;
// otherwise every error is retried except panics, Permanent errors (which
// routing errors are, see routeError) and cancellation, and, following
// LangGraphPython, errors whose class Python's default_retry_on does not
// retry (see ErrorClass).
func retryable(p *RetryPolicy, ref Reference, err error) bool {
	var ne *NodeError
	if errors.As(err, &ne) && ne.Panic {
		return p.RetryOn != nil && p.RetryOn(err)
	}
	if errors.Is(err, checkpoint.ErrConflict) {
		// Another writer advanced the thread (or a subgraph's): running
		// the node again would only store the same step again.
		return false
	}
	if p.RetryOn != nil {
		return p.RetryOn(err)
	}
	var pe *permanentError
	if errors.As(err, &pe) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	return ref == LangGraphJS || pythonRetryOn(ClassOf(err))
}

// backoff is the wait after the given attempt (1 for the first).
func backoff(p *RetryPolicy, attempt int) time.Duration {
	f := p.BackoffFactor
	if f == 0 {
		f = 2
	}
	d := float64(p.InitialInterval)
	for i := 1; i < attempt; i++ {
		d *= f
	}
	if p.MaxInterval > 0 && d > float64(p.MaxInterval) {
		d = float64(p.MaxInterval)
	}
	if p.Jitter && p.InitialInterval > 0 {
		d += rand.Float64() * float64(p.InitialInterval)
	}
	return time.Duration(d)
}
