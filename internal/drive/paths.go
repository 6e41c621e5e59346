package drive

import "path/filepath"

// ShardPath is where a Local drive rooted at root keeps ref's shard file.
// Tools and tests that inspect or damage a drive from outside use it; the
// engine never does (it goes through the Drive interface).
// An id too short to have a fan-out directory (never a valid one) maps to
// a path inside the data directory that cannot exist.
func ShardPath(root string, ref ShardRef) string {
	if len(ref.ID) < 2 {
		return filepath.Join(root, sysDirName, dataDirName, "invalid-id")
	}
	return filepath.Join(root, sysDirName, dataDirName, ref.ID[:2], ref.ID+"."+itoa(ref.Part))
}
