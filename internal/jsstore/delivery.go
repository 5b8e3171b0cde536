package jsstore

import (
	"strconv"
	"strings"
)

// delivery is what a watch needs of a delivered message's reply subject:
// its stream sequence (the value's revision), when it was stored (Unix
// ns), and how many messages of the consumer are still to come.
type delivery struct {
	seq     uint64
	at      int64
	pending uint64
}

// deliveryOf reads a delivery from a JetStream reply subject, in either
// form the server sends:
//
//	$JS.ACK.<stream>.<consumer>.<delivered>.<seq>.<cseq>.<ts>.<pending>
//	$JS.ACK.<domain>.<account>.<stream>.<consumer>.<delivered>.<seq>.<cseq>.<ts>.<pending>[.<token>...]
//
// It reports false for any other subject. jetstream.Msg.Metadata reads the
// same fields and more, into a struct of its own per message: a watch of a
// million values made a million of them.
func deliveryOf(reply string) (delivery, bool) {
	var tok [12]string
	n := 0
	for rest := reply; n < len(tok); n++ {
		i := strings.IndexByte(rest, '.')
		if i < 0 || n == len(tok)-1 {
			tok[n] = rest
			n++
			break
		}
		tok[n], rest = rest[:i], rest[i+1:]
	}
	if tok[0] != "$JS" || tok[1] != "ACK" {
		return delivery{}, false
	}
	var base int // where the stream's name is
	switch {
	case n == 9:
		base = 2
	case n >= 11:
		base = 4
	default:
		return delivery{}, false
	}
	seq, err1 := strconv.ParseUint(tok[base+3], 10, 64)
	at, err2 := strconv.ParseInt(tok[base+5], 10, 64)
	pending, err3 := strconv.ParseUint(tok[base+6], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return delivery{}, false
	}
	return delivery{seq: seq, at: at, pending: pending}, true
}
