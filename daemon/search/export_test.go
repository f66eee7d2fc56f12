package search

// ContentTerms returns the stemmed terms of text that carry meaning in a
// query (its stop words left out), for the judged sets' own checks.
func ContentTerms(text string) []string {
	_, ws := foldWords(text)
	var out []string
	for _, w := range ws {
		if !isStop(w) {
			out = append(out, stem(w))
		}
	}
	return out
}
