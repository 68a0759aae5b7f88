package awscount

import (
	"context"
	"errors"
	"reflect"
	"strings"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Named returns a counter that also records what each request touched,
// named by the configuration variable that holds it: names maps a
// variable (envvar.MoviesTable, envvar.MoviesBucket, envvar.TraceQueueURL,
// ...) to its value in the test (a table name, a bucket, a queue URL).
// Calls then lists, per request, "<operation> <resource>" lines:
//
//	GetItem MOVIES_TABLE
//	TransactWriteItems FRAMES_TABLE:Put
//	GetObject MOVIES_BUCKET/tracker/… 404
//	ListObjectsV2 MOVIES_BUCKET?prefix=frames/…
//	SendMessage TRACE_QUEUE_URL
//
// An object key is its first path segment and "…"; "404" marks a request
// answered not found (S3 answers that only to a caller allowed to list the
// bucket: infra/stack's TestFunctionCallsAreAllowed checks the role for
// it). infra/stack maps each variable to the resource the function's
// environment gives it in the synthesized template.
func Named(names map[string]string) *Counter {
	c := &Counter{names: map[string]string{}}
	for k, v := range names {
		if v != "" {
			c.names[v] = k
		}
	}
	return c
}

// Name adds one more variable and its value (see Named).
func (c *Counter) Name(variable, value string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.names == nil {
		c.names = map[string]string{}
	}
	c.names[value] = variable
}

// initialize records the resources of one call (all its attempts) and
// whether it was answered 404.
func (c *Counter) initialize(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	out, md, err := next.HandleInitialize(ctx, in)
	c.mu.Lock()
	named := c.names != nil
	c.mu.Unlock()
	if !named {
		return out, md, err
	}
	suffix := ""
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() == 404 {
		suffix = " 404"
	}
	op := awsmiddleware.GetOperationName(ctx)
	for _, r := range c.resources(in.Parameters) {
		c.addCall(op + " " + r + suffix)
	}
	return out, md, err
}

func (c *Counter) addCall(line string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls == nil {
		c.calls = map[string]int{}
	}
	c.calls[line]++
}

// name is the variable holding value, or value itself when none does.
func (c *Counter) name(value string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n, ok := c.names[value]; ok {
		return n
	}
	return "unnamed:" + value
}

// resources reads the resources of an SDK input by its field names
// (TableName, IndexName, TransactItems, RequestItems, Bucket, Key, Prefix,
// QueueUrl), so one reader serves every client.
func (c *Counter) resources(params any) []string {
	v := reflect.Indirect(reflect.ValueOf(params))
	if !v.IsValid() || v.Kind() != reflect.Struct {
		return nil
	}
	str := func(v reflect.Value, field string) (string, bool) {
		f := v.FieldByName(field)
		if !f.IsValid() || f.Kind() != reflect.Pointer || f.IsNil() || f.Elem().Kind() != reflect.String {
			return "", false
		}
		return f.Elem().String(), true
	}
	if t, ok := str(v, "TableName"); ok {
		r := c.name(t)
		if i, ok := str(v, "IndexName"); ok {
			r += "/index/" + i
		}
		return []string{r}
	}
	if items := v.FieldByName("TransactItems"); items.IsValid() && items.Kind() == reflect.Slice {
		var out []string
		for i := range items.Len() {
			item := reflect.Indirect(items.Index(i))
			for _, kind := range []string{"Put", "Delete", "Update", "ConditionCheck", "Get"} {
				if f := item.FieldByName(kind); f.IsValid() && !f.IsNil() {
					if t, ok := str(f.Elem(), "TableName"); ok {
						out = append(out, c.name(t)+":"+kind)
					}
				}
			}
		}
		return out
	}
	if items := v.FieldByName("RequestItems"); items.IsValid() && items.Kind() == reflect.Map {
		var out []string
		for _, k := range items.MapKeys() {
			out = append(out, c.name(k.String()))
		}
		return out
	}
	if b, ok := str(v, "Bucket"); ok {
		if k, ok := str(v, "Key"); ok {
			return []string{c.name(b) + "/" + KeyPattern(k)}
		}
		// DeleteObjects: each key (IAM authorizes s3:DeleteObject per key).
		if d := v.FieldByName("Delete"); d.IsValid() && d.Kind() == reflect.Pointer && !d.IsNil() {
			objs := d.Elem().FieldByName("Objects")
			var out []string
			for i := range objs.Len() {
				if k, ok := str(objs.Index(i), "Key"); ok {
					out = append(out, c.name(b)+"/"+KeyPattern(k))
				}
			}
			return out
		}
		if p, ok := str(v, "Prefix"); ok {
			return []string{c.name(b) + "?prefix=" + KeyPattern(p)}
		}
		return []string{c.name(b)}
	}
	if q, ok := str(v, "QueueUrl"); ok {
		return []string{c.name(q)}
	}
	return nil
}

// KeyPattern is an object key's (or a list prefix's) first path segment
// followed by "…" when there is more: "tracker/m1/s/0" is "tracker/…".
func KeyPattern(key string) string {
	if i := strings.Index(key, "/"); i >= 0 && i < len(key)-1 {
		return key[:i+1] + "…"
	}
	return key
}

// Calls returns the "<operation> <resource>" lines recorded so far (only
// for a counter made by Named), with the number of calls of each.
func (c *Counter) Calls() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.calls))
	for k, v := range c.calls {
		out[k] = v
	}
	return out
}
