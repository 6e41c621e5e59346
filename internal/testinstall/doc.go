// Package testinstall is what the test packages that run a real external
// server share (slapdtest, baotest, oidctest, targettest): finding a
// program on PATH or in known directories (Lookup), installing its
// Debian packages with apt-get when it is missing (Find, as root or with
// sudo -n, once per process and one test binary at a time on the machine:
// a file lock, Locked), saying in the test's log what is used or
// installed and why, and otherwise skipping the test with the reason, or
// failing it when SHARDSTORE_REQUIRE_<X> is set (Once, Need). For the
// servers themselves: free loopback ports (FreePort, FreeAddr), waiting
// for a TCP port to answer (WaitTCP), and a server process whose output
// is kept and which is stopped when the test ends (Process, RunCommand).
//
// Package names are checked against Debian's rules before they reach
// apt-get (ValidPackage), so that nothing a caller passes is taken as an
// option.
package testinstall
