package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// parsedSVG is what a test reads back from an SVG.
type parsedSVG struct {
	root     xml.StartElement
	text     string // all character data, decoded
	elements map[string]int
}

// parseSVG reads doc with encoding/xml, failing the test if it is not
// well-formed.
func parseSVG(t *testing.T, doc []byte) parsedSVG {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	p := parsedSVG{elements: map[string]int{}}
	var text strings.Builder
	depth := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v\n%s", err, doc)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				p.root = tok.Copy()
			}
			depth++
			p.elements[tok.Name.Local]++
		case xml.EndElement:
			depth--
		case xml.CharData:
			text.Write(tok)
			text.WriteByte('\n')
		}
	}
	if depth != 0 {
		t.Fatalf("the SVG ends inside an element")
	}
	p.text = text.String()
	return p
}

func TestWriteSVGDrawsAWellFormedChartOfEveryUser(t *testing.T) {
	rows := append(reportRows()[:4],
		datedRow{"2025-01-02", row{User: `dave<&>"x"`, Usage: some(80), Seconds: some(7200)}})
	many := func() []string {
		d, _ := daysBetween("2025-01-01", "2025-03-01")
		return d
	}
	tests := []struct {
		name    string
		days    []string
		rows    []datedRow
		q       quotas
		want    []string // texts that must appear
		wantNot []string // texts that must not
	}{
		{
			name: "users, quotas and gaps",
			days: []string{"2025-01-01", "2025-01-02"}, rows: rows, q: quotas{"alice": 0.75, "*": 2},
			want: []string{"GPU-hours per user per day, 2025-01-01 to 2025-01-02", "alice", "bob", `dave<&>"x"`,
				"GPU-hours", "Day", "daily quota", "over quota", "01-01", "gap",
				"bob, 2025-01-01: N/A busy GPU-h, 0.50 held, 0.00 GiB-h, quota 2.00 (N/A)"},
		},
		{
			name: "without quotas there is no quota legend",
			days: []string{"2025-01-01"}, rows: rows,
			want: []string{"GPU-hours per user per day, 2025-01-01", "alice", "bob", "2025-01-01"}, wantNot: []string{"daily quota", "over quota"},
		},
		{
			name: "an empty range says so",
			days: []string{"2025-02-01"},
			want: []string{"No usage recorded"},
		},
		{
			name: "two months of days stay readable",
			days: many(), rows: rows, q: quotas{"*": 1},
			want: []string{"alice", "bob", "GPU-hours per user per day, 2025-01-01 to 2025-03-01"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rp := aggregate(tt.days, tt.rows, reportGaps(), tt.q, 300, time.UTC)
			var a, b bytes.Buffer
			if err := writeSVG(&a, rp, time.UTC); err != nil {
				t.Fatal(err)
			}
			if err := writeSVG(&b, rp, time.UTC); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Errorf("two renderings of one report differ")
			}
			p := parseSVG(t, a.Bytes())
			if p.root.Name.Local != "svg" || p.root.Name.Space != "http://www.w3.org/2000/svg" {
				t.Errorf("root element %v, want svg in the SVG namespace", p.root.Name)
			}
			for _, w := range tt.want {
				if !strings.Contains(p.text, w) {
					t.Errorf("the chart has no text %q", w)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(p.text, w) {
					t.Errorf("the chart has text %q", w)
				}
			}
			if strings.Contains(a.String(), "<&>") {
				t.Errorf("a user name is not escaped")
			}
			// A bar is two rects (held, busy) per user and day with usage.
			if got, want := p.elements["rect"], 1+2*len(rp.Cells)+len(rp.Users)+1; got != want {
				t.Errorf("%d rects, want %d (background, bars, legend)", got, want)
			}
		})
	}
}

func TestNiceScaleChoosesRoundTicks(t *testing.T) {
	tests := []struct {
		max       float64
		top, step float64
	}{
		{0, 1, 0.25},
		{1, 1, 0.2},
		{7.3, 8, 2},
		{10, 10, 2},
		{11, 12.5, 2.5},
		{0.023, 0.025, 0.005},
		{184, 200, 50},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.max), func(t *testing.T) {
			top, step := niceScale(tt.max, 5)
			if !closeTo(top, tt.top) || !closeTo(step, tt.step) {
				t.Errorf("niceScale(%v) = %v, %v; want %v, %v", tt.max, top, step, tt.top, tt.step)
			}
		})
	}
}

func closeTo(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }
