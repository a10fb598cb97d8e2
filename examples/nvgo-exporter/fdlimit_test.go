//go:build cgo && linux

package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nvgo/nvgo/internal/testenv"
	"github.com/nvgo/nvgo/nvgotest"
)

// The attack that locked Prometheus out: more idle keep-alive clients than
// the exporter has file descriptors. Under `ulimit -n 256`, 400 of them
// leave the exporter answering the next scrape at once.
func TestIdleClientsDoNotLockScrapesOutUnderALowFileLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an exporter and 400 connections")
	}
	sh := testenv.Program(t, "sh") // lowers the open-file limit with ulimit
	const limit, idle = 256, 400
	cmd := nvgotest.Program(t, "--simulate", "dgx-h100", "--listen", "127.0.0.1:0")
	cmd.Path, cmd.Args = sh, append([]string{"sh", "-c", fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, limit)}, cmd.Args...)
	addr := startExporter(t, cmd)
	for range idle {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// One request, then silence: a keep-alive client gone idle.
		fmt.Fprintf(c, "GET /favicon.ico HTTP/1.1\r\nHost: nvgo\r\n\r\n")
	}
	client := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	start := time.Now()
	resp, err := client.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("a scrape after %d idle clients, open-file limit %d: %v", idle, limit, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "nvgo_up{") {
		t.Errorf("a scrape after %d idle clients: status %d, %d bytes; want 200 and the metrics", idle, resp.StatusCode, len(body))
	}
	t.Logf("scraped in %s after %d idle clients", time.Since(start).Round(time.Millisecond), idle)
}
