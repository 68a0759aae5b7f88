package wiring_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/movietrace/tracinglocks/functions/internal/awsclients"
	"github.com/movietrace/tracinglocks/functions/internal/config"
	"github.com/movietrace/tracinglocks/functions/internal/s3store"
	"github.com/movietrace/tracinglocks/functions/internal/tracer"
	"github.com/movietrace/tracinglocks/functions/internal/wiring"
)

func TestTracerChoice(t *testing.T) {
	s3c := s3store.NewClient(aws.Config{Region: "us-east-1"}, "http://127.0.0.1:1")
	none := func(string) string { return "" }
	synthetic := func(k string) string {
		if k == tracer.EnvTracer {
			return "synthetic"
		}
		return ""
	}
	withBucket := config.Config{MoviesBucket: "movies"}
	if tr, err := wiring.Tracer(withBucket, awsclients.Clients{S3: s3c}, none); err != nil {
		t.Fatal(err)
	} else if _, ok := tr.(*tracer.Video); !ok {
		t.Fatalf("with a movies bucket: %T, want the video tracer", tr)
	}
	if tr, err := wiring.Tracer(withBucket, awsclients.Clients{S3: s3c}, synthetic); err != nil {
		t.Fatal(err)
	} else if _, ok := tr.(*tracer.Synthetic); !ok {
		t.Fatalf("TRACER=synthetic: %T", tr)
	}
	if tr, err := wiring.Tracer(config.Config{}, awsclients.Clients{}, none); err != nil {
		t.Fatal(err)
	} else if _, ok := tr.(*tracer.Synthetic); !ok {
		t.Fatalf("without a bucket: %T", tr)
	}
	if _, err := wiring.Tracer(withBucket, awsclients.Clients{}, none); err == nil {
		t.Fatal("a bucket without an S3 client accepted")
	}
}
