package console

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// hub tells the open pages that something they show changed. A page
// subscribes to one topic; publish never blocks (each subscriber holds at
// most one pending notice, so a burst of changes is one notice).
type hub struct {
	mu   sync.Mutex
	subs map[string]map[chan struct{}]struct{}
}

func newHub() *hub { return &hub{subs: map[string]map[chan struct{}]struct{}{}} }

func (h *hub) subscribe(topic string) chan struct{} {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs[topic] == nil {
		h.subs[topic] = map[chan struct{}]struct{}{}
	}
	h.subs[topic][ch] = struct{}{}
	return ch
}

func (h *hub) unsubscribe(topic string, ch chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs[topic], ch)
	if len(h.subs[topic]) == 0 {
		delete(h.subs, topic)
	}
}

// publish notifies the topic's subscribers.
func (h *hub) publish(topic string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs[topic] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Live update pacing: a page hears of a change at once, then at most once
// per liveInterval (a busy fleet changes state on every fire); a comment
// every heartbeat keeps proxies from closing an idle stream.
const (
	liveInterval = 400 * time.Millisecond
	heartbeat    = 20 * time.Second
)

// serveEvents is /events?topic=T: a Server-Sent Events stream with one
// "change" event whenever what the topic covers changed. The page's
// script then fetches itself again and swaps its live parts.
func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request) {
	topic := r.URL.Query().Get("topic")
	if !validTopic(topic) {
		http.Error(w, "topic: want schedules, schedule:<id>, timers, calendars or fleet", http.StatusBadRequest)
		return
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	ch := s.hub.subscribe(topic)
	defer s.hub.unsubscribe(topic, ch)
	if _, err := fmt.Fprint(w, "retry: 2000\n: live\n\n"); err != nil {
		return
	}
	if rc.Flush() != nil {
		return
	}
	beat := time.NewTicker(heartbeat)
	defer beat.Stop()
	pace := time.NewTimer(0)
	defer pace.Stop()
	ctx := r.Context()
	n := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-beat.C:
			if _, err := fmt.Fprint(w, ": beat\n\n"); err != nil || rc.Flush() != nil {
				return
			}
			continue
		case <-ch:
		}
		n++
		if _, err := fmt.Fprintf(w, "event: change\nid: %d\ndata: %s\n\n", n, topic); err != nil || rc.Flush() != nil {
			return
		}
		pace.Reset(liveInterval)
		select {
		case <-ctx.Done():
			return
		case <-pace.C:
		}
	}
}

func validTopic(t string) bool {
	switch t {
	case topicSchedules, topicTimers, topicCalendars, topicFleet:
		return true
	}
	id, ok := strings.CutPrefix(t, "schedule:")
	return ok && id != ""
}
