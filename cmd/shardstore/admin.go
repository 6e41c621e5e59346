package main

import "errors"

func runAdmin(args []string) error { return errors.New("admin: not yet written") }
