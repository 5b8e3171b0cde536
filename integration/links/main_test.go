package links

import (
	"testing"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

// TestMain checks for leaked goroutines, except toxiproxy's own: v2.5.0
// leaves a link's toxic stubs blocked on a channel send when a connection
// closes while a toxic is being added or changed, even after Proxy.Stop.
// Its bandwidth toxic logs through zerolog's global logger; that is
// turned off.
func TestMain(m *testing.M) {
	zerolog.SetGlobalLevel(zerolog.Disabled)
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/Shopify/toxiproxy/v2/toxics.(*ToxicStub).Run"),
		goleak.IgnoreAnyFunction("github.com/Shopify/toxiproxy/v2.(*ToxicLink).read"),
		goleak.IgnoreAnyFunction("github.com/Shopify/toxiproxy/v2.(*ToxicLink).write"))
}
