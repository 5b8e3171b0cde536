package partition

// The packet filters of the nemeses: classic BPF programs run by tc's
// cls_bpf in direct-action mode on the bridge's ports. They need only
// CONFIG_NET_CLS_BPF and the clsact qdisc, which kernels without netem or
// the gact action (as on the CI machines) still have; iptables and nft are
// not needed.

import (
	"fmt"
	"math"
	"net/netip"
	"strings"
)

// Classic BPF opcodes and the two verdicts of a direct-action program.
const (
	bpfLdhAbs = 0x28 // A = 16-bit word at k
	bpfLdwAbs = 0x20 // A = 32-bit word at k (or an ancillary load)
	bpfJeqK   = 0x15 // pc += (A == k) ? jt : jf
	bpfJgeK   = 0x35 // pc += (A >= k) ? jt : jf
	bpfRetK   = 0x06 // return k

	// bpfRandom is the ancillary load SKF_AD_OFF + SKF_AD_RANDOM: a
	// pseudo-random 32-bit number per packet.
	bpfRandom = 0xfffff000 + 56

	tcActOK   = 0 // TC_ACT_OK: let the packet through
	tcActShot = 2 // TC_ACT_SHOT: drop it

	etherTypeOffset = 12    // in an Ethernet frame
	etherTypeIPv4   = 0x800 //
	ipv4SrcOffset   = 14 + 12
)

// bpfInsn is one classic BPF instruction.
type bpfInsn struct {
	code   uint16
	jt, jf uint8
	k      uint32
}

// dropFilter is what one filter drops: IPv4 packets from any of from, and
// a random share loss (0 to 1) of every packet.
type dropFilter struct {
	from []netip.Addr
	loss float64
}

// program assembles the filter:
//
//	ldh [12]; jeq #0x800 ? next : loss     (IPv4?)
//	ld [26]; jeq #src1 ? drop : next; ...  (from a cut-off peer?)
//	loss: ld rand; jge #threshold ? pass : drop
//	pass: ret #0
//	drop: ret #2
func (f dropFilter) program() ([]bpfInsn, error) {
	if f.loss < 0 || f.loss > 1 {
		return nil, fmt.Errorf("loss %v: must be between 0 and 1", f.loss)
	}
	if len(f.from) > 200 {
		return nil, fmt.Errorf("%d sources: at most 200 fit the jumps of one program", len(f.from))
	}
	var p []bpfInsn
	n := len(f.from)
	// Instruction counts after the source checks: the loss section (2, or
	// 0 without loss), then pass and drop.
	lossLen := 0
	if f.loss > 0 {
		lossLen = 2
	}
	if n > 0 {
		p = append(p,
			bpfInsn{code: bpfLdhAbs, k: etherTypeOffset},
			// Not IPv4: skip the source checks (the ld and the n jeqs).
			bpfInsn{code: bpfJeqK, jt: 0, jf: uint8(1 + n), k: etherTypeIPv4},
			bpfInsn{code: bpfLdwAbs, k: ipv4SrcOffset},
		)
		for i, a := range f.from {
			if !a.Is4() {
				return nil, fmt.Errorf("source %s: only IPv4 is filtered", a)
			}
			b := a.As4()
			// To drop: past the rest of the checks, the loss section and pass.
			toDrop := (n - 1 - i) + lossLen + 1
			p = append(p, bpfInsn{code: bpfJeqK, jt: uint8(toDrop), jf: 0,
				k: uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])})
		}
	}
	if f.loss > 0 {
		threshold := uint32(math.Min(f.loss*(1<<32), math.MaxUint32))
		p = append(p,
			bpfInsn{code: bpfLdwAbs, k: bpfRandom},
			bpfInsn{code: bpfJgeK, jt: 0, jf: 1, k: threshold},
		)
	}
	p = append(p, bpfInsn{code: bpfRetK, k: tcActOK}, bpfInsn{code: bpfRetK, k: tcActShot})
	return p, nil
}

// bytecode renders a program in tc's "bytecode" syntax:
// "<n>,<code> <jt> <jf> <k>,...".
func bytecode(p []bpfInsn) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d", len(p))
	for _, in := range p {
		fmt.Fprintf(&b, ",%d %d %d %d", in.code, in.jt, in.jf, in.k)
	}
	return b.String()
}
