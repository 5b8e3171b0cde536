package pipelined

import (
	"bytes"
	"encoding/json"
	"math"

	"github.com/nats-io/nats.go/jetstream"
)

// parseAck reads a stream's answer to a publish. The server writes a
// successful one from a template, {"stream":"S","seq":N} with "domain"
// before "seq" in a domain and ,"duplicate": true after it, so that form
// is read by hand, without reflection (encoding/json was most of the
// client's cost per acknowledgement). Anything else, an error above all,
// goes through encoding/json and gets the answer nats.go would give:
// the *jetstream.APIError, or jetstream.ErrInvalidJSAck.
//
// stream is the name the last acknowledgement carried: when this one
// carries the same, the string is reused rather than allocated again.
func parseAck(data []byte, stream string) (*jetstream.PubAck, error) {
	if ack, ok := scanAck(data, stream); ok {
		return ack, nil
	}
	return decodeAck(data)
}

// decodeAck is parseAck's general path.
func decodeAck(data []byte) (*jetstream.PubAck, error) {
	var resp struct {
		Error *jetstream.APIError `json:"error,omitempty"`
		*jetstream.PubAck
	}
	if err := json.Unmarshal(data, &resp); err != nil {
		return nil, jetstream.ErrInvalidJSAck
	}
	if resp.Error != nil {
		return nil, resp.Error
	}
	if resp.PubAck == nil || resp.Stream == "" {
		return nil, jetstream.ErrInvalidJSAck
	}
	return resp.PubAck, nil
}

// scanAck reads data when it is an object of the fields "stream", "seq",
// "domain" and "duplicate" alone, each at most once, with plain strings
// (no escapes), a plain unsigned integer and a bare boolean, and nothing
// after it but white space. ok is false for anything else, which then
// takes encoding/json's path: scanAck never accepts what encoding/json
// would read differently (FuzzParseAck checks it).
func scanAck(data []byte, stream string) (ack *jetstream.PubAck, ok bool) {
	s := scanner{b: data}
	if !s.byte('{') {
		return nil, false
	}
	var (
		a                            jetstream.PubAck
		seenStream, seenSeq, seenDom bool
		seenDup                      bool
	)
	for first := true; ; first = false {
		if s.byte('}') {
			break
		}
		if !first && !s.byte(',') {
			return nil, false
		}
		key, good := s.str()
		if !good || !s.byte(':') {
			return nil, false
		}
		switch string(key) {
		case "stream":
			v, good := s.str()
			if !good || seenStream {
				return nil, false
			}
			seenStream = true
			if string(v) == stream {
				a.Stream = stream
			} else {
				a.Stream = string(v)
			}
		case "domain":
			v, good := s.str()
			if !good || seenDom {
				return nil, false
			}
			seenDom, a.Domain = true, string(v)
		case "seq":
			v, good := s.uint()
			if !good || seenSeq {
				return nil, false
			}
			seenSeq, a.Sequence = true, v
		case "duplicate":
			v, good := s.bool()
			if !good || seenDup {
				return nil, false
			}
			seenDup, a.Duplicate = true, v
		default:
			return nil, false
		}
	}
	if !s.end() || a.Stream == "" {
		return nil, false
	}
	return &a, true
}

// scanner reads JSON tokens from b, skipping the white space before each.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// byte consumes c if it comes next.
func (s *scanner) byte(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// end reports whether only white space is left.
func (s *scanner) end() bool {
	s.space()
	return s.i == len(s.b)
}

// str consumes a string without escapes or control characters, and
// returns its bytes (which alias b). Bytes that are not valid UTF-8 are
// refused too: encoding/json would replace them.
func (s *scanner) str() ([]byte, bool) {
	if !s.byte('"') {
		return nil, false
	}
	rest := s.b[s.i:]
	n := bytes.IndexByte(rest, '"')
	if n < 0 {
		return nil, false
	}
	v := rest[:n]
	for _, c := range v {
		if c < 0x20 || c == '\\' || c >= 0x80 {
			return nil, false
		}
	}
	s.i += n + 1
	return v, true
}

// uint consumes an unsigned integer without sign, fraction, exponent or
// leading zero, that fits in a uint64.
func (s *scanner) uint() (uint64, bool) {
	s.space()
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	digits := s.b[start:s.i]
	if len(digits) == 0 || len(digits) > 1 && digits[0] == '0' {
		return 0, false
	}
	if s.i < len(s.b) {
		switch s.b[s.i] {
		case '.', 'e', 'E', '-', '+':
			return 0, false
		}
	}
	var v uint64
	for _, c := range digits {
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false // past a uint64: encoding/json refuses it
		}
		v = v*10 + d
	}
	return v, true
}

// bool consumes true or false.
func (s *scanner) bool() (bool, bool) {
	s.space()
	rest := s.b[s.i:]
	switch {
	case bytes.HasPrefix(rest, []byte("true")):
		s.i += 4
		return true, true
	case bytes.HasPrefix(rest, []byte("false")):
		s.i += 5
		return false, true
	}
	return false, false
}
