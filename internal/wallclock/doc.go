// Package wallclock is the wall clock the server stamps and judges
// times by: version and upload times, the lock table's and lock
// holder's lease clock, SigV4 request times and the node-to-node
// signatures (peerauth).
//
// In a release build Now is time.Now and nothing else: the test hook
// below is not compiled in (TestReleaseIgnoresClockOffset in
// test/jepsen checks that the release binary ignores it).
//
// Built with -tags testhooks (what the fault harness in test/jepsen
// runs), Now is time.Now plus SHARDSTORE_TEST_CLOCK_OFFSET, a signed Go
// duration ("+90s", "-4m", "0") read once when the process starts: a
// node whose clock is that far off. time.Time.Add moves the monotonic
// reading along with the wall reading, so durations measured between
// two readings (lease expiry, timeouts) are those of the real clock, as
// they are on a machine whose wall clock is off but whose monotonic
// clock runs true. A bad value stops the server at start (Check).
package wallclock
