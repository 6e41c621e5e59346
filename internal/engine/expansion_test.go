package engine

import (
	"context"
	"testing"
)

// TestExpansion: the expansion state admin pool status reports, from the
// pool count and ClusterConfig.NewKeyPools (unset or out of range: every
// pool takes new keys, complete).
func TestExpansion(t *testing.T) {
	for _, c := range []struct {
		pools int
		cfg   *ClusterConfig
		want  Expansion
	}{
		{1, nil, Expansion{1, 1, ExpansionComplete}},
		{2, nil, Expansion{2, 2, ExpansionComplete}},
		{2, &ClusterConfig{}, Expansion{2, 2, ExpansionComplete}},
		{2, &ClusterConfig{NewKeyPools: func() int { return 1 }}, Expansion{2, 1, ExpansionUnderWay}},
		{3, &ClusterConfig{NewKeyPools: func() int { return 2 }}, Expansion{3, 2, ExpansionUnderWay}},
		{3, &ClusterConfig{NewKeyPools: func() int { return 3 }}, Expansion{3, 3, ExpansionComplete}},
		{2, &ClusterConfig{NewKeyPools: func() int { return 0 }}, Expansion{2, 2, ExpansionComplete}},
		{2, &ClusterConfig{NewKeyPools: func() int { return -7 }}, Expansion{2, 2, ExpansionComplete}},
		{2, &ClusterConfig{NewKeyPools: func() int { return 99 }}, Expansion{2, 2, ExpansionComplete}},
	} {
		e := &Engine{pools: make([]*pool, c.pools), cfg: Config{Cluster: c.cfg}}
		if got := e.Expansion(context.Background()); got != c.want {
			t.Errorf("%d pools, cluster %+v: %+v, want %+v", c.pools, c.cfg, got, c.want)
		}
	}
}
