package partition

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"testing"
)

// runBPF interprets the instructions program uses, on an Ethernet frame,
// with rand as the ancillary random number.
func runBPF(t *testing.T, p []bpfInsn, frame []byte, rand uint32) uint32 {
	t.Helper()
	var a uint32
	for pc := 0; pc < len(p); {
		in := p[pc]
		pc++
		switch in.code {
		case bpfLdhAbs:
			a = uint32(binary.BigEndian.Uint16(frame[in.k:]))
		case bpfLdwAbs:
			if in.k == bpfRandom {
				a = rand
			} else {
				a = binary.BigEndian.Uint32(frame[in.k:])
			}
		case bpfJeqK, bpfJgeK:
			ok := a == in.k
			if in.code == bpfJgeK {
				ok = a >= in.k
			}
			if ok {
				pc += int(in.jt)
			} else {
				pc += int(in.jf)
			}
		case bpfRetK:
			return in.k
		default:
			t.Fatalf("unknown opcode %#x at %d", in.code, pc-1)
		}
	}
	t.Fatal("program fell off its end")
	return 0
}

// frame is an Ethernet frame of the given type, with src as the IPv4
// source address.
func frame(etherType uint16, src netip.Addr) []byte {
	f := make([]byte, 64)
	binary.BigEndian.PutUint16(f[12:], etherType)
	b := src.As4()
	copy(f[ipv4SrcOffset:], b[:])
	return f
}

func TestDropFilterProgram(t *testing.T) {
	a1, a2, a3 := netip.MustParseAddr("10.7.1.1"), netip.MustParseAddr("10.7.1.2"), netip.MustParseAddr("10.7.1.3")
	const arp = 0x806
	cases := []struct {
		name   string
		f      dropFilter
		frame  []byte
		rand   uint32
		verdit uint32
	}{
		{"no rule passes", dropFilter{}, frame(etherTypeIPv4, a1), 0, tcActOK},
		{"cut source dropped", dropFilter{from: []netip.Addr{a1}}, frame(etherTypeIPv4, a1), 0, tcActShot},
		{"other source passes", dropFilter{from: []netip.Addr{a1}}, frame(etherTypeIPv4, a2), 0, tcActOK},
		{"second of two sources dropped", dropFilter{from: []netip.Addr{a1, a2}}, frame(etherTypeIPv4, a2), 0, tcActShot},
		{"third address passes two rules", dropFilter{from: []netip.Addr{a1, a2}}, frame(etherTypeIPv4, a3), 0, tcActOK},
		{"ARP passes a cut", dropFilter{from: []netip.Addr{a1}}, frame(arp, a1), 0, tcActOK},
		{"loss: low random drops", dropFilter{loss: 0.2}, frame(etherTypeIPv4, a1), 0, tcActShot},
		{"loss: random just below 20% drops", dropFilter{loss: 0.2}, frame(etherTypeIPv4, a1), 858993458, tcActShot},
		{"loss: random at 20% passes", dropFilter{loss: 0.2}, frame(etherTypeIPv4, a1), 858993459, tcActOK},
		{"loss applies to ARP too", dropFilter{loss: 0.2}, frame(arp, a1), 5, tcActShot},
		{"cut and loss: cut source dropped whatever the dice", dropFilter{from: []netip.Addr{a1}, loss: 0.2}, frame(etherTypeIPv4, a1), 1 << 31, tcActShot},
		{"cut and loss: other source, high random passes", dropFilter{from: []netip.Addr{a1}, loss: 0.2}, frame(etherTypeIPv4, a2), 1 << 31, tcActOK},
		{"cut and loss: other source, low random drops", dropFilter{from: []netip.Addr{a1}, loss: 0.2}, frame(etherTypeIPv4, a2), 7, tcActShot},
		{"total loss drops everything", dropFilter{loss: 1}, frame(etherTypeIPv4, a1), 1<<32 - 2, tcActShot},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := tc.f.program()
			if err != nil {
				t.Fatal(err)
			}
			if got := runBPF(t, p, tc.frame, tc.rand); got != tc.verdit {
				t.Errorf("verdict %d, want %d; program %s", got, tc.verdit, bytecode(p))
			}
		})
	}
}

func TestDropFilterRejects(t *testing.T) {
	for _, f := range []dropFilter{
		{loss: 1.5},
		{loss: -0.1},
		{from: []netip.Addr{netip.MustParseAddr("fd00::1")}},
	} {
		if _, err := f.program(); err == nil {
			t.Errorf("%+v: no error", f)
		}
	}
}

func TestBytecode(t *testing.T) {
	p, err := dropFilter{from: []netip.Addr{netip.MustParseAddr("10.0.0.2")}}.program()
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("6,40 0 0 12,21 0 2 2048,32 0 0 26,21 1 0 %d,6 0 0 0,6 0 0 2", 10<<24|2)
	if got := bytecode(p); got != want {
		t.Errorf("bytecode %q, want %q", got, want)
	}
}
