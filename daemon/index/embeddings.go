package index

import (
	"encoding/binary"
	"math"

	"github.com/tidwall/buntdb"
)

// Embeddings: vectors cached in the buntdb file by model and fact text.

// embPrefix keys cached embeddings: emb:<model>:<fact id>.
const embPrefix = "emb:"

// Embedding returns a fact text's cached embedding for a model.
func (x *Index) Embedding(model, id string) ([]float32, bool) {
	var v string
	err := x.db.View(func(tx *buntdb.Tx) error {
		var err error
		v, err = tx.Get(embPrefix + model + ":" + id)
		return err
	})
	if err != nil || len(v)%4 != 0 {
		return nil, false
	}
	out := make([]float32, len(v)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32([]byte(v[i*4 : i*4+4])))
	}
	return out, true
}

// PutEmbeddings caches embeddings of fact texts for a model.
func (x *Index) PutEmbeddings(model string, vecs map[string][]float32) error {
	return x.db.Update(func(tx *buntdb.Tx) error {
		for id, v := range vecs {
			b := make([]byte, 4*len(v))
			for i, f := range v {
				binary.LittleEndian.PutUint32(b[i*4:], math.Float32bits(f))
			}
			if _, _, err := tx.Set(embPrefix+model+":"+id, string(b), nil); err != nil {
				return err
			}
		}
		return nil
	})
}
