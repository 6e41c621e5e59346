package main

import "errors"

func runBench(args []string) error { return errors.New("bench: not yet written") }
