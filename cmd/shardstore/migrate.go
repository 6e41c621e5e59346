package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/shardstore/shardstore/internal/cli"
	"github.com/shardstore/shardstore/internal/ellipses"
	"github.com/shardstore/shardstore/internal/migrate"
)

const migrateUsage = "shardstore migrate from-minio [--dry-run] [--finish] DRIVE..."

// runMigrate is `shardstore migrate from-minio`: adopt a stopped MinIO
// deployment's drives in place (internal/migrate).
func runMigrate(args []string) error {
	head := "usage: " + migrateUsage + "\n\n" +
		"Adopts the drives of a stopped single-node MinIO deployment (one erasure set) in place:\n" +
		"the same drive arguments the MinIO server had, e.g. /data{1...16}. Object data is not\n" +
		"copied: MinIO's part files get a second name in shardstore's data area. MinIO's files stay\n" +
		"until --finish. --dry-run reports what would be adopted and refused and writes nothing.\n" +
		"An interrupted run is resumed by running it again. Then: shardstore server DRIVE...\n"
	if len(args) == 0 || args[0] != "from-minio" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			fmt.Fprint(os.Stdout, head)
			return flag.ErrHelp
		}
		return cli.Usagef(migrateUsage, "shardstore migrate -h", "want: migrate from-minio DRIVE...")
	}
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	dry := fs.Bool("dry-run", false, "decode everything and report what would be adopted and refused; write nothing")
	finish := fs.Bool("finish", false, "after a completed adoption, remove MinIO's names of the adopted objects")
	owner := fs.String("owner", "", "access key recorded as owner of the adopted buckets and objects (empty: the root user)")
	var drives []string
	rest := args[1:]
	for {
		if err := cli.Parse(fs, rest, os.Stdout, migrateUsage, head); err != nil {
			return err
		}
		rest = fs.Args()
		if len(rest) == 0 {
			break
		}
		drives = append(drives, rest[0])
		rest = rest[1:]
	}
	if len(drives) == 0 {
		return cli.Usagef(migrateUsage, "shardstore migrate -h", "no drives given")
	}
	paths, err := ellipses.ExpandAll(drives)
	if err != nil {
		return cli.Usagef(migrateUsage, "shardstore migrate -h", "%v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	_, err = migrate.FromMinIO(ctx, migrate.Options{Drives: paths, DryRun: *dry, Finish: *finish, Owner: *owner, Out: os.Stdout})
	return err
}
