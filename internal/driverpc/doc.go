// Package driverpc serves the drive.Drive interface over HTTP between
// the nodes of a cluster: a Server on each node exposes its local
// drives, and a Client on every other node stands in for each of them,
// so the engine (through drive.Health) treats a drive on another node
// like a local one.
//
// Every request is signed with the cluster key (package peerauth); the
// drive slot and all arguments of a call are in the signed path and
// query. Calls, under PathPrefix, ?drive=<global slot index>[&path=<the
// drive's path on its node, which a server with paths finds it by: paths.go]:
//
//	GET  format    ReadFormat      answer: JSON drive.Format
//	POST format    WriteFormat     body: JSON drive.Format
//	GET  diskinfo  DiskInfo        answer: JSON drive.DiskInfo
//	GET  get       Get             &table&key; answer: the raw value
//	GET  record    GetRecord       &bucket&key; answer: binary record and inline shard
//	                               (drive.RecordReader: one call where a GET made two)
//	POST apply     Apply           body: binary batch (see below)
//	GET  scan      Scan            &table&prefix&after&delimiter&limit&keysonly&digest;
//	                               answer: binary entries
//	POST shard     CreateShard     &id&part; body: the shard, streamed
//	                               (chunked), ended by a trailer
//	GET  shard     OpenShard       &id&part&offset; answer: the shard,
//	                               streamed, with an error trailer
//	POST delete    DeleteShards    body: JSON [{"id","part"}]
//	GET  walk      WalkShards      answer: JSON lines, then an end line
//
// Wire format. Metadata calls (format, disk info, shard refs, the walk,
// errors) use small JSON. The index calls, which carry arbitrary bytes
// and sit on every request's path, use a compact binary encoding
// (uvarints and length-prefixed bytes, nil kept apart from empty):
// JSON strings would corrupt keys that are not UTF-8 and base64 would
// add a third to every value. A Get's value is the answer's body as is.
//
// Non-streamed bodies are signed (their SHA-256 is in the signature) and
// capped at 64 MiB; a shard stream is unsigned (shard data carries its
// own bitrot checksums) and never committed unless it ended cleanly with
// a byte count that matches what arrived.
//
// Errors travel as a JSON object of codes and message: the codes name
// every drive error (drive.ErrNotFound, drive.ErrDriveFaulty, …) the
// server's error matched, and the client's error matches the same ones.
// What is not a protocol answer (no connection, a cut stream, a refused
// signature, a 5xx from something else) is drive.ErrDriveFaulty on the
// client, so a node that is down is, to drive.Health, offline drives.
package driverpc
