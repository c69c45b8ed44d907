// What a Go program does with files, pipes and timers: the runtime's
// network poller (epoll, and a pipe or eventfd to wake it) starts at the
// first os.Open, and os.Pipe's ends are read and written through it, a
// goroutine parked until the other writes.  Run with a directory to work
// in; every line is the same on Linux.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

func main() {
	dir := os.Args[1]
	os.RemoveAll(dir)
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0755); err != nil {
		fmt.Println("mkdir:", err)
		os.Exit(1)
	}
	name := filepath.Join(dir, "data.txt")
	f, err := os.Create(name)
	if err != nil {
		fmt.Println("create:", err)
		os.Exit(1)
	}
	w := bufio.NewWriter(f)
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(w, "line %d\n", i)
	}
	w.Flush()
	f.Close()
	data, err := os.ReadFile(name)
	fmt.Println("read back:", len(data), "bytes,", strings.Count(string(data), "\n"), "lines,", err)
	os.WriteFile(filepath.Join(dir, "sub", "b"), []byte("b\n"), 0640)
	var names []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		rel, _ := filepath.Rel(dir, p)
		names = append(names, fmt.Sprintf("%s:%v", rel, info.Mode()))
		return nil
	})
	sort.Strings(names)
	fmt.Println("walk:", strings.Join(names, " "))
	fmt.Println("rename:", os.Rename(name, filepath.Join(dir, "sub", "moved")))

	// A pipe between goroutines: the reader parks in the poller until the
	// writer's bytes come; then end of file when it closes.
	r, pw, err := os.Pipe()
	if err != nil {
		fmt.Println("pipe:", err)
		os.Exit(1)
	}
	got := make(chan string)
	go func() {
		b, err := io.ReadAll(r)
		got <- fmt.Sprintf("%d bytes, %v", len(b), err)
	}()
	time.Sleep(50 * time.Millisecond)
	for i := 0; i < 100; i++ {
		fmt.Fprintf(pw, "message %03d\n", i)
	}
	pw.Close()
	select {
	case s := <-got:
		fmt.Println("pipe:", s)
	case <-time.After(20 * time.Second):
		fmt.Println("pipe: no end of file in 20 s")
	}
	// A deadline on a pipe read: the poller's timer.
	r2, w2, _ := os.Pipe()
	start := time.Now() // before the deadline is set: a slow host may pass time between
	r2.SetReadDeadline(start.Add(100 * time.Millisecond))
	_, err = r2.Read(make([]byte, 1))
	fmt.Println("read deadline:", os.IsTimeout(err), time.Since(start) >= 100*time.Millisecond)
	w2.Close()
	r2.Close()
	fmt.Println("remove:", os.RemoveAll(dir))
}
