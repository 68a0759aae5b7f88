package config

import (
	"testing"
	"time"
)

func env(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

func TestFromEnv(t *testing.T) {
	c, err := FromEnv(env(map[string]string{EnvMoviesTable: "m", EnvLeaseSecs: "30", EnvLogLevel: "debug"}), EnvMoviesTable)
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
		"lease not a number": {EnvMoviesTable: "m", EnvLeaseSecs: "soon"},
		"lease zero":         {EnvMoviesTable: "m", EnvLeaseSecs: "0"},
		"lease negative":     {EnvMoviesTable: "m", EnvLeaseSecs: "-5"},
		"log level":          {EnvMoviesTable: "m", EnvLogLevel: "chatty"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := FromEnv(env(kv), EnvMoviesTable); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}
