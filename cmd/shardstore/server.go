package main

import "errors"

func runServer(args []string) error { return errors.New("server: not yet written") }
