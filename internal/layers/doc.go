// Package layers holds no code: its test checks that every package of the
// module imports only packages on lower floors, so data and calls flow one
// way (HTTP -> access decision -> engine -> erasure/hashing -> drive).
// Floors, from the bottom (docs/ARCHITECTURE.md draws them):
//
//	0  leaves: formats and rules that import nothing of the module (meta,
//	   policy, objectlock, erasure, bitrot, md5lanes, ellipses, cli,
//	   cpustat, logring, certs, peerauth)
//	1  decisions and mechanisms over them: access (over policy), quorum
//	   (over meta), hashing, drive
//	2  between nodes: driverpc, dlock, consensus, cluster; the background
//	   jobs (over an interface the engine implements)
//	3  the object engine
//	4  what runs over the engine's public calls: lifecycle (its rules and
//	   its runner); authentication: auth
//	5  identities: iam
//	6  the HTTP APIs: s3api, sts, admin, metrics
//	7  what sits beside the APIs: console, bench
//	8  the command: cmd/shardstore
//
// A package imports only packages on floors below its own. A new package
// gets a floor in the test's table; the test fails for a package it does
// not know, so nothing is added without deciding where it lives.
package layers
