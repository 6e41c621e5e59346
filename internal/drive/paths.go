package drive

import "path/filepath"

// ShardPath is where a Local drive rooted at root keeps ref's shard file.
// Tools and tests that inspect or damage a drive from outside use it; the
// engine never does (it goes through the Drive interface).
func ShardPath(root string, ref ShardRef) string {
	return filepath.Join(root, sysDirName, dataDirName, ref.ID[:2], ref.ID+"."+itoa(ref.Part))
}
