package daemon

import (
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestEmbeddedPlace: an explicit --listen/--data-dir wins, then the server
// config file, then the defaults.
func TestEmbeddedPlace(t *testing.T) {
	file := &server.Options{Host: "0.0.0.0", Port: 4333, StoreDir: "/var/lib/js"}
	for _, c := range []struct {
		name                    string
		listen, dataDir         string
		file                    *server.Options
		wantListen, wantDataDir string
	}{
		{"defaults", "", "", nil, "127.0.0.1:4222", "./jetsched-data"},
		{"flags", "127.0.0.1:0", "/d", nil, "127.0.0.1:0", "/d"},
		{"file", "", "", file, "0.0.0.0:4333", "/var/lib/js"},
		{"flags over the file", "127.0.0.1:5000", "/d", file, "127.0.0.1:5000", "/d"},
		{"file silent", "", "", &server.Options{}, "127.0.0.1:4222", "./jetsched-data"},
		{"file port only", "", "", &server.Options{Port: 4333}, "127.0.0.1:4333", "./jetsched-data"},
		{"file random port", "", "", &server.Options{Port: -1}, "127.0.0.1:0", "./jetsched-data"},
	} {
		l, d := embeddedPlace(c.listen, c.dataDir, c.file)
		if l != c.wantListen || d != c.wantDataDir {
			t.Errorf("%s: %s %s, want %s %s", c.name, l, d, c.wantListen, c.wantDataDir)
		}
	}
}
