// Package io tests rule 6: I/O.
package io

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/exec"

	"github.com/duroxide/duroxide-go/runtime"
)

// ReadConfig does I/O in orchestration code.
func ReadConfig(ctx *runtime.OrchestrationContext, path string) (string, error) { // want ReadConfig:"calls os.ReadFile"
	data, err := os.ReadFile(path) // want `^I/O call os\.ReadFile in orchestration ReadConfig: do it in an activity \(ctx\.CallActivity\)$`
	if err != nil {
		return "", err
	}
	home := os.Getenv("HOME") // want `^I/O call os\.Getenv in orchestration ReadConfig`
	f, _ := os.Open(path)     // want `^I/O call os\.Open in orchestration ReadConfig`
	f.Close()                 // want `^I/O call \(\*os\.File\)\.Close in orchestration ReadConfig`
	resp, _ := http.Get(home) // want `^I/O call net/http\.Get in orchestration ReadConfig`
	_ = resp
	_ = exec.Command("true").Run() // want `^I/O call os/exec\.Command in` `^I/O call \(\*os/exec\.Cmd\)\.Run in`
	os.MkdirAll(path, 0o755)       // want `^I/O call os\.MkdirAll in`
	return string(data), nil
}

// Logging prints and logs, which is tolerated; os.IsNotExist does no I/O.
func Logging(ctx *runtime.OrchestrationContext, err error) (bool, error) {
	fmt.Println("replaying is fine for logs")
	fmt.Printf("%v\n", err)
	log.Printf("instance %s", ctx.NewGUID())
	return os.IsNotExist(err), nil
}

// readActivity does the I/O in an activity: no report.
func readActivity(_ context.Context, path string) (string, error) { // want readActivity:"calls os.ReadFile"
	data, err := os.ReadFile(path)
	return string(data), err
}
