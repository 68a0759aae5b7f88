package config

import (
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/functions/envvar"
)

func env(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

func TestFromEnv(t *testing.T) {
	c, err := FromEnv(env(map[string]string{envvar.MoviesTable: "m", envvar.LeaseSeconds: "30", envvar.LogLevel: "debug"}), envvar.MoviesTable)
	if err != nil || c.Tables.Movies != "m" || c.LeaseDuration != 30*time.Second || c.LogLevel.String() != "DEBUG" {
		t.Fatalf("%+v %v", c, err)
	}
	c, err = FromEnv(env(nil))
	if err != nil || c.LeaseDuration != 15*time.Minute {
		t.Fatalf("defaults: %+v %v", c, err)
	}
}

func TestFromEnvRejectsGarbage(t *testing.T) {
	for name, kv := range map[string]map[string]string{
		"missing required":   {},
		"lease not a number": {envvar.MoviesTable: "m", envvar.LeaseSeconds: "soon"},
		"lease zero":         {envvar.MoviesTable: "m", envvar.LeaseSeconds: "0"},
		"lease negative":     {envvar.MoviesTable: "m", envvar.LeaseSeconds: "-5"},
		"log level":          {envvar.MoviesTable: "m", envvar.LogLevel: "chatty"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := FromEnv(env(kv), envvar.MoviesTable); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}
