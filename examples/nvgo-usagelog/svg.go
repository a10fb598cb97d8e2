package main

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// palette colours the users, in sorted order (cycling after nine). Red is
// kept for "over quota".
var palette = []string{"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f", "#ff9da7", "#bab0ac"}

const overQuotaColor = "#d62728"

// chart is the geometry of the SVG: grouped bars, a group per day and in it
// a bar per user.
type chart struct {
	rp                      *report
	left, top, plotW, plotH float64
	barW, groupW            float64
	yTop, yStep             float64
	legendX                 float64
	width, height           float64
}

const (
	chartLeft   = 70.0
	chartTop    = 70.0
	chartPlotH  = 300.0
	chartBottom = 78.0
	legendRow   = 20.0
	maxNameLen  = 28 // runes of a user name in the legend
)

func newChart(rp *report) *chart {
	c := &chart{rp: rp, left: chartLeft, top: chartTop, plotH: chartPlotH}
	users := max(len(rp.Users), 1)
	days := max(len(rp.Days), 1)
	c.barW = math.Floor(min(max(560/float64(days*users+days), 4), 24))
	c.groupW = float64(users)*c.barW + max(c.barW, 10)
	c.plotW = max(float64(days)*c.groupW, 360)
	c.groupW = c.plotW / float64(days) // a few days spread over the minimum width
	// The scale fits every bar and every quota marker drawn.
	top := 0.0
	for k, u := range rp.Cells {
		top = max(top, u.Held, u.Busy)
		if q, ok := rp.Quotas.of(k.User); ok {
			top = max(top, q)
		}
	}
	c.yTop, c.yStep = niceScale(top, 5)
	c.legendX = c.left + c.plotW + 30
	longest := 10
	for _, u := range rp.Users {
		longest = max(longest, min(len([]rune(u)), maxNameLen))
	}
	c.width = c.legendX + 30 + 7.5*float64(longest) + 20
	// Room for the title and subtitle (about 10 and 6.5 px a character).
	c.width = math.Ceil(max(c.width, c.left+10*float64(len([]rune(c.title())))+20, c.left+6.5*float64(len([]rune(c.subtitle())))+20))
	legendH := c.top + legendRow*float64(len(rp.Users)+4)
	c.height = max(c.top+c.plotH+chartBottom, legendH)
	return c
}

func (c *chart) title() string {
	return "GPU-hours per user per day, " + rangeTitle(c.rp.From, c.rp.To)
}

func (c *chart) subtitle() string {
	sub := "Solid: busy GPU-hours (GPU Usage × time). Pale: GPU-hours held."
	if len(c.rp.Quotas) > 0 {
		sub += " Dashes: daily quota."
	}
	return sub
}

// y returns the vertical position of v GPU-hours.
func (c *chart) y(v float64) float64 { return c.top + c.plotH - v/c.yTop*c.plotH }

// barX returns the left edge of user j's bar on day i.
func (c *chart) barX(i, j int) float64 {
	return c.left + float64(i)*c.groupW + (c.groupW-float64(max(len(c.rp.Users), 1))*c.barW)/2 + float64(j)*c.barW
}

// writeSVG draws the report: per day, a bar per user of busy GPU-hours over
// a pale bar of GPU-hours held, a dashed mark at the user's daily quota,
// and a red triangle (and outline, on wide bars) where the quota was
// exceeded; a legend, labelled axes and the date range in the title. The
// output depends only on the report.
func writeSVG(w io.Writer, rp *report, loc *time.Location) error {
	c := newChart(rp)
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...); b.WriteByte('\n') }
	title := c.title()

	p(`<?xml version="1.0" encoding="UTF-8"?>`)
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">`, f1(c.width), f1(c.height), f1(c.width), f1(c.height))
	p(`<title>%s</title>`, esc(title))
	p(`<rect width="100%%" height="100%%" fill="#ffffff"/>`)
	p(`<text x="%s" y="26" font-size="17" font-weight="bold" fill="#222">%s</text>`, f1(c.left), esc(title))
	p(`<text x="%s" y="46" fill="#555">%s</text>`, f1(c.left), esc(c.subtitle()))

	// Grid and y axis.
	p(`<g stroke="#e3e3e3" stroke-width="1">`)
	ticks := int(math.Round(c.yTop / c.yStep))
	for k := 1; k <= ticks; k++ {
		v := float64(k) * c.yStep
		p(`<line x1="%s" y1="%s" x2="%s" y2="%s"/>`, f1(c.left), f1(c.y(v)), f1(c.left+c.plotW), f1(c.y(v)))
	}
	p(`</g>`)
	p(`<g fill="#444" text-anchor="end">`)
	for k := 0; k <= ticks; k++ {
		v := float64(k) * c.yStep
		p(`<text x="%s" y="%s">%s</text>`, f1(c.left-8), f1(c.y(v)+4), tickLabel(v))
	}
	p(`</g>`)
	p(`<text transform="translate(20 %s) rotate(-90)" text-anchor="middle" fill="#222">GPU-hours</text>`, f1(c.top+c.plotH/2))

	// Bars.
	for i, d := range rp.Days {
		for j, u := range rp.Users {
			cu, ok := rp.Cells[cell{d, u}]
			if !ok {
				continue
			}
			c.bar(p, i, j, d, u, cu)
		}
	}
	if len(rp.Users) == 0 {
		p(`<text x="%s" y="%s" text-anchor="middle" fill="#888">No usage recorded</text>`, f1(c.left+c.plotW/2), f1(c.top+c.plotH/2))
	}

	// X axis: the baseline, a label per day, gaps under their days.
	p(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#444" stroke-width="1"/>`, f1(c.left), f1(c.y(0)), f1(c.left+c.plotW), f1(c.y(0)))
	rotate := c.groupW < 44
	every := max(1, int(math.Ceil(16/c.groupW))) // label every n-th day when crowded
	for i, d := range rp.Days {
		x := c.left + (float64(i)+0.5)*c.groupW
		y := c.y(0) + 16
		label := d
		if c.groupW < 76 {
			label = d[5:] // MM-DD; the year is in the title
		}
		if i%every == 0 {
			if rotate {
				p(`<text transform="translate(%s %s) rotate(-60)" text-anchor="end" fill="#444">%s</text>`, f1(x+4), f1(y-4), label)
			} else {
				p(`<text x="%s" y="%s" text-anchor="middle" fill="#444">%s</text>`, f1(x), f1(y), label)
			}
		}
		if rp.GapDays[d] && !rotate {
			p(`<text x="%s" y="%s" text-anchor="middle" font-size="10" font-style="italic" fill="#999">gap<title>%s</title></text>`, f1(x), f1(y+14), esc(gapsOn(rp, d, loc)))
		}
	}
	p(`<text x="%s" y="%s" text-anchor="middle" fill="#222">Day</text>`, f1(c.left+c.plotW/2), f1(c.top+c.plotH+chartBottom-10))

	c.legend(p)
	p(`</svg>`)
	_, err := io.WriteString(w, b.String())
	return err
}

// bar draws user j's bars for day i.
func (c *chart) bar(p func(string, ...any), i, j int, day, user string, u usage) {
	color := palette[j%len(palette)]
	x, w := c.barX(i, j), c.barW-1
	q, hasQ := c.rp.Quotas.of(user)
	over := hasQ && u.Busy > q
	tip := fmt.Sprintf("%s, %s: %s busy GPU-h, %s held, %s GiB-h", user, day, u.busyHours(), hours(u.Held), hours(u.MemGiB))
	if hasQ && u.usageKnown() {
		tip += fmt.Sprintf(", quota %s (%s)", hours(q), ratio(u.Busy, q))
	} else if hasQ {
		tip += fmt.Sprintf(", quota %s (%s)", hours(q), na)
	}
	p(`<g>`)
	p(`<title>%s</title>`, esc(tip))
	p(`<rect x="%s" y="%s" width="%s" height="%s" fill="%s" fill-opacity="0.3"/>`, f1(x), f1(c.y(u.Held)), f1(w), f1(c.y(0)-c.y(u.Held)), color)
	stroke := ""
	if over && c.barW >= 10 { // on a thin bar an outline would hide its colour
		stroke = fmt.Sprintf(` stroke="%s" stroke-width="2"`, overQuotaColor)
	}
	p(`<rect x="%s" y="%s" width="%s" height="%s" fill="%s"%s/>`, f1(x), f1(c.y(u.Busy)), f1(w), f1(c.y(0)-c.y(u.Busy)), color, stroke)
	if hasQ {
		p(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#222" stroke-width="1.5" stroke-dasharray="3 2"/>`, f1(x-1), f1(c.y(q)), f1(x+w+1), f1(c.y(q)))
	}
	if over {
		ty := c.y(max(u.Busy, u.Held)) - 4
		cx := x + w/2
		p(`<path d="M%s %sL%s %sL%s %sZ" fill="%s"/>`, f1(cx-4), f1(ty), f1(cx+4), f1(ty), f1(cx), f1(ty-7), overQuotaColor)
	}
	p(`</g>`)
}

// legend lists the users' colours, then the marks.
func (c *chart) legend(p func(string, ...any)) {
	x, y := c.legendX, c.top+4
	p(`<g font-size="12" fill="#222">`)
	p(`<text x="%s" y="%s" font-weight="bold">User</text>`, f1(x), f1(y))
	for j, u := range c.rp.Users {
		y += legendRow
		p(`<rect x="%s" y="%s" width="12" height="12" fill="%s"/>`, f1(x), f1(y-10), palette[j%len(palette)])
		p(`<text x="%s" y="%s">%s</text>`, f1(x+18), f1(y), esc(shorten(u, maxNameLen)))
	}
	y += legendRow * 1.5
	p(`<rect x="%s" y="%s" width="12" height="12" fill="#888" fill-opacity="0.3"/>`, f1(x), f1(y-10))
	p(`<text x="%s" y="%s">held, not busy</text>`, f1(x+18), f1(y))
	if len(c.rp.Quotas) > 0 {
		y += legendRow
		p(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#222" stroke-width="1.5" stroke-dasharray="3 2"/>`, f1(x), f1(y-4), f1(x+12), f1(y-4))
		p(`<text x="%s" y="%s">daily quota</text>`, f1(x+18), f1(y))
		y += legendRow
		p(`<path d="M%s %sL%s %sL%s %sZ" fill="%s"/>`, f1(x+2), f1(y), f1(x+10), f1(y), f1(x+6), f1(y-7), overQuotaColor)
		p(`<text x="%s" y="%s">over quota</text>`, f1(x+18), f1(y))
	}
	p(`</g>`)
}

// gapsOn describes the gaps that overlap day, for a tooltip.
func gapsOn(rp *report, day string, loc *time.Location) string {
	ds, _ := time.ParseInLocation(dayLayout, day, loc)
	var parts []string
	for _, g := range rp.Gaps {
		s, e := time.Unix(g.Start, 0).In(loc), time.Unix(g.End, 0).In(loc)
		if e.After(ds) && s.Before(ds.AddDate(0, 0, 1)) {
			parts = append(parts, fmt.Sprintf("not measured %s to %s (%s)", s.Format("2006-01-02 15:04:05"), e.Format("2006-01-02 15:04:05"), g.Reason))
		}
	}
	return strings.Join(parts, "; ")
}

// niceScale returns the top of an axis from 0 that holds maxV and a step of
// 1, 2, 2.5 or 5 times a power of ten giving about n ticks.
func niceScale(maxV float64, n int) (top, step float64) {
	if maxV <= 0 || math.IsNaN(maxV) || math.IsInf(maxV, 0) {
		return 1, 0.25
	}
	raw := maxV / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step = 10 * mag
	for _, m := range []float64{1, 2, 2.5, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	top = math.Ceil(maxV/step-1e-9) * step
	return top, step
}

func tickLabel(v float64) string {
	return strconv.FormatFloat(math.Round(v*1e6)/1e6, 'f', -1, 64)
}

func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// esc escapes s for XML text and attribute values.
func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // a strings.Builder does not fail
	return b.String()
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
