package emulators

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/movietrace/tracinglocks/functions/envvar"
)

// The environment variables naming the AWS stand-ins' endpoints (package
// envvar), as the tests (testenv), the local stack and the Lambdas' local
// runs read them.
const (
	EnvDynamoDB = envvar.DynamoDBEndpoint
	EnvSQS      = envvar.SQSEndpoint
	EnvS3       = envvar.S3Endpoint
)

// Endpoints are the base URLs of DynamoDB (with Streams), SQS and S3.
type Endpoints struct {
	DynamoDB, SQS, S3 string
}

// Env returns the endpoints as KEY=value pairs for a child's environment.
func (e Endpoints) Env() []string {
	return []string{EnvDynamoDB + "=" + e.DynamoDB, EnvSQS + "=" + e.SQS, EnvS3 + "=" + e.S3}
}

// Running is what StartMissing returns: the endpoints to use and the
// emulators it started for them (none when every endpoint was given).
type Running struct {
	Endpoints Endpoints
	// Started are the emulators this process started and must Stop.
	Started []*Emulator
	// Reused names the endpoints taken from the environment, e.g.
	// "DYNAMODB_ENDPOINT=http://127.0.0.1:8000".
	Reused []string
}

// Stop stops the emulators StartMissing started and joins their errors.
func (r *Running) Stop() error {
	var errs []error
	for _, e := range r.Started {
		errs = append(errs, e.Stop())
	}
	return errors.Join(errs...)
}

// Died receives the first emulator this process started that exits on its
// own (or by Stop); it never receives when none was started.
func (r *Running) Died() <-chan *Emulator {
	died := make(chan *Emulator, len(r.Started))
	for _, e := range r.Started {
		go func() { <-e.Exited(); died <- e }()
	}
	return died
}

// StartMissing uses each endpoint getenv sets (DYNAMODB_ENDPOINT,
// SQS_ENDPOINT, S3_ENDPOINT) and starts an emulator, on a free loopback
// port, only for what is missing: DynamoDB Local for DynamoDB, fauxqs for
// SQS and for S3 (fauxqs serves both on one port, so with SQS_ENDPOINT set
// and S3_ENDPOINT not, S3 is taken to be the same emulator). So the same
// stack and tests run against emulators someone else started, or behind a
// fault-injecting proxy. A set endpoint must be an http(s) URL with a host.
// dir is the tools directory; the emulators are installed there only if
// one must start.
func StartMissing(ctx context.Context, dir string, getenv func(string) string) (*Running, error) {
	r := &Running{}
	given := map[string]*string{EnvDynamoDB: &r.Endpoints.DynamoDB, EnvSQS: &r.Endpoints.SQS, EnvS3: &r.Endpoints.S3}
	for _, k := range []string{EnvDynamoDB, EnvSQS, EnvS3} {
		v := getenv(k)
		if v == "" {
			continue
		}
		if err := checkEndpoint(v); err != nil {
			return nil, fmt.Errorf("%s=%q: %w", k, v, err)
		}
		*given[k] = v
		r.Reused = append(r.Reused, k+"="+v)
	}
	if r.Endpoints.S3 == "" && r.Endpoints.SQS != "" {
		r.Endpoints.S3 = r.Endpoints.SQS // fauxqs serves S3 too
	}
	needDynamo, needFauxqs := r.Endpoints.DynamoDB == "", r.Endpoints.SQS == ""
	if !needDynamo && !needFauxqs {
		return r, nil
	}
	if err := EnsureTools(ctx, dir); err != nil {
		return nil, err
	}
	var dynamo, fauxqs *Emulator
	var err error
	switch {
	case needDynamo && needFauxqs:
		dynamo, fauxqs, err = StartBoth(ctx, dir)
	case needDynamo:
		dynamo, err = StartDynamoDB(ctx, dir)
	default:
		fauxqs, err = StartSQS(ctx, dir)
	}
	if err != nil {
		return nil, err
	}
	if dynamo != nil {
		r.Started = append(r.Started, dynamo)
		r.Endpoints.DynamoDB = dynamo.Endpoint()
	}
	if fauxqs != nil {
		r.Started = append(r.Started, fauxqs)
		r.Endpoints.SQS = fauxqs.Endpoint()
		if r.Endpoints.S3 == "" {
			r.Endpoints.S3 = fauxqs.Endpoint()
		}
	}
	return r, nil
}

func checkEndpoint(v string) error {
	u, err := url.Parse(v)
	if err != nil {
		return err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("not an http(s) URL like http://127.0.0.1:8000")
	}
	return nil
}
