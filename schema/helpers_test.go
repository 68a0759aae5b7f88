package schema

import (
	"time"

	"github.com/movietrace/tracinglocks/domain"
)

var (
	t0      = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	alice   = domain.User{ID: "u-alice", Name: "Alice"}
	lease1  = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	lease2  = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	job1    = "11111111111111111111111111111111"
	hostile = "open /home/ci/secrets/db.yaml: password=hunter2 AKIAABCDEFGHIJKLMNOP https://user:pw@example.invalid/x\ngoroutine 1 [running]:\nmain.go:12"
)
