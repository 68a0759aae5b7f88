//go:build unix && !linux

package emulators

import "syscall"

// sysProcAttr puts the emulator in its own process group, so Stop can end
// it with everything it started. Only Linux can also tie its life to ours.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
