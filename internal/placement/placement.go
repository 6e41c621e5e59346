package placement

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strings"

	"github.com/dchest/siphash"
	"github.com/google/uuid"
	"github.com/zeebo/xxh3"
)

// Algorithm names a placement algorithm as drive formats record it.
type Algorithm string

// The algorithms (see the package doc).
const (
	Shardstore  Algorithm = ""
	MinIOSipMod Algorithm = "minio-sipmod"
	MinIOCRCMod Algorithm = "minio-crcmod"
)

// minioDirSuffix is how MinIO names an object whose key ends in "/".
const minioDirSuffix = "__XLDIR__"

// FromMinIO returns the algorithm of a MinIO format.json's
// distributionAlgo, or an error for one it does not know.
func FromMinIO(distributionAlgo string) (Algorithm, error) {
	switch distributionAlgo {
	case "SIPMOD", "SIPMOD+PARITY":
		return MinIOSipMod, nil
	case "CRCMOD":
		return MinIOCRCMod, nil
	}
	return "", fmt.Errorf("placement: MinIO distribution algorithm %q not known", distributionAlgo)
}

// Placer picks the set of an object in one deployment.
type Placer struct {
	alg    Algorithm
	seed   uint64 // Shardstore
	k0, k1 uint64 // MinIOSipMod
}

// New returns the placer of algorithm alg for the deployment id. The
// MinIO algorithms need the id to be a UUID (MinIO's deployment ids
// are); an unknown algorithm is refused, so that a format written by a
// newer release is never read with the wrong one.
func New(alg Algorithm, deploymentID string) (*Placer, error) {
	p := &Placer{alg: alg}
	switch alg {
	case Shardstore:
		p.seed = xxh3.HashString(deploymentID)
	case MinIOSipMod:
		id, err := uuid.Parse(deploymentID)
		if err != nil {
			return nil, fmt.Errorf("placement: %s needs a UUID deployment id, not %q: %w", alg, deploymentID, err)
		}
		p.k0 = binary.LittleEndian.Uint64(id[0:8])
		p.k1 = binary.LittleEndian.Uint64(id[8:16])
	case MinIOCRCMod:
	default:
		return nil, fmt.Errorf("placement: algorithm %q not known (a newer release formatted the drives?)", string(alg))
	}
	return p, nil
}

// Algorithm is the placer's algorithm.
func (p *Placer) Algorithm() Algorithm { return p.alg }

// Set returns the index, in [0, sets), of the set holding bucket/key.
func (p *Placer) Set(bucket, key string, sets int) int {
	if sets <= 1 {
		return 0
	}
	n := uint64(sets)
	switch p.alg {
	case MinIOSipMod:
		return int(siphash.Hash(p.k0, p.k1, []byte(MinIOName(key))) % n)
	case MinIOCRCMod:
		return int(uint64(crc32.ChecksumIEEE([]byte(MinIOName(key)))) % n)
	}
	return int(xxh3.HashStringSeed(bucket+"/"+key, p.seed) % n)
}

// MinIOName is the object name MinIO hashes and stores for key: a key
// ending in "/" becomes the key without it plus "__XLDIR__".
func MinIOName(key string) string {
	if k, ok := strings.CutSuffix(key, "/"); ok {
		return k + minioDirSuffix
	}
	return key
}
