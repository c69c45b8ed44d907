// Goroutines and channels: eight workers sum their ranges and send the
// sums down a channel; the runtime spreads them over GOMAXPROCS threads
// (the node's cores, from sched_getaffinity) besides its own helpers.
package main

import (
	"fmt"
	"runtime"
	"sync"
)

func main() {
	ch := make(chan int, 16)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			s := 0
			for i := w * 1000000; i < (w+1)*1000000; i++ {
				s += i % 7
			}
			ch <- s
		}(w)
	}
	go func() { wg.Wait(); close(ch) }()
	total := 0
	for s := range ch {
		total += s
	}
	fmt.Println("GOMAXPROCS", runtime.GOMAXPROCS(0), "NumCPU", runtime.NumCPU(), "total", total)
}
