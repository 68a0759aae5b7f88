// Package anchors re-implements, for side-by-side measurement, the lock
// protocol of the two DynamoDB lock clients this design is measured against:
// awslabs' amazon-dynamodb-lock-client (Java) and cirello.io/dynamolock (Go,
// a port of it). Both keep a lock as an item of a dedicated lock table and
// share one acquisition protocol, reproduced here request for request:
//
//   - Acquire reads the lock with a strongly consistent GetItem. If there is
//     none (or it is marked released) it writes one with a conditional
//     PutItem (attribute_not_exists(key) OR isReleased). If there is one, it
//     remembers its record version number (RVN) and when it looked, and
//     polls (GetItem every refresh period) until it has seen the same RVN for
//     a full lease duration; only then does it take the lock over, with a
//     PutItem conditional on that RVN. The protocol never trusts a clock
//     across machines: the holder's lease is measured on the taker's own
//     monotonic clock, from its first observation. Any change of RVN (a
//     heartbeat) restarts the wait.
//   - Heartbeat is an UpdateItem conditional on (RVN, owner) that writes a
//     new RVN; it is refused locally, without a request, once the holder's
//     own lease measurement has run out.
//   - Release is a DeleteItem conditional on (RVN, owner) (the
//     deleteLockOnRelease variant; the other marks the item released with an
//     UpdateItem, also one request).
//
// Attribute names are the clients' own (key, ownerName, leaseDuration,
// recordVersionNumber, isReleased). Nothing here is used by the product.
package anchors

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/movietrace/tracinglocks/functions/internal/token"
)

// Attribute names of a lock item, as both anchors spell them.
const (
	AttrKey      = "key"
	AttrOwner    = "ownerName"
	AttrLease    = "leaseDuration" // milliseconds
	AttrRVN      = "recordVersionNumber"
	AttrReleased = "isReleased"
)

// The anchors' defaults: a 20 s lease, and a 1 s refresh period and 1 s of
// additional wait on acquisition.
const (
	DefaultLease          = 20 * time.Second
	DefaultRefreshPeriod  = time.Second
	DefaultAdditionalWait = time.Second
)

// API is the part of the DynamoDB client the lock client uses.
type API interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

// Options configure a client; zero values take the anchors' defaults.
type Options struct {
	Owner         string        // unique per client (default: random)
	Lease         time.Duration // how long a lock is held without a heartbeat
	RefreshPeriod time.Duration // pause between two polls of a held lock
	// AdditionalWait is how long Acquire keeps trying beyond the lease
	// duration of the lock it found, before giving up.
	AdditionalWait time.Duration
	// FailIfLocked makes Acquire give up at once when the lock is held.
	FailIfLocked bool
}

// Client acquires, heartbeats and releases locks in one table.
type Client struct {
	db    API
	table string
	opt   Options
}

// New returns a lock client on the named table.
func New(db API, table string, opt Options) *Client {
	if opt.Owner == "" {
		opt.Owner = token.New()
	}
	if opt.Lease <= 0 {
		opt.Lease = DefaultLease
	}
	if opt.RefreshPeriod <= 0 {
		opt.RefreshPeriod = DefaultRefreshPeriod
	}
	if opt.AdditionalWait <= 0 {
		opt.AdditionalWait = DefaultAdditionalWait
	}
	return &Client{db: db, table: table, opt: opt}
}

// Lock is a held lock.
type Lock struct {
	Key   string
	Owner string
	RVN   string
	Lease time.Duration
	// lookup is when the holder last knew the lock was its own (taken before
	// the write that made it so, erring towards expiring early).
	lookup time.Time
}

// Expired reports whether the holder's own lease measurement has run out.
func (l *Lock) Expired() bool { return time.Since(l.lookup) > l.Lease }

// ErrNotGranted means the lock could not be acquired, or is no longer held.
var ErrNotGranted = errors.New("anchors: lock not granted")

type observed struct {
	rvn    string
	lease  time.Duration
	lookup time.Time // on the observer's monotonic clock, after the read returned
}

func (c *Client) key(k string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{AttrKey: &types.AttributeValueMemberS{Value: k}}
}

// Acquire takes the lock named key (see the package comment).
func (c *Client) Acquire(ctx context.Context, key string) (*Lock, error) {
	start := time.Now()
	wait := c.opt.AdditionalWait
	var tried *observed // the lock we are waiting out
	for {
		cur, released, err := c.read(ctx, key)
		if err != nil {
			return nil, err
		}
		switch {
		case cur == nil || released:
			l, err := c.put(ctx, key, expression.Or(
				expression.AttributeNotExists(expression.Name(AttrKey)),
				expression.Name(AttrReleased).Equal(expression.Value(true)),
			))
			if err == nil || !errors.Is(err, ErrNotGranted) {
				return l, err
			}
			// Someone else got there first: poll again after a refresh period.
		case tried == nil:
			if c.opt.FailIfLocked {
				return nil, ErrNotGranted
			}
			tried = cur
			wait += cur.lease
		case tried.rvn == cur.rvn && time.Since(tried.lookup) > tried.lease:
			l, err := c.put(ctx, key, expression.And(
				expression.AttributeExists(expression.Name(AttrKey)),
				expression.Name(AttrRVN).Equal(expression.Value(tried.rvn)),
			))
			if err == nil || !errors.Is(err, ErrNotGranted) {
				return l, err
			}
		case tried.rvn != cur.rvn:
			tried = cur // heartbeated (or taken over) since: wait again
		}
		if time.Since(start) > wait {
			return nil, fmt.Errorf("%w: still held after %s", ErrNotGranted, time.Since(start).Round(time.Millisecond))
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(c.opt.RefreshPeriod):
		}
	}
}

func (c *Client) read(ctx context.Context, key string) (*observed, bool, error) {
	out, err := c.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &c.table, Key: c.key(key), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, false, fmt.Errorf("get lock %s: %w", key, err)
	}
	if len(out.Item) == 0 {
		return nil, false, nil
	}
	o := &observed{lookup: time.Now()}
	if v, ok := out.Item[AttrRVN].(*types.AttributeValueMemberS); ok {
		o.rvn = v.Value
	}
	if v, ok := out.Item[AttrLease].(*types.AttributeValueMemberN); ok {
		ms, err := strconv.ParseInt(v.Value, 10, 64)
		if err != nil {
			return nil, false, fmt.Errorf("lock %s: bad %s %q", key, AttrLease, v.Value)
		}
		o.lease = time.Duration(ms) * time.Millisecond
	}
	released := false
	if v, ok := out.Item[AttrReleased].(*types.AttributeValueMemberBOOL); ok {
		released = v.Value
	}
	return o, released, nil
}

func (c *Client) put(ctx context.Context, key string, cond expression.ConditionBuilder) (*Lock, error) {
	expr, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		return nil, err
	}
	l := &Lock{Key: key, Owner: c.opt.Owner, RVN: token.New(), Lease: c.opt.Lease, lookup: time.Now()}
	_, err = c.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: &c.table,
		Item: map[string]types.AttributeValue{
			AttrKey:   &types.AttributeValueMemberS{Value: key},
			AttrOwner: &types.AttributeValueMemberS{Value: l.Owner},
			AttrLease: &types.AttributeValueMemberN{Value: strconv.FormatInt(l.Lease.Milliseconds(), 10)},
			AttrRVN:   &types.AttributeValueMemberS{Value: l.RVN},
		},
		ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	if err != nil {
		return nil, notGranted(err, "put lock "+key)
	}
	return l, nil
}

func notGranted(err error, what string) error {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return fmt.Errorf("%w: %s: condition failed", ErrNotGranted, what)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// ownership is the condition of every holder write: the lock is still the
// one this holder wrote.
func ownership(l *Lock) expression.ConditionBuilder {
	return expression.And(
		expression.AttributeExists(expression.Name(AttrKey)),
		expression.Name(AttrRVN).Equal(expression.Value(l.RVN)),
		expression.Name(AttrOwner).Equal(expression.Value(l.Owner)),
	)
}

// Heartbeat extends a held lock by writing a new RVN.
func (c *Client) Heartbeat(ctx context.Context, l *Lock) error {
	if l.Expired() {
		return fmt.Errorf("%w: lease ran out before the heartbeat", ErrNotGranted)
	}
	rvn := token.New()
	expr, err := expression.NewBuilder().WithCondition(ownership(l)).WithUpdate(
		expression.Set(expression.Name(AttrLease), expression.Value(c.opt.Lease.Milliseconds())).
			Set(expression.Name(AttrRVN), expression.Value(rvn)),
	).Build()
	if err != nil {
		return err
	}
	sent := time.Now()
	_, err = c.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &c.table, Key: c.key(l.Key),
		ConditionExpression: expr.Condition(), UpdateExpression: expr.Update(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	if err != nil {
		return notGranted(err, "heartbeat "+l.Key)
	}
	l.RVN, l.Lease, l.lookup = rvn, c.opt.Lease, sent
	return nil
}

// Release deletes a held lock.
func (c *Client) Release(ctx context.Context, l *Lock) error {
	expr, err := expression.NewBuilder().WithCondition(ownership(l)).Build()
	if err != nil {
		return err
	}
	_, err = c.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: &c.table, Key: c.key(l.Key),
		ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	if err != nil {
		return notGranted(err, "release "+l.Key)
	}
	return nil
}

// TableAPI is what CreateTable needs.
type TableAPI interface {
	CreateTable(context.Context, *dynamodb.CreateTableInput, ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
}

// CreateTable creates a lock table (hash key "key") and waits for it;
// opts may adjust the input (e.g. add a stream).
func CreateTable(ctx context.Context, db TableAPI, name string, opts ...func(*dynamodb.CreateTableInput)) error {
	in := &dynamodb.CreateTableInput{
		TableName:            &name,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String(AttrKey), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String(AttrKey), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	}
	for _, o := range opts {
		o(in)
	}
	_, err := db.CreateTable(ctx, in)
	if err != nil {
		return fmt.Errorf("create lock table %s: %w", name, err)
	}
	w := dynamodb.NewTableExistsWaiter(db, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay, o.MaxDelay = 50*time.Millisecond, time.Second
	})
	return w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: &name}, time.Minute)
}
