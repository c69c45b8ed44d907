// A Go hello: the runtime reserves its address space, then starts helper
// threads before main runs.
package main

import "fmt"

func main() {
	fmt.Println("hello from Go")
}
