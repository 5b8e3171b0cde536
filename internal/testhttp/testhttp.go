// Package testhttp holds the HTTP helpers tests share.
package testhttp

import (
	"io"
	"net/http"
	"testing"
)

// Get is the status and body of GET url; a request or read that fails
// fails the test.
func Get(t testing.TB, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}
