package tool

import (
	"errors"
	"io"
	"testing"
)

func TestParseFlagsAnswersHelpAndRejectsStrayWords(t *testing.T) {
	for _, tt := range []struct {
		name    string
		args    []string
		wantErr string // "" for none
		given   bool   // whether --dir was given
		dir     string
	}{
		{name: "no flags", dir: "default"},
		{name: "--dir DIR", args: []string{"--dir", "/d"}, given: true, dir: "/d"},
		{name: "-dir=DIR", args: []string{"-dir=/d"}, given: true, dir: "/d"},
		{name: "--dir= is given, empty", args: []string{"--dir="}, given: true},
		{name: "--dir given its default is given", args: []string{"--dir", "default"}, given: true, dir: "default"},
		{name: "-h", args: []string{"-h"}, wantErr: ErrHelp.Error()},
		{name: "-help", args: []string{"-help"}, wantErr: ErrHelp.Error()},
		{name: "--help after a flag", args: []string{"--dir", "/d", "--help"}, wantErr: ErrHelp.Error()},
		{name: "an unknown flag, in the flag package's words", args: []string{"--bogus"}, wantErr: "flag provided but not defined: -bogus"},
		{name: "a flag without its value", args: []string{"--dir"}, wantErr: "flag needs an argument: -dir"},
		{name: "a stray word", args: []string{"start"}, wantErr: `unexpected argument "start"`},
		{name: "a word after the flags", args: []string{"--dir", "/d", "extra", "more"}, wantErr: `unexpected argument "extra"`},
		{name: "a word after --", args: []string{"--", "--dir"}, wantErr: `unexpected argument "--dir"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fs := NewFlagSet("test")
			dir := fs.String("dir", "default", "")
			err := ParseFlags(fs, tt.args)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("%q: %v; want the error %q", tt.args, err, tt.wantErr)
				}
				if tt.wantErr == ErrHelp.Error() && !errors.Is(err, ErrHelp) {
					t.Fatalf("%q: %v; want ErrHelp", tt.args, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%q: %v", tt.args, err)
			}
			if *dir != tt.dir || Given(fs, "dir") != tt.given {
				t.Errorf("%q: --dir %q, given %v; want %q, %v", tt.args, *dir, Given(fs, "dir"), tt.dir, tt.given)
			}
		})
	}
	t.Run("the flag set prints nothing", func(t *testing.T) {
		if out := NewFlagSet("test").Output(); out != io.Discard {
			t.Errorf("Output() = %v; want io.Discard", out)
		}
	})
}
