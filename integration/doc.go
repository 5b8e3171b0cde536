// Package integration holds jetsched's end-to-end tests: the daemon, the
// CLI and the built binary against real embedded nats-servers.
package integration
