package adminapi

import "testing"

// TestUnsolicited: the API acts on a message with an inbox reply (of its
// own account, or _R_ across an import) and on nothing else: no reply, or
// a JetStream ack or flow-control subject of a push delivery.
func TestUnsolicited(t *testing.T) {
	for reply, want := range map[string]bool{
		"_INBOX.abc.1": false, "_INBOX_billing-worker.x": false, "_R_.abc.def": false, "custom.inbox.1": false,
		"": true, "$JS.ACK.SCHED_FIRES.c.1.2.3.4.0": true, "$JS.ACK.dom.hash.SCHED_FIRES.c.1.2.3.4.0.tok": true,
		"$JS.FC.SCHED_FIRES.x.y": true,
	} {
		if got := unsolicited(reply) != ""; got != want {
			t.Errorf("unsolicited(%q) = %v, want %v", reply, got, want)
		}
	}
}
