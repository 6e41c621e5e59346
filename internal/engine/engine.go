package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardstore/shardstore/internal/bitrot"
	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/erasure"
	"github.com/shardstore/shardstore/internal/hashing"
	"github.com/shardstore/shardstore/internal/placement"
	"github.com/shardstore/shardstore/internal/wallclock"
	"github.com/zeebo/xxh3"
)

// DefaultInlineLimit is the per-drive shard size up to which object data
// lives inline in the drive's index instead of a shard file (objects up to
// ~384 KiB at 12+4). Chosen by BenchmarkPutInline on a disk: inline data
// skips a file create, fdatasync and directory fsync per drive, which makes
// 4-256 KiB PUTs 3-4x faster, but the LSM writes each inline byte 4-7
// times (WAL, flush, compactions); at 1 MiB objects (87 KiB shards) shard
// files were faster as well as cheaper.
const DefaultInlineLimit = 32 << 10

// IndexCacheSize bounds the block cache shared by every drive's index
// (a cluster node opens its local drives with one of this size too). Its
// memory is taken only as blocks are read. A small-object GET reads 12
// records and their inline shards from the indexes: with 16 drives' index
// past the cache, every read became a pread from the page cache and a
// decompression. 8000 4 KiB objects on 16 drives (~128 MB of index), 4
// alternating pairs: server CPU per GET median 0.78 ms at 64 MiB, 0.63 ms
// at 256 MiB (docs/performance.md). A quarter of it caches the records and
// inline shards themselves (the row cache), which spares a GET of a hot
// small object its 24 point reads of the LSM.
const IndexCacheSize = 256 << 20

// Config describes the drives and coding policy of one engine.
type Config struct {
	// Paths are the drive directories, already expanded, in slot order.
	Paths []string
	// Drives, when set, is used instead of Paths (tests wrap drives to
	// inject faults).
	Drives []drive.Drive
	// SharedSync is the group the drives' index syncs share per
	// filesystem (drive.SharedSync): a cluster node passes the one its
	// local drives opened with; nil makes one for Paths. SharedSync()
	// gives it to files kept beside the drives (notification queues).
	SharedSync *drive.SharedSync
	// SetSize is the number of drives per erasure set; 0 picks the largest
	// size in 2..16 that divides the drive count.
	SetSize int
	// Parity is the number of parity shards for STANDARD objects; 0 picks
	// the default for the set size.
	Parity int
	// InlineLimit is the shard size per drive (bytes) up to which object
	// data is stored inline in the drive's index; 0 means the default
	// (DefaultInlineLimit), negative disables inlining.
	InlineLimit int64
	// BlockSize is the erasure block size; 0 means 1 MiB.
	BlockSize int
	// Bitrot is the chunk checksum for new objects; 0 means bitrot.Default.
	Bitrot bitrot.Algorithm
	// Hashing computes MD5 and checksums for PUTs; nil builds a default.
	Hashing *hashing.Engine
	// Logger receives engine events; nil discards them.
	Logger *slog.Logger
	// PhaseObserver, when set, receives the phase timing of every PUT
	// and part upload (metrics, benchmarks).
	PhaseObserver func(PutPhases)
	// IndexCache is the memory, in bytes, the indexes of the drives the
	// engine opens from Paths share (block cache and row cache); 0 means
	// IndexCacheSize.
	IndexCache int64
	// DriveTimeout bounds every operation on drives the engine opens from
	// Paths (a hung drive then fails the operation and goes offline
	// instead of hanging requests); 0 means drive.DefaultOpTimeout.
	// Drives passed in Drives are used as given.
	DriveTimeout time.Duration
	// DriveProbeInterval is how often an offline drive is re-probed;
	// 0 means drive.DefaultProbeInterval.
	DriveProbeInterval time.Duration
	// Heal tunes the background jobs (internal/background: heal queue,
	// scanner, drive refill).
	Heal HealConfig
	// AfterScanCycle, when set, runs after every scanner cycle on the
	// node that scans, pacing itself with rest like the scanner
	// (HealConfig.ScanThrottle). shardstore runs the lifecycle pass there
	// (lifecycle.AfterScanCycle); the engine itself knows no lifecycle
	// rules.
	AfterScanCycle func(ctx context.Context, e *Engine, rest func(took time.Duration) error)
	// Now is the engine's clock (Engine.Now), which lifecycle rules and
	// object lock retention are judged against; nil means time.Now.
	// Tests move it forward instead of waiting for days.
	Now func() time.Time
	// Pools are the drive counts of the server pools, in the order of
	// Paths (or Drives): each pool has its own set geometry, and an
	// object lives in exactly one pool (pools.go). Empty means one pool
	// of every drive.
	Pools []int
	// Cluster, when set, makes this engine one node of a cluster whose
	// drives (Drives, local and remote) it shares with the other nodes.
	Cluster *ClusterConfig
}

// Engine is one running object store. It is safe for concurrent use.
type Engine struct {
	cfg          Config
	log          *slog.Logger
	deploymentID string
	seed         uint64
	// placer picks an object's set by the algorithm the formats record.
	placer *placement.Placer
	// sets are every pool's sets, pool after pool; pools group them.
	sets        []*erasureSet
	pools       []*pool
	poolState   poolStates   // which pools are being drained (pools.go)
	decom       *decomRunner // the decommission loop (decommission.go)
	coders      erasure.Cache
	hasher      *hashing.Engine
	locks       *nsLock
	pins        *pinSet
	ahead       *listAhead  // listing pages made ahead of their requests (listahead.go)
	indexWrites indexWrites // index batches still running per drive and key (stragglers)
	lag         fanOuts     // drives that fell far behind their set lately, parked goroutines (fanout.go)
	inlineLimit int64
	blockSize   int
	plainBufs   *plainBuffers // plaintext blocks of encrypted writes (encrypt.go)
	bitrot      bitrot.Algorithm

	// freeRetry is deleteFreed's wait before it tries an offline drive
	// again (DefaultFreeRetry; tests shorten it).
	freeRetry time.Duration

	// shared keeps bucket records and config documents: on the drives,
	// or in the cluster's consensus group (sharedstate.go).
	shared    sharedState
	bucketsMu sync.RWMutex
	// configMu serialises config document reads and writes on the
	// drives (config.go).
	configMu sync.Mutex
	buckets  map[string]BucketInfo

	// jobs are the background jobs (background.go); stopJobs stops them
	// and removes the running marker once.
	jobs     backgroundJobs
	stopJobs sync.Once
	healths  []*drive.Health // wrappers New created; closed by Close
	// indexCache is the block cache all drives' indexes share, so their
	// memory is bounded together.
	indexCache *drive.IndexCache
	// sharedSync is the drives' sync group (Config.SharedSync or the
	// one openPaths made); nil with Config.Drives and none given.
	sharedSync *drive.SharedSync
	// createdDirs are the drive directories New created for a new
	// deployment; a failed start removes them.
	createdDirs []string
	// listVerify makes listings confirm every key with a quorum read
	// instead of trusting agreeing walked drives: after a kill, a commit
	// cut short can leave a key on the walked drives without quorum until
	// the recovery sweep has removed or repaired it.
	listVerify atomic.Bool
}

// New opens (formatting on first use) the drives in cfg and returns the engine.
func New(cfg Config) (*Engine, error) {
	e := &Engine{cfg: cfg, log: cfg.Logger, locks: newNSLock(cfg.Cluster.locker()), pins: newPinSet(), ahead: newListAhead(), hasher: cfg.Hashing,
		inlineLimit: cfg.InlineLimit, blockSize: cfg.BlockSize, bitrot: cfg.Bitrot, sharedSync: cfg.SharedSync}
	if e.log == nil {
		e.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	e.shared = newSharedState(e)
	if e.hasher == nil {
		h, err := hashing.New(hashing.Config{})
		if err != nil {
			return nil, fmt.Errorf("engine: %w", err)
		}
		e.hasher = h
	}
	if e.inlineLimit == 0 {
		e.inlineLimit = DefaultInlineLimit
	}
	if e.blockSize == 0 {
		e.blockSize = erasure.DefaultBlockSize
	}
	e.plainBufs = &plainBuffers{size: e.plainBlockSize()}
	if e.bitrot == 0 {
		e.bitrot = bitrot.Default
	}
	if !e.bitrot.Valid() {
		return nil, fmt.Errorf("engine: unknown bitrot algorithm %d", e.bitrot)
	}
	if e.bitrot == bitrot.HighwayHash256MinIO {
		return nil, fmt.Errorf("engine: bitrot algorithm %s is for adopted MinIO data only, not new objects", e.bitrot)
	}
	e.freeRetry = DefaultFreeRetry
	if cfg.Cluster != nil {
		e.pins.delay = cfg.Cluster.FreeDelay
		if e.pins.delay <= 0 {
			e.pins.delay = DefaultClusterFreeDelay
		}
	}
	drives := cfg.Drives
	groups := cfg.Pools
	if drives == nil {
		plan, err := planPaths(cfg.Paths, cfg.Pools, cfg.SetSize, cfg.Parity)
		if err != nil {
			return nil, err
		}
		groups = plan.groups
		if drives, err = e.openPaths(plan); err != nil {
			return nil, err
		}
	}
	if err := checkGroups(groups, len(drives)); err != nil {
		e.abandon()
		return nil, err
	}
	if len(groups) == 0 {
		groups = []int{len(drives)}
	}
	layout, err := loadFormats(context.Background(), drives, groups, cfg.SetSize, cfg.Parity, e.log, cfg.Cluster)
	if err != nil {
		e.abandon()
		return nil, err
	}
	if err := checkNoAdoption(context.Background(), drives); err != nil {
		e.abandon()
		return nil, err
	}
	e.deploymentID = layout.deploymentID
	e.seed = xxh3.HashString(layout.deploymentID)
	if e.placer, err = placement.New(layout.placement, layout.deploymentID); err != nil {
		e.abandon()
		return nil, fmt.Errorf("engine: %w", err)
	}
	for p, pl := range layout.pools {
		pool := &pool{index: p, id: pl.id, fresh: pl.fresh && !layout.fresh}
		for s := 0; s < pl.n/pl.setSize; s++ {
			first := pl.start + s*pl.setSize
			set := &erasureSet{index: len(e.sets), local: s, pool: pool, drives: drives[first : first+pl.setSize], parity: pl.parity}
			pool.sets = append(pool.sets, set)
			e.sets = append(e.sets, set)
		}
		e.pools = append(e.pools, pool)
	}
	if err := e.seedPools(context.Background()); err != nil {
		e.abandon()
		return nil, err
	}
	if err := e.shared.loadBuckets(context.Background()); err != nil {
		e.abandon()
		return nil, err
	}
	if err := e.checkKnownPools(context.Background()); err != nil {
		e.abandon()
		return nil, err
	}
	unclean := e.markRunning(context.Background())
	e.listVerify.Store(unclean)
	e.startJobs(cfg.Heal, unclean)
	e.startDecom()
	e.startFreeSweep()
	return e, nil
}

// checkParity refuses a parity the set size cannot carry.
func checkParity(parity, setSize int) error {
	if parity < 0 || parity > setSize/2 {
		return fmt.Errorf("engine: parity %d is invalid for sets of %d drives (at most %d)", parity, setSize, setSize/2)
	}
	return nil
}

// chooseSetSize returns the set size for n drives.
func chooseSetSize(n, want int) (int, error) {
	if n == 0 {
		return 0, errors.New("engine: no drives given")
	}
	if want != 0 {
		if want < 1 || want > 16 || n%want != 0 {
			return 0, fmt.Errorf("engine: set size %d must be 1..16 and divide the drive count %d", want, n)
		}
		return want, nil
	}
	if n == 1 {
		return 1, nil
	}
	for s := 16; s >= 2; s-- {
		if n%s == 0 {
			return s, nil
		}
	}
	return 0, fmt.Errorf("engine: %d drives cannot be split into sets of 2..16", n)
}

// defaultParity is the STANDARD storage class parity for a set size.
func defaultParity(setSize int) int {
	switch {
	case setSize <= 1:
		return 0
	case setSize <= 3:
		return 1
	case setSize <= 5:
		return 2
	case setSize <= 7:
		return 3
	}
	return 4
}

// parityFor returns the parity an object of storage class sc gets.
func (s *erasureSet) parityFor(sc string) int {
	if sc == "REDUCED_REDUNDANCY" {
		return min(2, s.parity)
	}
	return s.parity
}

// erasureSet is a group of drives that together hold whole objects.
type erasureSet struct {
	index int // among all the deployment's sets (Engine.sets)
	// local is the set's index within its pool, pool the pool.
	local  int
	pool   *pool
	drives []drive.Drive
	parity int
}

// setIn picks the set of pool p an object would live in: by the
// deployment's placement (internal/placement), which its formats record.
// Which pool holds an object is found by looking (pools.go).
func (e *Engine) setIn(p *pool, bucket, key string) *erasureSet {
	if len(p.sets) == 1 {
		return p.sets[0]
	}
	return p.sets[e.placer.Set(bucket, key, len(p.sets))]
}

// distribution returns, for each drive position of a set, the 1-based
// shard number it holds; rotating the start spreads parity over drives.
func (e *Engine) distribution(key string, n int) []int {
	start := int(xxh3.HashStringSeed(key, e.seed^0x9e3779b97f4a7c15) % uint64(n))
	d := make([]int, n)
	for shard := 1; shard <= n; shard++ {
		d[(start+shard-1)%n] = shard
	}
	return d
}

// Close stops the background jobs (persisting the heal queue), records
// a clean stop and releases the drives. It is safe to call more than
// once.
func (e *Engine) Close() error {
	e.stopDecom()
	e.pins.stop()
	e.ahead.stop()
	e.stopJobs.Do(func() {
		e.jobs.Stop()
		e.markStopped(context.Background())
	})
	e.closeHealths()
	e.lag.runners.close()
	return nil
}

// closeHealths closes the drives New opened (each Health closes its
// drive: index, lock) and the shared index cache.
func (e *Engine) closeHealths() {
	for _, h := range e.healths {
		h.Close()
	}
	e.healths = nil
	if e.indexCache != nil {
		e.indexCache.Close()
		e.indexCache = nil
	}
}

// DeploymentID identifies this deployment (stored in every drive's format).
func (e *Engine) DeploymentID() string { return e.deploymentID }

// Now is the engine's clock (Config.Now, wallclock.Now by default): lifecycle
// rules and object lock retention are judged against it.
func (e *Engine) Now() time.Time {
	if e.cfg.Now != nil {
		return e.cfg.Now()
	}
	return wallclock.Now()
}
