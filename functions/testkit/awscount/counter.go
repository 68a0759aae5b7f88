// Package awscount counts the AWS requests a client sends, per operation,
// through SDK middleware. Benchmarks use it to report requests per operation.
package awscount

import (
	"context"
	"maps"
	"sync"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
)

// Counter counts requests by operation name (e.g. "UpdateItem"). Every
// attempt counts, retries included, because each costs a round trip.
type Counter struct {
	mu     sync.Mutex
	counts map[string]int
	// names and calls: see Named.
	names map[string]string
	calls map[string]int
}

// APIOption is the option to append to a client's APIOptions, e.g.
// dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, c.APIOption) }).
func (c *Counter) APIOption(stack *middleware.Stack) error {
	if err := stack.Initialize.Add(middleware.InitializeMiddlewareFunc("awscount-resources", c.initialize), middleware.Before); err != nil {
		return err
	}
	// Deserialize runs once per attempt, after retries are decided.
	return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc("awscount",
		func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
			c.add(awsmiddleware.GetOperationName(ctx))
			return next.HandleDeserialize(ctx, in)
		}), middleware.After)
}

func (c *Counter) add(op string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts = map[string]int{}
	}
	c.counts[op]++
}

// Total returns the number of requests counted so far.
func (c *Counter) Total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.counts {
		n += v
	}
	return n
}

// Of returns the number of requests of one operation.
func (c *Counter) Of(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[op]
}

// Snapshot returns a copy of the counts by operation.
func (c *Counter) Snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.counts)
}

// Reset forgets every count.
func (c *Counter) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts = nil
	c.calls = nil
}
