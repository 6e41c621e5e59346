// Package drivefault lets the fault harness (test/jepsen) make a
// running node's local drives slow or failing, in test builds only.
//
// In a release build Wrap returns the drive it is given: nothing here
// is compiled in but the parser. Built with -tags testhooks, when
// SHARDSTORE_TEST_DRIVE_FAULTS names a file, Wrap puts each local drive
// in a drive.Faulty and watches the file (every 200 ms): whenever its
// text changes, the drive's faults become what the file now says (a
// missing or empty file: none). The harness rewrites the file to start
// and end a slow-disk or failing-disk fault on one node while it runs.
//
// The file, one fault a line ('#' starts a comment):
//
//	ops=Write,Sync delay=400ms   # every write and fsync of a shard file waits 400 ms
//	ops=all eio=5                # 1 call in 5, of any kind, fails with EIO
//	ops=writes delay=1s eio=3    # both: 1 in 3 fails; the others wait 1 s
//
// ops is a list of drive.Op names, or all, reads (Get, Scan, OpenShard,
// Read, WalkShards, ReadFormat, DiskInfo) or writes (drive.WriteOps);
// delay a Go duration up to 10m; eio=N fails 1 matching call in N with
// drive.ErrInjectedEIO. A line with both becomes two faults, the EIO one
// first (a drive.Faulty call takes the first fault that hits it).
//
// Wrapping hides the local drive's optional interfaces (memory reads,
// change counts) from drive.Health, which then reads through the index
// as for a remote drive: the harness sets the variable only for runs
// with a disk nemesis.
package drivefault
