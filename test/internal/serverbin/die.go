package serverbin

import (
	"os/exec"
	"syscall"
)

// DieWithParent makes the kernel kill cmd's process (SIGKILL) when the
// test process that starts it dies, however it dies: a test binary
// killed by a timeout, Ctrl-C or a CI runner would otherwise leave its
// server processes running, holding ports and temporary drives. Call it
// before cmd.Start.
func DieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
