// Command pebble-oracle writes golden files with Pebble v1.1.5 and v2.1.7
// and Pebble's own answers for them. See README.md.
//
//	pebble-oracle tables OUT_DIR SEED [--all]
//	pebble-oracle db --version v1|v1-newest|v2 --seed N OUT_DIR
package main

import (
	"fmt"
	"os"
	"strconv"
)

func usage() {
	fmt.Fprintln(os.Stderr, "usage: pebble-oracle tables OUT_DIR SEED [--all]")
	fmt.Fprintln(os.Stderr, "       pebble-oracle db --version v1|v1-newest|v2 --seed N OUT_DIR")
	os.Exit(2)
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "tables":
		args := os.Args[2:]
		all := false
		var pos []string
		for _, a := range args {
			if a == "--all" {
				all = true
			} else {
				pos = append(pos, a)
			}
		}
		if len(pos) != 2 {
			usage()
		}
		seed, perr := strconv.ParseUint(pos[1], 10, 64)
		if perr != nil {
			usage()
		}
		err = runTables(pos[0], seed, all)
	case "db":
		var version, out string
		var seed uint64 = 1
		args := os.Args[2:]
		for i := 0; i < len(args); i++ {
			switch args[i] {
			case "--version":
				i++
				if i >= len(args) {
					usage()
				}
				version = args[i]
			case "--seed":
				i++
				if i >= len(args) {
					usage()
				}
				s, perr := strconv.ParseUint(args[i], 10, 64)
				if perr != nil {
					usage()
				}
				seed = s
			default:
				if out != "" {
					usage()
				}
				out = args[i]
			}
		}
		if out == "" || version == "" {
			usage()
		}
		err = runDB(version, seed, out)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pebble-oracle:", err)
		os.Exit(1)
	}
}
