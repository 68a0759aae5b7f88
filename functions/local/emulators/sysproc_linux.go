package emulators

import "syscall"

// sysProcAttr puts the emulator in its own process group, so Stop can end
// it with everything it started and a terminal's Ctrl-C reaches only the
// command under test, and has the kernel kill it if the Go process that
// started it dies without calling Stop (a test binary's timeout panic, a
// SIGKILL), so no emulator outlives its run.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
