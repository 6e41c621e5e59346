package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/shardstore/shardstore/internal/cli"
	"github.com/shardstore/shardstore/internal/cluster"
	"github.com/shardstore/shardstore/internal/ellipses"
	"github.com/shardstore/shardstore/internal/kms"
	"github.com/shardstore/shardstore/internal/migrate"
	"github.com/shardstore/shardstore/internal/peerauth"
	"github.com/shardstore/shardstore/internal/sealing"
)

const migrateUsage = "shardstore migrate from-minio [--dry-run] [--finish] [--upload-keys FILE] [--address HOST:PORT] DRIVE... | shardstore migrate from-s3 --target URL [flags] SOURCE_URL | shardstore migrate from-minio-export --target URL EXPORT.zip..."

// runMigrate is `shardstore migrate from-minio`: adopt a stopped MinIO
// deployment's drives in place (internal/migrate).
func runMigrate(args []string) error {
	head := "usage: " + migrateUsage + "\n\n" +
		"Adopts the drives of a stopped single-node MinIO deployment (one or several erasure sets) in place:\n" +
		"the same drive arguments the MinIO server had, e.g. /data{1...16}. Object data is not\n" +
		"copied: MinIO's part files get a second name in shardstore's data area. MinIO's files stay\n" +
		"until --finish. --dry-run reports what would be adopted and refused and writes nothing.\n" +
		"Versions MinIO compressed (S2) are copied (decompressed). Unfinished multipart uploads are\n" +
		"adopted with their ids when their key is known: a key of the bucket, or a bucket/key line of\n" +
		"--upload-keys FILE (MinIO stores only the key's hash).\n" +
		"An interrupted run is resumed by running it again. Then: shardstore server DRIVE...\n" +
		"Several server pools: one argument per pool, as MinIO had them (/p1/d{1...4} /p2/d{1...8}); each\n" +
		"object stays in its pool. A pool MinIO is decommissioning, or has decommissioned, is refused.\n\n" +
		"A node's share of a multi-node MinIO deployment: give the endpoints the MinIO servers had\n" +
		"(http://node{1...4}:9000/data{1...4}) and run it on every node at once, with the same root\n" +
		"credentials (MINIO_ROOT_USER/MINIO_ROOT_PASSWORD) as MinIO's; --address HOST:PORT says\n" +
		"which node this is when the host names do not. The nodes copy each other's MinIO metadata\n" +
		"(not the object data) over their endpoints' ports, decide every object alike, and each\n" +
		"adopts its own drives; each waits until every node has its copy. Then start\n" +
		"shardstore server with the same endpoints on every node. Several server pools: one argument\n" +
		"per pool, http://node{1...4}:9000/p1/d{1...2} http://node{1...4}:9000/p2/d{1...2}.\n" +
		"Versions MinIO encrypted (SSE-S3, SSE-KMS) are copied, decrypted and encrypted again, when the\n" +
		"environment gives the KMS key MinIO ran with (MINIO_KMS_SECRET_KEY=NAME:BASE64, or\n" +
		"SHARDSTORE_KMS_SECRET_KEY_FILE with that line); start the server with it too. SSE-C versions\n" +
		"are refused (the key is the client's). See docs/migrating.md.\n"
	if len(args) > 0 && args[0] == "from-s3" {
		return runMigrateFromS3(args[1:])
	}
	if len(args) > 0 && args[0] == "from-minio-export" {
		return runMigrateFromExport(args[1:])
	}
	if len(args) == 0 || args[0] != "from-minio" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			fmt.Fprint(os.Stdout, head)
			return flag.ErrHelp
		}
		return cli.Usagef(migrateUsage, "shardstore migrate -h", "want: migrate from-minio DRIVE..., from-s3 or from-minio-export")
	}
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	dry := fs.Bool("dry-run", false, "decode everything and report what would be adopted and refused; write nothing")
	finish := fs.Bool("finish", false, "after a completed adoption, remove MinIO's names of the adopted objects")
	owner := fs.String("owner", "", "access key recorded as owner of the adopted buckets and objects (empty: the root user)")
	address := fs.String("address", "", "with endpoints of a multi-node deployment: this node's HOST:PORT, as the server's --address (default: the endpoint whose host is this machine)")
	uploadKeys := fs.String("upload-keys", "", "file of bucket/key lines: the keys of unfinished multipart uploads to adopt (MinIO stores only their hash)")
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
	// Several arguments with ellipses are MinIO's server pools, one each,
	// as for `shardstore server`.
	var pools [][]string
	var poolArgs []string
	if !cluster.IsCluster(paths) {
		if pools, err = ellipses.Pools(drives); err != nil {
			return cli.Usagef(migrateUsage, "shardstore migrate -h", "%v", err)
		}
		if len(pools) > 1 || len(drives) == 1 {
			poolArgs = drives
		}
	}
	var key peerauth.Key
	if cluster.IsCluster(paths) {
		creds, err := rootCredentials(os.Getenv)
		if err != nil {
			return err
		}
		key = peerauth.Derive(creds.user, creds.pass)
	}
	var keys [][2]string
	if *uploadKeys != "" {
		if keys, err = migrate.ReadUploadKeys(*uploadKeys); err != nil {
			return err
		}
	}
	// The static KMS key MinIO ran with (MINIO_KMS_SECRET_KEY, or a key
	// file holding its line) opens MinIO's SSE-S3/SSE-KMS versions, whose
	// new keys are sealed under the same key: the server must be given it
	// too. From the environment only, never logged.
	builtin, hasKMS, err := kms.LoadBuiltin(os.Getenv, os.ReadFile)
	if err != nil {
		return fmt.Errorf("KMS key for encrypted objects: %w", err)
	}
	if cluster.IsCluster(paths) {
		// The endpoints as given: an argument with ellipses over the
		// nodes is a server pool (cluster.Parse groups them).
		paths = drives
	}
	opts := migrate.Options{Drives: paths, DryRun: *dry, Finish: *finish, Owner: *owner, Out: os.Stdout, UploadKeys: keys,
		Address: *address, PeerKey: key, Pools: pools, PoolArgs: poolArgs}
	if hasKMS {
		opts.MinIOKeys, opts.Keys = builtin, sealing.Keys{KMS: builtin}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	_, err = migrate.FromMinIO(ctx, opts)
	return err
}

const fromS3Usage = "shardstore migrate from-s3 --target URL [--bucket B]... [--workers N] [--id-map FILE] [--delete] SOURCE_URL"

// runMigrateFromS3 is `shardstore migrate from-s3`: copy buckets, every
// version with its id and time, from any S3 endpoint into a running
// shardstore through its import path (internal/migrate.FromS3).
func runMigrateFromS3(args []string) error {
	head := "usage: " + fromS3Usage + "\n\n" +
		"Copies every bucket of the S3 endpoint SOURCE_URL (or the --bucket ones) into the running\n" +
		"shardstore at --target, with every version and delete marker oldest first, keeping version\n" +
		"ids, modification times, ETags, metadata, tags, retention and legal hold, and the buckets'\n" +
		"versioning, object lock, policy, lifecycle, tags and CORS. A re-run copies only what the\n" +
		"target lacks; an interrupted run is resumed by running it again.\n" +
		"Version ids that are neither shardstore's nor UUIDs (AWS S3's, Ceph's) get new ids of shardstore's\n" +
		"form, in the same order and with the same times, recorded in --id-map.\n" +
		"--delete also removes from the target the versions and keys gone from the source (never without it).\n" +
		"Source credentials: --access-key/--secret-key or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY.\n" +
		"Target credentials (root, or allowed admin:ImportObject): --target-access-key/--target-secret-key\n" +
		"or SHARDSTORE_ROOT_USER/SHARDSTORE_ROOT_PASSWORD.\n"
	fs := flag.NewFlagSet("migrate from-s3", flag.ContinueOnError)
	target := fs.String("target", os.Getenv("SHARDSTORE_ENDPOINT"), "the shardstore to copy into (URL)")
	ak := fs.String("access-key", "", "source access key (default $AWS_ACCESS_KEY_ID)")
	sk := fs.String("secret-key", "", "source secret key (default $AWS_SECRET_ACCESS_KEY)")
	region := fs.String("region", "", "source region (default $AWS_REGION, else us-east-1)")
	tak := fs.String("target-access-key", "", "target access key (default $SHARDSTORE_ROOT_USER)")
	tsk := fs.String("target-secret-key", "", "target secret key (default $SHARDSTORE_ROOT_PASSWORD)")
	workers := fs.Int("workers", 8, "keys copied at once")
	every := fs.Duration("progress", 2*time.Second, "how often a progress line (versions/s, MiB/s, share done, ETA) is printed")
	del := fs.Bool("delete", false, "delete from the target the versions and keys gone from the source (printed one by one)")
	idMap := fs.String("id-map", migrate.DefaultIDMap, "file recording the new ids of versions whose source ids the target cannot keep (JSON lines)")
	var buckets []string
	fs.Func("bucket", "copy only this bucket (repeatable)", func(v string) error {
		buckets = append(buckets, v)
		return nil
	})
	var source []string
	rest := args
	for {
		if err := cli.Parse(fs, rest, os.Stdout, fromS3Usage, head); err != nil {
			return err
		}
		rest = fs.Args()
		if len(rest) == 0 {
			break
		}
		source = append(source, rest[0])
		rest = rest[1:]
	}
	if len(source) != 1 {
		return cli.Usagef(fromS3Usage, "shardstore migrate from-s3 -h", "want one SOURCE_URL")
	}
	if *target == "" {
		return cli.Usagef(fromS3Usage, "shardstore migrate from-s3 -h", "no --target")
	}
	if *every <= 0 {
		return cli.Usagef(fromS3Usage, "shardstore migrate from-s3 -h", "--progress %v: want a positive duration", *every)
	}
	if *workers < 1 || *workers > 256 {
		return cli.Usagef(fromS3Usage, "shardstore migrate from-s3 -h", "--workers %d: want 1 to 256", *workers)
	}
	orEnv := func(v, env string) string {
		if v != "" {
			return v
		}
		return os.Getenv(env)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	_, err := migrate.FromS3(ctx, migrate.S3Options{
		Source: migrate.Endpoint{URL: source[0], AccessKey: orEnv(*ak, "AWS_ACCESS_KEY_ID"),
			SecretKey: orEnv(*sk, "AWS_SECRET_ACCESS_KEY"), Region: orEnv(*region, "AWS_REGION")},
		Target: migrate.Endpoint{URL: *target, AccessKey: orEnv(*tak, "SHARDSTORE_ROOT_USER"),
			SecretKey: orEnv(*tsk, "SHARDSTORE_ROOT_PASSWORD")},
		Buckets: buckets, Workers: *workers, Out: os.Stdout, Progress: *every, IDMap: *idMap, Delete: *del,
	})
	return err
}
