package console

import "net/http"

// Handler is the console's HTTP handler, for tests that drive it without
// a network.
func (s *Server) Handler() http.Handler { return s.http.Handler }
