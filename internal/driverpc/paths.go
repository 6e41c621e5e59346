package driverpc

import "github.com/shardstore/shardstore/internal/drive"

// Drives by path. A drive's slot is its position in the node's drive
// list, and the nodes' lists agree on the slots of the drives they share
// while a pool is appended (an expansion) or the last one removed; while
// the first pool is removed, nodes restarted without it number the
// remaining drives from 0 and nodes not yet restarted from the removed
// pool's size. So a client also names the drive by its path on its node
// (&path=, which the node's drives have whatever list it was started
// with), and a server that knows its drives' paths finds the drive by
// it; slot alone is what releases before paths send and serve.

// WithPaths makes s find a drive by the path a request names (&path=),
// paths giving each of its slots' paths; a request without a path is
// served by slot. It returns s.
func (s *Server) WithPaths(paths map[int]string) *Server {
	s.byPath = map[string]drive.Drive{}
	for slot, p := range paths {
		if d, ok := s.drives[slot]; ok && p != "" {
			s.byPath[p] = d
		}
	}
	return s
}

// WithPath makes c name its drive by path on its node as well as by slot
// (Server.WithPaths). It returns c.
func (c *Client) WithPath(path string) *Client {
	c.path = path
	return c
}

// lookup finds the drive a request names: by path when it names one and
// s knows paths, else by slot.
func (s *Server) lookup(slot int, path string) (drive.Drive, bool) {
	if path != "" && s.byPath != nil {
		d, ok := s.byPath[path]
		return d, ok
	}
	d, ok := s.drives[slot]
	return d, ok
}
