package main

import "fmt"

func runDB(version string, seed uint64, out string) error { return fmt.Errorf("todo") }
