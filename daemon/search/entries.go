package search

// entryPage is how many entries one page of entries holds.
const entryPageBits = 12

// entries holds the index's entries by value, in pages: a million facts
// are a few hundred objects for the collector, not a million, and growing
// never copies what is held (one array would be copied whole, and without
// a pause the collector could use, each time it grew).
type entries struct {
	pages [][]entry
	n     int32
}

// at returns entry i.
func (es *entries) at(i int32) *entry {
	return &es.pages[i>>entryPageBits][i&(1<<entryPageBits-1)]
}

// len returns how many entries there are.
func (es *entries) len() int32 { return es.n }

// add appends an entry and returns its number.
func (es *entries) add(e entry) int32 {
	if es.n == 1<<postingDocBits-1 {
		// Far beyond what a machine's memory holds (tens of gigabytes).
		panic("search: the index holds as many entries as a posting can number")
	}
	if es.n&(1<<entryPageBits-1) == 0 {
		es.pages = append(es.pages, make([]entry, 0, 1<<entryPageBits))
	}
	last := &es.pages[len(es.pages)-1]
	*last = append(*last, e)
	es.n++
	return es.n - 1
}
