package fires

import (
	"maps"

	"github.com/nats-io/nats.go/jetstream"
)

// sizeFor has the entries map sized, as a watch's initial values begin,
// for as many schedules as that watch has (an entry's delta is how many
// values follow it): a million schedules added one by one made the map
// grow twenty times, each time holding its old table and the new one
// while the old one's entries moved.
//
// The sized map is made on a goroutine of its own and taken in when it
// comes (takeSized), the entries indexed meanwhile copied into it: making
// a map for a million schedules took 0.38 s on a 2-core VM whose memory
// the host backs at first touch, and the loop, due work first included,
// stood still for it.
func (ld *loader) sizeFor(kv jetstream.KeyValueEntry) {
	l := ld.l
	n := int(min(kv.Delta(), maxSizeHint)) + 1
	if n <= ld.sized || l.health.scan != nil || ld.resizing {
		return // a health walk iterates the map, or a map is on its way: sized at a later value
	}
	ld.sized = n
	if n <= len(l.entries)*2 {
		return // grows as well by itself
	}
	ld.resizing = true
	resized := ld.resized
	ld.sizing.Go(func() { resized <- make(map[string]*entry, n) }) // room for one: never blocks
}

// takeSized puts a map sizeFor made in place of the entries map, with
// the entries in it. During a health walk (which iterates the entries map)
// the map is left to grow by itself instead.
func (ld *loader) takeSized(m map[string]*entry) {
	l := ld.l
	ld.resizing = false
	if l.health.scan != nil || ld.sized <= len(l.entries) {
		return
	}
	maps.Copy(m, l.entries)
	l.entries = m
}

// maxSizeHint bounds what a watch's count may size the entries map for:
// a bucket that says more grows the map by itself beyond that.
const maxSizeHint = 1 << 24
