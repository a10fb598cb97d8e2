package apicheck

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// UpdateCommand records the current API; the failures print it.
const UpdateCommand = "go test ./internal/apicheck -update"

// Format returns the text of the record of a package's API: a header, then
// lines as Render returns them.
func Format(importPath string, lines []string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# The exported API of %s, one line per declaration or member.\n", importPath)
	fmt.Fprintf(&b, "# Do not edit: announce a change in CHANGELOG.md, then run %s.\n", UpdateCommand)
	for _, line := range lines {
		b.WriteString(line + "\n")
	}
	return []byte(b.String())
}

// Parse returns the lines of a record that Format wrote; never nil.
func Parse(data []byte) []string {
	lines := []string{}
	for _, line := range strings.Split(string(data), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			lines = append(lines, line)
		}
	}
	return lines
}

// Diff is how an API differs from its record: the lines only it has (Added)
// and the lines only the record has (Removed).
type Diff struct{ Added, Removed []string }

// Compare returns how the current API differs from the recorded one; both
// are sorted, as Render and Parse return them.
func Compare(recorded, current []string) Diff {
	var d Diff
	i, j := 0, 0
	for i < len(recorded) || j < len(current) {
		switch {
		case j == len(current) || i < len(recorded) && recorded[i] < current[j]:
			d.Removed = append(d.Removed, recorded[i])
			i++
		case i == len(recorded) || current[j] < recorded[i]:
			d.Added = append(d.Added, current[j])
			j++
		default:
			i++
			j++
		}
	}
	return d
}

// shown is how many lines of a Diff its String shows.
const shown = 60

// String shows d as a diff, removed lines after "- " and added ones after
// "+ ", up to shown lines.
func (d Diff) String() string {
	var b strings.Builder
	n := 0
	for _, part := range []struct {
		sign  string
		lines []string
	}{{"- ", d.Removed}, {"+ ", d.Added}} {
		for _, line := range part.lines {
			if n++; n <= shown {
				b.WriteString("\t" + part.sign + line + "\n")
			}
		}
	}
	if n > shown {
		fmt.Fprintf(&b, "\t… and %d more lines\n", n-shown)
	}
	return b.String()
}

// Idents returns the identifiers whose declarations d adds, removes or
// changes, sorted: "Open", "Device.MemoryUsed".
func (d Diff) Idents() []string {
	seen := map[string]bool{}
	var ids []string
	for _, lines := range [][]string{d.Added, d.Removed} {
		for _, line := range lines {
			if id := Ident(line); !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	sort.Strings(ids)
	return ids
}

// Ident returns the identifier that a line of Render declares: "Open" for
// "func Open(...Option) (*Library, error)", "Device.MemoryUsed" for
// "method (*Device).MemoryUsed() Value[Bytes]".
func Ident(line string) string {
	_, rest, _ := strings.Cut(line, " ")
	if strings.HasPrefix(rest, "(*") {
		rest = strings.Replace(rest[2:], ").", ".", 1)
	}
	if end := strings.IndexAny(rest, " (["); end >= 0 {
		return rest[:end]
	}
	return rest
}

var (
	// heading matches a level-2 heading of CHANGELOG.md.
	heading = regexp.MustCompile(`(?m)^## `)
	// code matches a code span: `Device.MemoryUsed`.
	code = regexp.MustCompile("`([^`\n]+)`")
	// decoration is what a code span may add to an identifier:
	// `(*Device).MemoryUsed()` names Device.MemoryUsed.
	decoration = strings.NewReplacer("(*", "", ")", "", "(", "", "*", "")
)

// Announced returns the identifiers that the "## Unreleased" section of a
// CHANGELOG.md names in backticks.
func Announced(changelog string) map[string]bool {
	names := map[string]bool{}
	for _, loc := range heading.FindAllStringIndex(changelog, -1) {
		section := changelog[loc[1]:]
		if !strings.HasPrefix(section, "Unreleased") && !strings.HasPrefix(section, "[Unreleased]") {
			continue
		}
		if next := heading.FindStringIndex(section); next != nil {
			section = section[:next[0]]
		}
		for _, m := range code.FindAllStringSubmatch(section, -1) {
			names[decoration.Replace(m[1])] = true
		}
	}
	return names
}

// Unannounced returns the identifiers changed by d that announced does not
// name, sorted. An identifier may be qualified by its package name
// (`nvgo.Open`); a type whose own declaration changed covers its members.
func Unannounced(d Diff, pkgName string, announced map[string]bool) []string {
	ids := d.Idents()
	changed := map[string]bool{}
	for _, id := range ids {
		changed[id] = true
	}
	named := func(id string) bool { return announced[id] || announced[pkgName+"."+id] }
	var missing []string
	for _, id := range ids {
		typ, _, member := strings.Cut(id, ".")
		if named(id) || member && changed[typ] && named(typ) {
			continue
		}
		missing = append(missing, id)
	}
	return missing
}

// Check compares the current API of package pkgName with its record (nil
// when it has none) and says whether to write the record. Without update,
// a difference or a missing record is an error that shows it. With update,
// a difference is written only when announced names every identifier it
// changes; a first record needs no names.
func Check(pkgName string, recorded, current []string, announced map[string]bool, update bool) (write bool, err error) {
	if recorded == nil {
		if update {
			return true, nil
		}
		return false, fmt.Errorf("its API has no record; record it with\n\t%s", UpdateCommand)
	}
	d := Compare(recorded, current)
	if len(d.Added)+len(d.Removed) == 0 {
		return false, nil
	}
	missing := Unannounced(d, pkgName, announced)
	if !update {
		return false, fmt.Errorf("its API differs from its record:\n%s"+
			"If the change is intended, name each changed identifier in backticks under \"## Unreleased\" in CHANGELOG.md (%s)\n"+
			"and record it with\n\t%s", d, backticked(d.Idents()), UpdateCommand)
	}
	if len(missing) > 0 {
		return false, fmt.Errorf("refusing to record this change to its API:\n%s"+
			"CHANGELOG.md's \"## Unreleased\" section does not name %s", d, backticked(missing))
	}
	return true, nil
}

// backticked lists ids as code spans: "`Open`, `Device.MemoryUsed`".
func backticked(ids []string) string {
	return "`" + strings.Join(ids, "`, `") + "`"
}
