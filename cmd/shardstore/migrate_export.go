package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/shardstore/shardstore/internal/cli"
	"github.com/shardstore/shardstore/internal/migrate"
	"github.com/shardstore/shardstore/internal/minioexport"
)

const fromExportUsage = "shardstore migrate from-minio-export [--dry-run] --target URL EXPORT.zip..."

// runMigrateFromExport is `shardstore migrate from-minio-export`: apply
// the zips of `mc admin cluster iam export` and `mc admin cluster bucket
// export` to a running shardstore (internal/migrate.FromMinIOExport).
func runMigrateFromExport(args []string) error {
	head := "usage: " + fromExportUsage + "\n\n" +
		"Recreates on the running shardstore at --target what MinIO's exports hold, through its admin\n" +
		"and S3 APIs: from the zip of `mc admin cluster iam export`, policies, users (with their secret\n" +
		"keys and status), groups, policy attachments and service accounts (as access keys with their\n" +
		"secret, parent, session policy, expiry and status); from the zip of `mc admin cluster bucket\n" +
		"export`, buckets with their versioning, object lock, policy, lifecycle, tags and default\n" +
		"encryption. Give either zip or both, in any order.\n\n" +
		"Nothing is widened: actions that do not exist here are left out of policies, a statement that\n" +
		"cannot be carried is dropped when it allows and refuses its policy when it denies. What has no\n" +
		"equivalent (admin and KMS actions, LDAP/OpenID users' policies, the root user's service\n" +
		"accounts, notifications, replication, quotas) is listed on lines starting with \"!\".\n" +
		"Re-running changes nothing already imported. --dry-run reads the target and prints what would\n" +
		"be done. Secrets are never printed.\n\n" +
		"Target credentials (root, or a user allowed the admin and bucket calls): --target-access-key\n" +
		"and --target-secret-key, or SHARDSTORE_ROOT_USER/SHARDSTORE_ROOT_PASSWORD.\n"
	fs := flag.NewFlagSet("migrate from-minio-export", flag.ContinueOnError)
	target := fs.String("target", os.Getenv("SHARDSTORE_ENDPOINT"), "the shardstore to import into (URL; SHARDSTORE_ENDPOINT sets the default)")
	dry := fs.Bool("dry-run", false, "read the target and print what would be done; change nothing")
	tak := fs.String("target-access-key", "", "target access key (default $SHARDSTORE_ROOT_USER)")
	tsk := fs.String("target-secret-key", "", "target secret key (default $SHARDSTORE_ROOT_PASSWORD)")
	region := fs.String("region", "us-east-1", "`REGION` to sign for")
	var files []string
	rest := args
	for {
		if err := cli.Parse(fs, rest, os.Stdout, fromExportUsage, head); err != nil {
			return err
		}
		rest = fs.Args()
		if len(rest) == 0 {
			break
		}
		files = append(files, rest[0])
		rest = rest[1:]
	}
	if len(files) == 0 || len(files) > 2 {
		return cli.Usagef(fromExportUsage, "shardstore migrate from-minio-export -h", "want one or two export zips")
	}
	if *target == "" {
		return cli.Usagef(fromExportUsage, "shardstore migrate from-minio-export -h", "no --target")
	}
	opts := migrate.ExportOptions{DryRun: *dry, Out: os.Stdout,
		Target: migrate.Endpoint{URL: *target, AccessKey: orEnvValue(*tak, "SHARDSTORE_ROOT_USER"),
			SecretKey: orEnvValue(*tsk, "SHARDSTORE_ROOT_PASSWORD"), Region: *region}}
	for _, f := range files {
		x, err := readExport(f)
		if err != nil {
			return err
		}
		switch {
		case x.Kind == minioexport.KindIAM && opts.IAM == nil:
			opts.IAM = x.IAM
		case x.Kind == minioexport.KindBuckets && opts.Buckets == nil:
			opts.Buckets = x.Buckets
		default:
			return fmt.Errorf("%s: a second export of the same kind", f)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	_, err := migrate.FromMinIOExport(ctx, opts)
	return err
}

func readExport(path string) (*minioexport.Export, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	x, err := minioexport.Read(f, fi.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return x, nil
}

func orEnvValue(v, env string) string {
	if v != "" {
		return v
	}
	return os.Getenv(env)
}
