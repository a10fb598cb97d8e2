package tool

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// IsFlag reports whether a word is a flag rather than a flag's value: it
// starts with "-", unless a digit or "." follows the dash. No flag of the
// tools starts with a digit, so "--only -1" is a bad index that the error
// can name, not a missing one, while "--simulate --json" still lacks a
// value.
func IsFlag(word string) bool {
	if !strings.HasPrefix(word, "-") {
		return false
	}
	startsNumber := len(word) > 1 && (word[1] == '.' || '0' <= word[1] && word[1] <= '9')
	return !startsNumber
}

// AppendIndices appends the comma-separated non-negative integers in vals to
// list, leaving out those already in it, so that a repeated flag adds to
// what the earlier ones chose.
func AppendIndices(list []int, flag string, vals []string) ([]int, error) {
	for _, v := range vals {
		for _, part := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(part))
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%s: %q is not a non-negative integer", flag, part)
			}
			if !slices.Contains(list, n) {
				list = append(list, n)
			}
		}
	}
	return list, nil
}
