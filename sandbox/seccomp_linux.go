//go:build linux && (amd64 || arm64)

package sandbox

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp filter of a command: which sockets it may open, and a few
// kernel interfaces that would go around the other layers.
//
//   - socket(AF_UNIX) is refused (EACCES): no pathname or abstract unix
//     socket can be reached, so no ssh-agent, gpg-agent, D-Bus, docker,
//     X11 or bulkhead.sock. socketpair(AF_UNIX) of a stream or seqpacket
//     socket stays (runtimes use it between their own processes); a
//     datagram pair would let sendto name any socket, so it is refused.
//   - socket(AF_INET/AF_INET6) is refused unless the command has a
//     network grant, and then only for TCP (not MPTCP, which Landlock's
//     TCP rules do not see) — and UDP only where there is no network
//     namespace and name resolution needs it.
//   - netlink only for routing information (what interfaces there are);
//     every other family (packet, vsock, bluetooth, alg…) is refused.
//   - io_uring (which could open and connect sockets outside this
//     filter), the keyrings (keyctl, add_key, request_key: the user's
//     stored secrets), the calls that reach into another process
//     (ptrace, process_vm_readv/writev, pidfd_getfd, kcmp), listen (a
//     socket listens without bind, which Landlock would see), bpf,
//     userfaultfd and perf_event_open are refused;
//   - a new user namespace (unshare or clone with CLONE_NEWUSER; clone3,
//     whose flags the filter cannot read, whole): inside one the command
//     would hold every capability again.
//
// A syscall of another architecture (a 32-bit entry on amd64, the x32
// ABI) is refused whole.

// filterOptions say what a command's filter lets through.
type filterOptions struct {
	tcp, udp bool
}

const (
	bpfLd   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfJeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfJge  = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	bpfJset = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	bpfAnd  = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
	bpfRet  = unix.BPF_RET | unix.BPF_K

	offNr   = 0
	offArch = 4
)

// offArg is the offset of the low 32 bits of argument i (little-endian).
func offArg(i int) uint32 { return uint32(16 + 8*i) }

func errno(e unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(e) }

const allow = unix.SECCOMP_RET_ALLOW

// program assembles with labels: jumps name the label they go to, and
// assemble turns them into the offsets classic BPF wants.
type program struct {
	ins    []unix.SockFilter
	labels map[string]int
	fix    []fixup
}

type fixup struct {
	at          int
	jt, jf      string
	conditional bool
}

func (p *program) label(name string) { p.labels[name] = len(p.ins) }

func (p *program) stmt(code uint16, k uint32) {
	p.ins = append(p.ins, unix.SockFilter{Code: code, K: k})
}

// jeq jumps to jt when A == k, else to jf ("" is the next instruction).
func (p *program) jump(code uint16, k uint32, jt, jf string) {
	p.fix = append(p.fix, fixup{at: len(p.ins), jt: jt, jf: jf, conditional: true})
	p.ins = append(p.ins, unix.SockFilter{Code: code, K: k})
}

func (p *program) assemble() ([]unix.SockFilter, error) {
	for _, f := range p.fix {
		for _, side := range []struct {
			name string
			to   *uint8
		}{{f.jt, &p.ins[f.at].Jt}, {f.jf, &p.ins[f.at].Jf}} {
			if side.name == "" {
				continue
			}
			at, ok := p.labels[side.name]
			if !ok {
				return nil, fmt.Errorf("seccomp: no label %q", side.name)
			}
			off := at - f.at - 1
			if off < 0 || off > 255 {
				return nil, fmt.Errorf("seccomp: jump to %q out of range", side.name)
			}
			*side.to = uint8(off)
		}
	}
	return p.ins, nil
}

// filter builds the command's filter.
func filter(o filterOptions) ([]unix.SockFilter, error) {
	p := &program{labels: map[string]int{}}
	p.stmt(bpfLd, offArch)
	p.jump(bpfJeq, nativeArch, "", "foreign")
	p.stmt(bpfLd, offNr)
	if runtime.GOARCH == "amd64" {
		p.jump(bpfJge, 0x40000000, "foreign", "") // the x32 ABI
	}
	p.jump(bpfJeq, unix.SYS_SOCKET, "socket", "")
	p.jump(bpfJeq, unix.SYS_SOCKETPAIR, "socketpair", "")
	for _, nr := range []uint32{unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER} {
		p.jump(bpfJeq, nr, "enosys", "")
	}
	for _, nr := range []uint32{unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
		unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV, unix.SYS_PIDFD_GETFD,
		unix.SYS_LISTEN, unix.SYS_BPF, unix.SYS_USERFAULTFD, unix.SYS_PERF_EVENT_OPEN, unix.SYS_KCMP} {
		p.jump(bpfJeq, nr, "eperm", "")
	}
	// A user namespace of its own would give the command every
	// capability there (and the kernel's code behind them); clone3 hides
	// its flags in memory, so it is refused whole (the C library falls
	// back to clone).
	p.jump(bpfJeq, unix.SYS_UNSHARE, "newuser", "")
	p.jump(bpfJeq, unix.SYS_CLONE, "newuser", "")
	p.jump(bpfJeq, unix.SYS_CLONE3, "enosys", "")
	p.stmt(bpfRet, allow)

	p.label("newuser")
	p.stmt(bpfLd, offArg(0))
	p.jump(bpfJset, unix.CLONE_NEWUSER, "eperm", "allow")

	p.label("socket")
	p.stmt(bpfLd, offArg(0))
	p.jump(bpfJeq, unix.AF_UNIX, "eacces", "")
	p.jump(bpfJeq, unix.AF_NETLINK, "netlink", "")
	p.jump(bpfJeq, unix.AF_INET, "inet", "")
	p.jump(bpfJeq, unix.AF_INET6, "inet", "")
	p.stmt(bpfRet, errno(unix.EAFNOSUPPORT))

	p.label("netlink")
	p.stmt(bpfLd, offArg(2))
	p.jump(bpfJeq, unix.NETLINK_ROUTE, "allow", "eacces")

	p.label("inet")
	if !o.tcp && !o.udp {
		p.stmt(bpfRet, errno(unix.EACCES))
	} else {
		p.stmt(bpfLd, offArg(1))
		p.stmt(bpfAnd, 0xf) // the type, less SOCK_NONBLOCK and SOCK_CLOEXEC
		if o.tcp {
			p.jump(bpfJeq, unix.SOCK_STREAM, "tcp", "")
		}
		if o.udp {
			p.jump(bpfJeq, unix.SOCK_DGRAM, "udp", "")
		}
		p.stmt(bpfRet, errno(unix.EACCES))
		p.label("tcp")
		p.stmt(bpfLd, offArg(2))
		p.jump(bpfJeq, 0, "allow", "")
		p.jump(bpfJeq, unix.IPPROTO_TCP, "allow", "eacces")
		p.label("udp")
		p.stmt(bpfLd, offArg(2))
		p.jump(bpfJeq, 0, "allow", "")
		p.jump(bpfJeq, unix.IPPROTO_UDP, "allow", "eacces")
	}

	p.label("socketpair")
	p.stmt(bpfLd, offArg(0))
	p.jump(bpfJeq, unix.AF_UNIX, "", "eafnosupport")
	p.stmt(bpfLd, offArg(1))
	p.stmt(bpfAnd, 0xf)
	p.jump(bpfJeq, unix.SOCK_STREAM, "allow", "")
	p.jump(bpfJeq, unix.SOCK_SEQPACKET, "allow", "eacces")

	p.label("allow")
	p.stmt(bpfRet, allow)
	p.label("eacces")
	p.stmt(bpfRet, errno(unix.EACCES))
	p.label("eperm")
	p.stmt(bpfRet, errno(unix.EPERM))
	p.label("enosys")
	p.stmt(bpfRet, errno(unix.ENOSYS))
	p.label("eafnosupport")
	p.stmt(bpfRet, errno(unix.EAFNOSUPPORT))
	p.label("foreign")
	p.stmt(bpfRet, errno(unix.ENOSYS))
	return p.assemble()
}

// installFilter puts the filter on the calling thread, which must have
// no_new_privs set; the program this thread executes next keeps it.
func installFilter(o filterOptions) error {
	ins, err := filter(o)
	if err != nil {
		return err
	}
	prog := unix.SockFprog{Len: uint16(len(ins)), Filter: &ins[0]}
	if _, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&prog))); e != 0 {
		return fmt.Errorf("seccomp: %w", e)
	}
	runtime.KeepAlive(ins)
	return nil
}

// seccompAvailable says whether this build filters system calls.
const seccompAvailable = true
