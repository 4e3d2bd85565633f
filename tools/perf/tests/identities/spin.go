// SPDX-License-Identifier: GPL-2.0
// A Go program linked by Go's own linker: it has a Go build-ID note and no GNU one. It burns
// CPU for the milliseconds given as its argument.
package main

import (
	"os"
	"strconv"
	"time"
)

//go:noinline
func spin(n int) int {
	x := 0
	for i := 0; i < n; i++ {
		x += i * i
	}
	return x
}

func main() {
	ms, _ := strconv.Atoi(os.Args[1])
	end := time.Now().Add(time.Duration(ms) * time.Millisecond)
	x := 0
	for time.Now().Before(end) {
		x += spin(100000)
	}
	os.Exit(x & 0)
}
