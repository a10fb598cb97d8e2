package main

import (
	"errors"
	"path/filepath"
	"testing"
)

func TestDirTellsNotGivenFromGivenEmpty(t *testing.T) {
	home := t.TempDir()
	tests := []struct {
		name    string
		home    string // $HOME; "" unsets it
		args    []string
		wantDir string
		wantErr string // "" for none
	}{
		{name: "no --dir means $HOME/gpu_stats", home: home, wantDir: filepath.Join(home, "gpu_stats")},
		{name: "a --dir given is used", home: home, args: []string{"--dir", "/var/log/gpu"}, wantDir: "/var/log/gpu"},
		{name: "an empty --dir is a mistake", home: home, args: []string{"--dir", ""}, wantErr: "--dir: empty directory name"},
		{name: "an empty --dir= is a mistake", home: home, args: []string{"--dir="}, wantErr: "--dir: empty directory name"},
		{name: "an empty --dir is a mistake without $HOME too", args: []string{"--dir", ""}, wantErr: "--dir: empty directory name"},
		{name: "no --dir and no $HOME", wantErr: "--dir: not given, and no default $HOME/gpu_stats: $HOME is not defined"},
		{name: "a --dir given needs no $HOME", args: []string{"--dir", "/var/log/gpu"}, wantDir: "/var/log/gpu"},
	}
	parsers := []struct {
		cmd   string
		parse func([]string) (string, error)
	}{
		{"run", func(args []string) (string, error) {
			o, err := parseRunArgs(args)
			if err != nil {
				return "", err
			}
			return o.dir, nil
		}},
		{"report", func(args []string) (string, error) {
			o, err := parseReportArgs(args)
			if err != nil {
				return "", err
			}
			return o.dir, nil
		}},
	}
	for _, p := range parsers {
		for _, tt := range tests {
			t.Run(p.cmd+": "+tt.name, func(t *testing.T) {
				t.Setenv("HOME", tt.home)
				dir, err := p.parse(tt.args)
				var bad usageError
				switch {
				case tt.wantErr == "" && (err != nil || dir != tt.wantDir):
					t.Errorf("%s %q: dir %q, error %v; want %q", p.cmd, tt.args, dir, err, tt.wantDir)
				case tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr || !errors.As(err, &bad)):
					t.Errorf("%s %q: error %v; want the usage error %q", p.cmd, tt.args, err, tt.wantErr)
				}
			})
		}
	}
}
