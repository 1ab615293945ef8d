package serve

import (
	"fmt"
	"net"
	"os"
	"syscall"
)

// samePeer refuses a connection from another user: the kernel says who
// is at the other end (SO_PEERCRED), whatever the socket's mode.
func samePeer(c net.Conn) error {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return fmt.Errorf("not a unix socket")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if cerr != nil {
		return cerr
	}
	if int(cred.Uid) != os.Getuid() {
		return fmt.Errorf("peer pid %d is user %d, not %d", cred.Pid, cred.Uid, os.Getuid())
	}
	return nil
}
