package awscount

import (
	"bufio"
	"os"
	"slices"
	"strings"
)

// CompareWithList compares the operations counted so far with the list in
// path (functions/<name>/testdata/aws-operations.txt: one operation per
// line, # comments; a "presigned X" line is an operation the function only
// signs, which a counter cannot see, and is skipped; with a counter made by
// Named a line is "<operation> <resource>", see Named). unlisted are counted
// operations the list lacks, unseen listed ones never counted.
func (c *Counter) CompareWithList(path string) (unlisted, unseen []string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	listed := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line != "" && !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "presigned ") {
			listed[line] = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	// A counter made by Named compares whole "<operation> <resource>"
	// lines; a plain one, operation names.
	counts := c.Snapshot()
	if c.names != nil {
		counts = c.Calls()
	}
	for op := range counts {
		if !listed[op] {
			unlisted = append(unlisted, op)
		}
	}
	for op := range listed {
		if counts[op] == 0 {
			unseen = append(unseen, op)
		}
	}
	slices.Sort(unlisted)
	slices.Sort(unseen)
	return unlisted, unseen, nil
}
