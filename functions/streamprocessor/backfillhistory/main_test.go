package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/envvar"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
	"github.com/movietrace/tracinglocks/schema"
)

// TestBackfillCommand: against DynamoDB Local, a dry run counts the items
// without a history key, a run sets them, a second run finds none.
func TestBackfillCommand(t *testing.T) {
	ddb := testenv.DynamoDB(t)
	tables := testenv.NewTables(t, ddb)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range 3 {
		item, err := schema.MarshalAuditItem(events.Event{Type: events.TracingStarted, MovieID: "m1", JobID: fmt.Sprintf("%032x", i),
			UserName: "Alice", At: time.Date(2026, 12, 2, 12, i, 0, 0, time.UTC)})
		if err != nil {
			t.Fatal(err)
		}
		delete(item, schema.AttrHistoryKey)
		if _, err := ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: &tables.Audit, Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "local")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "local")
	env := map[string]string{envvar.AuditTable: tables.Audit, envvar.DynamoDBEndpoint: os.Getenv(envvar.DynamoDBEndpoint)}
	getenv := func(k string) string { return env[k] }
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-dry-run"}, `{"missing":3,"updated":0}`},
		{nil, `{"missing":3,"updated":3}`},
		{nil, `{"missing":0,"updated":0}`},
	} {
		var out, errOut bytes.Buffer
		if code := run(ctx, tc.args, getenv, &out, &errOut); code != 0 || strings.TrimSpace(out.String()) != tc.want {
			t.Fatalf("%v: exit %d, %q (want %s); stderr %s", tc.args, code, out.String(), tc.want, errOut.String())
		}
	}
}

// Garbage arguments and a missing table name are refused before any request.
func TestBackfillCommandGarbage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		code int
	}{
		{[]string{"-nope"}, nil, 2},
		{[]string{"extra"}, nil, 2},
		{[]string{"-dry-run=maybe"}, nil, 2},
		{nil, map[string]string{}, 1},
	} {
		var out, errOut bytes.Buffer
		if code := run(t.Context(), tc.args, func(k string) string { return tc.env[k] }, &out, &errOut); code != tc.code || out.Len() != 0 {
			t.Errorf("%v: exit %d, out %q; want %d and no output", tc.args, code, out.String(), tc.code)
		}
	}
}
