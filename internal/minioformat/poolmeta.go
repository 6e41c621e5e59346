package minioformat

import (
	"encoding/binary"
	"fmt"
	"time"
)

// PoolMeta is the content of .minio.sys/pool.bin, the object in which a
// MinIO deployment of several server pools records its pools and their
// decommissioning (MinIO writes the same object to every pool): a 4-byte
// header (format 1, version 1, little-endian uint16s), then a msgpack
// map {"v": version, "pls": [pool...]}, each pool a map {"id": its
// index when recorded, "cl": its command-line argument, "lu": last
// update, "dec": nil or the decommission's state}.
type PoolMeta struct {
	Version int
	Pools   []PoolStatus
}

// PoolStatus is one pool of pool.bin.
type PoolStatus struct {
	ID      int
	CmdLine string // the pool's argument to `minio server`, e.g. /data{1...4}
	Updated time.Time
	// Decommission is nil unless a decommission of the pool was started.
	Decommission *PoolDecommission
}

// PoolDecommission is the state of a pool's decommission as pool.bin
// records it. None of Complete, Failed and Canceled set: in progress
// (MinIO resumes it at its next start).
type PoolDecommission struct {
	Started                       time.Time
	Complete, Failed, Canceled    bool
	Objects, ObjectsFailed        int64
	Bytes, BytesFailed            int64
	Bucket, Prefix, Object        string // where it was when last saved
	QueuedBuckets, DoneBuckets    []string
	StartSize, TotalSize, Current int64
}

// State names the decommission's state: "complete", "failed",
// "canceled" or "in progress".
func (d *PoolDecommission) State() string {
	switch {
	case d.Complete:
		return "complete"
	case d.Failed:
		return "failed"
	case d.Canceled:
		return "canceled"
	}
	return "in progress"
}

// maxPools bounds the pools a pool.bin may list.
const maxPools = 1024

// DecodePoolMeta decodes the bytes of a pool.bin object (after reading it
// through its xl.meta). Unknown fields are skipped; a format or version
// other than 1 is ErrUnsupported, malformed input ErrCorrupt.
func DecodePoolMeta(data []byte) (*PoolMeta, error) {
	if len(data) <= 4 {
		return nil, corruptf("pool.bin of %d bytes", len(data))
	}
	if f := binary.LittleEndian.Uint16(data[0:2]); f != 1 {
		return nil, unsupportedf("pool.bin format %d", f)
	}
	if v := binary.LittleEndian.Uint16(data[2:4]); v != 1 {
		return nil, unsupportedf("pool.bin version %d", v)
	}
	r := &mpReader{b: data[4:]}
	n, err := r.mapLen()
	if err != nil {
		return nil, err
	}
	p := &PoolMeta{}
	for range n {
		k, err := r.key()
		if err != nil {
			return nil, err
		}
		switch k {
		case "v":
			var v int64
			v, err = r.intRange(0, 1<<16)
			p.Version = int(v)
		case "pls":
			p.Pools, err = decodePools(r)
		default:
			err = r.skip()
		}
		if err != nil {
			return nil, fmt.Errorf("pool.bin %s: %w", k, err)
		}
	}
	if r.left() != 0 {
		return nil, corruptf("%d bytes after pool.bin", r.left())
	}
	if p.Version != 1 {
		return nil, unsupportedf("pool.bin content version %d", p.Version)
	}
	return p, nil
}

func decodePools(r *mpReader) ([]PoolStatus, error) {
	if r.nilNext() {
		return nil, nil
	}
	n, err := r.arrayLen()
	if err != nil {
		return nil, err
	}
	if n > maxPools {
		return nil, corruptf("%d pools", n)
	}
	out := make([]PoolStatus, 0, n)
	for i := range n {
		var ps PoolStatus
		m, err := r.mapLen()
		if err != nil {
			return nil, fmt.Errorf("pool %d: %w", i, err)
		}
		for range m {
			k, err := r.key()
			if err != nil {
				return nil, fmt.Errorf("pool %d: %w", i, err)
			}
			switch k {
			case "id":
				var v int64
				v, err = r.intRange(0, maxPools)
				ps.ID = int(v)
			case "cl":
				ps.CmdLine, err = r.str()
			case "lu":
				ps.Updated, err = r.time()
			case "dec":
				ps.Decommission, err = decodeDecommission(r)
			default:
				err = r.skip()
			}
			if err != nil {
				return nil, fmt.Errorf("pool %d %s: %w", i, k, err)
			}
		}
		out = append(out, ps)
	}
	return out, nil
}

func decodeDecommission(r *mpReader) (*PoolDecommission, error) {
	if r.nilNext() {
		return nil, nil
	}
	n, err := r.mapLen()
	if err != nil {
		return nil, err
	}
	d := &PoolDecommission{}
	for range n {
		k, err := r.key()
		if err != nil {
			return nil, err
		}
		switch k {
		case "st":
			d.Started, err = r.time()
		case "cmp":
			d.Complete, err = r.bool()
		case "fl":
			d.Failed, err = r.bool()
		case "cnl":
			d.Canceled, err = r.bool()
		case "id":
			d.Objects, err = r.int()
		case "idf":
			d.ObjectsFailed, err = r.int()
		case "bd":
			d.Bytes, err = r.int()
		case "bf":
			d.BytesFailed, err = r.int()
		case "ss":
			d.StartSize, err = r.int()
		case "ts":
			d.TotalSize, err = r.int()
		case "cs":
			d.Current, err = r.int()
		case "bkt":
			d.Bucket, err = r.str()
		case "pfx":
			d.Prefix, err = r.str()
		case "obj":
			d.Object, err = r.str()
		case "bkts":
			d.QueuedBuckets, err = strList(r)
		case "dbkts":
			d.DoneBuckets, err = strList(r)
		default:
			err = r.skip()
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
	}
	return d, nil
}

func strList(r *mpReader) ([]string, error) {
	if r.nilNext() {
		return nil, nil
	}
	n, err := r.arrayLen()
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, n)
	for range n {
		s, err := r.str()
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}
